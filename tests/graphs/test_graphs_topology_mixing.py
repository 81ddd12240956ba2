"""Topologies and mixing matrices: closed-form spectral gaps, validation errors, Lemma 1 of digest 001."""

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unlearnkit import graphs as g


@pytest.mark.parametrize("name", sorted(g.TOPOLOGIES))
@pytest.mark.parametrize("rule", g.mixing.MIXING_RULES)
def test_every_topology_gives_a_doubly_stochastic_symmetric_matrix(name, rule):
    G = g.make_graph(name, 12, seed=3)
    assert nx.is_connected(G) and set(G.nodes) == set(range(12))
    assert G.graph["pos"].shape == (12, 2)
    W = g.mixing_matrix(G, rule)
    np.testing.assert_allclose(W.sum(0), 1, atol=1e-12)
    np.testing.assert_allclose(W.sum(1), 1, atol=1e-12)
    np.testing.assert_allclose(W, W.T)
    assert W.min() >= 0
    A = nx.to_numpy_array(G) > 0
    assert not ((W > 0) & ~A & ~np.eye(12, dtype=bool)).any()  # weights only on edges
    assert 0 < g.spectral_gap(W) <= 1 + 1e-12


@pytest.mark.parametrize("n", [3, 5, 8, 13, 40])
def test_ring_metropolis_gap_closed_form(n):
    W = g.mixing_matrix(g.topology.ring(n), "metropolis")
    # ring, W_ii = W_i,i+-1 = 1/3: eigenvalues 1/3 + 2/3 cos(2 pi k / N)
    lam = 1 / 3 + 2 / 3 * np.cos(2 * np.pi * np.arange(n) / n)
    expected = 1 - max(abs(np.sort(lam)[-2]), abs(lam.min()))
    assert g.spectral_gap(W) == pytest.approx(expected, abs=1e-12)
    if n >= 5:  # the formula: for N >= 5, lambda_2 dominates |lambda_N|
        assert g.spectral_gap(W) == pytest.approx(1 - (1 / 3 + 2 / 3 * math.cos(2 * math.pi / n)), abs=1e-12)


@pytest.mark.parametrize("n", [2, 5, 17])
def test_complete_graph_gap_is_one_and_max_degree_matches(n):
    G = g.topology.complete(n)
    W = g.mixing_matrix(G, "metropolis")
    np.testing.assert_allclose(W, np.full((n, n), 1 / n))
    assert g.spectral_gap(W) == pytest.approx(1.0)
    assert g.mixing_time(W) == 0
    # lazy: (I + J)/2 has eigenvalue 1/2 with multiplicity N-1
    assert g.spectral_gap(g.mixing_matrix(G, "lazy")) == pytest.approx(0.5)


def test_star_max_degree_gap_closed_form():
    n = 10
    W = g.mixing_matrix(g.topology.star(n), "max_degree")
    # W = I - L/n (L Laplacian of the star, eigenvalues 0, 1 (x n-2), n): slem = max(1 - 1/n, |1 - n/n|)
    assert g.spectral_gap(W) == pytest.approx(1 / n)


def test_digest_001_table_ring10_rho():
    # digest 001 section 2.2: ring N=10 with MH weights, rho = slem^2 = 0.762
    assert g.mixing.slem(g.mixing_matrix(g.topology.ring(10))) ** 2 == pytest.approx(0.762, abs=1e-3)


def test_bridge_hurts_mixing():
    n = 16
    gap_bridge = g.spectral_gap(g.mixing_matrix(g.topology.two_clusters(n)))
    gap_complete = g.spectral_gap(g.mixing_matrix(g.topology.complete(n)))
    gap_exp = g.spectral_gap(g.mixing_matrix(g.topology.exponential(n)))
    assert gap_bridge < 0.05 < gap_exp <= gap_complete
    assert g.topology.two_clusters(n).graph["bridge"] == (7, 8)


def test_lazy_halves_the_spectrum():
    # 4-cycle, weights 1/3: eigenvalues 1, 1/3, 1/3, -1/3; lazy maps lambda -> (1 + lambda)/2 >= 0
    W = g.mixing_matrix(g.topology.ring(4), "max_degree")
    assert g.spectral_gap(W) == pytest.approx(2 / 3)
    lazy = g.mixing_matrix(g.topology.ring(4), "lazy")
    assert g.mixing.eigenvalues(lazy).min() >= -1e-12
    assert g.spectral_gap(lazy) == pytest.approx(1 / 3)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(4, 25), k=st.integers(0, 40), seed=st.integers(0, 10_000))
