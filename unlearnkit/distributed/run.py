"""The worker: ``torchrun --standalone --nproc-per-node=N -m unlearnkit.distributed.run TASK [options]``.

Tasks:

- ``gossip``: ``--rounds`` rounds of neighbour gossip averaging on ``--topology`` (a name from
  :data:`unlearnkit.graphs.TOPOLOGIES`, built on N clients with ``--seed``), starting from each rank's
  ``initial_vector(seed, rank, dim)``; with ``--schedule NAME`` (:data:`unlearnkit.graphs.DYNAMIC_TOPOLOGIES`)
  each round mixes over that round's neighbour sets instead (PDUDT's dynamic topologies).
- ``flood``: each client in ``--sources`` (default: all) floods its ``initial_vector`` through ``--topology``
  (Newton/Fisher's broadcast); every client ends with the ``--reduce`` (``sum``, ``mean`` or ``stack``).
- ``walk``: the token walks a fixed route: ``--route 0,1,2,3`` or ``--hops H`` drawn by ``--route-kind``
  (``uniform``, or ``rrdu`` with ``--u`` and ``--p``) from ``numpy_generator(seed)``, the same on every rank;
  each hop is a :class:`~unlearnkit.distributed.QuadraticHop`, noisy at ``--u`` when ``--sigma > 0``.

A walk with ``--checkpoint-dir DIR`` checkpoints every ``--every`` hops
(:mod:`unlearnkit.distributed.resume`); the same command with ``--resume`` added continues from the last
checkpoint after a crash and ends with the parameters of an uninterrupted walk.

With ``--out DIR`` every rank writes ``DIR/rank<r>.pt`` (its result and message log). Rank 0 prints one
JSON line: ranks, task, median ms per gossip round (the slowest rank's median), or for the walk ms per hop
and per move (hops where the token changed hands; hop computation included), messages and bytes sent,
the largest peak resident memory of a rank (MB).

A rank that cannot reach its peers ends with one line on stderr and exit code 1, not a traceback: a process
group that does not form within ``--timeout`` says how many ranks joined and where; a peer lost during the
task (its process ended, or it sent nothing within ``--timeout``) is named by rank and host, with the
operation (:class:`~unlearnkit.distributed.network.PeerLostError`).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import socket
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import torch
import torch.distributed as dist

from .._io import json_text
from ..core import MAX_DIM, MAX_STEPS
from ..graphs.dynamic import DYNAMIC_TOPOLOGIES, make_schedule
from ..graphs.topology import TOPOLOGIES, make_graph
from ..graphs.walks import rrdu_route, uniform_route
from .network import BACKENDS, PeerLostError, ProcessGroupNetwork, comm_failure, init_process_group
from .resume import resumable_walk_task
from .tasks import DTYPES, QuadraticHop, median_ms, flood_task, gossip_averaging, walk_task


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The worker's command line (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m unlearnkit.distributed.run", description=__doc__.split("\n")[0])
    ap.add_argument("task", choices=("gossip", "walk", "flood"))
    ap.add_argument("--backend", choices=BACKENDS, default="gloo")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dim", type=int, default=1000)
    ap.add_argument("--dtype", choices=tuple(DTYPES), default="float64")
    ap.add_argument("--timeout", type=float, default=60.0, help="process-group timeout (s) for a send/recv")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--topology", choices=tuple(TOPOLOGIES), default="ring")
    ap.add_argument("--rule", default="metropolis")
    ap.add_argument("--schedule", choices=tuple(DYNAMIC_TOPOLOGIES), default=None,
                    help="gossip over a dynamic topology (per-round neighbour sets) instead of --topology")
    ap.add_argument("--sources", default=None, help="flood: comma-separated source clients (default: all)")
    ap.add_argument("--reduce", choices=("sum", "mean", "stack"), default="mean")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--route", default=None, help="comma-separated clients, one per hop")
    ap.add_argument("--hops", type=int, default=20)
    ap.add_argument("--route-kind", choices=("uniform", "rrdu"), default="uniform")
    ap.add_argument("--u", type=int, default=0)
    ap.add_argument("--p", type=float, default=0.3)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--sigma", type=float, default=0.0)
    ap.add_argument("--checkpoint-dir", type=Path, default=None, help="walk: checkpoint here every --every hops")
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--resume", action="store_true", help="walk: resume from --checkpoint-dir's last checkpoint")
    a = ap.parse_args(argv)
    problem = argument_problem(a, world_size=int(os.environ.get("WORLD_SIZE", "0")) or None)
    if problem:
        ap.error(problem)  # every rank stops here, before it joins the group or does any work
    return a


def _clients(name: str, text: str) -> list[int]:
    """``"0,2,5"`` as integers; a message naming the flag for an empty list or a non-integer entry."""
    entries = [v.strip() for v in text.split(",")]
    if not text.strip() or any(not v for v in entries):
        raise ValueError(f"--{name}={text!r} has an empty entry: give comma-separated client indices, e.g. 0,1,2")
    for v in entries:
        if not v.lstrip("-").isdigit():
            raise ValueError(f"--{name}={text!r}: entry {v!r} is not an integer client index")
    return [int(v) for v in entries]


def argument_problem(a: argparse.Namespace, *, world_size: Optional[int] = None) -> Optional[str]:
    """The first problem with the worker's arguments, in words naming the flag (``None``: all valid).

    Checked before any rank joins the process group; ``world_size`` (torchrun's ``WORLD_SIZE``) bounds the
    client indices (``--u``, ``--route``, ``--sources``).
    """

    limits = (("dim", a.dim, 1, MAX_DIM), ("rounds", a.rounds, 1, MAX_STEPS), ("hops", a.hops, 1, MAX_STEPS),
              ("every", a.every, 1, MAX_STEPS))
    for name, v, lo, hi in limits:
        if not lo <= v <= hi:
            return f"--{name}={v} is out of range: expected --{name} in [{lo}, {hi}]"
    if not (a.timeout > 0 and np.isfinite(a.timeout)):
        return f"--timeout={a.timeout} is out of range: expected a positive number of seconds"
    if not 0.0 <= a.p <= 1.0:
        return f"--p={a.p} is out of range: expected --p in [0, 1]"
    if not (a.lr > 0 and np.isfinite(a.lr)) or not (a.sigma >= 0 and np.isfinite(a.sigma)):
        return f"--lr={a.lr}, --sigma={a.sigma}: expected lr > 0 and sigma >= 0, both finite"
    n = world_size
    clients = {"u": [a.u]}
    try:
        if a.route is not None:
            clients["route"] = _clients("route", a.route)
        if a.sources is not None:
            clients["sources"] = _clients("sources", a.sources)
    except ValueError as err:
        return str(err)
    for name, vals in clients.items():
        bad = [v for v in vals if v < 0 or (n is not None and v >= n)]
        if bad:
            hi = "world size - 1" if n is None else str(n - 1)
            return f"--{name} names client {bad[0]}, out of range: expected clients in [0, {hi}] ({n or '?'} ranks)"
    if a.resume and a.checkpoint_dir is None:
        return "--resume needs --checkpoint-dir (the folder holding the checkpoints to resume from)"
    for name, path in (("out", a.out), ("checkpoint-dir", a.checkpoint_dir)):
        if path is not None and path.exists() and not path.is_dir():
            return f"--{name}={str(path)!r} exists and is not a folder: give a folder (or a new path)"
    return None


def _route(a: argparse.Namespace, n: int) -> np.ndarray:
    if a.route:
        return np.array(_clients("route", a.route), dtype=np.int64)
    rng = np.random.default_rng(a.seed)
    if a.route_kind == "rrdu":
        return rrdu_route(n, a.u, a.p, a.hops, rng=rng)
    return uniform_route(n, a.hops, rng=rng)


def _join(a: argparse.Namespace) -> Optional[str]:
    """Join the process group; ``None``, or the reason it did not form, in words naming the ranks and flag."""
    rank, world = os.environ.get("RANK", "?"), os.environ.get("WORLD_SIZE", "?")
    where = f"{os.environ.get('MASTER_ADDR', '?')}:{os.environ.get('MASTER_PORT', '?')}"
    try:
        init_process_group(backend=a.backend, timeout_s=a.timeout)
    except RuntimeError as exc:   # torch's DistStoreError / DistNetworkError, or the missing variables
        if "environment variables" in str(exc):
            return str(exc)
        joined = re.search(r"(\d+)/(\d+) clients joined", str(exc))
        who = (f"only {joined.group(1)} of {joined.group(2)} ranks joined" if joined else
               f"rank {rank} could not reach rank 0's rendezvous" if rank != "0" else "the ranks did not all join")
        return (f"rank {rank} of {world} (host {socket.gethostname()}): the process group at {where} did not form "
                f"within --timeout={a.timeout:g} s: {who} ({(str(exc).strip().splitlines() or [''])[0]}); start "
                f"every rank (RANK 0 to "
                f"{world if world == '?' else int(world) - 1}) with the same MASTER_ADDR and MASTER_PORT")
    return None


def worker_main(argv: Optional[Sequence[str]] = None) -> int:
    """Join the process group from the environment, run the task, write results, print rank 0's summary.

    Returns 0; 1 (after one line on stderr) when the group does not form or a peer is lost.
    """
    a = parse_args(argv)
    torch.set_num_threads(1)
    problem = _join(a)
    if problem:
        print(f"error: {problem}", file=sys.stderr, flush=True)
        return 1
    try:
        return _work(a)
    except PeerLostError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    finally:
        dist.destroy_process_group()


def _work(a: argparse.Namespace) -> int:
    """The task on a joined process group (see :func:`worker_main`)."""
    local = int(os.environ.get("LOCAL_RANK", "0"))
    hosts: Optional[list] = None
    if a.backend == "gloo":   # every rank's host, for naming a lost peer (NCCL would need each rank's device set)
        hosts = [None] * dist.get_world_size()
        try:
            dist.all_gather_object(hosts, socket.gethostname())
        except RuntimeError as exc:
            raise PeerLostError(f"rank {dist.get_rank()} (host {socket.gethostname()}) lost a peer during the "
                                f"exchange of host names: {comm_failure(exc)}") from None
    net = ProcessGroupNetwork(seed=a.seed, device=f"cuda:{local}" if a.backend == "nccl" else "cpu", hosts=hosts)
    n = net.n_clients
    if a.task == "gossip":
        network = (make_schedule(a.schedule, n, seed=a.seed) if a.schedule
                   else make_graph(a.topology, n, seed=a.seed))
        res = gossip_averaging(net, network, a.rounds, a.dim, rule=a.rule, dtype=a.dtype)
        mine = {"ms_per_round": median_ms(res["round_seconds"])}
    elif a.task == "flood":
        sources = None if a.sources is None else _clients("sources", a.sources)
        res = flood_task(net, make_graph(a.topology, n, seed=a.seed), a.dim, sources=sources, reduce=a.reduce,
                         dtype=a.dtype)
        mine = {"seconds": res["seconds"]}
    else:
        route = _route(a, n)
        hop = QuadraticHop(seed=a.seed, dim=a.dim, lr=a.lr, sigma=a.sigma, noisy=(a.u,))
        if a.checkpoint_dir is None:
            res = walk_task(net, route, hop, dtype=a.dtype)
        else:
            res = resumable_walk_task(net, route, hop, str(a.checkpoint_dir), a.every, a.resume,
                                      DTYPES[a.dtype])
        mine = {"seconds": res["seconds"], "hops": len(route)}
    mine.update(messages=len(net.log.sent()), bytes=net.log.bytes_sent(), moves=len(net.log.sent("token")),
                rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if a.out is not None:
        a.out.mkdir(parents=True, exist_ok=True)
        torch.save(res, a.out / f"rank{net.rank}.pt")
    gathered: list = [None] * n if net.rank == 0 else None  # type: ignore[assignment]
    try:
        dist.gather_object(mine, gathered, dst=0)
    except RuntimeError as exc:
        raise net.lost(0 if net.rank else None, "gather of the ranks' summaries", exc) from None
    if net.rank == 0:
        summary = {"task": a.task, "ranks": n, "backend": a.backend, "dim": a.dim,
                   "messages": sum(g["messages"] for g in gathered), "bytes": sum(g["bytes"] for g in gathered),
                   "peak_rss_mb_per_rank": max(g["rss_mb"] for g in gathered)}
        if a.task == "gossip":
            summary.update(rounds=a.rounds, topology=a.schedule or a.topology,
                           ms_per_round=max(g["ms_per_round"] for g in gathered))
        elif a.task == "flood":
            summary.update(topology=a.topology, reduce=a.reduce,
                           ms_per_flood=1e3 * max(g["seconds"] for g in gathered))
        else:
            wall = max(g["seconds"] for g in gathered)
            moves = sum(g["moves"] for g in gathered)
            summary.update(hops=mine["hops"], moves=moves, ms_per_hop=1e3 * wall / max(mine["hops"], 1),
                           ms_per_move=1e3 * wall / max(moves, 1))
        print(json_text(summary, indent=None), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through torchrun in tests
    sys.exit(worker_main())
