"""Safe writes: check an output location before any work, write atomically, retire stale results.

``python -m unlearnkit run|reproduce|bench --out ...`` checks ``--out`` with :func:`ensure_writable_dir` or
:func:`ensure_writable_file` before it computes anything, moves an earlier run's result aside with
:func:`retire_stale` (so an interrupted run never leaves an old result that looks current), and writes each
file with :func:`atomic_write_text` / :func:`atomic_write_bytes` (a temporary file in the same folder, then
``os.replace``: a reader sees the old file or the whole new one, never half of it).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["OutputPathError", "ensure_writable_dir", "ensure_writable_file", "atomic_write_bytes",
           "atomic_write_text", "retire_stale", "sync_file"]


class OutputPathError(ValueError):
    """An output location (``--out``) cannot be created or written; the message names it and why."""


def _probe(folder: Path, name: str, value: str) -> None:
    """Create and delete a temporary file in ``folder`` (the only reliable writability test)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".unlearnkit-probe-", dir=folder)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise OutputPathError(f"{name}={value!r}: cannot write in {folder} ({exc.strerror or exc})") from None


def ensure_writable_dir(path: str | os.PathLike, *, name: str = "--out") -> Path:
    """Create the folder ``path`` if needed and check a file can be written in it; return it.

    Raises :class:`OutputPathError` naming ``name`` when ``path`` (or a parent) is a file, or the folder
    cannot be created or written.
    """
    if not str(path).strip():  # Path("") is the current folder: an empty --out wrote results into the cwd
        raise OutputPathError(f"{name}={str(path)!r} is empty: expected a folder name")
    folder = Path(path).expanduser()
    for p in (folder, *folder.parents):
        if p.exists() and not p.is_dir():
            what = "is" if p == folder else f"is below {p}, which is"
            raise OutputPathError(f"{name}={str(path)!r} {what} an existing file, not a folder: choose a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(f"{name}={str(path)!r}: cannot create the folder ({exc.strerror or exc})") from None
    _probe(folder, name, str(path))
    return folder


def ensure_writable_file(path: str | os.PathLike, *, name: str = "--out") -> Path:
    """Check that the file ``path`` can be written (its folder is created if needed); return it."""
    if not str(path).strip():
        raise OutputPathError(f"{name}={str(path)!r} is empty: expected a file name")
    file = Path(path).expanduser()
    if file.is_dir():
        raise OutputPathError(f"{name}={str(path)!r} is a folder, but a file name is needed here (e.g. "
                              f"{file / 'bench.json'})")
    if file.exists() and not os.access(file, os.W_OK):
        raise OutputPathError(f"{name}={str(path)!r}: the existing file is not writable")
    ensure_writable_dir(file.parent, name=name)
    return file


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # the mode a plain open() would give, not mkstemp's 0o600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def retire_stale(path: str | os.PathLike) -> Path | None:
    """Move an earlier result at ``path`` aside to ``NAME.stale.EXT`` (replacing an older one); return it.

    Called before a run starts, so an interrupted run leaves no result that looks current.
    """
    path = Path(path)
    if not path.is_file():
        return None
    stale = path.with_name(f"{path.stem}.stale{path.suffix}")
    os.replace(path, stale)
    return stale


def sync_file(path: str | os.PathLike, data: bytes) -> bool:
    """Make ``path`` hold exactly ``data`` (size and SHA-256 compared); rewrite it atomically if not.

    Returns True when the file was (re)written: used for bundled assets such as ``plotly.min.js``, which an
    interrupted run may have left truncated.
    """
    path = Path(path)
    try:
        if path.stat().st_size == len(data) and hashlib.sha256(path.read_bytes()).digest() == \
                hashlib.sha256(data).digest():
            return False
    except OSError:
        pass
    atomic_write_bytes(path, data)
    return True
