"""Flooding on an edge list or a sparse matrix: the same hops, parents and counts as on a networkx graph,
and no N x N array at 2 x 10^5 clients."""

import tracemalloc

import numpy as np
import pytest

from unlearnkit.graphs import edge_list, flood, make_graph, sparse_mixing_matrix
from unlearnkit.graphs.sparse import graph_edges
from unlearnkit.graphs.flood import relay_messages

FAMILIES = [("ring", {}), ("path", {}), ("star", {}), ("grid", {}), ("torus", {}), ("exponential", {}),
            ("random_regular", {"degree": 3}), ("erdos_renyi", {"p_edge": 0.2, "seed": 3}), ("small_world", {})]


@pytest.mark.parametrize("name,kw", FAMILIES)
def test_sparse_flood_equals_graph_flood(name, kw):
    n = 24
    G = make_graph(name, n, **kw)
    e = graph_edges(G)
    W = sparse_mixing_matrix(e, n)
    for s in (0, 7, n - 1):
        ref = flood(G, s)
        for got in (flood(e, s, n=n), flood(W, s)):
            assert got == ref  # hops, parents, messages, duplicates
            assert got.rounds == ref.rounds
        assert relay_messages(e, s, n=n) == relay_messages(W, s) == relay_messages(G, s)


def test_sparse_flood_refuses_what_the_graph_flood_refuses():
    e = np.array([[0, 1], [2, 3]])
    with pytest.raises(ValueError, match="disconnected"):
        flood(e, 0, n=4)
    with pytest.raises(ValueError, match="source"):
        flood(edge_list("ring", 5), 5, n=5)
    with pytest.raises(ValueError, match="n is required"):
        flood(edge_list("ring", 5), 0)
    with pytest.raises(ValueError, match="outside"):
        relay_messages(np.array([[0, 9]]), 0, n=4)


def test_flood_at_200k_clients_builds_no_n_by_n_array():
    n = 200_000
    e = edge_list("random_regular", n, degree=4)
    tracemalloc.start()
    fl = flood(e, 0, n=n)
    relay = relay_messages(e, 0, n=n)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(fl.hops) == n and fl.messages == 2 * len(e) - (n - 1) and fl.duplicates == fl.messages - (n - 1)
    assert relay == sum(fl.hops.values()) and 5 < fl.rounds < 40
    assert peak < 300 * 2**20, f"traced peak {peak / 2**20:.0f} MiB (N x N bool alone would be {n * n / 2**30:.0f} GiB)"


def test_simulated_network_floods_an_edge_list_like_a_graph():
    import torch

    from unlearnkit.decentral import SimulatedNetwork

    n = 12
    G = make_graph("torus", n)
    vals = torch.arange(n * 3, dtype=torch.float64, device="cpu").reshape(n, 3)
    outs, counts = [], []
    for graph in (G, graph_edges(G), sparse_mixing_matrix(G)):
        net = SimulatedNetwork(n)
        outs.append(net.flood(vals, graph, sources=[0, 5]))
        counts.append(net.counts["flood"])
    assert counts[0] == counts[1] == counts[2] == 2 * flood(G, 0).messages
    assert all(torch.equal(o, outs[0]) for o in outs)
    with pytest.raises(ValueError, match="graph has 5 clients"):
        SimulatedNetwork(n).flood(vals, sparse_mixing_matrix(edge_list("ring", 5), 5), sources=[0])


def test_bench_scale_rows_for_gradient_gossip_and_flood():
    from unlearnkit.benchmarks.scale import flood_rows, gradient_gossip_rows

    rows = gradient_gossip_rows([600], d=3) + flood_rows([600])
    assert [(r["topology"], r["what"].split()[0]) for r in rows] == [
        ("ring", "gradient"), ("random_regular", "gradient"), ("ring", "flood"), ("random_regular", "flood")]
    assert rows[0]["kernel"] == "circulant" and rows[1]["kernel"] == "csr"
    assert rows[2]["hops"] == 300 and rows[2]["messages"] == 601 and rows[2]["relay_messages"] == 300 ** 2
    assert all(r.get("round_ms", r.get("flood_s", 0)) > 0 for r in rows)
