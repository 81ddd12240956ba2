"""A disk cache of trained worlds: plain tensors, keyed by the configuration and the package's source.

What a notebook trains is deterministic given its configuration, so a second Run All (or a Binder image that
ran the notebooks once while building) need not train again. The cache stores **only tensors**, a
``{name: Tensor}`` dict written with ``torch.save`` and read back with ``torch.load(weights_only=True)``
(which refuses anything but tensors and plain containers, so a tampered file cannot run code), beside the
entry's own key, each tensor's dtype and shape and a checksum, all checked on load: a bad entry is reported
and recomputed, never served. The caller rebuilds everything else (data, model, request) the cheap way it
always does.

The file name is a SHA-256 of: the kind of world, the ``repr`` of its configuration (frozen dataclasses print
every field), the torch and numpy versions, and the text of every ``.py`` file of the package, so editing
any code invalidates every entry (a stale world can never be served). Deleting the folder is always safe.

It is **off unless** ``UNLEARNKIT_CACHE`` names a folder (``UNLEARNKIT_CACHE=1`` means
``$UNLEARNKIT_DATA/worlds``, by default ``~/.cache/unlearnkit/worlds``); ``0``/empty turns it off. Writes are
atomic (a temporary file renamed into place), so two kernels filling the same entry cannot corrupt it.
"""

from __future__ import annotations

import hashlib
import os
import stat
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

import numpy
import numpy as np

from .._io import OutputPathError, ensure_writable_dir
from ..core import Cost, TrainedState


_FORMAT = 2
_ENTRY_KEYS = ("format", "kind", "key", "tensors", "shapes", "checksum")


def world_cache_dir() -> Optional[Path]:
    """The cache folder, or None when the cache is off (``UNLEARNKIT_CACHE`` unset, empty or ``0``)."""
    value = os.environ.get("UNLEARNKIT_CACHE", "").strip()
    if value.lower() in {"", "0", "false", "no", "off"}:
        return None
    if value.lower() in {"1", "true", "yes", "on"}:
        from ..data.datasets import data_root  # deferred: imports torch

        return data_root() / "worlds"
    return Path(value).expanduser()


@lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """SHA-256 over the package's ``.py`` files (path and text) and the torch/numpy versions."""
    import torch  # deferred: imports torch

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"torch {torch.__version__} numpy {numpy.__version__}".encode())
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _entry_key(kind: str, key: Any) -> str:
    """SHA-256 of the entry's kind, key and the package's source: what an entry records and is checked against."""
    return hashlib.sha256(f"{kind}\n{key!r}\n{source_fingerprint()}".encode()).hexdigest()


def _path(kind: str, key: Any) -> Optional[Path]:
    base = world_cache_dir()
    if base is None:
        return None
    return base / f"{kind}-{_entry_key(kind, key)[:32]}.pt"


