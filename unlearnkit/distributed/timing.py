"""Timings of the process-group runtime beside the one-process simulator, for the same operation.

- :func:`timing_task` (a rank task, run by :func:`~unlearnkit.distributed.spawn`): for every model size
  ``d``, ``rounds`` neighbour-gossip rounds on a ring and a walk of ``hops`` hops that moves the token at
  every hop (route ``0, 1, ..., N-1, 0, ...``: every hop is a real message), then this rank's peak resident
  memory.
- :func:`simulator_times`: the same two operations in one process on an ``(N, d)`` tensor: one gossip round is
  the matrix product ``W @ X``, one hop is :class:`~unlearnkit.distributed.QuadraticHop` on the token.
- :func:`compare_runtimes`: both, one row per ``(ranks, d)``: ms per gossip round and per hop in each
  runtime, the peak RSS of a rank, and the largest gap between the ranks' gossip result and ``W^R X``.

The backend is gloo unless every rank can have its own GPU (:func:`pick_backend`); NCCL then runs the gossip
only, because the walk token needs receive-from-any, which NCCL lacks.
"""

from __future__ import annotations

import math
import resource
import time
from typing import Any, Optional, Sequence

import torch

from .._validate import check_choice, check_int
from ..graphs.mixing import mixing_matrix
from ..graphs.topology import make_graph
from .launch import spawn
from .network import BACKENDS, ProcessGroupNetwork
from .seeds import initial_vector, rank_generator
from .tasks import QuadraticHop, median_ms


def pick_backend(n_ranks: int) -> str:
    """``"nccl"`` when this machine has a GPU for each of ``n_ranks`` ranks, else ``"gloo"``."""
    n_ranks = check_int("n_ranks", n_ranks, low=1)
    return "nccl" if torch.cuda.is_available() and torch.cuda.device_count() >= n_ranks else "gloo"


def ring_route(n_clients: int, hops: int) -> list[int]:
    """``0, 1, ..., N-1, 0, 1, ...`` (``hops`` entries): with N >= 2 the token moves at every hop."""
    n_clients = check_int("n_clients", n_clients, low=1)
    return [t % n_clients for t in range(check_int("hops", hops, low=1))]


def _rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux: the process's peak resident set so far
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timing_task(net: ProcessGroupNetwork, dims: Sequence[int], rounds: int, hops: int,
                topology: str = "ring") -> dict[str, Any]:
    """Per ``d`` in ``dims``: this rank's median milliseconds per gossip round run back to back (``round_ms``)
    and per round started on a barrier (``synced_round_ms``, as the raw probe's rounds are), its final gossip
    vector, and the walk's wall seconds (``None`` on NCCL).
    Returns ``{"rank", "rss_start_mb", "rss_mb", "per_dim"}``."""
    rounds = check_int("rounds", rounds, low=1)
    W = mixing_matrix(make_graph(topology, net.n_clients, seed=net.seed))
    rss_start = _rss_mb()
    per_dim = []
    for d in dims:
        x = initial_vector(net.seed, net.rank, int(d)).to(net.device)
        seconds = []
        net.barrier()
        for t in range(rounds):
            start = time.perf_counter()
            x = net.gossip_round(x, W, step=t)
            seconds.append(time.perf_counter() - start)
        synced, y = [], initial_vector(net.seed, net.rank, int(d)).to(net.device)
        for t in range(rounds):  # the same rounds, each started on a barrier (as the raw probe's are)
            net.barrier()
            start = time.perf_counter()
            y = net.gossip_round(y, W, step=t)
            synced.append(time.perf_counter() - start)
        net.reset()
        walk_s: Optional[float] = None
        if net.backend == "gloo" and net.n_clients > 1:
            walks = []
            for _ in range(2):          # the better of two walks: the first pays one-off costs (allocations)
                net.reset()
                net.barrier()
                theta0 = torch.zeros(int(d), dtype=torch.float64, device="cpu")
                walks.append(net.walk(ring_route(net.n_clients, hops), theta0,
                                      QuadraticHop(seed=net.seed, dim=int(d))).seconds)
            walk_s = min(walks)
        net.reset()
        per_dim.append({"d": int(d), "round_ms": median_ms(seconds), "synced_round_ms": median_ms(synced), "x": x.cpu(),
                        "walk_s": walk_s})
    return {"rank": net.rank, "rss_start_mb": rss_start, "rss_mb": _rss_mb(), "per_dim": per_dim}


