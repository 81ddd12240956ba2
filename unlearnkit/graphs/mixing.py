"""Mixing (gossip) matrices, their spectral gap, and how fast influence spreads through them.

A mixing matrix ``W`` says how much client ``i`` weighs client ``j``'s vector in one gossip round
(``x_i <- sum_j W_ij x_j``). Every decentralized paper in this package assumes ``W`` is **symmetric,
doubly stochastic, non-negative and supported on the graph's edges** (digest 001, Assumption 1 / A1;
digest 002, Assumption 4.7). Then ``W^k -> J = (1/N) 1 1^T`` at the rate of the second-largest eigenvalue
modulus ``slem(W) = max(|lambda_2|, |lambda_N|)``:

    ||W^k - J||_2 = slem(W)^k                       (digest 001, Lemma 1, with equality for symmetric W)

so ``spectral_gap(W) = 1 - slem(W)`` is the one number that says how fast a topology mixes.

Rules (digest 001, section 2.2; digest 002, section 2.1):

- ``"metropolis"`` (Metropolis-Hastings): ``W_ij = 1 / (1 + max(deg_i, deg_j))`` on edges,
  ``W_ii = 1 - sum_{j != i} W_ij``. decentralizepy's PlainAverage uses exactly these weights.
- ``"max_degree"``: ``W_ij = 1 / (1 + d_max)`` on edges, the rest on the diagonal.
- ``"lazy"``: ``(I + W_metropolis) / 2``: all eigenvalues in ``[0, 1]``, so it mixes even on bipartite
  graphs, at the price of half speed.

>>> import numpy as np
>>> from unlearnkit.graphs import make_graph, mixing_matrix, spectral_gap
>>> W = mixing_matrix(make_graph("ring", 8))
>>> round(spectral_gap(W), 6) == round(1 - (1/3 + 2/3 * np.cos(2 * np.pi / 8)), 6)
True
"""

from __future__ import annotations

import math
from typing import Iterable

import networkx as nx
import numpy as np
import scipy.sparse as sp

from .._validate import check_choice, check_positive, check_range
from .sparse import graph_edges, sparse_slem, validate_sparse_mixing
from .topology import validate_graph


MIXING_RULES = ("metropolis", "max_degree", "lazy")


def mixing_matrix(G: nx.Graph, rule: str = "metropolis", *, require_connected: bool = True) -> np.ndarray:
    """The ``(N, N)`` symmetric doubly stochastic mixing matrix of ``G`` under ``rule``.

    Parameters
    ----------
    G:
        An undirected graph on nodes ``0 .. N-1`` (see :func:`~unlearnkit.graphs.validate_graph`).
    rule:
        ``"metropolis"`` | ``"max_degree"`` | ``"lazy"`` (module docstring).
    require_connected:
        Dynamic topologies may be disconnected in a given round (digest 002, pitfall P6); pass ``False``
        to allow it. An isolated client then keeps its own vector (``W_ii = 1``).

    Returns
    -------
    numpy.ndarray
        float64, validated by :func:`validate_mixing`.
    """
    check_choice("rule", rule, MIXING_RULES)
    validate_graph(G, require_connected=require_connected)
    n = G.number_of_nodes()
    deg = np.array([G.degree(v) for v in range(n)], dtype=float)
    W = np.zeros((n, n))
    edges = np.array(list(G.edges), dtype=int).reshape(-1, 2)
    if len(edges):
        i, j = edges[:, 0], edges[:, 1]
        if rule == "max_degree":
            w = np.full(len(edges), 1.0 / (1.0 + deg.max()))
        else:
            w = 1.0 / (1.0 + np.maximum(deg[i], deg[j]))
        W[i, j] = w
        W[j, i] = w
    W[np.diag_indices(n)] = 1.0 - W.sum(axis=1)
    if rule == "lazy":
        W = 0.5 * (np.eye(n) + W)
    validate_mixing(W, G=G, require_connected=require_connected)
    return W


