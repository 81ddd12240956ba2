"""Communication graphs for decentralized learning, and stable 2-D positions to draw them.

Every decentralized method in unlearnkit runs on an undirected, connected ``networkx.Graph`` whose nodes
are the clients ``0 .. N-1``. This module builds the usual test-bed topologies (the ones decentralizepy and
BlueFog ship, see ``research/peers.md`` B.3) plus one made for teaching: two cliques joined by a single
bridge edge, whose spectral gap collapses because every bit of information must squeeze through one link.

All builders return a graph that passed :func:`validate_graph` and carry ``G.graph["name"]`` and
``G.graph["pos"]`` (an ``(N, 2)`` float array, deterministic for a given seed) so that plots of the same
topology never jump around between redraws.

>>> from unlearnkit.graphs import make_graph
>>> G = make_graph("ring", 6)
>>> sorted(d for _, d in G.degree())
[2, 2, 2, 2, 2, 2]
"""

from __future__ import annotations

import math
from typing import Any, Callable

import networkx as nx
import numpy as np

from .._validate import check_choice, check_int, check_probability


# ----------------------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------------------

#: Size limits, checked before anything is built: a simulation of more clients than this does not fit a
#: notebook (dense N x N mixing matrices), and a graph with more edges than this takes minutes in networkx.
MAX_CLIENTS = 10_000
MAX_EDGES = 1_000_000
_SPRING_MAX = 200  # a spring layout costs O(N^2) per iteration (25 s at N = 1000): larger graphs get a circle


def _check_n(n: int, *, pairs: float = 0.0, what: str = "") -> int:
    """``n`` in ``[2, MAX_CLIENTS]``; with ``pairs`` (the fraction of the ``n (n-1) / 2`` node pairs the builder
    visits or joins), also at most ``MAX_EDGES`` of them."""
    n = check_int("n", n)
    if n < 2:
        raise ValueError(f"n={n} is too small: a network needs at least 2 clients (expected n >= 2)")
    if n > MAX_CLIENTS:
        raise ValueError(f"n={n} is too large: expected n in [2, {MAX_CLIENTS}] for a networkx graph with dense "
                         "N x N mixing matrices; for more clients use unlearnkit.graphs.edge_list and "
                         "sparse_mixing_matrix (up to MAX_SPARSE_CLIENTS)")
    if pairs and pairs * n * (n - 1) / 2 > MAX_EDGES:
        hi = int((1 + math.sqrt(1 + 8 * MAX_EDGES / pairs)) / 2)
        raise ValueError(f"n={n} is too large for {what}: it would visit {pairs * n * (n - 1) / 2:.3g} node pairs; "
                         f"expected n <= {hi} (at most {MAX_EDGES} pairs)")
    return n


def validate_graph(G: nx.Graph, *, require_connected: bool = True, name: str = "G") -> nx.Graph:
    """Check that ``G`` can serve as a network of clients and return it.

    Requirements: an undirected simple ``networkx.Graph`` (no ``DiGraph``/``MultiGraph``), nodes exactly
    ``0 .. N-1``, ``N >= 2``, no self-loops (a self-loop is the mixing matrix's diagonal, not an edge), and,
    unless ``require_connected=False``, connected.

    Raises
    ------
    ValueError
        Naming the problem (directed, too few nodes, bad labels, self-loops, disconnected with the
        component sizes).
    """
    if not isinstance(G, nx.Graph):
        raise ValueError(f"{name} must be a networkx.Graph, got {type(G).__name__}")
    if G.is_directed() or G.is_multigraph():
        raise ValueError(f"{name} must be an undirected simple graph (got a {type(G).__name__}); "
                         "use nx.Graph(G.to_undirected())")
    n = G.number_of_nodes()
    if n < 2:
        raise ValueError(f"{name} has N={n} node(s): a network needs at least 2 clients (expected N >= 2)")
    if set(G.nodes) != set(range(n)):
        raise ValueError(f"{name}'s nodes must be the integers 0..{n - 1}; use from_networkx(G) to relabel")
    loops = list(nx.selfloop_edges(G))
    if loops:
        raise ValueError(f"{name} has self-loops at nodes {sorted({u for u, _ in loops})[:5]}: remove them "
                         "(self-weights belong in the mixing matrix's diagonal)")
    if require_connected and not nx.is_connected(G):
        sizes = sorted((len(c) for c in nx.connected_components(G)), reverse=True)
        raise ValueError(f"{name} is disconnected: {len(sizes)} components of sizes {sizes[:6]}; "
                         "gossip and random walks need a connected graph")
    return G


