"""Random walks: edges only, RR-DU routing frequencies (chi-square, fixed seed), delays and segments."""

import numpy as np
import pytest
from scipy import stats

from unlearnkit import graphs as g


def test_simple_walk_only_crosses_edges():
    rng = np.random.default_rng(0)
    for name in ["ring", "grid", "star", "two_clusters", "small_world"]:
        G = g.make_graph(name, 12, seed=1)
        route = g.simple_walk(G, 2000, start=0, rng=rng)
        assert route[0] == 0 and len(route) == 2000
        assert g.walks.crosses_only_edges(route, G)
    # a route that jumps is detected
    assert not g.walks.crosses_only_edges(np.array([0, 5]), g.topology.ring(10))


def test_simple_walk_visits_proportional_to_degree():
    G = g.topology.star(6)
    route = g.simple_walk(G, 20_000, start=0, rng=np.random.default_rng(1))
    counts = g.walks.visit_counts(route, 6)
    assert counts[0] / len(route) == pytest.approx(0.5, abs=0.01)  # pi_i = deg_i / 2|E|
    pi = g.walks.stationary_distribution(g.walks.transition_matrix(G, kind="simple"))
    np.testing.assert_allclose(pi, [0.5] + [0.1] * 5, atol=1e-12)


@pytest.mark.parametrize("n, p", [(10, 0.1), (5, 0.5), (20, 0.02)])
def test_rrdu_routing_frequencies_chi_square(n, p):
    u = 2
    route = g.rrdu_route(n, u, p, 50_000, rng=np.random.default_rng(12345))
    counts = g.walks.visit_counts(route, n)
    expected = np.full(n, (1 - p) / (n - 1) * len(route))
    expected[u] = p * len(route)
    assert stats.chisquare(counts, expected).pvalue > 0.01
    # a wrong p is rejected by the same test
    wrong = np.full(n, (1 - 1.5 * p) / (n - 1) * len(route))
    wrong[u] = 1.5 * p * len(route)
    assert stats.chisquare(counts, wrong).pvalue < 1e-6


def test_rrdu_visits_are_binomial_and_segments_geometric():
    n, u, p, T = 10, 0, 0.1, 100
    rng = np.random.default_rng(7)
    visits = np.array([g.walks.visit_counts(g.rrdu_route(n, u, p, T, rng=rng), n)[u] for _ in range(3000)])
    assert visits.mean() == pytest.approx(p * T, rel=0.03)
    assert visits.var() == pytest.approx(T * p * (1 - p), rel=0.1)
    seg = g.walks.segments(g.rrdu_route(n, u, p, 200_000, rng=rng), u)
    assert seg.descent_hops.mean() == pytest.approx((1 - p) / p, rel=0.03)  # Geom(p) on {0,1,...}
    assert (seg.descent_hops == 0).mean() == pytest.approx(p, abs=0.01)


def test_first_observation_delay_is_geometric_q():
    n, u, v, p = 10, 0, 3, 0.1
    route = g.rrdu_route(n, u, p, 300_000, rng=np.random.default_rng(3))
    k = g.walks.first_observation_delays(route, u, v)
    q = g.walks.observer_probability(n, p)
    assert q == pytest.approx(0.1)
    assert k.min() >= 1
    assert k.mean() == pytest.approx(1 / q, rel=0.03)
    # E[1/K] = q/(1-q) ln(1/q) (digest 000, section 2.5): 0.2558 for N=10, p=0.1
    assert np.mean(1 / k) == pytest.approx(q / (1 - q) * np.log(1 / q), rel=0.03)


def test_delays_and_segments_on_a_handmade_route():
    route = np.array([1, 0, 2, 3, 0, 0, 3, 2])
    np.testing.assert_array_equal(g.walks.first_observation_delays(route, 0, 3), [2, 2, 1])
    np.testing.assert_array_equal(g.walks.first_observation_delays(route, 0, 2), [1, 3, 2])
    s = g.walks.segments(route, 0)
    np.testing.assert_array_equal(s.descent_hops, [1, 2, 0])
    np.testing.assert_array_equal(s.visit_times, [1, 4, 5])
    assert s.tail == 2 and s.n_visits == 3
    assert g.walks.segments(np.array([1, 2]), 0).tail == 2
    with pytest.raises(ValueError, match="observer"):
        g.walks.first_observation_delays(route, 0, 0)


@pytest.mark.parametrize("name", ["ring", "grid", "two_clusters", "erdos_renyi"])
def test_graph_respecting_rrdu_walk(name):
    n, u, p = 12, 5, 0.2
    G = g.make_graph(name, n, seed=2)
    P = g.walks.transition_matrix(G, kind="rrdu_graph", u=u, p=p)
    np.testing.assert_allclose(P.sum(1), 1)
    pi = g.walks.stationary_distribution(P)
    np.testing.assert_allclose(pi[u], p, atol=1e-10)
    np.testing.assert_allclose(np.delete(pi, u), (1 - p) / (n - 1), atol=1e-10)
    route = g.walks.rrdu_graph_walk(G, u, p, 60_000, start=0, rng=np.random.default_rng(11))
    assert g.walks.crosses_only_edges(route, G, allow_stay=True)
    assert g.walks.visit_counts(route, n)[u] / len(route) == pytest.approx(p, abs=0.02)


def test_rrdu_transition_matrix_rows():
    P = g.walks.transition_matrix(kind="rrdu", n=4, u=1, p=0.4)
    np.testing.assert_allclose(P, np.tile([0.2, 0.4, 0.2, 0.2], (4, 1)))


def test_walk_argument_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="p="):
        g.rrdu_route(10, 0, 1.5, 10, rng=rng)
    with pytest.raises(ValueError, match="u="):
        g.rrdu_route(10, 10, 0.1, 10, rng=rng)
    with pytest.raises(ValueError, match="n="):
        g.rrdu_route(1, 0, 0.1, 10, rng=rng)
    with pytest.raises(ValueError, match="rng"):
        g.rrdu_route(10, 0, 0.1, 10, rng=0)
    with pytest.raises(ValueError, match="start="):
        g.simple_walk(g.topology.ring(4), 5, start=9, rng=rng)


def test_routes_are_reproducible():
    a = g.rrdu_route(10, 0, 0.1, 100, rng=np.random.default_rng(5))
    b = g.rrdu_route(10, 0, 0.1, 100, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(g.walks.uniform_route(6, 1000, rng=np.random.default_rng(0)))) == set(range(6))
