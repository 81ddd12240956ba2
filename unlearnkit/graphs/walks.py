"""Random walks of a token over the clients, and the statistics privacy arguments are built on.

A *route* is a 1-D integer array ``route[t]`` = the client that holds the token, and updates the model,
at hop ``t = 0 .. T-1``. Route generators (all take an explicit ``numpy.random.Generator``):

- :func:`simple_walk`: the token moves to a uniformly random neighbour (digest 000, Algorithm 2).
- :func:`rrdu_route`: RR-DU routing (digest 000, Algorithm 4, line "Routing"): at every hop, independently of
  where the token is, go to the unlearning client ``u`` with probability ``p``, else to a uniformly random
  client of ``V \\ {u}``. This *jumps*: it abstracts a complete graph with self-loops (digest 000, P1).
- :func:`rrdu_graph_walk`: our edge-respecting variant (not in the paper): a Metropolis-Hastings walk on
  ``G`` whose stationary distribution is RR-DU's, ``pi_u = p`` and ``pi_v = (1 - p) / (N - 1)``. It only
  crosses edges of ``G``; its long-run visit frequencies match RR-DU's, but visits are correlated in time
  (neighbours of ``u`` see the token sooner).
- :func:`uniform_route`: i.i.d. uniform clients (Algorithm 3, NetDP).

Statistics: :func:`visit_counts`, :func:`first_observation_delays` (the geometric delay ``K ~ Geom(q)``,
``q = (1 - p)/(N - 1)``, before an observer sees the model after a sensitive visit; digest 000 section 2.5),
:func:`segments` (the geometric runs of descent hops between visits to ``u``; digest 000 section 2.4) and
:func:`transition_matrix` for exact stationary distributions.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .._validate import Limit, check_int, check_probability
from .sparse import MAX_SPARSE_CLIENTS, canonical_edges, check_sparse_n, graph_edges
from .topology import MAX_CLIENTS, validate_graph


def _rng(rng: np.random.Generator) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (use unlearnkit.numpy_generator(seed)), "
                         f"got {type(rng).__name__}")
    return rng


#: The longest route built in one call (80 MB of client ids): longer walks are refused up front.
MAX_HOPS = Limit("MAX_HOPS", 10_000_000)


def _check_node(name: str, v: int, n: int) -> int:
    return check_int(name, v, low=0, high=n - 1)


def _csr(G: Any, n: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, neighbours, degree)`` of a connected network given as a ``networkx.Graph`` or as an ``(E, 2)``
    edge array with ``n`` clients: each client's neighbours sorted, in ``O(N + E)`` (no ``N x N`` array)."""


    if isinstance(G, nx.Graph):
        validate_graph(G)
        n, e = G.number_of_nodes(), graph_edges(G)
    else:
        try:
            e = np.asarray(G, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"G={G!r:.80}: expected a networkx graph or an (E, 2) integer edge array") from None
        if e.size == 0:
            e = e.reshape(0, 2)
        if e.ndim != 2 or e.shape[1] != 2:
            raise ValueError(f"G has shape {e.shape}: expected a networkx graph or an (E, 2) integer edge array")
        if n is None:
            raise ValueError("G is an edge array and n=None: pass n, the number of clients")
        n = check_sparse_n(n)
        if e.size and (e.min() < 0 or e.max() >= n):
            raise ValueError(f"G names clients outside [0, {n - 1}] (n={n})")
        e = canonical_edges(e[:, 0], e[:, 1], n)
    A = sp.csr_matrix((np.ones(2 * len(e), dtype=np.int8), (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])),
                      shape=(n, n))
    A.sort_indices()
    k = connected_components(A, directed=False)[0]
    if k > 1:
        raise ValueError(f"the network is disconnected ({k} components): random walks need a connected graph")
    indptr = A.indptr.astype(np.int64)
    return indptr, A.indices.astype(np.int64), np.diff(indptr)


def _starts(rng: np.random.Generator, n: int, start: int | None, walks: int | None) -> np.ndarray:
    if start is not None:
        return np.full(1 if walks is None else walks, _check_node("start", start, n), dtype=np.int64)
    return np.array([int(rng.integers(n))] if walks is None else rng.integers(0, n, size=walks), dtype=np.int64)


def _check_walks(walks: int | None, hops: int) -> int | None:
    if walks is None:
        return None
    walks = check_int("walks", walks, low=1)
    if walks * hops > MAX_HOPS:
        raise ValueError(f"walks * hops = {walks * hops} is too large: expected at most {MAX_HOPS} hops in all")
    return walks