def from_networkx(G: nx.Graph, *, name: str = "custom", seed: int = 0) -> nx.Graph:
    """Accept any user graph: relabel its nodes to ``0 .. N-1`` (sorted order when sortable), validate it,
    and attach a name and positions. The input is not modified."""
    if not isinstance(G, nx.Graph):
        raise ValueError(f"G must be a networkx.Graph, got {type(G).__name__}")
    if G.is_directed() or G.is_multigraph():
        raise ValueError(f"G must be an undirected simple graph (got a {type(G).__name__})")
    try:
        order = sorted(G.nodes)
    except TypeError:
        order = list(G.nodes)
    H = nx.Graph()
    H.add_nodes_from(range(len(order)))
    index = {v: i for i, v in enumerate(order)}
    H.add_edges_from((index[a], index[b]) for a, b in G.edges if a != b)
    validate_graph(H)
    return _finish(H, name, seed=seed)


def _finish(G: nx.Graph, name: str, *, seed: int = 0, pos: np.ndarray | None = None, **meta: Any) -> nx.Graph:
    G.graph["name"] = name
    G.graph.update(meta)
    G.graph["pos"] = positions(G, seed=seed) if pos is None else np.asarray(pos, dtype=float)
    return G


# ----------------------------------------------------------------------------------------------------------
# Deterministic topologies
# ----------------------------------------------------------------------------------------------------------

def circle_layout(n: int, radius: float = 1.0, center: tuple[float, float] = (0.0, 0.0), phase: float = 0.0) -> np.ndarray:
    a = phase + 2 * np.pi * np.arange(n) / n
    return np.column_stack([center[0] + radius * np.cos(a), center[1] + radius * np.sin(a)])


def ring(n: int) -> nx.Graph:
    """The cycle ``0 - 1 - ... - (N-1) - 0`` (N >= 3; N = 2 gives the single edge)."""
    n = _check_n(n)
    G = nx.cycle_graph(n) if n >= 3 else nx.path_graph(n)
    return _finish(G, "ring", pos=circle_layout(n))


def path(n: int) -> nx.Graph:
    """The path ``0 - 1 - ... - (N-1)``: a ring with one edge cut, the slowest-mixing tree."""
    n = _check_n(n)
    return _finish(nx.path_graph(n), "path", pos=np.column_stack([np.linspace(-1, 1, n), np.zeros(n)]))


def star(n: int) -> nx.Graph:
    """Hub ``0`` joined to every other client (a server in disguise: every path has length <= 2)."""
    n = _check_n(n)
    pos = np.vstack([[0.0, 0.0], circle_layout(n - 1)])
    return _finish(nx.star_graph(n - 1), "star", pos=pos)


def complete(n: int) -> nx.Graph:
    """Everyone talks to everyone: the graph RR-DU's analysis assumes (digest 000, section 1.1)."""
    n = _check_n(n, pairs=1.0, what="complete")
    return _finish(nx.complete_graph(n), "complete", pos=circle_layout(n))


def grid_shape(n: int, rows: int | None) -> tuple[int, int]:
    if rows is None:
        rows = max(r for r in range(1, math.isqrt(n) + 1) if n % r == 0)
    rows = check_int("rows", rows, low=1)
    if n % rows:
        raise ValueError(f"rows={rows} does not divide n={n}: a grid needs rows * cols == n")
    return rows, n // rows