def test_lemma1_influence_distance_equals_slem_power(n, k, seed):
    G = g.topology.erdos_renyi(n, 0.4, seed=seed)
    W = g.mixing_matrix(G)
    s = g.mixing.slem(W)
    d = g.mixing.influence_distance(W, [k])[0]
    assert d == pytest.approx(s ** k, abs=1e-9)  # digest 001 Lemma 1 with equality for symmetric W
    assert g.mixing.influence_distance(W, [k], norm="max_entry")[0] <= s ** k + 1e-9
    prof = g.mixing.influence_from(W, 0, k)
    assert prof.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(prof, g.mixing.influence(W, k)[:, 0])


def test_mixing_time_is_the_first_k_below_tol():
    W = g.mixing_matrix(g.topology.ring(12))
    k = g.mixing_time(W, 1e-3)
    d = g.mixing.influence_distance(W, [k - 1, k])
    assert d[0] > 1e-3 >= d[1]
    assert g.mixing.influence_distance(W, [5, 0, 2]).tolist() == pytest.approx(g.mixing.influence_distance(W, [5, 0, 2]).tolist())
    assert g.mixing.influence_distance(W, [0])[0] == pytest.approx(1.0)


def test_bipartite_without_laziness_never_mixes():
    W = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert g.spectral_gap(W) == pytest.approx(0.0)
    assert g.mixing_time(W) == math.inf


# ---- errors that name the problem ----

def test_disconnected_graph_raises():
    G = nx.Graph()
    G.add_edges_from([(0, 1), (2, 3)])
    with pytest.raises(ValueError, match="disconnected"):
        g.mixing_matrix(G)
    W = g.mixing_matrix(G, require_connected=False)  # allowed for one round of a dynamic topology
    np.testing.assert_allclose(W.sum(0), 1)


@pytest.mark.parametrize("n", [0, 1, -3])
def test_too_few_clients_raise(n):
    with pytest.raises(ValueError, match="n="):
        g.make_graph("ring", n)


def test_single_node_graph_raises():
    G = nx.Graph()
    G.add_node(0)
    with pytest.raises(ValueError, match="at least 2"):
        g.mixing_matrix(G)
    with pytest.raises(ValueError, match="at least 2"):
        g.mixing.validate_mixing(np.ones((1, 1)))


@pytest.mark.parametrize("W, msg", [
    (np.array([[0.5, 0.6], [0.5, 0.4]]), "not symmetric"),
    (np.array([[0.9, 0.2], [0.2, 0.9]]), "stochastic"),
    (np.array([[1.5, -0.5], [-0.5, 1.5]]), "negative"),
    (np.ones((2, 3)) / 2, "square"),
    (np.array([[np.nan, 0.5], [0.5, 0.5]]), "NaN"),
    (np.eye(3), "disconnected"),
])
def test_bad_matrices_raise(W, msg):
    with pytest.raises(ValueError, match=msg):
        g.mixing.validate_mixing(W)


def test_weight_off_the_graph_raises():
    W = np.full((3, 3), 1 / 3)
    with pytest.raises(ValueError, match="not neighbours"):
        g.mixing.validate_mixing(W, G=g.topology.path(3))


def test_bad_names_and_parameters():
    with pytest.raises(ValueError, match="topology"):
        g.make_graph("hypercube", 8)
    with pytest.raises(ValueError, match="rule"):
        g.mixing_matrix(g.topology.ring(5), "uniform")
    with pytest.raises(ValueError, match="tries"):
        g.topology.erdos_renyi(30, 0.01, tries=5)
    with pytest.raises(ValueError, match="even"):
        g.topology.random_regular(7, 3)
    with pytest.raises(ValueError, match="rows"):
        g.topology.grid(12, rows=5)
    with pytest.raises(ValueError, match="DiGraph"):
        g.topology.validate_graph(nx.DiGraph([(0, 1), (1, 0)]))


def test_from_networkx_relabels_and_validates():
    G = nx.Graph([("a", "b"), ("b", "c")])
    H = g.topology.from_networkx(G)
    assert set(H.nodes) == {0, 1, 2} and H.number_of_edges() == 2
    assert H.graph["pos"].shape == (3, 2)
    # positions are stable for a fixed seed
    np.testing.assert_allclose(g.topology.positions(nx.Graph(H.edges), seed=1), g.topology.positions(nx.Graph(H.edges), seed=1))
    with pytest.raises(ValueError, match="disconnected"):
        g.topology.from_networkx(nx.Graph([(1, 2), (3, 4)]))


def test_random_topologies_are_seeded():
    a = g.topology.erdos_renyi(15, 0.3, seed=7)
    b = g.topology.erdos_renyi(15, 0.3, seed=7)
    c = g.topology.erdos_renyi(15, 0.3, seed=8)
    assert set(a.edges) == set(b.edges) != set(c.edges)
    r = g.topology.random_regular(10, 4, seed=1)
    assert all(d == 4 for _, d in r.degree())
    e = g.topology.exponential(16)
    assert all(d == 7 for _, d in e.degree())  # +-1, +-2, +-4, and 8 (where +8 == -8)
