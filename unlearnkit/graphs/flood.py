"""Flooding one message through a network of clients, and the graph checks that flooding needs.

Algorithm 1 of Wu et al. 2026 ("Certified Unlearning in Decentralized Federated Learning", lines 6-12;
digest 001 section 2.2) delivers the requester's Newton correction to every client by flooding: the source
sends it to every neighbour, and every other client forwards it once to all neighbours but the one it first
heard it from. Section IV-C (client-wise removal) has the departing client collect one statistic from every
other client along shortest paths, and the network then carries on without it.

- :func:`flood` simulates the synchronous flood and counts its messages (:class:`Flood`);
- :func:`relay_messages` counts the transmissions that bring one vector from every client to a sink;
- both take a ``networkx.Graph`` (a per-client loop, fast for classroom sizes) or, for networks of up to
  ``MAX_SPARSE_CLIENTS`` clients, an ``(E, 2)`` edge array (:func:`~unlearnkit.graphs.edge_list`) or a
  ``scipy.sparse`` adjacency or mixing matrix: then one compiled breadth-first pass over the CSR
  neighbour lists, ``O(N + E)`` memory and never an ``N x N`` array, with the same hops, parents and counts;
- :func:`remove_client` is the network after a client leaves (relabelled, checked to stay connected);
- :func:`check_flood_network` rejects a network that a flood cannot cover;
- the last two also take the edge array or sparse matrix, so that Newton's unlearner
  (:mod:`unlearnkit.methods.newton`) serves a network of ``10^5`` clients without ``networkx``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

import networkx as nx
import numpy as np
import scipy.sparse as sp

from .._validate import check_int
from .topology import validate_graph


@dataclass(frozen=True)
class Flood:
    """How one message spread: the hop at which each client first got it and what it cost.

    ``messages`` counts point-to-point transmissions of the ``d``-vector: the source sends to every
    neighbour, every other client forwards once to all neighbours but the one it first heard from, so
    ``messages = 2|E| - (N - 1)`` and ``duplicates = messages - (N - 1)`` are discarded (Wu et al. 2026,
    Algorithm 1, lines 9-12). The flood takes ``ecc(source)`` hops.
    """

    source: int
    hops: Mapping[int, int]
    parent: Mapping[int, Optional[int]]
    messages: int
    duplicates: int

    @property
    def rounds(self) -> int:
        return max(self.hops.values())


def check_flood_network(G: Any, what: str = "network", *, n: Optional[int] = None) -> Any:
    """``G`` if it is a valid connected client network; ``ValueError`` saying why a flood would miss clients.

    ``G``: a ``networkx.Graph``, or (no ``networkx``, ``O(N + E)``) a square ``scipy.sparse`` adjacency or mixing
    matrix, or an ``(E, 2)`` edge array with ``n``: connectivity by ``scipy.sparse.csgraph``."""
    if not isinstance(G, nx.Graph):
        from scipy.sparse.csgraph import connected_components  # deferred: imports scipy.sparse.csgraph

        indptr, nbrs = _neighbour_lists(G, n)
        size = len(indptr) - 1
        A = sp.csr_matrix((np.ones(len(nbrs), dtype=np.int8), nbrs, indptr), shape=(size, size))
        k = connected_components(A, directed=False)[0]
        if k > 1:
            raise ValueError(f"{what} is disconnected ({k} components); flooding the Newton correction cannot "
                             "reach every client")
        return G
    try:
        return validate_graph(G, name=what)
    except ValueError as exc:
        raise ValueError(f"{exc}; flooding the Newton correction cannot reach every client") from None


def _neighbour_lists(G: Any, n: Optional[int]) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, neighbours)``: each client's sorted neighbours from an edge array (with ``n``) or from the
    off-diagonal stored entries of a square ``scipy.sparse`` matrix, in ``O(N + E)``."""
    from .sparse import canonical_edges, check_sparse_n  # deferred: imports scipy.sparse.csgraph

    if sp.issparse(G):
        if G.ndim != 2 or G.shape[0] != G.shape[1]:
            raise ValueError(f"G must be a square (N, N) sparse matrix, got shape {G.shape}")
        C = G.tocoo()
        keep = C.data != 0
        n, e = check_sparse_n(G.shape[0]), canonical_edges(C.row[keep], C.col[keep], G.shape[0])
    else:
        if n is None:
            raise ValueError("n is required when the network is an edge array: pass the number of clients")
        n = check_sparse_n(n)
        e = np.asarray(G, dtype=np.int64).reshape(-1, 2)
        if e.size and (e.min() < 0 or e.max() >= n):
            raise ValueError(f"edges name clients outside [0, {n - 1}]")
        e = canonical_edges(e[:, 0], e[:, 1], n)
    A = sp.csr_matrix((np.ones(2 * len(e), dtype=np.int8), (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])),
                      shape=(n, n))
    A.sort_indices()
    return A.indptr.astype(np.int64), A.indices.astype(np.int64)


