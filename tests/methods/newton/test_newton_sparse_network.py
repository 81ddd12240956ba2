"""Newton/Fisher unlearning on the package's own sparse network (CSR mixing matrix or edge list): the numbers of
the networkx path, and a ring of 10^5 clients trained, unlearned and retrained without networkx."""

import sys
import tracemalloc

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import torch

from unlearnkit.core import Request
from unlearnkit.data.datasets import load
from unlearnkit.data.federated import partition
from unlearnkit.decentral.gossip import GossipConfig
from unlearnkit.graphs.flood import check_flood_network, remove_client
from unlearnkit.graphs.mixing import mixing_matrix
from unlearnkit.graphs.sparse import edge_list, graph_edges, sparse_mixing_matrix
from unlearnkit.graphs.topology import make_graph
from unlearnkit.methods.newton.algorithm import Newton
from unlearnkit.methods.newton.config import NewtonConfig
from unlearnkit.methods.newton.training import GossipRetrain, train_dpsgd
from unlearnkit.models import FlatParams, logreg
from unlearnkit.runtime import make_generator

N = 8


def _setup(n: int, n_train: int):
    ds = load("synthetic", n_train=n_train, n_test=20, dim=3, seed=1, device="cpu")
    fed = partition(ds, n, "iid", seed=0)
    flat = FlatParams(logreg(ds.input_shape, 1), loss="logistic")
    return ds, fed, flat


@pytest.fixture(scope="module")
def trained():
    ds, fed, flat = _setup(N, 160)
    cfg = GossipConfig(rounds=3, lr=0.2, batch_size=8, weight_decay=0.1)
    G = make_graph("random_regular", N, seed=2, degree=3)
    e = graph_edges(G)
    nets = {"networkx": G, "sparse": sparse_mixing_matrix(e, N), "edges": e}
    init = flat.init().detach().clone()
    states = {k: train_dpsgd(flat, fed, net, cfg, generator=make_generator(4), init=init) for k, net in nets.items()}
    return fed, states


def test_training_keeps_the_sparse_matrix_and_matches_networkx(trained):
    _, states = trained
    assert isinstance(states["networkx"].network, nx.Graph)
    assert sp.issparse(states["sparse"].network) and sp.issparse(states["edges"].network)
    for k in ("sparse", "edges"):  # N <= 16: the gossip kernel is the dense matmul, bit for bit
        assert torch.equal(states[k].params, states["networkx"].params)
        assert states[k].cost.messages == states["networkx"].cost.messages


@pytest.mark.parametrize("kind,client", [("samples", None), ("client", 3)])
@pytest.mark.parametrize("release", ["local", "average"])
def test_newton_on_a_sparse_network_gives_the_networkx_numbers(trained, kind, client, release):
    fed, states = trained
    idx = np.asarray(fed.client_indices[3]) if kind == "client" else np.asarray(fed.client_indices[1][:3])
    req = Request(kind, idx, client=client)
    cfg = NewtonConfig(mode="none", sigma=0.05, release=release, finetune_rounds=1)
    res = {k: Newton().unlearn(st, req, cfg, generator=make_generator(0)) for k, st in states.items()}
    ref = res["networkx"]
    for k in ("sparse", "edges"):
        assert torch.abs(res[k].params - ref.params).max() < 1e-6  # float32 models; the flood adds alike
        assert res[k].cost.messages == ref.cost.messages
        assert {c: f.messages for c, f in res[k].extras["floods"].items()} == \
            {c: f.messages for c, f in ref.extras["floods"].items()}
        if kind == "client":
            after = res[k].extras["state"].network
            assert sp.issparse(after) and after.shape == (N - 1, N - 1)
            want = mixing_matrix(ref.extras["state"].network)
            assert np.abs(after.toarray() - want).max() < 1e-12


def test_retraining_without_a_client_on_a_sparse_network(trained):
    fed, states = trained
    req = Request("client", np.asarray(fed.client_indices[5]), client=5)
    a = GossipRetrain().unlearn(states["networkx"], req, generator=make_generator(1))
    b = GossipRetrain().unlearn(states["sparse"], req, generator=make_generator(1))
    assert torch.equal(a.params, b.params)


def test_remove_client_and_flood_check_on_edges():
    e = edge_list("ring", 6)
    assert np.array_equal(remove_client(e, 0, n=6), edge_list("path", 5))
    W = sparse_mixing_matrix(edge_list("path", 6), 6)
    with pytest.raises(ValueError, match="disconnected"):
        remove_client(W, 2)
    with pytest.raises(ValueError, match="disconnected"):
        check_flood_network(np.array([[0, 1], [2, 3]]), n=4)


def test_newton_on_100k_clients_never_uses_networkx(monkeypatch):
    """A ring of 10^5 clients: training, a sample-wise Newton request and its flood, O(N + E) memory."""
    n = 100_000
    ds, fed, flat = _setup(n, 2 * n)
    cfg = GossipConfig(rounds=1, lr=0.2, batch_size=2, weight_decay=0.1)
    edges = edge_list("ring", n)
    # any networkx graph algorithm called on this path fails the test
    monkeypatch.setattr(nx, "is_connected", lambda *a, **k: pytest.fail("networkx on the sparse path"))
    tracemalloc.start()
    st = train_dpsgd(flat, fed, edges, cfg, generator=make_generator(0))
    res = Newton().unlearn(st, Request("samples", np.asarray(fed.client_indices[10][:1])),
                           NewtonConfig(mode="none", sigma=0.01), generator=make_generator(0))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert res.params.shape == (n, flat.d) and res.cost.messages == 2 * n - (n - 1)
    assert res.extras["floods"][10].rounds == n // 2
    assert peak < 400 * 2**20, f"traced peak {peak / 2**20:.0f} MiB (a dense W: {8 * n * n / 2**30:.0f} GiB)"
    assert "networkx" in sys.modules  # imported by the package, but not called above
