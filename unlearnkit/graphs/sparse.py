"""Networks of up to millions of clients: edge lists and sparse mixing matrices, never an ``N x N`` array.

:func:`~unlearnkit.graphs.mixing_matrix` builds a dense ``(N, N)`` matrix from a ``networkx`` graph: exact
and fast for classroom sizes, but ``8 N^2`` bytes (800 MB at ``N = 10^4``). Here every step is ``O(N + E)``:

- :func:`edge_list` generates a topology's edges directly with numpy (ring, path, star, grid, torus,
  exponential, random regular, sparse Erdos-Renyi, small world); the deterministic families give exactly the
  edges of their ``networkx`` builders, the random ones are drawn by vectorised samplers of their own (same
  distribution family, not the same draws as ``networkx``);
- :func:`sparse_mixing_matrix` computes the Metropolis, max-degree or lazy weights from the degrees and returns
  a ``scipy.sparse.csr_matrix`` equal (to rounding, 1e-12) to the dense one;
- :func:`validate_sparse_mixing` checks symmetry, double stochasticity, support and connectivity
  (``scipy.sparse.csgraph.connected_components``) on the stored entries only;
- :func:`sparse_slem` is the second-largest eigenvalue modulus by ``scipy.sparse.linalg.eigsh`` on ``W - J``
  (``J = 11^T / N`` applied as a rank-one operator), or exactly by the dense solver for ``N <= DENSE_EIG_MAX``.

>>> W = sparse_mixing_matrix(edge_list("ring", 6), 6)
>>> W.shape, W.nnz
((6, 6), 18)
"""

from __future__ import annotations

import math
import os
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from .._validate import Limit, check_choice, check_int, check_probability
from .topology import grid_shape, validate_graph


#: The largest network the sparse path builds (a ring of 10^7 clients is about 1 GB of CSR arrays); the
#: memory it would need is also checked against the memory available before anything is allocated.
MAX_SPARSE_CLIENTS = Limit("MAX_SPARSE_CLIENTS", 10_000_000)
#: Up to this size :func:`sparse_slem` densifies and uses the exact dense eigensolver (same number as
#: :func:`~unlearnkit.graphs.slem`); above it, ARPACK.
DENSE_EIG_MAX = 2_000
_RULES = ("metropolis", "max_degree", "lazy")


def check_sparse_n(n: int) -> int:
    """``n`` as an int, if it is a client count the sparse path takes (2 to ``MAX_SPARSE_CLIENTS``)."""
    n = check_int("n", n)
    if not 2 <= n <= MAX_SPARSE_CLIENTS:
        raise ValueError(f"n={n} is out of range: expected n in [2, {MAX_SPARSE_CLIENTS}] clients for the sparse path")
    return n


def _check_memory(n: int, n_edges: int) -> None:
    """Refuse a build whose arrays (about 160 bytes per stored entry, all temporaries included) would not fit
    in the memory the system reports available."""
    need = 160 * (2 * n_edges + n)
    try:
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not every platform reports it
        return
    if need > avail:
        raise ValueError(f"n={n} with {n_edges} edges needs about {need / 2**30:.1f} GiB to build its sparse mixing "
                         f"matrix but {avail / 2**30:.1f} GiB are available: choose a smaller n")


