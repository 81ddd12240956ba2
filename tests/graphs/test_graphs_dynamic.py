"""Dynamic topologies: reproducible rounds, churn, window connectivity, per-round mixing matrices."""

import math

import networkx as nx
import numpy as np
import pytest

from unlearnkit import graphs as g


@pytest.mark.parametrize("n", [5, 8, 12, 16])
def test_one_peer_exponential_is_tau_window_connected(n):
    s = g.dynamic.OnePeerExponentialSchedule(n)
    tau = math.ceil(math.log2(n))
    assert s.tau == tau
    assert all(max(d for _, d in s.graph(t).degree()) <= 2 for t in range(tau))
    assert s.window_connected(3 * tau, tau)
    # the union over a window is the exponential graph
    assert set(map(frozenset, g.dynamic.union_graph(s.graphs(tau)).edges)) == set(map(frozenset, g.topology.exponential(n).edges))
    if n in (8, 16):  # hop 2^k with k >= 1 splits a power-of-two ring into cycles: one round is not enough
        assert not nx.is_connected(s.graph(1))
        assert not s.window_connected(3 * tau, 1)


def test_erdos_renyi_schedule_reproducible_and_connected_on_request():
    a = g.dynamic.ErdosRenyiSchedule(10, 0.3, seed=4)
    b = g.dynamic.ErdosRenyiSchedule(10, 0.3, seed=4)
    assert [set(a.graph(t).edges) for t in range(5)] == [set(b.graph(t).edges) for t in range(5)]
    assert set(a.graph(0).edges) != set(a.graph(1).edges)
    assert a.graph(3) is a.graph(3)  # cached
    c = g.dynamic.ErdosRenyiSchedule(10, 0.3, ensure_connected=True, seed=4)
    assert all(nx.is_connected(G) for G in c.graphs(20))
    assert (c.spectral_gaps(20) > 0).all()
    assert c.window_connected(20, 1)
    # sparse rounds are often disconnected (gap 0) but the union over windows is connected
    sparse = g.dynamic.ErdosRenyiSchedule(12, 0.1, seed=0)
    gaps = sparse.spectral_gaps(30)
    assert (gaps < 1e-9).any()
    assert sparse.window_connected(30, 10)
    with pytest.raises(ValueError, match="p_edge"):
        g.dynamic.ErdosRenyiSchedule(200, 0.001, ensure_connected=True, tries=3).graph(0)


def test_per_round_mixing_is_doubly_stochastic_even_when_disconnected():
    s = g.dynamic.ErdosRenyiSchedule(9, 0.15, seed=1)
    Ws = s.mixings(10)
    assert Ws.shape == (10, 9, 9)
    np.testing.assert_allclose(Ws.sum(1), 1)
    np.testing.assert_allclose(Ws.sum(2), 1)
    np.testing.assert_allclose(Ws, np.transpose(Ws, (0, 2, 1)))
    for t in range(10):
        for v in nx.isolates(s.graph(t)):
            assert Ws[t, v, v] == pytest.approx(1.0)


@pytest.mark.parametrize("rate", [0.0, 0.25, 1.0])
def test_edge_churn_keeps_edge_count_and_rewires_the_fraction(rate):
    G = g.topology.ring(20)
    s = g.dynamic.EdgeChurnSchedule(G, rate, seed=2)
    assert set(s.graph(0).edges) == set(G.edges)
    for t in range(1, 6):
        prev, cur = set(map(frozenset, s.graph(t - 1).edges)), set(map(frozenset, s.graph(t).edges))
        assert len(cur) == G.number_of_edges()
        assert len(prev - cur) <= round(rate * 20)
        if rate == 0:
            assert prev == cur
    if rate > 0:
        assert set(s.graph(5).edges) != set(G.edges)
    if rate == 0.25:
        late = g.dynamic.EdgeChurnSchedule(G, rate, seed=2).graph(1100)  # built round by round, no recursion limit
        assert late.number_of_edges() == G.number_of_edges()
    kc = g.dynamic.EdgeChurnSchedule(G, 0.3, keep_connected=True, seed=2)
    assert kc.window_connected(8, 1)


def test_churn_speeds_up_gossip_on_a_ring():
    n = 24
    static = g.dynamic.StaticSchedule(g.topology.ring(n)).contraction(40)
    np.testing.assert_allclose(static, g.mixing.slem(g.mixing_matrix(g.topology.ring(n))) ** np.arange(1, 41), rtol=1e-8)
    churned = g.dynamic.EdgeChurnSchedule(g.topology.ring(n), 0.3, seed=0).contraction(40)
    # rounds may be disconnected, but the product of the W_t contracts far faster than the ring's slem^t
    assert churned[-1] < 1e-2 < 0.1 < static[-1]
    assert np.all(np.diff(churned) <= 1e-12)


def test_random_k_out():
    s = g.dynamic.RandomKOutSchedule(10, 2, seed=0)
    for G in s.graphs(5):
        assert all(d >= 2 for _, d in G.degree())
    assert s.window_connected(5, 2)
    with pytest.raises(ValueError, match="k="):
        g.dynamic.RandomKOutSchedule(4, 4)


def test_static_and_make_schedule():
    s = g.make_schedule("static", 6, base="star")
    np.testing.assert_allclose(s.mixing(0), s.mixing(7))
    for name in g.dynamic.DYNAMIC_TOPOLOGIES:
        sch = g.make_schedule(name, 8, seed=1)
        assert sch.graph(2).number_of_nodes() == 8
    with pytest.raises(ValueError, match="schedule"):
        g.make_schedule("tornado", 8)
    with pytest.raises(ValueError, match="window"):
        g.dynamic.window_connected(s.graphs(3), 4)
    with pytest.raises(ValueError, match="n="):
        g.dynamic.OnePeerExponentialSchedule(1)