def simulator_times(n_clients: int, d: int, rounds: int, hops: int, *, seed: int = 0, topology: str = "ring",
                    device: str = "cpu") -> dict[str, Any]:
    """One process: median ms of one ``W @ X`` round (``X`` is ``(N, d)`` float64), ``W^rounds X``, and ms per
    hop of the same :class:`QuadraticHop` walk (each client's noise generator, as on the ranks)."""
    W = torch.tensor(mixing_matrix(make_graph(topology, n_clients, seed=seed)), dtype=torch.float64, device=device)
    X = torch.stack([initial_vector(seed, r, d) for r in range(n_clients)]).to(device)
    seconds = []
    for _ in range(rounds):
        start = time.perf_counter()
        X = W @ X
        if X.is_cuda:
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    hop = QuadraticHop(seed=seed, dim=d)
    gens = [rank_generator(seed, v, "noise") for v in range(n_clients)]
    theta = torch.zeros(d, dtype=torch.float64, device="cpu")
    start = time.perf_counter()
    for t, v in enumerate(ring_route(n_clients, hops)):
        theta = hop(t, v, theta, gens[v])
    hop_s = time.perf_counter() - start
    return {"round_ms": median_ms(seconds), "X": X.cpu(), "hop_ms": 1e3 * hop_s / hops}


def compare_runtimes(n_ranks: int, dims: Sequence[int] = (1_000, 10_000), *, rounds: int = 10, hops: int = 20,
                     seed: int = 0, backend: Optional[str] = None, timeout: float = 300.0) -> list[dict[str, Any]]:
    """Run :func:`timing_task` on ``n_ranks`` real processes and :func:`simulator_times` here; one row per ``d``.

    Columns: ``ranks``, ``d``, ``backend``, ``gossip_ms`` (the slowest rank's median per round),
    ``sim_gossip_ms``, ``hop_ms`` (walk wall time over hops, the better of two walks; ``nan`` on NCCL), ``sim_hop_ms``,
    ``peak_rss_mb`` (the largest rank's peak resident memory, torch's import included: the cost of a rank),
    ``max_abs_diff`` (ranks' gossip result against the simulator's ``W^R X``).
    """
    n_ranks = check_int("n_ranks", n_ranks, low=2)
    dims = [check_int("d", d, low=1) for d in dims]
    backend = pick_backend(n_ranks) if backend is None else check_choice("backend", backend, BACKENDS)
    ranks = spawn(timing_task, n_ranks, dims, rounds, hops, backend=backend, seed=seed, timeout=timeout)
    device = "cuda" if backend == "nccl" else "cpu"
    rows = []
    for k, d in enumerate(dims):
        sim = simulator_times(n_ranks, d, rounds, hops, seed=seed, device=device)
        got = torch.stack([r["per_dim"][k]["x"] for r in ranks])
        walk = [r["per_dim"][k]["walk_s"] for r in ranks]
        rows.append({"ranks": n_ranks, "d": d, "backend": backend,
                     "gossip_ms": max(r["per_dim"][k]["round_ms"] for r in ranks), "sim_gossip_ms": sim["round_ms"],
                     "hop_ms": math.nan if None in walk else 1e3 * max(walk) / hops, "sim_hop_ms": sim["hop_ms"],
                     "peak_rss_mb": max(r["rss_mb"] for r in ranks),
                     "max_abs_diff": float((got - sim["X"]).abs().max())})
    return rows


def message_table(rows: Sequence[dict[str, Any]], *, limit: Optional[int] = None) -> list[dict[str, Any]]:
    """A message log's rows with ``time`` made relative to the first message (ms), for display."""
    if not rows:
        return []
    t0 = min(r["time"] for r in rows)
    out = [{**{k: v for k, v in r.items() if k != "time"}, "t_ms": round(1e3 * (r["time"] - t0), 3)} for r in rows]
    return out if limit is None else out[:limit]
