"""Sparse networks: edge lists and CSR mixing matrices agree with the dense builders, and scale without N x N."""

import tracemalloc

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import unlearnkit.graphs as g

RANDOM_KW = {"random_regular": {"degree": 4}, "erdos_renyi": {"p_edge": 0.5}, "small_world": {"k": 4}}


def _graph(e, n):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(map(tuple, e))
    return G


@pytest.mark.parametrize("name", [f for f in g.sparse.EDGE_FAMILIES if f not in RANDOM_KW])
@pytest.mark.parametrize("n", [2, 3, 4, 9, 12, 16, 17])
def test_deterministic_edge_lists_are_the_networkx_edges(name, n):
    assert np.array_equal(g.edge_list(name, n), g.sparse.graph_edges(g.make_graph(name, n)))


@pytest.mark.parametrize("name", g.sparse.EDGE_FAMILIES)
@pytest.mark.parametrize("rule", g.mixing.MIXING_RULES)
@pytest.mark.parametrize("n", [6, 12, 20])
def test_sparse_and_dense_mixing_agree(name, rule, n):
    e = g.edge_list(name, n, seed=3, **RANDOM_KW.get(name, {}))
    G = _graph(e, n)
    assert nx.is_connected(G)
    W = g.sparse_mixing_matrix(e, n, rule)
    assert sp.issparse(W) and W.nnz == 2 * len(e) + n
    np.testing.assert_allclose(W.toarray(), g.mixing_matrix(G, rule), rtol=0, atol=1e-12)
    # from the networkx graph itself (any topology, also the dense ones)
    np.testing.assert_allclose(g.sparse_mixing_matrix(G, rule=rule).toarray(), g.mixing_matrix(G, rule), atol=1e-12)
    assert abs(g.mixing.slem(W) - g.mixing.slem(g.mixing_matrix(G, rule))) < 1e-12


@pytest.mark.parametrize("name", ["complete", "two_clusters", "star"])
def test_graph_input_covers_every_topology(name):
    G = g.make_graph(name, 10)
    np.testing.assert_allclose(g.sparse_mixing_matrix(G).toarray(), g.mixing_matrix(G), atol=1e-12)


def test_random_families_have_their_shape():
    e = g.edge_list("random_regular", 1000, degree=5 + 1, seed=0)
    assert np.all(np.bincount(e.ravel(), minlength=1000) == 6)
    e = g.edge_list("erdos_renyi", 2000, p_edge=0.01, seed=0)
    assert abs(len(e) / (2000 * 1999 / 2) - 0.01) < 0.001
    e = g.edge_list("small_world", 500, k=6, p_rewire=0.2, seed=0)
    assert len(e) <= 1500 and len(e) > 1400


def test_validation_names_the_property():
    W = g.sparse_mixing_matrix(g.edge_list("ring", 8), 8).tolil()
    W[0, 1] += 0.1
    with pytest.raises(ValueError, match="symmetric"):
        g.sparse.validate_sparse_mixing(W.tocsr())
    with pytest.raises(ValueError, match="stochastic"):
        g.sparse.validate_sparse_mixing(sp.identity(4, format="csr") * 0.5)
    with pytest.raises(ValueError, match="disconnected"):
        g.sparse.validate_sparse_mixing(sp.identity(4, format="csr"))
    with pytest.raises(ValueError, match="not neighbours"):
        g.mixing.validate_mixing(g.sparse_mixing_matrix(g.edge_list("ring", 8), 8), G=g.make_graph("path", 8))
    with pytest.raises(ValueError, match=r"n=20000000 is out of range: expected n in \[2, 10000000\]"):
        g.edge_list("ring", 20_000_000)
    with pytest.raises(ValueError, match=r"n=20000 is too large: expected n in \[2, 10000\]"):
        g.make_graph("ring", 20_000)


def test_arpack_slem_above_the_dense_limit():
    n = g.sparse.DENSE_EIG_MAX + 500
    W = g.sparse_mixing_matrix(g.edge_list("random_regular", n, degree=4, seed=1), n)
    assert abs(g.sparse.sparse_slem(W) - g.mixing.slem(W.toarray())) < 1e-8
    n = 2600
    ring = g.sparse_mixing_matrix(g.edge_list("ring", n), n, "lazy")
    lazy_ring = 0.5 + 0.5 * (1 / 3 + 2 / 3 * np.cos(2 * np.pi / n))  # closed form of the lazy ring
    assert abs(g.spectral_gap(ring) - (1 - lazy_ring)) < 1e-9


@pytest.mark.parametrize("name,kw", [("ring", {}), ("random_regular", {"degree": 4})])
def test_two_hundred_thousand_clients_without_an_n_by_n_array(name, kw):
    n = 200_000  # a dense float64 W would be 320 GB, a boolean adjacency 40 GB
    tracemalloc.start()
    try:
        e = g.edge_list(name, n, **kw)
        W = g.sparse_mixing_matrix(e, n)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert W.shape == (n, n) and W.nnz == 2 * len(e) + n
    assert peak < 300 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    np.testing.assert_allclose(np.asarray(W.sum(axis=1)).ravel(), 1.0, atol=1e-12)