def simple_walk(G: Any, hops: int, *, start: int | None = None, rng: np.random.Generator,
                n: int | None = None, walks: int | None = None) -> np.ndarray:
    """The simple random walk on ``G``: ``route[0] = start`` (uniform when ``None``), then each hop moves to
    a uniformly random neighbour of the current client. Returns ``hops`` client ids.

    ``G`` is a ``networkx.Graph`` or an ``(E, 2)`` edge array (:func:`~unlearnkit.graphs.edge_list`) with ``n``
    clients; the walk reads a CSR neighbour list, ``O(N + E)`` memory. With ``walks = K`` it returns ``(K, hops)``
    independent walks, all advanced together one hop at a time (array operations over the ``K`` walks)."""
    rng = _rng(rng)
    hops = check_int("hops", hops, low=0, high=MAX_HOPS)
    walks = _check_walks(walks, hops)
    indptr, flat, deg = _csr(G, n)
    cur = _starts(rng, len(deg), start, walks)
    u = rng.random(hops if walks is None else (hops, walks))
    if walks is None:  # one walk: Python scalars are faster than arrays of one
        c, uu, ip, fl, dg, out = int(cur[0]), u.tolist(), indptr.tolist(), flat.tolist(), deg.tolist(), [0] * hops
        for t in range(hops):
            out[t] = c
            c = fl[ip[c] + int(uu[t] * dg[c])]
        return np.array(out, dtype=np.int64)
    route = np.empty((hops, walks), dtype=np.int64)
    for t in range(hops):
        route[t] = cur
        cur = flat[indptr[cur] + (u[t] * deg[cur]).astype(np.int64)]
    return route.T.copy()


def rrdu_route(n: int, u: int, p: float, hops: int, *, rng: np.random.Generator) -> np.ndarray:
    """RR-DU routing (digest 000, Algorithm 4): ``hops`` i.i.d. draws, each ``u`` with probability ``p``,
    else uniform on ``V \\ {u}``. The current location is irrelevant (the routing is memoryless), so the
    token's start does not matter either."""
    n = check_int("n", n, low=2, high=MAX_SPARSE_CLIENTS)
    u = _check_node("u", u, n)
    p = check_probability("p", p)
    hops = check_int("hops", hops, low=0, high=MAX_HOPS)
    rng = _rng(rng)
    hit = rng.random(hops) < p
    other = rng.integers(0, n - 1, size=hops)
    other = other + (other >= u)  # uniform on {0..n-1} \ {u}
    return np.where(hit, u, other).astype(np.int64)


def route_next(current: int, u: int, n_nodes: int, p: float, rng: np.random.Generator) -> int:
    """One RR-DU routing draw (for step-by-step animations): :func:`rrdu_route` with one hop.

    ``current`` is ignored: the routing is memoryless (digest 000, Algorithm 4).
    """
    return int(rrdu_route(n_nodes, u, p, 1, rng=rng)[0])


def uniform_route(n: int, hops: int, *, rng: np.random.Generator) -> np.ndarray:
    """I.i.d. uniform clients, as NetDP (digest 000, Algorithm 3) picks them."""
    n = check_int("n", n, low=2, high=MAX_SPARSE_CLIENTS)
    return _rng(rng).integers(0, n, size=check_int("hops", hops, low=0, high=MAX_HOPS)).astype(np.int64)


def _rrdu_pi(n: int, u: int, p: float) -> np.ndarray:
    pi = np.full(n, (1.0 - p) / (n - 1))
    pi[u] = p
    return pi


def transition_matrix(G: nx.Graph | None = None, *, kind: str = "simple", n: int | None = None,
                      u: int | None = None, p: float | None = None) -> np.ndarray:
    """Row-stochastic transition matrix ``P[i, j] = Pr(next = j | current = i)`` of a route generator.

    ``kind="simple"``: ``1/deg(i)`` on ``G``'s edges. ``kind="rrdu"``: every row equals RR-DU's routing
    distribution (needs ``n``, ``u``, ``p``). ``kind="rrdu_graph"``: the Metropolis-Hastings walk of
    :func:`rrdu_graph_walk` on ``G`` (needs ``u``, ``p``).
    """
    if kind == "rrdu":
        n = check_int("n", n, low=2, high=MAX_CLIENTS)  # a dense N x N matrix
        u = _check_node("u", u, n)
        p = check_probability("p", p)
        return np.tile(_rrdu_pi(n, u, p), (n, 1))
    validate_graph(G)
    n = G.number_of_nodes()
    A = nx.to_numpy_array(G, nodelist=range(n))
    deg = A.sum(axis=1)
    if kind == "simple":
        return A / deg[:, None]
    if kind != "rrdu_graph":
        raise ValueError(f"kind={kind!r} is not valid: expected one of 'simple', 'rrdu', 'rrdu_graph'")
    u = _check_node("u", u, n)
    p = check_probability("p", p, allow_zero=False, allow_one=False)
    pi = _rrdu_pi(n, u, p)
    # propose a uniform neighbour, accept with min(1, pi_j deg_i / (pi_i deg_j)): detailed balance w.r.t. pi
    accept = np.minimum(1.0, (pi[None, :] * deg[:, None]) / (pi[:, None] * deg[None, :]))
    P = A / deg[:, None] * accept
    P[np.diag_indices(n)] = 1.0 - P.sum(axis=1)
    return P


