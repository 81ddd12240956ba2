"""One 4-rank process group for every module of ``tests/distributed`` that compares ranks with a simulator.

Starting 4 ranks costs seconds per rank (importing torch, then ``torch.func``'s first transform), so the
modules register their tasks here at import (collection imports every selected module before any fixture
runs) and the first module that asks for results starts one process group that runs every registered task
in turn (:func:`unlearnkit.distributed.run_sequence`). A module registered too late gets its own group.
"""

from __future__ import annotations

from typing import Any

from unlearnkit.distributed import spawn
from unlearnkit.distributed.tasks import run_sequence

N, SEED = 4, 7
_CALLS: dict[str, list[tuple[Any, tuple, dict]]] = {}
_RESULTS: dict[str, list[list[Any]]] = {}


def register(module: str, calls: list[tuple[Any, tuple, dict]]) -> None:
    """Queue ``module``'s tasks ``(fn, args, kwargs)`` for the shared process group."""
    _CALLS[module] = list(calls)


def results(module: str) -> list[list[Any]]:
    """Per rank, the results of ``module``'s tasks in the order registered."""
    if module not in _RESULTS:
        names = [m for m in _CALLS if m not in _RESULTS]
        calls = [c for m in names for c in _CALLS[m]]
        out = spawn(run_sequence, N, calls, seed=SEED, timeout=300, comm_timeout=60)
        i = 0
        for m in names:
            k = len(_CALLS[m])
            _RESULTS[m] = [r[i:i + k] for r in out]
            i += k
    return _RESULTS[module]
