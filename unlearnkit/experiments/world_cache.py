"""A disk cache of trained worlds: plain tensors, keyed by the configuration and the package's source.

What a notebook trains is deterministic given its configuration, so a second Run All (or a Binder image that
ran the notebooks once while building) need not train again. The cache stores **only tensors**, a
``{name: Tensor}`` dict written with ``torch.save`` and read back with ``torch.load(weights_only=True)``
(which refuses anything but tensors and plain containers, so a tampered file cannot run code); the caller
rebuilds everything else (data, model, request) the cheap way it always does.

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
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Optional

__all__ = ["world_cache_dir", "cached_tensors", "source_fingerprint"]


def world_cache_dir() -> Optional[Path]:
    """The cache folder, or None when the cache is off (``UNLEARNKIT_CACHE`` unset, empty or ``0``)."""
    value = os.environ.get("UNLEARNKIT_CACHE", "").strip()
    if value.lower() in {"", "0", "false", "no", "off"}:
        return None
    if value.lower() in {"1", "true", "yes", "on"}:
        from ..data import data_root

        return data_root() / "worlds"
    return Path(value).expanduser()


@lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """SHA-256 over the package's ``.py`` files (path and text) and the torch/numpy versions."""
    import numpy
    import torch

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"torch {torch.__version__} numpy {numpy.__version__}".encode())
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _path(kind: str, key: Any) -> Optional[Path]:
    base = world_cache_dir()
    if base is None:
        return None
    digest = hashlib.sha256(f"{kind}\n{key!r}\n{source_fingerprint()}".encode()).hexdigest()[:32]
    return base / f"{kind}-{digest}.pt"


def cached_tensors(kind: str, key: Any, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``compute()`` (a ``{str: Tensor}`` dict), or the dict an earlier run stored for ``(kind, key)``.

    ``compute`` must be deterministic given ``key``. Tensors are stored on the CPU and returned on the CPU
    (the caller moves them where its data lives). An unreadable entry is recomputed and overwritten.
    """
    import torch

    path = _path(kind, key)
    if path is not None and path.exists():
        try:
            loaded = torch.load(path, map_location="cpu", weights_only=True)
            if isinstance(loaded, dict):
                return loaded
        except Exception:  # a truncated or foreign file: recompute it
            pass
    value = compute()
    for name, t in value.items():
        if not isinstance(name, str) or not isinstance(t, torch.Tensor):
            raise TypeError(f"cached_tensors({kind!r}): entry {name!r} is {type(t).__name__}; only tensors are cached")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        torch.save({k: v.detach().cpu() for k, v in value.items()}, tmp)
        os.replace(tmp, path)
    return value


def train_sgd_cached(flat, dataset, config, *, generator, key: Any, progress: bool = False):
    """:func:`unlearnkit.train.train_sgd` on all of ``dataset``'s training samples, through the disk cache.

    ``key`` must pin everything the training depends on besides the package's code (the profile and the seed:
    the generator's seed and the data). On a hit the returned :class:`~unlearnkit.core.TrainedState` has the
    same fields, bit for bit, as the one training returns (parameters, checkpoints, drawn batches, initial
    point, loss history and the cost measured when it was trained); ``generator`` is then not advanced.
    """
    import numpy as np
    import torch

    from ..core import Cost, TrainedState
    from ..train import train_sgd

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

    t = cached_tensors("train_sgd", key, compute)
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