def stationary_distribution(P: np.ndarray) -> np.ndarray:
    """The stationary distribution ``pi P = pi`` of an irreducible row-stochastic ``P``."""
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] < 1:
        raise ValueError(f"P must be a square (N, N) transition matrix, got shape {P.shape}")
    if not np.all(np.isfinite(P)) or P.min() < 0 or np.abs(P.sum(axis=1) - 1).max() > 1e-9:
        raise ValueError("P is not row-stochastic: expected finite entries P[i, j] in [0, 1] with every row "
                         "summing to 1")
    vals, vecs = np.linalg.eig(P.T)
    v = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
    return v / v.sum()


def _rrdu_graph_rows(indptr: np.ndarray, nbrs: np.ndarray, deg: np.ndarray, u: int, p: float
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Metropolis-Hastings walk's transition rows in CSR form, each row's entries (neighbours and the stay)
    in column order: ``(indptr, columns, cumulative probabilities)``, the last of each row set to 1."""
    n = len(deg)
    pi = _rrdu_pi(n, u, p)
    rows = np.repeat(np.arange(n, dtype=np.int64), deg)
    degf = deg.astype(float)
    # the dense matrix's arithmetic entry by entry (A / deg * min(1, pi_j deg_i / (pi_i deg_j)))
    prob = 1.0 / degf[rows] * np.minimum(1.0, (pi[nbrs] * degf[rows]) / (pi[rows] * degf[nbrs]))
    stay = 1.0 - np.bincount(rows, weights=prob, minlength=n)
    cols = np.concatenate([nbrs, np.arange(n, dtype=np.int64)])
    owner = np.concatenate([rows, np.arange(n, dtype=np.int64)])
    order = np.lexsort((cols, owner))
    cols, vals = cols[order], np.concatenate([prob, stay])[order]
    ptr = indptr + np.arange(n + 1, dtype=np.int64)  # one more entry per row: the stay
    cum = np.cumsum(vals)
    cum -= np.repeat(np.r_[0.0, cum[ptr[1:-1] - 1]], np.diff(ptr))  # restart the sum at each row
    cum[ptr[1:] - 1] = 1.0
    return ptr, cols, cum


def rrdu_graph_walk(G: Any, u: int, p: float, hops: int, *, start: int | None = None,
                    rng: np.random.Generator, n: int | None = None, walks: int | None = None) -> np.ndarray:
    """RR-DU routing that respects ``G``'s edges (our variant, not in the paper).

    A Metropolis-Hastings walk: propose a uniform neighbour ``j`` of the current client ``i``, move with
    probability ``min(1, pi_j deg_i / (pi_i deg_j))``, otherwise stay (the stay is a hop at ``i``). Its
    stationary distribution is RR-DU's (``pi_u = p``, others ``(1 - p)/(N - 1)``), so in the long run a
    fraction ``p`` of hops are at ``u``; on the complete graph it is *not* identical to :func:`rrdu_route`
    (it never jumps twice into the same non-``u`` client by proposal, only by rejection).

    ``G`` is a ``networkx.Graph`` or an ``(E, 2)`` edge array (:func:`~unlearnkit.graphs.edge_list`) with ``n``
    clients. The transition rows are kept sparse (``O(N + E)`` memory, never ``N x N``); each hop draws one
    uniform ``r`` and takes the first entry of the current row whose cumulative probability exceeds it, the
    route :func:`transition_matrix` (``kind="rrdu_graph"``) would give. With ``walks = K`` it returns
    ``(K, hops)`` independent walks advanced together (one vectorised binary search per hop for all of them).
    """
    rng = _rng(rng)
    hops = check_int("hops", hops, low=0, high=MAX_HOPS)
    walks = _check_walks(walks, hops)
    indptr, nbrs, deg = _csr(G, n)
    n = len(deg)
    u = _check_node("u", u, n)
    p = check_probability("p", p, allow_zero=False, allow_one=False)
    ptr, cols, cum = _rrdu_graph_rows(indptr, nbrs, deg, u, p)
    cur = _starts(rng, n, start, walks)
    r = rng.random(hops if walks is None else (hops, walks))
    if walks is None:  # one walk: a bisection of the current row per hop, on Python lists (no array per hop)
        c, out, rr = int(cur[0]), [0] * hops, r.tolist()
        ptr_l, cols_l, cum_l = ptr.tolist(), cols.tolist(), cum.tolist()
        for t in range(hops):
            out[t] = c
            c = cols_l[bisect_right(cum_l, rr[t], ptr_l[c], ptr_l[c + 1])]
        return np.array(out, dtype=np.int64)
    route = np.empty((hops, walks), dtype=np.int64)
    for t in range(hops):
        route[t] = cur
        # binary search in every walk's row at once: the first entry whose cumulative probability exceeds r
        lo, hi = ptr[cur], ptr[cur + 1] - 1
        while True:
            open_ = lo < hi
            if not open_.any():
                break
            mid = (lo + hi) // 2
            right = open_ & (cum[mid] <= r[t])
            lo = np.where(right, mid + 1, lo)
            hi = np.where(open_ & ~right, mid, hi)
        cur = cols[lo]
    return route.T.copy()


def crosses_only_edges(route: np.ndarray, G: nx.Graph, *, allow_stay: bool = False) -> bool:
    """True when every consecutive pair of ``route`` is an edge of ``G`` (or equal, if ``allow_stay``)."""
    route = np.asarray(route)
    for a, b in zip(route[:-1], route[1:]):
        if a == b:
            if not allow_stay:
                return False
        elif not G.has_edge(int(a), int(b)):
            return False
    return True


def visit_counts(route: np.ndarray, n: int) -> np.ndarray:
    """How many hops each of the ``n`` clients held the token."""
    n = check_int("n", n, low=1, high=MAX_SPARSE_CLIENTS)
    route = np.asarray(route, dtype=np.int64)
    if route.size and (route.min() < 0 or route.max() >= n):
        raise ValueError(f"route has client ids outside [0, {n - 1}]")
    return np.bincount(route, minlength=n)


def first_observation_delays(route: np.ndarray, u: int, v: int) -> np.ndarray:
    """For each hop at ``u`` (a sensitive visit), the number of hops ``K >= 1`` until observer ``v`` next
    holds the token (digest 000, section 2.5: ``K ~ Geom(q)`` on ``{1, 2, ...}`` with ``q = (1-p)/(N-1)``
    under RR-DU routing). Visits to ``u`` that ``v`` never follows before the route ends are dropped
    (censored)."""
    route = np.asarray(route, dtype=np.int64)
    if int(u) == int(v):
        raise ValueError(f"observer v={v} must differ from the unlearning client u={u}")
    tu = np.flatnonzero(route == u)
    tv = np.flatnonzero(route == v)
    nxt = np.searchsorted(tv, tu, side="right")
    ok = nxt < len(tv)
    return (tv[nxt[ok]] - tu[ok]).astype(np.int64)


def observer_probability(n: int, p: float) -> float:
    """``q = (1 - p) / (N - 1)``: the per-hop probability that a given observer ``v != u`` holds the token
    under RR-DU routing (digest 000, section 2.5)."""
    n = check_int("n", n, low=2)
    return (1.0 - check_probability("p", p)) / (n - 1)


@dataclass(frozen=True)
class Segments:
    """The segment view of a route with respect to client ``u`` (digest 000, section 2.4).

    Attributes
    ----------
    descent_hops:
        For each visit to ``u``, the number of hops elsewhere since the previous visit to ``u`` (or since
        the start, for the first one). Under RR-DU routing these are i.i.d. ``Geom(p)`` on ``{0, 1, ...}``
        with mean ``(1 - p)/p``: the memoryless routing makes the first run look like all the others.
    tail:
        Hops after the last visit to ``u`` (a run cut off by the end of the route, not followed by ``u``).
    visit_times:
        The hops at which ``u`` held the token.
    """

    descent_hops: np.ndarray
    tail: int
    visit_times: np.ndarray

    @property
    def n_visits(self) -> int:
        return int(self.visit_times.size)


def segments(route: np.ndarray, u: int) -> Segments:
    """Cut ``route`` into segments "some descent hops elsewhere, then one hop at ``u``"."""
    route = np.asarray(route, dtype=np.int64)
    tu = np.flatnonzero(route == int(u))
    prev = np.concatenate([[-1], tu[:-1]])
    runs = (tu - prev - 1).astype(np.int64)
    tail = int(route.size - 1 - tu[-1]) if tu.size else int(route.size)
    return Segments(descent_hops=runs, tail=tail, visit_times=tu)
