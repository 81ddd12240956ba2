"""unlearnkit: certified machine unlearning, centralized and decentralized, as readable code and a course.

Sub-packages are imported lazily (``uk.data``, ``uk.privacy``, ...), so ``import unlearnkit`` is fast and a
notebook only pays for what it uses.

>>> import unlearnkit as uk
>>> uk.device().type in {"cpu", "cuda"}
True
"""

import importlib as _importlib

from .runtime import VERSION as __version__
from .runtime import device, make_generator, numpy_generator, quick_mode, seed_everything

_SUBMODULES = {
    "core",
    "data",
    "models",
    "train",
    "privacy",
    "graphs",
    "decentral",
    "methods",
    "evaluate",
    "viz",
    "experiments",
    "benchmarks",
    "audit",
    "reproduce",
    "constants",
    "curvature",
    "runtime",
    "toy",
}

__all__ = ["__version__", "device", "seed_everything", "make_generator", "numpy_generator", "quick_mode",
           *sorted(_SUBMODULES)]


def __getattr__(name: str):
    if name in _SUBMODULES:
        module = _importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'unlearnkit' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