def canonical_edges(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """Edges as a sorted ``(E, 2)`` int64 array with ``i < j``, self-loops and duplicates removed."""
    i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    keep = lo != hi
    code = np.unique(lo[keep] * n + hi[keep])
    return np.column_stack([code // n, code % n])


def _grid_edges(n: int, rows: int | None, periodic: bool) -> np.ndarray:
    r, c = grid_shape(n, rows)
    v = np.arange(n, dtype=np.int64)
    col, row = v % c, v // c
    parts = []
    right = col + 1 < c if not (periodic and c > 2) else np.ones(n, dtype=bool)
    parts.append((v[right], row[right] * c + (col[right] + 1) % c))
    down = row + 1 < r if not (periodic and r > 2) else np.ones(n, dtype=bool)
    parts.append((v[down], ((row[down] + 1) % r) * c + col[down]))
    return canonical_edges(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), n)


def _regular_edges(n: int, degree: int, rng: np.random.Generator) -> np.ndarray:
    """A ``degree``-regular simple graph by the configuration model: pair the ``n * degree`` stubs at random,
    then re-pair the stubs of loops and repeated pairs together with as many random good pairs until none is
    left (close to uniform; exactly uniform only for the rejection sampler, which is hopeless at large degree)."""
    stubs = rng.permutation(np.repeat(np.arange(n, dtype=np.int64), degree)).reshape(-1, 2)
    for _ in range(1000):
        lo, hi = stubs.min(1), stubs.max(1)
        code = lo * n + hi
        _, first, counts = np.unique(code, return_index=True, return_counts=True)
        dup = np.ones(len(code), dtype=bool)
        dup[first] = False
        bad = (lo == hi) | dup
        nb = int(bad.sum())
        if nb == 0:
            return canonical_edges(lo, hi, n)
        good = np.flatnonzero(~bad)
        extra = rng.choice(good, size=min(len(good), max(nb, 4)), replace=False) if len(good) else good
        redo = np.concatenate([np.flatnonzero(bad), extra])
        stubs[redo] = rng.permutation(stubs[redo].reshape(-1)).reshape(-1, 2)
    raise ValueError(f"random_regular(n={n}, degree={degree}): no simple pairing found; choose a smaller degree")


def _gnp_edges(n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """G(n, p) in ``O(E log E)``: the edge count is Binomial(n(n-1)/2, p), the pairs are distinct uniform pairs."""
    pairs = n * (n - 1) // 2
    k = int(rng.binomial(pairs, p))
    if k > 5 * 10**7:
        raise ValueError(f"p_edge={p} with n={n} gives about {k} edges: expected at most 5e7 (lower p_edge)")
    code = np.empty(0, dtype=np.int64)
    while len(code) < k:
        m = int(1.1 * (k - len(code))) + 16
        a, b = rng.integers(0, n, size=m), rng.integers(0, n, size=m)
        ok = a != b
        new = np.minimum(a, b)[ok] * n + np.maximum(a, b)[ok]
        code = np.unique(np.concatenate([code, new]))
    code = np.sort(rng.choice(code, size=k, replace=False)) if len(code) > k else code
    return np.column_stack([code // n, code % n])


def _small_world_edges(n: int, k: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """Watts-Strogatz: ring lattice to the ``k // 2`` nearest on each side, then each edge ``(u, v)`` becomes
    ``(u, w)`` with probability ``p`` (``w`` uniform); a rewiring that would make a loop or a repeated edge
    is redrawn a few times, then dropped (the edge stays)."""
    v = np.arange(n, dtype=np.int64)
    u = np.tile(v, k // 2)
    w = (u + np.repeat(np.arange(1, k // 2 + 1), n)) % n
    move = rng.random(len(u)) < p
    for _ in range(10):
        cand = w.copy()
        cand[move] = rng.integers(0, n, size=int(move.sum()))
        lo, hi = np.minimum(u, cand), np.maximum(u, cand)
        code = lo * n + hi
        _, first = np.unique(code, return_index=True)
        clash = np.ones(len(code), dtype=bool)
        clash[first] = False
        clash |= lo == hi
        w = np.where(move & ~clash, cand, w)
        move = move & clash
        if not move.any():
            break
    return canonical_edges(u, w, n)


def _exponential_edges(n: int) -> np.ndarray:
    v = np.arange(n, dtype=np.int64)
    shifts = [1 << s for s in range(max(1, (n - 1).bit_length()))]
    return canonical_edges(np.tile(v, len(shifts)), (np.tile(v, len(shifts)) + np.repeat(shifts, n)) % n, n)


EDGE_FAMILIES = ("ring", "path", "star", "grid", "torus", "exponential", "random_regular", "erdos_renyi",
                 "small_world")


def edge_list(name: str, n: int, *, seed: int = 0, tries: int = 100, **kwargs: Any) -> np.ndarray:
    """The edges of topology ``name`` on ``n`` clients, generated in ``O(N + E)`` without ``networkx``.

    Parameters
    ----------
    name:
        One of :data:`EDGE_FAMILIES`. ``complete`` and ``two_clusters`` are dense (``E ~ N^2 / 2``): build them
        with :func:`~unlearnkit.graphs.make_graph` and take :func:`graph_edges`.
    n:
        Number of clients, in ``[2, MAX_SPARSE_CLIENTS]``.
    seed, tries:
        The random families are redrawn (up to ``tries`` draws) until connected.
    **kwargs:
        ``rows`` (grid, torus), ``degree`` (random_regular, default 3), ``p_edge`` (erdos_renyi, default 0.3),
        ``k`` and ``p_rewire`` (small_world, defaults 4 and 0.1).

    Returns
    -------
    numpy.ndarray
        ``(E, 2)`` int64, each edge once as ``(i, j)`` with ``i < j``, sorted. Deterministic families give
        exactly the edges of the ``networkx`` builder of the same name.
    """
    check_choice("topology", name, EDGE_FAMILIES)
    n = check_sparse_n(n)
    v = np.arange(n, dtype=np.int64)
    if name in ("ring", "path"):
        e = canonical_edges(v[:-1], v[1:], n)
        return canonical_edges(np.r_[e[:, 0], 0], np.r_[e[:, 1], n - 1], n) if name == "ring" and n >= 3 else e
    if name == "star":
        return np.column_stack([np.zeros(n - 1, dtype=np.int64), v[1:]])
    if name in ("grid", "torus"):
        return _grid_edges(n, kwargs.get("rows"), name == "torus")
    if name == "exponential":
        return _exponential_edges(n)
    tries = check_int("tries", tries, low=1)
    if name == "random_regular":
        degree = check_int("degree", kwargs.get("degree", 3), low=1, high=n - 1)
        if (n * degree) % 2:
            raise ValueError(f"degree={degree} with n={n}: n * degree must be even for a regular graph")
        draw = lambda r: _regular_edges(n, degree, r)  # noqa: E731
    elif name == "erdos_renyi":
        p = check_probability("p_edge", kwargs.get("p_edge", 0.3), allow_zero=False)
        draw = lambda r: _gnp_edges(n, p, r)  # noqa: E731
    else:
        if n < 3:
            raise ValueError(f"n={n} is too small for small_world: expected n >= 3")
        k = check_int("k", kwargs.get("k", 4), low=2, high=n - 1)
        p = check_probability("p_rewire", kwargs.get("p_rewire", 0.1))
        draw = lambda r: _small_world_edges(n, k, p, r)  # noqa: E731
    rng = np.random.default_rng(seed)
    for _ in range(tries):
        e = draw(rng)
        if _components(sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)))[0] == 1:
            return e
    raise ValueError(f"{name}(n={n}, {kwargs}): no connected sample in tries={tries} draws; increase the edge "
                     "density (or tries)")


def graph_edges(G: nx.Graph) -> np.ndarray:
    """The edges of a ``networkx`` graph on nodes ``0 .. N-1`` in :func:`edge_list`'s format."""
    e = np.array(list(G.edges), dtype=np.int64).reshape(-1, 2)
    return canonical_edges(e[:, 0], e[:, 1], max(G.number_of_nodes(), 1))


def _components(A: Any) -> tuple[int, np.ndarray]:
    return connected_components(A, directed=False)


def sparse_mixing_matrix(edges: Any, n: int | None = None, rule: str = "metropolis", *,
                         require_connected: bool = True) -> sp.csr_matrix:
    """The mixing matrix of :func:`~unlearnkit.graphs.mixing_matrix` as ``scipy.sparse.csr_matrix``, in ``O(N + E)``.

    Parameters
    ----------
    edges:
        ``(E, 2)`` integer array of undirected edges (each once, either orientation), or a ``networkx.Graph``
        on nodes ``0 .. N-1``.
    n:
        Number of clients (required with an edge array; taken from the graph otherwise).
    rule:
        ``"metropolis"`` | ``"max_degree"`` | ``"lazy"``, the weights of the dense builder, computed from the degrees.
    require_connected:
        Refuse a disconnected support (as the dense builder does).

    Returns
    -------
    scipy.sparse.csr_matrix
        float64, ``2E + N`` stored entries (the diagonal always stored), validated by :func:`validate_sparse_mixing`.
    """
    check_choice("rule", rule, _RULES)
    if isinstance(edges, nx.Graph):
        validate_graph(edges, require_connected=require_connected)
        n, edges = edges.number_of_nodes(), graph_edges(edges)
    if n is None:
        raise ValueError("n is required when edges is an array: pass the number of clients")
    n = check_sparse_n(n)
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if e.size and (e.min() < 0 or e.max() >= n):
        raise ValueError(f"edges name clients outside [0, {n - 1}]")
    e = canonical_edges(e[:, 0], e[:, 1], n)
    _check_memory(n, len(e))
    i, j = e[:, 0], e[:, 1]
    deg = (np.bincount(i, minlength=n) + np.bincount(j, minlength=n)).astype(float)
    if rule == "max_degree":
        w = np.full(len(e), 1.0 / (1.0 + deg.max()))
    else:
        w = 1.0 / (1.0 + np.maximum(deg[i], deg[j]))
    diag = 1.0 - (np.bincount(i, weights=w, minlength=n) + np.bincount(j, weights=w, minlength=n))
    if rule == "lazy":
        w, diag = 0.5 * w, 0.5 * (1.0 + diag)
    v = np.arange(n, dtype=np.int64)
    W = sp.csr_matrix((np.concatenate([w, w, diag]), (np.concatenate([i, j, v]), np.concatenate([j, i, v]))),
                      shape=(n, n))
    W.sort_indices()
    return validate_sparse_mixing(W, edges=e, require_connected=require_connected)


def validate_sparse_mixing(W: Any, *, edges: Any = None, atol: float = 1e-9,
                           require_connected: bool = True) -> sp.csr_matrix:
    """:func:`~unlearnkit.graphs.validate_mixing` for a ``scipy.sparse`` matrix, in ``O(nnz)``.

    Parameters
    ----------
    W:
        A square ``scipy.sparse`` matrix.
    edges:
        Optional ``(E, 2)`` edge array: no off-diagonal weight may sit outside it.
    atol:
        Tolerance of the symmetry and row/column-sum checks.
    require_connected:
        Check that the support is connected (``connected_components``).

    Returns
    -------
    scipy.sparse.csr_matrix
        ``W`` as float64 CSR. Raises ``ValueError`` naming the first violated property.
    """
    if not sp.issparse(W):
        raise ValueError(f"W must be a scipy.sparse matrix, got {type(W).__name__}")
    W = sp.csr_matrix(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be a square (N, N) matrix, got shape {W.shape}")
    n = W.shape[0]
    if n < 2:
        raise ValueError(f"W is {n}x{n}: a network needs at least 2 clients (expected N >= 2)")
    if not np.all(np.isfinite(W.data)):
        raise ValueError("W has NaN or infinite entries")
    if W.nnz and W.data.min() < -atol:
        raise ValueError(f"W has a negative entry {W.data.min():.3g}: mixing weights must be >= 0")
    D = (W - W.T).tocsr()
    asym = float(np.abs(D.data).max()) if D.nnz else 0.0
    if asym > atol:
        raise ValueError(f"W is not symmetric: max |W - W^T| = {asym:.3g} (tolerance {atol:g})")
    for axis, what in ((1, "stochastic: a row"), (0, "doubly stochastic: a column")):
        err = float(np.abs(np.asarray(W.sum(axis=axis)).ravel() - 1).max())
        if err > atol:
            raise ValueError(f"W is not {what} sums to 1 +- {err:.3g} (tolerance {atol:g})")
    support = W.copy()
    support.data = (np.abs(support.data) > atol).astype(float)
    support.setdiag(0)
    support.eliminate_zeros()
    if edges is not None:
        e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        A = sp.csr_matrix((np.ones(2 * len(e)), (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])), shape=(n, n))
        outside = (support - support.multiply(A > 0)).tocoo()
        outside.eliminate_zeros()
        if outside.nnz:
            i, j = int(outside.row[0]), int(outside.col[0])
            raise ValueError(f"W[{i},{j}]={W[i, j]:.3g} > 0 but clients {i} and {j} are not neighbours in G")
    if require_connected:
        k = _components(support)[0]
        if k > 1:
            raise ValueError(f"W's support is disconnected ({k} components): gossip would never reach consensus")
    return W


def sparse_slem(W: Any, *, tol: float = 1e-10, maxiter: int | None = None) -> float:
    """Second-largest eigenvalue modulus of a symmetric stochastic ``scipy.sparse`` ``W``.

    For ``N <= DENSE_EIG_MAX`` the matrix is densified and :func:`~unlearnkit.graphs.slem` gives the exact
    number. Above, ARPACK (``eigsh``, ``which="LM"``, ``k=1``) runs on ``W - J`` with ``J = 11^T / N`` applied as
    a rank-one operator: its spectrum is ``W``'s with the eigenvalue 1 replaced by 0, so its largest modulus is
    ``slem(W)``. For spectral gaps far below ``tol`` (a ring of ``10^5`` clients has gap ``~ 10^-9``) ARPACK may
    not converge: then ``ValueError``, and a closed form (ring: ``1/3 + 2/3 cos(2 pi / N)``) is the way.
    """

    W = validate_sparse_mixing(W, atol=1e-6, require_connected=False)
    n = W.shape[0]
    if n <= DENSE_EIG_MAX:  # the dense eigenvalues, as graphs.mixing.slem computes them
        A = W.toarray()
        lam = np.sort(np.linalg.eigvalsh(0.5 * (A + A.T)))[::-1]
        return float(max(abs(lam[1]), abs(lam[-1])))
    op = LinearOperator((n, n), dtype=float, matvec=lambda x: W @ x - x.sum(axis=0) / n)
    try:
        lam = eigsh(op, k=1, which="LM", tol=tol, maxiter=maxiter, return_eigenvectors=False)
    except ArpackNoConvergence as err:
        raise ValueError(f"sparse_slem: ARPACK did not converge for N={n} (spectral gap below what tol={tol:g} "
                         "resolves); use a closed form or a larger maxiter") from err
    return float(min(1.0, abs(lam[0])))