def _bfs(indptr: np.ndarray, nbrs: np.ndarray, source: int) -> tuple[np.ndarray, np.ndarray, int]:
    """``(hops, parent, messages)`` of the synchronous flood without a per-hop loop: ``hops`` are the
    breadth-first distances (SciPy's compiled shortest paths, unit weights), ``-1`` for a client never reached;
    a client reached at hop ``h`` takes as parent its smallest-numbered neighbour at hop ``h - 1`` (the
    smallest sender of that hop, as the per-client loop picks), ``-1`` for the source and the unreached."""
    from scipy.sparse.csgraph import shortest_path  # deferred: imports scipy.sparse.csgraph

    n = len(indptr) - 1
    A = sp.csr_matrix((np.ones(len(nbrs), dtype=np.float64), nbrs, indptr), shape=(n, n))
    dist = shortest_path(A, method="D", directed=False, unweighted=True, indices=source)
    hops = np.where(np.isfinite(dist), dist, -1).astype(np.int64)
    deg = np.diff(indptr)
    u = np.repeat(np.arange(n, dtype=np.int64), deg)  # the sender of each directed edge u -> nbrs
    step = (hops[u] >= 0) & (hops[nbrs] == hops[u] + 1)
    parent = np.full(n, n, dtype=np.int64)
    np.minimum.at(parent, nbrs[step], u[step])
    parent[parent == n] = -1
    reached = hops >= 0
    # every reached client sends to all its neighbours, everyone but the source skips its parent
    messages = int(deg[reached].sum()) - (int(reached.sum()) - 1)
    return hops, parent, messages


def _check_reached(hops: np.ndarray) -> None:
    missed = int(np.count_nonzero(hops < 0))
    if missed:
        raise ValueError(f"the network is disconnected ({missed} clients unreachable from the source); flooding "
                         "the Newton correction cannot reach every client")


def flood(G: Any, source: int, *, n: Optional[int] = None) -> Flood:
    """Simulate Algorithm 1's flooding of one message from ``source`` (synchronous hops).

    Parameters
    ----------
    G:
        A ``networkx.Graph`` on clients ``0 .. N-1``; or an ``(E, 2)`` edge array (with ``n``) or a square
        ``scipy.sparse`` matrix whose off-diagonal stored entries are the edges (module docstring: the
        vectorised path, no ``N x N`` array).
    source:
        The client the message starts from, in ``[0, N - 1]``.
    n:
        Number of clients when ``G`` is an edge array.

    Raises ``ValueError`` naming the problem when ``G`` is disconnected (the flood would miss clients) or
    ``source`` is not a client.
    """
    if not isinstance(G, nx.Graph):
        indptr, nbrs = _neighbour_lists(G, n)
        size = len(indptr) - 1
        source = check_int("source", source, low=0, high=size - 1)
        hop_arr, parent_arr, messages = _bfs(indptr, nbrs, source)
        _check_reached(hop_arr)
        parents = parent_arr.tolist()
        parents[source] = None
        return Flood(source, dict(enumerate(hop_arr.tolist())), dict(enumerate(parents)), messages,
                     messages - (size - 1))
    check_flood_network(G)
    n = G.number_of_nodes()
    source = check_int("source", source, low=0, high=n - 1)
    hops: dict[int, int] = {source: 0}
    parent: dict[int, Optional[int]] = {source: None}
    frontier = [source]
    messages = 0
    hop = 0
    while frontier:
        hop += 1
        arrivals: dict[int, int] = {}
        for u in frontier:
            for v in G.neighbors(u):
                if v == parent[u]:
                    continue  # never echo back to whoever we first heard it from
                messages += 1
                if v not in hops and v not in arrivals:
                    arrivals[v] = u
                elif v in arrivals:
                    arrivals[v] = min(arrivals[v], u)
        for v, u in arrivals.items():
            hops[v] = hop
            parent[v] = u
        frontier = sorted(arrivals)
    return Flood(source, hops, parent, messages, messages - (n - 1))


