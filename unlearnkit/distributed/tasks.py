"""What a rank runs: gossip averaging and a token walk, and their one-process references.

Task functions take the rank's :class:`~unlearnkit.distributed.ProcessGroupNetwork` first and return a
picklable dict; they live in an importable module so that :func:`~unlearnkit.distributed.spawn` (and a
notebook) can start them in fresh processes. The references compute the same thing in one process from
the same seed: :func:`walk_reference` walks the same route with each client's own noise generator, and
gossip averaging is ``unlearnkit.decentral.simulate_averaging`` (``W^R X``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import networkx as nx
import numpy as np
import torch
from torch import Tensor

from .._validate import check_choice, check_int, check_positive
from ..core import MAX_DIM
from ..graphs.dynamic import DynamicTopology
from ..graphs.mixing import MIXING_RULES, mixing_matrix, validate_mixing
from .network import ProcessGroupNetwork
from .seeds import initial_vector, rank_generator


DTYPES = {"float64": torch.float64, "float32": torch.float32}


def round_matrix(network: Any, t: int, rule: str = "metropolis") -> np.ndarray:
    """The mixing matrix of round ``t``: a ``networkx.Graph`` mixed with ``rule``, a
    :class:`~unlearnkit.graphs.DynamicTopology` (``W_t = schedule.mixing(t, rule)``, PDUDT's per-round
    neighbour sets) or a fixed ``(N, N)`` doubly stochastic array."""
    check_choice("rule", rule, MIXING_RULES)
    if isinstance(network, nx.Graph):
        return mixing_matrix(network, rule)
    if isinstance(network, DynamicTopology):
        return network.mixing(t, rule)
    return validate_mixing(network, require_connected=False)


def gossip_averaging(net: ProcessGroupNetwork, network: Any, rounds: int, dim: int, *, rule: str = "metropolis",
                     dtype: str = "float64") -> dict[str, Any]:
    """``rounds`` gossip rounds from :func:`~unlearnkit.distributed.initial_vector` ``(seed, rank, dim)``.

    Returns ``{"rank", "x0", "x", "round_seconds", "log"}``; ``x`` is this rank's row of ``W^R X``
    (``W_{R-1} ... W_0 X`` on a dynamic topology).
    """
    rounds = check_int("rounds", rounds, low=0)
    check_choice("dtype", dtype, tuple(DTYPES))
    x0 = initial_vector(net.seed, net.rank, dim, dtype=DTYPES[dtype]).to(net.device)
    x = x0
    seconds = []
    net.barrier()
    for t in range(rounds):
        W = round_matrix(network, t, rule)
        start = time.perf_counter()
        x = net.gossip_round(x, W, step=t)
        seconds.append(time.perf_counter() - start)
    return {"rank": net.rank, "x0": x0.cpu(), "x": x.cpu(), "round_seconds": seconds, "log": net.log.rows()}


def flood_task(net: ProcessGroupNetwork, graph: nx.Graph, dim: int, *, sources: Sequence[int] | None = None,
               reduce: str = "sum", dtype: str = "float64") -> dict[str, Any]:
    """Flood every source's :func:`~unlearnkit.distributed.initial_vector` ``(seed, rank, dim)`` through
    ``graph`` (Newton/Fisher's broadcast, :meth:`ProcessGroupNetwork.flood`); returns ``{"rank", "x0", "x"
    (this client's delivered stack, sum or mean), "seconds", "log"}``."""
    check_choice("dtype", dtype, tuple(DTYPES))
    x0 = initial_vector(net.seed, net.rank, dim, dtype=DTYPES[dtype]).to(net.device)
    net.barrier()
    start = time.perf_counter()
    x = net.flood(x0[None], graph, sources=sources, reduce=reduce)[0]
    return {"rank": net.rank, "x0": x0.cpu(), "x": x.cpu(), "seconds": time.perf_counter() - start,
            "log": net.log.rows()}


@dataclass(frozen=True)
class QuadraticHop:
    """A token step on client ``v``'s quadratic ``f_v(theta) = ||theta - c_v||^2 / 2``:
    ``theta <- theta - lr * (theta - c_v)``, plus ``lr * Z`` with ``Z ~ N(0, sigma^2 I)`` drawn from the
    holder's own generator at the clients in ``noisy`` (RR-DU adds noise only at the unlearning client u;
    digest 000, Algorithm 4). ``c_v`` is :func:`~unlearnkit.distributed.initial_vector` ``(seed, v, dim)``.
    """

    seed: int
    dim: int
    lr: float = 0.5
    sigma: float = 0.0
    noisy: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        check_int("seed", self.seed, low=0)
        check_int("dim", self.dim, low=1, high=MAX_DIM)
        check_positive("lr", self.lr)
        check_positive("sigma", self.sigma, allow_zero=True)

    def __call__(self, t: int, node: int, theta: Tensor, generator: torch.Generator) -> Tensor:
        c = initial_vector(self.seed, node, self.dim, dtype=theta.dtype).to(theta.device)
        new = theta - self.lr * (theta - c)
        if self.sigma > 0 and node in self.noisy:
            z = torch.randn(theta.shape, generator=generator, dtype=theta.dtype, device=generator.device)
            new = new + self.lr * self.sigma * z.to(theta.device)
        return new


def walk_task(net: ProcessGroupNetwork, route: Sequence[int], hop: QuadraticHop, *,
              dtype: str = "float64") -> dict[str, Any]:
    """Walk ``route`` from ``theta_0 = 0`` with ``hop``; returns ``{"rank", "theta" (last holder only),
    "hops", "final_holder", "seconds", "log"}``."""
    check_choice("dtype", dtype, tuple(DTYPES))
    theta0 = torch.zeros(hop.dim, dtype=DTYPES[dtype], device=net.device)
    net.barrier()
    res = net.walk(route, theta0, hop)
    return {"rank": net.rank, "theta": None if res.theta is None else res.theta.cpu(), "hops": res.hops,
            "final_holder": res.final_holder, "seconds": res.seconds, "log": net.log.rows()}


def walk_reference(route: Sequence[int], hop: QuadraticHop, n_clients: int, *, seed: int,
                   dtype: str = "float64") -> Tensor:
    """The same walk in one process: client ``v``'s noise from ``rank_generator(seed, v, "noise")``, each
    generator advancing only at its own client's hops, as on the ranks."""
    n_clients = check_int("n_clients", n_clients, low=1)
    gens = [rank_generator(seed, v, "noise") for v in range(n_clients)]
    theta = torch.zeros(hop.dim, dtype=DTYPES[dtype], device=gens[0].device)
    for t, v in enumerate(np.asarray(route, dtype=np.int64).reshape(-1)):
        theta = hop(t, int(v), theta, gens[int(v)])
    return theta


def run_sequence(net: ProcessGroupNetwork, calls: Sequence[tuple[Any, tuple, dict]]) -> list[Any]:
    """Run several tasks ``fn(net, *args, **kwargs)`` one after another in one process group, paying the
    processes' start-up (seconds per rank) once; each task starts as if launched alone (empty message log,
    noise generator restarted from the seed: :meth:`ProcessGroupNetwork.reset`)."""
    out = []
    for fn, args, kwargs in calls:
        net.reset()
        out.append(fn(net, *args, **kwargs))
    return out


def median_ms(seconds: Sequence[float]) -> float:
    """Median of a list of durations, in milliseconds (``nan`` when empty)."""
    return float(np.median(seconds) * 1e3) if len(seconds) else math.nan
