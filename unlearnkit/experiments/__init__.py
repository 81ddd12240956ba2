"""The experiments wing: profiles, end-to-end runners, sweeps and the table behind ``python -m unlearnkit run``.

Imports run one way: ``viz -> experiments -> methods -> {privacy, decentral, graphs} -> core``. The methods
know nothing of experiments; the table of runnable experiments is :data:`registry.METHODS`.
"""

from .centralized import (CENTRAL_PROFILES, CentralProfile, centralized_backdoor_setup, centralized_setup,
                          run_centralized)
from .registry import METHODS, RESULT_METRICS, MethodSpec, available_methods, get_method, registry_errors

__all__ = ["MethodSpec", "METHODS", "RESULT_METRICS", "available_methods", "get_method", "registry_errors",
           "CentralProfile", "CENTRAL_PROFILES", "centralized_setup", "centralized_backdoor_setup",
           "run_centralized"]
