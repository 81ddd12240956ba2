"""Safe writes: check an output location before any work, write atomically, retire stale results.

``python -m unlearnkit run|reproduce|bench --out ...`` checks ``--out`` with :func:`ensure_writable_dir` or
:func:`ensure_writable_file` before it computes anything, moves an earlier run's result aside with
:func:`retire_stale` (so an interrupted run never leaves an old result that looks current), and writes each
file with :func:`atomic_write_text` / :func:`atomic_write_bytes` (a temporary file in the same folder, then
``os.replace``: a reader sees the old file or the whole new one, never half of it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import socket
import stat
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Optional


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
            kind = "an existing file" if p.is_file() else _kind(os.stat(p).st_mode)
            raise OutputPathError(f"{name}={str(path)!r} {what} {kind}, not a folder: choose a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(f"{name}={str(path)!r}: cannot create the folder ({exc.strerror or exc})") from None
    _probe(folder, name, str(path))
    return folder


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, word in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return word
    return "not a regular file"


def _check_regular_or_new(file: Path, name: str, value: str) -> None:
    """``file`` must be absent or a regular file; a symbolic link is refused, naming its target."""
    try:
        st = os.lstat(file)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputPathError(f"{name}={value!r}: cannot inspect it ({exc.strerror or exc})") from None
    if stat.S_ISLNK(st.st_mode):
        raise OutputPathError(f"{name}={value!r} is a symbolic link to {os.readlink(file)!r}; refusing to write "
                              "through it (links are not followed): give the target path itself")
    if stat.S_ISDIR(st.st_mode):
        raise OutputPathError(f"{name}={value!r} is a folder, but a file name is needed here (e.g. "
                              f"{file / 'bench.json'})")
    if not stat.S_ISREG(st.st_mode):
        raise OutputPathError(f"{name}={value!r} is {_kind(st.st_mode)}, not a regular file: expected a new path "
                              "or a regular file")


def ensure_writable_file(path: str | os.PathLike, *, name: str = "--out") -> Path:
    """Check that the file ``path`` can be written (its folder is created if needed); return it.

    ``path`` must be new or a regular file: a folder, named pipe, device or socket is refused, and so is a
    symbolic link (not followed; the message names its target). Raises :class:`OutputPathError`.
    """
    if not str(path).strip():
        raise OutputPathError(f"{name}={str(path)!r} is empty: expected a file name")
    file = Path(path).expanduser()
    _check_regular_or_new(file, name, str(path))
    if file.exists() and not os.access(file, os.W_OK):
        raise OutputPathError(f"{name}={str(path)!r}: the existing file is not writable")
    ensure_writable_dir(file.parent, name=name)
    return file


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``; ``path`` must be
    new or a regular file (a link, folder, pipe or device raises :class:`OutputPathError`)."""
    path = Path(path)
    _check_regular_or_new(path, "path", str(path))
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


def _holder(lock: Path) -> tuple[int, str]:
    """The pid and host written in a lock file (``(0, "")`` when unreadable)."""
    try:
        pid, host = (lock.read_text().split() + ["", ""])[:2]
        return int(pid), host
    except (OSError, ValueError):
        return 0, ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# The locks this process holds: lock file -> [pid, thread id, depth]. The pid tells a forked child that an entry
# is its parent's, not its own.
_HELD: dict[Path, list[int]] = {}
_HELD_GUARD = threading.Lock()


def _enter_held(lock: Path, name: str, path: Any) -> bool:
    """True when this thread already holds ``lock`` (its depth is raised); a different thread of this process
    holding it raises :class:`OutputPathError`; False when this process does not hold it."""
    with _HELD_GUARD:
        held = _HELD.get(lock)
        if held is None or held[0] != os.getpid():
            return False
        if held[1] != threading.get_ident():
            raise OutputPathError(f"{name}={str(path)!r} is in use by another thread of this process (pid "
                                  f"{held[0]}, thread {held[1]}, lock file {lock}); wait for it to finish")
        held[2] += 1
        return True


