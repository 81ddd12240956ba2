"""``python -m unlearnkit bench distributed``: real processes (torch.distributed) beside the simulator.

For N ranks in {2, 4, 8} and model size d in {1,000, 10,000, 100,000} (float64): ms per neighbour-gossip round
on a ring and ms per walk hop (the token moves at every hop) on N real processes, beside the one-process
simulator's time for the same operation (a ``W @ X`` round; the same hop on one tensor), and the peak resident
memory of a rank. One process group per N serves every d (start-up is paid once per N). gloo on CPU; NCCL when
every rank has its own GPU (:func:`unlearnkit.distributed.timing.pick_backend`; gossip only). ``--quick``: two
ranks and d in {1,000, 10,000}.
"""

from __future__ import annotations

from typing import Any

from . import register_bench


@register_bench("distributed", description="process-group gossip round and walk hop vs the one-process simulator, "
                                            "N in {2, 4, 8}, d up to 1e5, peak RSS per rank")
def bench_distributed(*, quick: bool = False) -> list[dict[str, Any]]:
    from ..distributed.timing import compare_runtimes

    ranks = (2,) if quick else (2, 4, 8)
    dims = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
    rows: list[dict[str, Any]] = []
    for n in ranks:
        rows += compare_runtimes(n, dims, rounds=5 if quick else 20, hops=10 if quick else 40, timeout=600)
    return rows