def validate_mixing(W, *, G: nx.Graph | None = None, atol: float = 1e-9, require_connected: bool = True) -> np.ndarray:
    """Check the assumptions every gossip analysis makes and return ``W`` as a float64 array.

    Square ``(N, N)`` with ``N >= 2``, finite, non-negative, symmetric, rows and columns summing to 1
    (doubly stochastic), support connected (unless ``require_connected=False``) and, when ``G`` is given,
    no weight between clients that are not neighbours in ``G``.

    A ``scipy.sparse`` ``W`` is checked in ``O(nnz)`` by
    :func:`~unlearnkit.graphs.sparse.validate_sparse_mixing` and returned as float64 CSR.

    Raises
    ------
    ValueError
        Naming the first violated property and by how much.
    """
    if sp.issparse(W):
        return validate_sparse_mixing(W, edges=None if G is None else graph_edges(G), atol=atol,
                                      require_connected=require_connected)
    W = np.asarray(W.detach().cpu().numpy() if hasattr(W, "detach") else W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be a square (N, N) matrix, got shape {W.shape}")
    n = W.shape[0]
    if n < 2:
        raise ValueError(f"W is {n}x{n}: a network needs at least 2 clients (expected N >= 2)")
    if not np.all(np.isfinite(W)):
        raise ValueError("W has NaN or infinite entries")
    if W.min() < -atol:
        i, j = np.unravel_index(np.argmin(W), W.shape)
        raise ValueError(f"W has a negative entry W[{i},{j}]={W[i, j]:.3g}: mixing weights must be >= 0")
    asym = np.abs(W - W.T).max()
    if asym > atol:
        raise ValueError(f"W is not symmetric: max |W - W^T| = {asym:.3g} (tolerance {atol:g})")
    rows = np.abs(W.sum(axis=1) - 1).max()
    if rows > atol:
        raise ValueError(f"W is not stochastic: a row sums to 1 +- {rows:.3g} (rows must sum to 1)")
    cols = np.abs(W.sum(axis=0) - 1).max()
    if cols > atol:
        raise ValueError(f"W is not doubly stochastic: a column sums to 1 +- {cols:.3g} (columns must sum to 1)")
    if G is not None:
        if G.number_of_nodes() != n:
            raise ValueError(f"W is {n}x{n} but the graph has N={G.number_of_nodes()} nodes")
        A = nx.to_numpy_array(G, nodelist=range(n)) > 0
        off = (W > atol) & ~A & ~np.eye(n, dtype=bool)
        if off.any():
            i, j = map(int, np.argwhere(off)[0])
            raise ValueError(f"W[{i},{j}]={W[i, j]:.3g} > 0 but clients {i} and {j} are not neighbours in G")
    if require_connected:
        support = nx.from_numpy_array((W > atol).astype(float))  # self-loops do not affect connectivity
        if not nx.is_connected(support):
            k = nx.number_connected_components(support)
            raise ValueError(f"W's support is disconnected ({k} components): gossip would never reach consensus")
    return W


def eigenvalues(W) -> np.ndarray:
    """Eigenvalues of symmetric ``W``, in decreasing order (``lambda_1 = 1`` for a stochastic matrix)."""
    W = np.asarray(W, dtype=float)
    return np.sort(np.linalg.eigvalsh(0.5 * (W + W.T)))[::-1]


def slem(W) -> float:
    """Second-largest eigenvalue modulus ``max(|lambda_2|, |lambda_N|)`` of symmetric stochastic ``W``.

    Digest 001 writes ``rho = slem^2`` (Lemma 1: ``||W^k - J||^2 <= rho^k``); digest 002 writes
    ``rho_t = slem(W^t)`` (Assumption 4.8). We return the unsquared modulus and say so at each use.
    A ``scipy.sparse`` ``W`` goes to :func:`~unlearnkit.graphs.sparse.sparse_slem` (exact up to
    ``DENSE_EIG_MAX`` clients, ARPACK above).
    """
    if sp.issparse(W):
        return sparse_slem(W)
    # NaN or non-stochastic W: a clear error; the tolerance admits float32 matrices (rows sum to 1 +- 3e-8)
    lam = eigenvalues(validate_mixing(W, atol=1e-6, require_connected=False))
    return float(max(abs(lam[1]), abs(lam[-1])))


def spectral_gap(W) -> float:
    """``1 - slem(W)``: 0 for a graph that never mixes (disconnected or bipartite without laziness),
    1 for ``W = J`` (the complete graph with uniform weights)."""
    return 1.0 - slem(W)


def mixing_time(W, tol: float = 1e-3) -> float:
    """Rounds ``k`` until gossip is ``tol``-close to the average: the smallest ``k`` with
    ``||W^k - J||_2 = slem(W)^k <= tol`` (exact for symmetric ``W``, digest 001 Lemma 1).

    Returns ``math.inf`` when ``slem(W) >= 1`` (no mixing) and 0 when ``W = J``. Roughly
    ``log(1/tol) / spectral_gap(W)`` for small gaps.
    """
    tol = check_range("tol", tol, 0.0, 1.0, low_open=True, high_open=True)
    s = slem(W)
    if s >= 1 - 1e-12:
        return math.inf
    if s <= 1e-15:
        return 0
    return int(math.ceil(math.log(tol) / math.log(s) - 1e-12))


def influence(W, k: int) -> np.ndarray:
    """``W^k``: entry ``(i, j)`` is the weight of client ``j``'s round-0 vector inside client ``i``'s
    vector after ``k`` gossip rounds (digest 001, section 2.3, unrolled D-PSGD)."""
    W = np.asarray(W, dtype=float)
    k = int(check_positive("k", k, allow_zero=True))
    return np.linalg.matrix_power(W, k)


def influence_distance(W, ks: Iterable[int] | int, *, norm: str = "spectral") -> np.ndarray:
    """Distance of ``W^k`` to uniform influence ``J = 11^T/N`` for each ``k`` in ``ks``.

    ``norm="spectral"``: ``||W^k - J||_2`` (equals ``slem(W)^k`` for symmetric ``W``: digest 001 Lemma 1
    with equality). ``norm="max_entry"``: ``max_ij |(W^k)_ij - 1/N|`` (bounded by ``slem^k``).
    ``norm="tv"``: the worst total-variation distance ``max_j 0.5 * sum_i |(W^k)_ij - 1/N|`` of one client's
    influence profile from uniform.
    """
    check_choice("norm", norm, ("spectral", "max_entry", "tv"))
    W = np.asarray(W, dtype=float)
    n = W.shape[0]
    ks = np.atleast_1d(np.asarray(list(ks) if not np.isscalar(ks) else [ks], dtype=int))
    if (ks < 0).any():
        raise ValueError(f"ks={ks.tolist()} must be >= 0")
    J = np.full((n, n), 1.0 / n)
    out = np.empty(len(ks))
    P = np.eye(n)
    k_cur = 0
    for idx in np.argsort(ks, kind="stable"):
        k = ks[idx]
        P = P @ np.linalg.matrix_power(W, int(k - k_cur))
        k_cur = k
        D = P - J
        if norm == "spectral":
            out[idx] = np.linalg.norm(D, 2)
        elif norm == "max_entry":
            out[idx] = np.abs(D).max()
        else:
            out[idx] = 0.5 * np.abs(D).sum(axis=0).max()
    return out


def influence_from(W, source: int, k: int) -> np.ndarray:
    """``(W^k) e_source``: how much of ``source``'s round-0 vector each client holds after ``k`` rounds
    (a length-``N`` profile that tends to ``1/N`` everywhere)."""
    W = np.asarray(W, dtype=float)
    n = W.shape[0]
    if not 0 <= int(source) < n:
        raise ValueError(f"source={source} is out of range: expected a client in [0, {n - 1}]")
    e = np.zeros(n)
    e[int(source)] = 1.0
    for _ in range(int(check_positive("k", k, allow_zero=True))):
        e = W @ e
    return e
