"""Dynamic topologies: a possibly different graph, and mixing matrix, in every round.

PDUDT (digest 002) trains over "a time-varying graph" drawn afresh each round; decentralizepy's
PeerSamplerDynamic and Epidemic Learning, and BlueFog's one-peer schedules, are the systems counterparts
(``research/peers.md`` B.3). A schedule here is an object with

- ``graph(t)``: the round-``t`` graph on clients ``0 .. N-1`` (random access, reproducible from the seed),
- ``mixing(t, rule)``: its symmetric doubly stochastic mixing matrix (an isolated client keeps its vector),
- ``graphs(T)``, ``mixings(T)``, ``spectral_gaps(T)``: the first ``T`` rounds.

Single rounds may be disconnected (spectral gap 0); what the analyses need instead is that information
still gets everywhere: :func:`window_connected` checks that the union of every ``B`` consecutive rounds is
connected (the usual "B-connectivity" assumption of time-varying gossip).

Schedules:

- :class:`StaticSchedule`: the same graph every round.
- :class:`ErdosRenyiSchedule`: i.i.d. G(N, p_edge) per round, optionally redrawn until connected
  (digest 002, section 2.1 and pitfall P6).
- :class:`EdgeChurnSchedule`: start from a graph; each round a fraction ``rate`` of the edges is rewired
  (removed and replaced by as many new random edges), so the edge count stays fixed.
- :class:`OnePeerExponentialSchedule`: round ``t`` joins ``i`` and ``i + 2^(t mod tau)`` (mod N),
  ``tau = ceil(log2 N)``: degree <= 2 per round, and the union over any ``tau`` rounds is the
  exponential graph (BlueFog's one-peer dynamic schedule, made undirected so ``W`` is symmetric).
- :class:`RandomKOutSchedule`: every client picks ``k`` random peers each round (Epidemic Learning);
  the chosen links are used in both directions so that the Metropolis matrix is doubly stochastic.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import networkx as nx
import numpy as np

from .._validate import check_choice, check_int, check_probability
from .mixing import MIXING_RULES, mixing_matrix, spectral_gap
from .topology import circle_layout, make_graph, validate_graph


class DynamicTopology:
    """Base class: subclasses implement :meth:`_build` (the round-``t`` graph from a round-specific RNG).

    Graphs are cached, so ``graph(t)`` is cheap the second time and always returns the same graph.
    """

    name = "dynamic"

    def __init__(self, n: int, *, seed: int = 0) -> None:
        n = check_int("n", n)
        if n < 2:
            raise ValueError(f"n={n} is too small: a network needs at least 2 clients (expected n >= 2)")
        self.n = n
        self.seed = int(seed)
        self._cache: dict[int, nx.Graph] = {}
        self.pos = circle_layout(n)

    def _round_rng(self, t: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, int(t)])

    def _build(self, t: int) -> nx.Graph:  # pragma: no cover - abstract
        raise NotImplementedError

    def graph(self, t: int) -> nx.Graph:
        """The graph of round ``t`` (``t >= 0``)."""
        t = check_int("t", t, low=0)
        if t not in self._cache:
            G = self._build(t)
            G.graph["name"] = self.name
            G.graph["pos"] = self.pos
            validate_graph(G, require_connected=False)
            self._cache[t] = G
        return self._cache[t]

    def mixing(self, t: int, rule: str = "metropolis") -> np.ndarray:
        """The round-``t`` mixing matrix (rounds may be disconnected)."""
        return mixing_matrix(self.graph(t), rule, require_connected=False)

    def graphs(self, rounds: int) -> list[nx.Graph]:
        return [self.graph(t) for t in range(check_int("rounds", rounds, low=0))]

    def mixings(self, rounds: int, rule: str = "metropolis") -> np.ndarray:
        """``(rounds, N, N)`` stack of mixing matrices."""
        check_choice("rule", rule, MIXING_RULES)
        return np.stack([self.mixing(t, rule) for t in range(check_int("rounds", rounds, low=1))])

    def spectral_gaps(self, rounds: int, rule: str = "metropolis") -> np.ndarray:
        """Per-round ``1 - slem(W_t)`` (0 in a disconnected round)."""
        return np.array([spectral_gap(self.mixing(t, rule)) for t in range(check_int("rounds", rounds, low=1))])

    def contraction(self, rounds: int, rule: str = "metropolis") -> np.ndarray:
        """``||W_t ... W_1 W_0 - J||_2`` for ``t = 0 .. rounds-1``: how far gossip over the first ``t + 1``
        rounds is from exact averaging. The honest measure of mixing over time: single rounds may have
        gap 0 (disconnected) while their product still contracts, because different rounds use
        different edges."""
        P = np.eye(self.n)
        J = np.full((self.n, self.n), 1.0 / self.n)
        out = np.empty(check_int("rounds", rounds, low=1))
        for t in range(rounds):
            P = self.mixing(t, rule) @ P
            out[t] = np.linalg.norm(P - J, 2)
        return out

    def window_connected(self, rounds: int, window: int) -> bool:
        """True when the union of every ``window`` consecutive rounds among the first ``rounds`` is connected."""
        return window_connected(self.graphs(rounds), window)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n}, seed={self.seed})"


class StaticSchedule(DynamicTopology):
    """The same graph ``G`` in every round (lets static and dynamic code paths share one interface)."""

    name = "static"

    def __init__(self, G: nx.Graph, *, require_connected: bool = True) -> None:
        validate_graph(G, require_connected=require_connected)
        super().__init__(G.number_of_nodes())
        self._G = G
        self.name = G.graph.get("name", "static")
        if "pos" in G.graph:
            self.pos = np.asarray(G.graph["pos"])

    def _build(self, t: int) -> nx.Graph:
        return self._G.copy()


class ErdosRenyiSchedule(DynamicTopology):
    """I.i.d. G(N, ``p_edge``) in every round (digest 002: default ``p_edge = 0.4``).

    ``ensure_connected=True`` redraws each round until connected (at most ``tries`` draws, then
    ``ValueError``); ``False`` keeps disconnected rounds, as the paper may have (pitfall P6).
    """

    name = "erdos_renyi"

    def __init__(self, n: int, p_edge: float = 0.4, *, ensure_connected: bool = False, tries: int = 1000,
                 seed: int = 0) -> None:
        super().__init__(n, seed=seed)
        self.p_edge = check_probability("p_edge", p_edge, allow_zero=False)
        self.ensure_connected = bool(ensure_connected)
        self.tries = check_int("tries", tries, low=1)

    def _build(self, t: int) -> nx.Graph:
        rng = self._round_rng(t)
        for _ in range(self.tries if self.ensure_connected else 1):
            G = nx.gnp_random_graph(self.n, self.p_edge, seed=int(rng.integers(2**31)))
            if not self.ensure_connected or nx.is_connected(G):
                return G
        raise ValueError(f"ErdosRenyiSchedule round {t}: no connected G(n={self.n}, p_edge={self.p_edge}) in "
                         f"tries={self.tries} draws; raise p_edge or set ensure_connected=False")


class EdgeChurnSchedule(DynamicTopology):
    """Start from ``G``; each round, rewire ``round(rate * |E|)`` edges: remove that many random edges, then
    add as many random non-edges. ``rate = 0`` is static, ``rate = 1`` redraws the whole edge set.

    Round 0 is ``G`` itself; round ``t`` is built from round ``t - 1`` (so rounds are computed in order and
    cached). ``keep_connected=True`` retries a round's rewiring (up to ``tries`` times) until connected.
    """

    name = "edge_churn"

    def __init__(self, G: nx.Graph, rate: float = 0.1, *, keep_connected: bool = False, tries: int = 100,
                 seed: int = 0) -> None:
        validate_graph(G)
        super().__init__(G.number_of_nodes(), seed=seed)
        self.base = nx.Graph()
        self.base.add_nodes_from(range(self.n))
        self.base.add_edges_from(G.edges)
        self.rate = check_probability("rate", rate)
        self.keep_connected = bool(keep_connected)
        self.tries = check_int("tries", tries, low=1)
        self.base_name = G.graph.get("name", "custom")
        if "pos" in G.graph:
            self.pos = np.asarray(G.graph["pos"])

    def _rewire(self, prev: nx.Graph, rng: np.random.Generator) -> nx.Graph:
        edges = list(prev.edges)
        k = int(round(self.rate * len(edges)))
        G = prev.copy()
        if k == 0:
            return G
        drop = rng.choice(len(edges), size=k, replace=False)
        G.remove_edges_from(edges[i] for i in drop)
        e = np.array(list(G.edges), dtype=np.int64).reshape(-1, 2)
        A = np.zeros((self.n, self.n), dtype=bool)
        A[e[:, 0], e[:, 1]] = A[e[:, 1], e[:, 0]] = True
        iu, ju = np.triu_indices(self.n, 1)
        free = np.flatnonzero(~A[iu, ju])
        add = rng.choice(free, size=min(k, len(free)), replace=False)
        G.add_edges_from(zip(iu[add].tolist(), ju[add].tolist()))
        return G

    def _build(self, t: int) -> nx.Graph:
        if t == 0:
            return self.base.copy()
        # build the missing rounds in order (no deep recursion for a late first request)
        for s in range(max((s for s in self._cache if s < t), default=0), t - 1):
            self.graph(s)
        prev = self.graph(t - 1)
        rng = self._round_rng(t)
        for _ in range(self.tries if self.keep_connected else 1):
            G = self._rewire(prev, rng)
            if not self.keep_connected or nx.is_connected(G):
                return G
        raise ValueError(f"EdgeChurnSchedule round {t}: no connected rewiring at rate={self.rate} in "
                         f"tries={self.tries}; lower rate or set keep_connected=False")


class OnePeerExponentialSchedule(DynamicTopology):
    """Round ``t`` links ``i`` with ``i + 2^(t mod tau) (mod N)``, ``tau = ceil(log2 N)``.

    Each client talks to at most 2 peers per round (1 when ``2^k = N/2``), yet any ``tau`` consecutive
    rounds together form the exponential graph, so the schedule is ``tau``-window connected. Deterministic
    (``seed`` is unused).
    """

    name = "one_peer_exponential"

    def __init__(self, n: int, *, seed: int = 0) -> None:
        super().__init__(n, seed=seed)
        self.tau = max(1, math.ceil(math.log2(self.n)))

    def _build(self, t: int) -> nx.Graph:
        hop = 2 ** (t % self.tau)
        G = nx.Graph()
        G.add_nodes_from(range(self.n))
        G.add_edges_from((i, (i + hop) % self.n) for i in range(self.n) if (i + hop) % self.n != i)
        return G


class RandomKOutSchedule(DynamicTopology):
    """Each round, every client picks ``k`` distinct random peers (Epidemic Learning's random k-out graphs).

    Links are undirected (a pick by either end joins them): Epidemic Learning itself uses directed pushes
    with weights ``1/(in-degree + 1)``, which are not doubly stochastic; we symmetrise so that every
    analysis assumption on ``W`` holds, and say so here.
    """

    name = "random_k_out"

    def __init__(self, n: int, k: int = 1, *, seed: int = 0) -> None:
        super().__init__(n, seed=seed)
        self.k = check_int("k", k, low=1, high=self.n - 1)

    def _build(self, t: int) -> nx.Graph:
        rng = self._round_rng(t)
        G = nx.Graph()
        G.add_nodes_from(range(self.n))
        for i in range(self.n):
            peers = rng.choice(self.n - 1, size=self.k, replace=False)
            peers = peers + (peers >= i)
            G.add_edges_from((i, int(j)) for j in peers)
        return G


DYNAMIC_TOPOLOGIES = ("static", "erdos_renyi", "edge_churn", "one_peer_exponential", "random_k_out")


def make_schedule(name: str, n: int, *, seed: int = 0, base: str = "ring", rate: float = 0.1,
                  p_edge: float = 0.4, k: int = 1, ensure_connected: bool = False) -> DynamicTopology:
    """Build a schedule by name (:data:`DYNAMIC_TOPOLOGIES`); ``base`` names the static topology that
    ``"static"`` and ``"edge_churn"`` start from."""

    check_choice("schedule", name, DYNAMIC_TOPOLOGIES)
    if name == "static":
        return StaticSchedule(make_graph(base, n, seed=seed))
    if name == "erdos_renyi":
        return ErdosRenyiSchedule(n, p_edge, ensure_connected=ensure_connected, seed=seed)
    if name == "edge_churn":
        return EdgeChurnSchedule(make_graph(base, n, seed=seed), rate, keep_connected=ensure_connected, seed=seed)
    if name == "one_peer_exponential":
        return OnePeerExponentialSchedule(n, seed=seed)
    return RandomKOutSchedule(n, k, seed=seed)


def union_graph(graphs: Iterable[nx.Graph]) -> nx.Graph:
    """The union of the edge sets of ``graphs`` (same node set)."""
    graphs = list(graphs)
    if not graphs:
        raise ValueError("union_graph needs at least one graph")
    U = nx.Graph()
    U.add_nodes_from(graphs[0].nodes)
    for G in graphs:
        U.add_edges_from(G.edges)
    return U


def window_connected(graphs: Sequence[nx.Graph], window: int) -> bool:
    """True when the union of every run of ``window`` consecutive graphs is connected (B-connectivity).

    Raises ``ValueError`` if ``window`` exceeds the number of rounds given.
    """
    window = check_int("window", window, low=1)
    if window > len(graphs):
        raise ValueError(f"window={window} exceeds the {len(graphs)} rounds given")
    return all(nx.is_connected(union_graph(graphs[s:s + window])) for s in range(len(graphs) - window + 1))
