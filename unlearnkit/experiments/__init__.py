"""The experiments wing: profiles, end-to-end runners, sweeps and the table behind ``python -m unlearnkit run``.

Imports run one way: ``viz -> experiments -> methods -> {privacy, decentral, graphs} -> core``. The methods
know nothing of experiments; the table of runnable experiments is :data:`registry.METHODS`.

The names below are imported on first use: ``import unlearnkit.experiments.labs.privacy`` (notebook 02's
calculators) must not pay for torch, which ``centralized`` needs as soon as it defines its profiles.
"""

from __future__ import annotations

from ..runtime import lazy_exports

__all__ = ["get_method", "available_methods", "centralized_setup", "run_centralized"]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "get_method": ".registry", "available_methods": ".registry", "centralized_setup": ".centralized",
    "run_centralized": ".centralized",
})