def _checksum(tensors: dict[str, Any]) -> str:
    import torch  # deferred: imports torch

    h = hashlib.sha256()
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        h.update(f"{name} {t.dtype} {tuple(t.shape)}".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def _entry_problem(loaded: Any, kind: str, entry_key: str, required: Mapping[str, Optional[tuple]]) -> Optional[str]:
    """Why a loaded entry must not be served (``None``: it is sound)."""
    import torch  # deferred: imports torch

    if not isinstance(loaded, dict) or set(loaded) != set(_ENTRY_KEYS):
        got = sorted(map(str, loaded)) if isinstance(loaded, dict) else type(loaded).__name__
        return f"it holds {got}, expected the keys {sorted(_ENTRY_KEYS)}"
    if loaded["format"] != _FORMAT or loaded["kind"] != kind or loaded["key"] != entry_key:
        return (f"it records format {loaded['format']!r}, kind {loaded['kind']!r}, key {str(loaded['key'])[:12]}; "
                f"expected format {_FORMAT}, kind {kind!r}, key {entry_key[:12]}")
    tensors, shapes = loaded["tensors"], loaded["shapes"]
    if not isinstance(tensors, dict) or not isinstance(shapes, dict) or set(tensors) != set(shapes):
        return "its tensors and its recorded shapes name different entries"
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            return f"entry {name!r} is {type(t).__name__}, not a tensor"
        if shapes[name] != [str(t.dtype), list(t.shape)]:
            return f"entry {name!r} is {t.dtype} {list(t.shape)}, but the file records {shapes[name]}"
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            return f"entry {name!r} holds NaN or infinite values"
    for name, shape in required.items():
        if name not in tensors:
            return f"it lacks the entry {name!r}"
        if shape is not None and tuple(tensors[name].shape) != tuple(shape):
            return f"entry {name!r} has shape {list(tensors[name].shape)}, expected {list(shape)}"
    if loaded["checksum"] != _checksum(tensors):
        return "its checksum does not match its tensors (the file changed after it was written)"
    return None


def _load_entry(path: Path, kind: str, entry_key: str,
                required: Mapping[str, Optional[tuple]]) -> Optional[dict[str, Any]]:
    """The tensors of a sound entry at ``path``, or ``None`` (absent, or bad: then a warning says why)."""
    import torch  # deferred: imports torch

    if not path.exists():
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = torch.load(path, map_location="cpu", weights_only=True)
        problem = _entry_problem(loaded, kind, entry_key, required)
    except Exception as exc:  # noqa: BLE001 - a truncated, foreign or tampered file: report it, recompute it
        problem = f"it cannot be read with the safe loader ({type(exc).__name__})"
    if problem is None:
        return loaded["tensors"]
    warnings.warn(f"world cache: ignoring the bad entry {path}: {problem}; recomputing it", RuntimeWarning,
                  stacklevel=3)
    return None


def _check_cache_location(path: Path) -> None:
    """Refuse a cache folder that is a file or unwritable, or an entry that is not a regular file, before any
    work is done (``UNLEARNKIT_CACHE`` names the folder)."""

    ensure_writable_dir(path.parent, name="UNLEARNKIT_CACHE")
    if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
        raise OutputPathError(f"UNLEARNKIT_CACHE={str(path.parent)!r}: the entry {path.name} is not a regular "
                              "file (a folder, link, pipe or device); remove it or choose another folder")


def cached_tensors(kind: str, key: Any, compute: Callable[[], dict[str, Any]], *,
                   required: Optional[Mapping[str, Optional[tuple]]] = None) -> dict[str, Any]:
    """``compute()`` (a ``{str: Tensor}`` dict), or the dict an earlier run stored for ``(kind, key)``.

    ``compute`` must be deterministic given ``key``. Tensors are stored on the CPU and returned on the CPU
    (the caller moves them where its data lives). Each entry records its key (a SHA-256 of ``kind``, ``key``
    and the package's source), every tensor's dtype and shape and a checksum; an entry that does not match
    them, holds a NaN or cannot be read is reported (a ``RuntimeWarning``) and recomputed, never served. A
    cache folder that is a file or cannot be written raises :class:`~unlearnkit._io.OutputPathError`
    before ``compute`` runs. A result with NaN or infinite values is returned but not stored.
    ``required``: entry names a stored dict must hold, each with its shape (``None``: any shape).
    """
    import torch  # deferred: imports torch

    path = _path(kind, key)
    entry_key = _entry_key(kind, key) if path is not None else ""
    if path is not None:
        _check_cache_location(path)
        hit = _load_entry(path, kind, entry_key, required or {})
        if hit is not None:
            return hit
    value = compute()
    for name, t in value.items():
        if not isinstance(name, str) or not isinstance(t, torch.Tensor):
            raise TypeError(f"cached_tensors({kind!r}): entry {name!r} is {type(t).__name__}; only tensors are cached")
    if path is not None:
        tensors = {k: v.detach().cpu() for k, v in value.items()}
        if any(t.is_floating_point() and not bool(torch.isfinite(t).all()) for t in tensors.values()):
            warnings.warn(f"world cache: {kind} result holds NaN or infinite values; not stored in {path}",
                          RuntimeWarning, stacklevel=2)
            return value
        entry = {"format": _FORMAT, "kind": kind, "key": entry_key, "tensors": tensors,
                 "shapes": {k: [str(t.dtype), list(t.shape)] for k, t in tensors.items()},
                 "checksum": _checksum(tensors)}
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        try:
            torch.save(entry, tmp)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    return value


def train_sgd_cached(flat, dataset, config, *, generator, key: Any, progress: bool = False):
    """:func:`unlearnkit.train.train_sgd` on all of ``dataset``'s training samples, through the disk cache.

    ``key`` must pin everything the training depends on besides the package's code (the profile and the seed:
    the generator's seed and the data). On a hit the returned :class:`~unlearnkit.core.TrainedState` has the
    same fields, bit for bit, as the one training returns (parameters, checkpoints, drawn batches, initial
    point, loss history and the cost measured when it was trained); ``generator`` is then not advanced.
    """
    import torch  # deferred: imports torch

    from ..train import train_sgd  # deferred: imports torch

    if world_cache_dir() is None:
        return train_sgd(flat, dataset, None, config, generator=generator, progress=progress)
    fresh: list = []

    def compute() -> dict[str, Any]:
        st = train_sgd(flat, dataset, None, config, generator=generator, progress=progress)
        fresh.append(st)
        out = {"params": st.params, "init": st.extras["init"],
               "cost_int": torch.tensor([st.cost.grad_evals, st.cost.messages, st.cost.memory_bytes],
                                        dtype=torch.int64, device="cpu"),
               "cost_seconds": torch.tensor([st.cost.seconds], dtype=torch.float64, device="cpu"),
               "history": torch.tensor([[h["step"], h["loss"]] for h in st.history], dtype=torch.float64,
                                       device="cpu").reshape(-1, 2)}
        out.update({f"checkpoint.{k}": v for k, v in st.checkpoints.items()})
        out.update({f"batch.{i}": b for i, b in enumerate(st.extras["batches"])})
        return out

    t = cached_tensors("train_sgd", key, compute, required={"params": (flat.d,), "init": (flat.d,),
                                                             "cost_int": (3,), "cost_seconds": (1,),
                                                             "history": None})
    if fresh:
        return fresh[0]
    dev = dataset.x_train.device
    n_batches = sum(1 for k in t if k.startswith("batch."))
    ckpts = sorted(int(k.split(".", 1)[1]) for k in t if k.startswith("checkpoint."))
    grad_evals, messages, memory = (int(v) for v in t["cost_int"].tolist())
    return TrainedState(
        flat=flat, params=t["params"].to(dev), dataset=dataset, train_indices=np.arange(dataset.n_train),
        config=config, checkpoints={k: t[f"checkpoint.{k}"].to(dev) for k in ckpts},
        cost=Cost(grad_evals, messages, float(t["cost_seconds"][0]), memory),
        history=[{"step": int(s), "loss": float(v)} for s, v in t["history"].tolist()],
        extras={"batches": [t[f"batch.{i}"] for i in range(n_batches)], "init": t["init"].to(dev)})