def _exit_held(lock: Path) -> bool:
    """Lower this thread's depth on ``lock``; True when that released the outermost hold."""
    with _HELD_GUARD:
        held = _HELD[lock]
        held[2] -= 1
        if held[2] > 0:
            return False
        del _HELD[lock]
        return True


def _take_file(lock: Path, name: str, path: Any) -> None:
    """Create ``lock`` holding this pid and host, taking over one left by a dead process; raise
    :class:`OutputPathError` naming the holder when a live process has it."""
    for _ in range(2):
        try:   # the pid is written first, then linked into place: no one ever reads a half-written lock
            fd, tmp = tempfile.mkstemp(prefix=f".{lock.name}.", dir=lock.parent)
            with os.fdopen(fd, "w") as fh:
                fh.write(f"{os.getpid()} {socket.gethostname()}\n")
            try:
                os.link(tmp, lock)
            finally:
                os.unlink(tmp)
        except FileExistsError:
            pid, host = _holder(lock)
            if pid > 0 and (host != socket.gethostname() or _alive(pid)):
                raise OutputPathError(f"{name}={str(path)!r} is in use by another run (pid {pid} on {host or '?'}, "
                                      f"lock file {lock}); wait for it to finish, or delete the lock file if that "
                                      "run is gone") from None
            lock.unlink(missing_ok=True)          # left by a run that died: take it over
            continue
        except OSError as exc:
            raise OutputPathError(f"{name}={str(path)!r}: cannot create the lock file {lock} "
                                  f"({exc.strerror or exc})") from None
        return
    raise OutputPathError(f"{name}={str(path)!r}: another run took the lock file {lock} at the same moment")


@contextlib.contextmanager
def output_lock(path: str | os.PathLike, *, name: str = "--out"):
    """Hold ``<path>.lock`` (created atomically with ``link``, holding this pid and host) while a run writes to
    ``path``; a second run on the same ``path`` raises :class:`OutputPathError` naming the first one's pid.

    Re-entrant within a thread: the command line takes the lock and the library function it calls
    (:func:`~unlearnkit.benchmarks.run_benches`, :func:`~unlearnkit.reproduce.run_reproduction`) takes it
    again; the file goes when the outermost hold ends. Another thread of the same process is refused. A lock
    left by a process that no longer runs on this host is taken over.
    """
    target = Path(path).expanduser().resolve()
    lock = target.with_name(target.name + ".lock")
    if _enter_held(lock, name, path):
        try:
            yield lock
        finally:
            _exit_held(lock)
        return
    _take_file(lock, name, path)
    with _HELD_GUARD:
        _HELD[lock] = [os.getpid(), threading.get_ident(), 1]
    try:
        yield lock
    finally:
        if _exit_held(lock) and _holder(lock)[0] == os.getpid():
            lock.unlink(missing_ok=True)


def _finite_tree(value: Any, where: str, default: Optional[Callable[[Any], Any]], notes: list[str]) -> Any:
    if isinstance(value, dict):
        return {k: _finite_tree(v, f"{where}.{k}" if where else str(k), default, notes) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_tree(v, f"{where}[{i}]", default, notes) for i, v in enumerate(value)]
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        notes.append(f"{where or 'value'}: {value!r} written as null")
        return None
    if default is None:
        return value           # json.dumps reports what it cannot encode
    converted = default(value)
    if converted is value:
        return value
    return _finite_tree(converted, where, default, notes)


def json_text(value: Any, *, indent: Optional[int] = 2, default: Optional[Callable[[Any], Any]] = None,
              **kwargs: Any) -> str:
    """``json.dumps`` that never writes ``NaN`` or ``Infinity`` (not JSON): a non-finite number becomes
    ``null`` and, for a dict, a ``"non_finite"`` list says which fields were and what they held.

    ``default`` converts other objects (numpy scalars, tensors) first; the text is dumped with
    ``allow_nan=False``, so a non-finite number that slips past raises ``ValueError``.
    """
    notes: list[str] = []
    clean = _finite_tree(value, "", default, notes)
    if notes and isinstance(clean, dict):
        clean["non_finite"] = list(clean.get("non_finite") or []) + notes
    return json.dumps(clean, indent=indent, allow_nan=False, default=default, **kwargs)
