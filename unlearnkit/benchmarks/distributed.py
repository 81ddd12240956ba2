"""``python -m unlearnkit bench distributed``: real processes (torch.distributed) beside the simulator and the transport.

For N ranks in {2, 4, 8} and model size d in {1,000, 10,000, 100,000} (float64): ms per neighbour-gossip round
on a ring and ms per walk hop (the token moves at every hop) on N real processes, beside the one-process
simulator's time for the same operation (a ``W @ X`` round; the same hop on one tensor), and the peak resident
memory of a rank. One process group per N serves every d (start-up is paid once per N). gloo on CPU; NCCL when
every rank has its own GPU (:func:`unlearnkit.distributed.timing.pick_backend`; gossip only). ``--quick``: two
ranks and d in {1,000, 10,000}.

Beside each round and hop, the same ranks, in the same process group and right after the measured run, time the
raw transport (:func:`raw_probe`): a round of bare ``isend``/``irecv`` of the same ``d``-vector to and from the
same neighbours, started on a barrier (``probe_gossip_ms``), and the same tensor handed along the same route with
bare ``send``/``recv`` (``probe_hop_ms``). ``gossip_over_probe`` and ``hop_over_probe`` are the runtime's overhead
factors over its transport.
"""

from __future__ import annotations

import math
import time
from typing import Any, Sequence

from . import register_bench

_TAG_PROBE = 21


def raw_probe(net: Any, dims: Sequence[int], rounds: int, hops: int, topology: str = "ring") -> list[dict[str, Any]]:
    """On every rank of ``net``: per ``d``, the median seconds of a barrier-started raw gossip exchange with the
    ring neighbours, and the wall seconds of ``hops`` raw token hands along ``0, 1, ..., N-1, 0, ...``."""
    import torch  # deferred: imports torch
    import torch.distributed as dist  # deferred: imports torch

    from ..distributed.seeds import initial_vector  # deferred: imports torch
    from ..graphs.mixing import mixing_matrix  # deferred: imports networkx
    from ..graphs.topology import make_graph  # deferred: imports networkx

    W = mixing_matrix(make_graph(topology, net.n_clients, seed=net.seed))
    nbrs = [j for j in range(net.n_clients) if j != net.rank and W[net.rank, j] > 0]
    out = []
    for d in dims:
        x = initial_vector(net.seed, net.rank, int(d)).to(net.device)
        bufs = {j: torch.empty_like(x) for j in nbrs}
        seconds = []
        for _ in range(rounds):
            net.barrier()
            t0 = time.perf_counter()
            reqs = [dist.irecv(bufs[j], src=j, tag=_TAG_PROBE) for j in nbrs]
            reqs += [dist.isend(x, dst=j, tag=_TAG_PROBE) for j in nbrs]
            for r in reqs:
                r.wait()
            seconds.append(time.perf_counter() - t0)
        hop_s = math.nan
        if net.backend == "gloo":
            token = torch.zeros(int(d), dtype=torch.float64, device="cpu")
            best = math.inf
            for _ in range(2):  # the better of two, as the runtime's walk
                net.barrier()
                t0 = time.perf_counter()
                for t in range(hops):
                    holder, nxt = t % net.n_clients, (t + 1) % net.n_clients
                    if net.rank == holder:
                        dist.send(token, dst=nxt, tag=_TAG_PROBE)
                    elif net.rank == nxt:
                        dist.recv(token, src=holder, tag=_TAG_PROBE)
                best = min(best, time.perf_counter() - t0)
            hop_s = best
        out.append({"d": int(d), "round_s": sorted(seconds)[len(seconds) // 2], "walk_s": hop_s})
    return out


def _timing_with_probe(net: Any, dims: Sequence[int], rounds: int, hops: int) -> dict[str, Any]:
    from ..distributed.timing import timing_task  # deferred: imports torch

    res = timing_task(net, dims, rounds, hops)
    res["probe"] = raw_probe(net, dims, rounds, hops)
    return res


def probe_rows(n_ranks: int, dims: Sequence[int], *, rounds: int, hops: int, seed: int = 0,
               timeout: float = 600.0) -> list[dict[str, Any]]:
    """:func:`~unlearnkit.distributed.timing.compare_runtimes`'s rows for gloo, with the raw probe's columns."""
    import torch  # deferred: imports torch

    from ..distributed.launch import spawn  # deferred: imports torch
    from ..distributed.timing import simulator_times  # deferred: imports torch

    ranks = spawn(_timing_with_probe, n_ranks, list(dims), rounds, hops, backend="gloo", seed=seed, timeout=timeout)
    rows = []
    for k, d in enumerate(dims):
        sim = simulator_times(n_ranks, d, rounds, hops, seed=seed)
        got = torch.stack([r["per_dim"][k]["x"] for r in ranks])
        gossip_ms = max(r["per_dim"][k]["round_ms"] for r in ranks)
        synced_ms = max(r["per_dim"][k]["synced_round_ms"] for r in ranks)
        hop_ms = 1e3 * max(r["per_dim"][k]["walk_s"] for r in ranks) / hops
        probe_ms = 1e3 * max(r["probe"][k]["round_s"] for r in ranks)
        probe_hop_ms = 1e3 * max(r["probe"][k]["walk_s"] for r in ranks) / hops
        rows.append({"ranks": n_ranks, "d": d, "backend": "gloo", "gossip_ms": gossip_ms,
                     "probe_gossip_ms": probe_ms, "gossip_over_probe": gossip_ms / probe_ms,
                     "synced_gossip_ms": synced_ms, "synced_over_probe": synced_ms / probe_ms,
                     "sim_gossip_ms": sim["round_ms"], "hop_ms": hop_ms, "probe_hop_ms": probe_hop_ms,
                     "hop_over_probe": hop_ms / probe_hop_ms, "sim_hop_ms": sim["hop_ms"],
                     "peak_rss_mb": max(r["rss_mb"] for r in ranks),
                     "max_abs_diff": float((got - sim["X"]).abs().max())})
    return rows


@register_bench("distributed", description="process-group gossip round and walk hop vs the one-process simulator "
                                            "and a raw gloo probe, N in {2, 4, 8}, d up to 1e5, peak RSS per rank")
def bench_distributed(*, quick: bool = False) -> list[dict[str, Any]]:
    from ..distributed.timing import compare_runtimes, pick_backend  # deferred: imports torch

    ranks = (2,) if quick else (2, 4, 8)
    dims = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
    rows: list[dict[str, Any]] = []
    for n in ranks:
        kw = {"rounds": 5 if quick else 20, "hops": 10 if quick else 40}
        if pick_backend(n) == "gloo":
            rows += probe_rows(n, dims, **kw)
        else:
            rows += compare_runtimes(n, dims, timeout=600, **kw)
    return rows