def _grid_graph(n: int, rows: int | None, periodic: bool, name: str) -> nx.Graph:
    n = _check_n(n)
    r, c = grid_shape(n, rows)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    for i in range(r):
        for j in range(c):
            v = i * c + j
            if j + 1 < c or (periodic and c > 2):
                G.add_edge(v, i * c + (j + 1) % c)
            if i + 1 < r or (periodic and r > 2):
                G.add_edge(v, ((i + 1) % r) * c + j)
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    pos = np.array([[j / max(c - 1, 1), -i / max(r - 1, 1)] for i in range(r) for j in range(c)]) * 2 - [1, -1]
    return _finish(G, name, pos=pos, rows=r, cols=c)


def grid(n: int, *, rows: int | None = None) -> nx.Graph:
    """A ``rows x cols`` 2-D lattice. By default ``rows`` is the largest divisor of ``n`` not above
    ``sqrt(n)``, so a prime ``n`` degenerates to a path (pass ``rows`` to choose)."""
    return _grid_graph(n, rows, False, "grid")


def torus(n: int, *, rows: int | None = None) -> nx.Graph:
    """The 2-D lattice with wrap-around edges (a side of length <= 2 does not wrap: it would duplicate edges)."""
    return _grid_graph(n, rows, True, "torus")


def exponential(n: int) -> nx.Graph:
    """Client ``i`` is joined to ``i +- 2^k (mod N)`` for ``2^k < N``: degree ``O(log N)``, diameter
    ``O(log N)``. This is the undirected (symmetric) version of BlueFog's ``ExponentialGraph``; the
    undirected form is needed for a symmetric, doubly stochastic mixing matrix."""
    n = _check_n(n)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    k = 1
    while k < n:
        for i in range(n):
            j = (i + k) % n
            if j != i:
                G.add_edge(i, j)
        k *= 2
    return _finish(G, "exponential", pos=circle_layout(n))


def two_clusters(n: int) -> nx.Graph:
    """Two cliques of ``floor(N/2)`` and ``ceil(N/2)`` clients joined by one bridge edge.

    The teaching bottleneck: inside a clique, gossip averages in one round; across the bridge the
    spectral gap is of order ``1/N^2``, so the two halves agree with each other only slowly. Needs N >= 4.
    """
    n = _check_n(n, pairs=0.5, what="two_clusters")
    if n < 4:
        raise ValueError(f"n={n} is too small for two_clusters: expected n >= 4 (two cliques of >= 2)")
    a = n // 2
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((i, j) for i in range(a) for j in range(i + 1, a))
    G.add_edges_from((i, j) for i in range(a, n) for j in range(i + 1, n))
    G.add_edge(a - 1, a)  # the bridge
    left = circle_layout(a, 0.8, (-1.2, 0.0), phase=0.0)
    right = circle_layout(n - a, 0.8, (1.2, 0.0), phase=np.pi)
    return _finish(G, "two_clusters", pos=np.vstack([left, right]), bridge=(a - 1, a))


# ----------------------------------------------------------------------------------------------------------
# Random topologies (resampled until connected, with a bounded number of tries)
# ----------------------------------------------------------------------------------------------------------

def _resample(build: Callable[[np.random.Generator], nx.Graph], seed: int, tries: int, what: str) -> nx.Graph:
    tries = check_int("tries", tries, low=1)
    rng = np.random.default_rng(seed)
    for _ in range(tries):
        G = build(rng)
        if nx.is_connected(G):
            return G
    raise ValueError(f"{what}: no connected sample in tries={tries} draws; increase the edge density "
                     "(or tries)")


def erdos_renyi(n: int, p_edge: float = 0.3, *, seed: int = 0, tries: int = 1000) -> nx.Graph:
    """G(N, p_edge), redrawn until connected (at most ``tries`` draws, then ``ValueError``)."""
    n = _check_n(n, pairs=1.0, what="erdos_renyi")  # networkx's G(N, p) visits every pair
    p_edge = check_probability("p_edge", p_edge, allow_zero=False)
    G = _resample(lambda r: nx.gnp_random_graph(n, p_edge, seed=int(r.integers(2**31))), seed, tries,
                  f"erdos_renyi(n={n}, p_edge={p_edge})")
    return _finish(G, "erdos_renyi", seed=seed, p_edge=p_edge)


