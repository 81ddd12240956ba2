"""Walks on networks kept sparse: the same routes as the dense transition matrix, and no N x N array at 2 x 10^5."""

import tracemalloc

import numpy as np
import pytest

from unlearnkit import graphs


def _dense_route(G, u, p, hops, rng):
    """The walk read off the dense transition matrix: per hop, the first column whose cumulative probability
    exceeds a uniform draw."""
    P = graphs.walks.transition_matrix(G, kind="rrdu_graph", u=u, p=p)
    cum = np.cumsum(P, axis=1)
    cum[:, -1] = 1.0
    cur, r, route = int(rng.integers(P.shape[0])), rng.random(hops), []
    for t in range(hops):
        route.append(cur)
        cur = int(np.searchsorted(cum[cur], r[t], side="right"))
    return np.array(route)


@pytest.mark.parametrize("name", ["ring", "star", "erdos_renyi", "two_clusters", "complete", "small_world"])
def test_rrdu_graph_walk_is_the_dense_matrix_walk(name):
    G = graphs.make_graph(name, 12)
    for u, p in ((0, 0.1), (3, 0.5), (5, 0.9)):
        want = _dense_route(G, u, p, 3000, np.random.default_rng(1))
        got = graphs.walks.rrdu_graph_walk(G, u, p, 3000, rng=np.random.default_rng(1))
        assert np.array_equal(got, want)
        edges = graphs.sparse.graph_edges(G)
        assert np.array_equal(graphs.walks.rrdu_graph_walk(edges, u, p, 3000, n=12, rng=np.random.default_rng(1)), want)


def test_simple_walk_from_edges_is_the_graph_walk():
    G = graphs.make_graph("small_world", 30, seed=2)
    a = graphs.simple_walk(G, 500, rng=np.random.default_rng(4))
    b = graphs.simple_walk(graphs.sparse.graph_edges(G), 500, n=30, rng=np.random.default_rng(4))
    assert np.array_equal(a, b) and graphs.walks.crosses_only_edges(a, G)


def test_walks_on_two_hundred_thousand_clients_stay_sparse():
    n = 200_000
    edges = graphs.edge_list("ring", n)
    tracemalloc.start()
    route = graphs.walks.rrdu_graph_walk(edges, 0, 0.2, 5000, n=n, start=0, rng=np.random.default_rng(0))
    walk = graphs.simple_walk(edges, 5000, n=n, start=7, rng=np.random.default_rng(0))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 200 * 2**20  # a dense float64 matrix would be 320 GB
    assert np.all(np.abs(np.diff(route)) % (n - 2) <= 1)  # stays or moves to a ring neighbour
    assert np.all(np.isin(np.abs(np.diff(walk)), (1, n - 1)))


def test_edge_input_errors():
    with pytest.raises(ValueError, match="n=None: pass n"):
        graphs.walks.rrdu_graph_walk(np.array([[0, 1]]), 0, 0.5, 3, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="disconnected"):
        graphs.simple_walk(np.array([[0, 1], [2, 3]]), 3, n=4, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="outside"):
        graphs.simple_walk(np.array([[0, 9]]), 3, n=4, rng=np.random.default_rng(0))


def test_many_walks_at_once_are_walks_on_the_graph():
    G = graphs.make_graph("small_world", 40, seed=1)
    routes = graphs.walks.rrdu_graph_walk(G, 3, 0.3, 4000, walks=6, rng=np.random.default_rng(0))
    assert routes.shape == (6, 4000)
    assert all(graphs.walks.crosses_only_edges(r, G, allow_stay=True) for r in routes)
    assert abs(np.mean(routes == 3) - 0.3) < 0.03  # the stationary share at u
    # each walk is the one-walk route for its own start and column of uniforms
    rng = np.random.default_rng(0)
    starts, r = rng.integers(0, 40, size=6), rng.random((4000, 6))
    P = graphs.walks.transition_matrix(G, kind="rrdu_graph", u=3, p=0.3)
    cum = np.cumsum(P, axis=1)
    cum[:, -1] = 1.0
    for k in (0, 5):
        cur, want = int(starts[k]), []
        for t in range(4000):
            want.append(cur)
            cur = int(np.searchsorted(cum[cur], r[t, k], side="right"))
        assert np.array_equal(routes[k], want)
    simple = graphs.simple_walk(graphs.sparse.graph_edges(G), 500, n=40, walks=3, start=0, rng=np.random.default_rng(2))
    assert simple.shape == (3, 500) and np.all(simple[:, 0] == 0)
    assert all(graphs.walks.crosses_only_edges(w, G) for w in simple)
