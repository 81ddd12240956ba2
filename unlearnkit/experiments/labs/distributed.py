"""The same gossip and the same RR-DU walk on real processes and in the one-process simulator (notebook 05).

:func:`side_by_side` starts ``n_ranks`` processes once (:func:`unlearnkit.distributed.spawn`, gloo), runs
``rounds`` gossip-averaging rounds on a ring and an RR-DU walk of ``hops`` hops with Gaussian noise at ``u``
in them, then the same two computations in this process: gossip with
:func:`unlearnkit.decentral.simulate_averaging` (``W^R X``) and the walk with
:func:`unlearnkit.distributed.walk_reference` (each client's own noise generator). It returns the gaps between
the two runtimes, one timing row per runtime, every rank's message log, and RR-DU's per-client visit counts
read from the messages beside the counts read from the planned route.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from ..._validate import check_int
from ...decentral.gossip import simulate_averaging
from ...distributed import spawn
from ...distributed.tasks import QuadraticHop, gossip_averaging, run_sequence, walk_reference, walk_task
from ...distributed.seeds import initial_vector
from ...distributed.ledger_feed import observer_visits, route_from_messages
from ...graphs import rrdu_route
from ...graphs.topology import ring
from ...methods.rrdu.ledger import SoundObserverLedger
from ...distributed.launch import MAX_LOCAL_RANKS
from ...graphs.walks import MAX_HOPS


def side_by_side(n_ranks: int = 4, *, dim: int = 1_000, rounds: int = 10, hops: int = 20, u: int = 0,
                 p: float = 0.3, sigma: float = 0.5, seed: int = 0, timeout: float = 300.0) -> dict[str, Any]:
    """Gossip and an RR-DU walk on ``n_ranks`` processes and in one process; see the module docstring.

    Returns ``{"route", "gossip_gap", "walk_gap", "timings", "gossip_logs", "walk_logs", "visits"}``:
    the largest absolute differences of the gossip results and of the final walk models, a row per runtime
    (``ms per gossip round``, ``ms per hop``, ``wall s`` with process start-up included), the per-rank logs,
    and ``visits`` with RR-DU's ``k_v`` (u-visits an observer's view depends on) from the route and from the
    messages.
    """
    n_ranks = check_int("n_ranks", n_ranks, low=2, high=MAX_LOCAL_RANKS)
    hops = check_int("hops", hops, low=1, high=MAX_HOPS)
    route = rrdu_route(n_ranks, u, p, hops, rng=np.random.default_rng(seed)).tolist()
    hop = QuadraticHop(seed=seed, dim=dim, sigma=sigma, noisy=(u,))
    graph = ring(n_ranks)
    start = time.perf_counter()
    calls = [(gossip_averaging, (graph, rounds, dim), {}), (walk_task, (route, hop), {})]
    ranks = spawn(run_sequence, n_ranks, calls, seed=seed, timeout=timeout)
    proc_wall = time.perf_counter() - start

    X0 = torch.stack([initial_vector(seed, r, dim) for r in range(n_ranks)]).numpy()
    start = time.perf_counter()
    sim_x = simulate_averaging(graph, X0, rounds)[-1]
    sim_gossip = time.perf_counter() - start
    start = time.perf_counter()
    sim_theta = walk_reference(route, hop, n_ranks, seed=seed)
    sim_walk = time.perf_counter() - start

    got_x = np.stack([r[0]["x"].numpy() for r in ranks])
    final = next(r[1] for r in ranks if r[1]["final_holder"])
    walk_logs = [r[1]["log"] for r in ranks]
    round_ms = max(float(np.median(r[0]["round_seconds"])) * 1e3 for r in ranks)
    timings = [
        {"runtime": f"{n_ranks} processes (gloo)", "ms per gossip round": round_ms,
         "ms per hop": 1e3 * max(r[1]["seconds"] for r in ranks) / hops, "wall s": proc_wall},
        {"runtime": "one process (simulator)", "ms per gossip round": 1e3 * sim_gossip / max(rounds, 1),
         "ms per hop": 1e3 * sim_walk / hops, "wall s": sim_gossip + sim_walk},
    ]
    planned = SoundObserverLedger(route, n_clients=n_ranks, u=u, sigma=sigma, sensitivity=1.0, train_rho=None)
    rebuilt = route_from_messages([m for rows in walk_logs for m in rows])
    return {"route": route, "gossip_gap": float(np.abs(got_x - sim_x).max()),
            "walk_gap": float((final["theta"] - sim_theta).abs().max()), "timings": timings,
            "gossip_logs": [r[0]["log"] for r in ranks], "walk_logs": walk_logs,
            "visits": {"from the route": planned.visits_seen.tolist(),
                       "from the messages": observer_visits(walk_logs, u).tolist(),
                       "route rebuilt from the messages": bool(np.array_equal(rebuilt, route))}}
