"""The experiments wing: profiles, end-to-end runners, sweeps and the table behind ``python -m unlearnkit run``.

Imports run one way: ``viz -> experiments -> methods -> {privacy, decentral, graphs} -> core``. The methods
know nothing of experiments; the table of runnable experiments is :data:`registry.METHODS`.

The names below are imported on first use: ``import unlearnkit.experiments.labs.privacy`` (notebook 02's
calculators) must not pay for torch, which ``centralized`` needs as soon as it defines its profiles.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "CENTRAL_PROFILES": "centralized", "CentralProfile": "centralized", "centralized_backdoor_setup": "centralized",
    "centralized_setup": "centralized", "run_centralized": "centralized",
    "METHODS": "registry", "RESULT_METRICS": "registry", "MethodSpec": "registry", "available_methods": "registry",
    "get_method": "registry", "registry_errors": "registry",
}

__all__ = ["MethodSpec", "METHODS", "RESULT_METRICS", "available_methods", "get_method", "registry_errors",
           "CentralProfile", "CENTRAL_PROFILES", "centralized_setup", "centralized_backdoor_setup",
           "run_centralized"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'unlearnkit.experiments' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
