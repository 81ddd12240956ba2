"""The package's runtime choices: the device it computes on, seeded generators, quick mode, the version.

The ground floor: every room imports these from here (``from ..runtime import device``), never from the
package root; ``unlearnkit.device`` and the others are the same functions, re-exported.
"""

from __future__ import annotations

import os
import random
from typing import Any

VERSION = "0.1.0"
"""The package's version (``unlearnkit.__version__``; pyproject.toml states the same)."""

__all__ = ["VERSION", "device", "make_generator", "numpy_generator", "seed_everything", "quick_mode"]


def device(prefer: str | None = None):
    """The torch device unlearnkit computes on.

    Order of precedence: the ``prefer`` argument, then the ``UNLEARNKIT_DEVICE`` environment variable
    (``"cpu"``, ``"cuda"``, ``"cuda:1"``...), then CUDA when available, else the CPU.

    Raises
    ------
    ValueError
        If a CUDA device is requested but none is available.
    """
    import torch

    choice = prefer or os.environ.get("UNLEARNKIT_DEVICE") or None
    if choice is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(choice)
    except (RuntimeError, TypeError, ValueError):  # "tpu", "", 3.5: torch's own error names no setting
        raise ValueError(f"device={choice!r} (argument or UNLEARNKIT_DEVICE) is not a torch device: expected "
                         "'cpu', 'cuda' or 'cuda:N'") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device={choice!r} was requested (argument or UNLEARNKIT_DEVICE) but torch sees no CUDA device; "
            "use 'cpu' or unset UNLEARNKIT_DEVICE"
        )
    if dev.type == "cuda" and (dev.index or 0) >= torch.cuda.device_count():
        raise ValueError(f"device={choice!r} is out of range: torch sees {torch.cuda.device_count()} CUDA device(s), "
                         f"expected cuda:N with N in [0, {torch.cuda.device_count() - 1}]")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device={choice!r} is not supported: expected 'cpu', 'cuda' or 'cuda:N'")
    return dev


def make_generator(seed: int, device: Any = "cpu"):
    """A seeded ``torch.Generator`` on ``device``; unlearnkit never draws from torch's global RNG."""
    import torch

    g = torch.Generator(device=torch.device(device))
    g.manual_seed(int(seed))
    return g


def numpy_generator(seed: int):
    """A seeded ``numpy.random.Generator`` (PCG64)."""
    import numpy as np

    return np.random.default_rng(int(seed))


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's *global* RNGs.

    unlearnkit's own code takes explicit generators; this exists for user code and third-party layers
    (e.g. ``torch.nn`` default initialisation when a generator cannot be passed).
    """
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def quick_mode() -> bool:
    """True when ``UNLEARNKIT_QUICK=1``: notebooks and profiles shrink to run in seconds on 2 CPU cores."""
    return os.environ.get("UNLEARNKIT_QUICK", "0").strip().lower() in {"1", "true", "yes"}
