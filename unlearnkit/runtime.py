"""The package's runtime choices: the device it computes on, seeded generators, quick mode, the version.

The ground floor: every room imports these from here (``from ..runtime import device``), never from the
package root; ``unlearnkit.device`` and the others are the same functions, re-exported.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import random
import sys
from typing import Any, Callable, Mapping, Sequence

import numpy as np

VERSION = "0.1.0"
"""The package's version (``unlearnkit.__version__``; pyproject.toml states the same)."""


def device(prefer: str | None = None):
    """The torch device unlearnkit computes on.

    Order of precedence: the ``prefer`` argument, then the ``UNLEARNKIT_DEVICE`` environment variable
    (``"cpu"``, ``"cuda"``, ``"cuda:1"``...), then CUDA when available, else the CPU.

    Raises
    ------
    ValueError
        If a CUDA device is requested but none is available.
    """
    import torch  # deferred: imports torch

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
    import torch  # deferred: imports torch

    g = torch.Generator(device=torch.device(device))
    g.manual_seed(int(seed))
    return g


def numpy_generator(seed: int):
    """A seeded ``numpy.random.Generator`` (PCG64)."""

    return np.random.default_rng(int(seed))


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's *global* RNGs.

    unlearnkit's own code takes explicit generators; this exists for user code and third-party layers
    (e.g. ``torch.nn`` default initialisation when a generator cannot be passed).
    """
    import torch  # deferred: imports torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def quick_mode() -> bool:
    """True when ``UNLEARNKIT_QUICK=1``: notebooks and profiles shrink to run in seconds on 2 CPU cores."""
    return os.environ.get("UNLEARNKIT_QUICK", "0").strip().lower() in {"1", "true", "yes"}


def lazy_exports(package: str, public: Sequence[str],
                 where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's PEP 562 ``__getattr__`` and ``__dir__``: its public names load on first use.

    ``where`` maps a public name to the module that defines it, relative to ``package`` (``".mixing"``,
    ``"..core"``); the module is imported the first time the name is read, so ``import unlearnkit.graphs``
    costs nothing until a name is used, and a name whose module needs torch does not load torch before then.
    A submodule loads as itself (``uk.graphs.topology``). ``__dir__`` lists ``public`` (the package's
    ``__all__``); any other name raises ``AttributeError``: import it from the module that defines it.

    Parameters
    ----------
    package:
        The package's ``__name__``.
    public:
        The package's ``__all__``.
    where:
        Public name -> module defining it, relative to ``package``.

    Returns
    -------
    tuple
        ``(__getattr__, __dir__)`` for the package's namespace.
    """

    def __getattr__(name: str) -> Any:
        if name in where:
            value = getattr(importlib.import_module(where[name], package), name)
        elif not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(public)

    return __getattr__, __dir__