def random_regular(n: int, degree: int = 3, *, seed: int = 0, tries: int = 1000) -> nx.Graph:
    """A uniformly random ``degree``-regular graph (``n * degree`` even, ``degree < n``), redrawn until connected."""
    n = _check_n(n)
    degree = check_int("degree", degree, low=1, high=n - 1)
    if (n * degree) % 2:
        raise ValueError(f"degree={degree} with n={n}: n * degree must be even for a regular graph")
    G = _resample(lambda r: nx.random_regular_graph(degree, n, seed=int(r.integers(2**31))), seed, tries,
                  f"random_regular(n={n}, degree={degree})")
    return _finish(G, "random_regular", seed=seed, degree=degree)


def small_world(n: int, k: int = 4, p_rewire: float = 0.1, *, seed: int = 0, tries: int = 1000) -> nx.Graph:
    """Watts-Strogatz: a ring where each client links to its ``k`` nearest neighbours, each edge rewired
    with probability ``p_rewire``; redrawn until connected. A few shortcuts shrink the diameter a lot."""
    n = _check_n(n)
    if n < 3:
        raise ValueError(f"n={n} is too small for small_world: expected n >= 3")
    k = check_int("k", k, low=2, high=n - 1)
    p_rewire = check_probability("p_rewire", p_rewire)
    G = _resample(lambda r: nx.watts_strogatz_graph(n, k, p_rewire, seed=int(r.integers(2**31))), seed, tries,
                  f"small_world(n={n}, k={k}, p_rewire={p_rewire})")
    return _finish(G, "small_world", pos=circle_layout(n), k=k, p_rewire=p_rewire)


# ----------------------------------------------------------------------------------------------------------
# Registry and positions
# ----------------------------------------------------------------------------------------------------------

TOPOLOGIES: dict[str, Callable[..., nx.Graph]] = {
    "ring": ring,
    "path": path,
    "star": star,
    "grid": grid,
    "torus": torus,
    "complete": complete,
    "erdos_renyi": erdos_renyi,
    "random_regular": random_regular,
    "small_world": small_world,
    "exponential": exponential,
    "two_clusters": two_clusters,
}
_RANDOM = {"erdos_renyi", "random_regular", "small_world"}


def make_graph(name: str, n: int, *, seed: int = 0, **kwargs: Any) -> nx.Graph:
    """Build topology ``name`` on ``n`` clients.

    ``name`` is one of :data:`TOPOLOGIES`; ``seed`` is used by the random ones (and ignored by the others);
    extra keyword arguments go to the builder (``p_edge``, ``degree``, ``k``, ``p_rewire``, ``rows``).
    """
    check_choice("topology", name, tuple(TOPOLOGIES))
    if name in _RANDOM:
        kwargs["seed"] = seed
    return TOPOLOGIES[name](n, **kwargs)


def positions(G: nx.Graph, *, seed: int = 0) -> np.ndarray:
    """Stable 2-D positions ``(N, 2)`` for drawing ``G``: the ones its builder attached when present,
    otherwise a seeded spring layout scaled into ``[-1, 1]^2`` (same graph and seed, same picture)."""
    if "pos" in G.graph:
        pos = np.asarray(G.graph["pos"], dtype=float)
        if pos.shape == (G.number_of_nodes(), 2):
            return pos
    n = G.number_of_nodes()
    if n == 0:
        return np.zeros((0, 2))
    if n > _SPRING_MAX:
        return circle_layout(n)
    layout = nx.spring_layout(G, seed=seed, iterations=100)
    pos = np.array([layout[v] for v in range(n)], dtype=float)
    span = np.abs(pos).max()
    return pos / span if span > 0 else pos