def relay_messages(G: Any, sink: int, *, n: Optional[int] = None) -> int:
    """Point-to-point transmissions to bring one vector from every other client to ``sink`` (shortest paths).

    The cost of section IV-C of Wu et al. 2026, where the departing client collects every other client's
    curvature statistic ``T_i``. ``G`` and ``n`` as in :func:`flood` (an edge array or a sparse matrix: one
    compiled breadth-first pass, no ``N x N`` array).
    """
    if not isinstance(G, nx.Graph):
        indptr, nbrs = _neighbour_lists(G, n)
        sink = check_int("sink", sink, low=0, high=len(indptr) - 2)
        hops = _bfs(indptr, nbrs, sink)[0]
        _check_reached(hops)
        return int(hops.sum())
    return int(sum(nx.single_source_shortest_path_length(G, sink).values()))


def remove_client(G: Any, c: int, *, n: Optional[int] = None, rule: str = "metropolis") -> Any:
    """``G`` without client ``c``, relabelled ``0 .. N-2``; ``ValueError`` if that disconnects the network.

    A ``networkx.Graph`` keeps its attributes; stored positions (``G.graph["pos"]``) lose the departing client's
    row. An ``(E, 2)`` edge array (with ``n``) gives the edge array of the remaining clients; a ``scipy.sparse``
    mixing matrix gives the remaining network's mixing matrix, rebuilt with ``rule``
    (:func:`~unlearnkit.graphs.sparse_mixing_matrix`, equal to the dense one of the ``networkx`` path); both in
    ``O(N + E)``, never an ``N x N`` array.
    """
    if not isinstance(G, nx.Graph):
        from .sparse import canonical_edges, sparse_mixing_matrix  # deferred: imports scipy.sparse.csgraph

        indptr, nbrs = _neighbour_lists(G, n)
        size = len(indptr) - 1
        c = check_int("client", c, low=0, high=size - 1)
        u = np.repeat(np.arange(size, dtype=np.int64), np.diff(indptr))
        keep = (u < nbrs) & (u != c) & (nbrs != c)
        shift = lambda v: v - (v > c)  # noqa: E731  relabel 0 .. N-2
        e = canonical_edges(shift(u[keep]), shift(nbrs[keep]), size - 1)
        check_flood_network(e, f"the network without client {c}", n=size - 1)
        return sparse_mixing_matrix(e, size - 1, rule) if sp.issparse(G) else e
    others = [v for v in sorted(G.nodes) if v != c]
    H = nx.relabel_nodes(G.subgraph(others).copy(), {v: i for i, v in enumerate(others)})
    if H.number_of_nodes() >= 2 and not nx.is_connected(H):
        sizes = sorted((len(s) for s in nx.connected_components(H)), reverse=True)
        raise ValueError(f"removing client {c} disconnects the network into components of sizes {sizes}: "
                         "the remaining clients could not keep training by gossip")
    H.graph.update({k: v for k, v in G.graph.items() if k != "pos"})
    if "pos" in G.graph:
        H.graph["pos"] = np.asarray(G.graph["pos"])[others]
    return H
