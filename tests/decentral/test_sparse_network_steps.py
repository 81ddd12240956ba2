"""The interface steps (network_steps) on a sparse network: scipy.sparse W or an edge list give the dense numbers
to 1e-12 in float64, the same message counts, and 2 x 10^5 clients build no N x N array."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from unlearnkit import graphs
from unlearnkit.decentral._engine import ClientSampler
from unlearnkit.decentral.network import SimulatedNetwork
from unlearnkit.decentral.network_steps import LocalProblem, dpsgd_rounds, gradient_gossip_rounds, is_edge_array
from unlearnkit.models import FlatParams, make_model
from unlearnkit.runtime import make_generator

N = 12
PROBLEM = LocalProblem(seed=3, n_clients=N, dataset="synthetic", batch_size=4)


def _draw(seed: int):
    _, ds, idx = PROBLEM._loaded()
    ds64 = ds.__class__(ds.name, ds.x_train.double(), ds.y_train, ds.x_test.double(), ds.y_test, ds.n_classes,
                        ds.input_shape, ds.info)
    smp = ClientSampler(ds64, idx, 4, generator=make_generator(seed))
    return lambda: smp.sample()[:2]


def _networks(name: str, rule: str = "metropolis", **kw):
    e = graphs.edge_list(name, N, seed=1, **kw)
    W = graphs.sparse_mixing_matrix(e, N, rule)
    return {"dense": W.toarray(), "sparse": W, "edges": e}


@pytest.mark.parametrize("retrain_rule", ["recompute", "absorb"])
@pytest.mark.parametrize("name,kw", [("ring", {}), ("random_regular", {"degree": 3}), ("erdos_renyi", {"p_edge": 0.3})])
def test_gradient_gossip_rounds_sparse_equals_dense(name, kw, retrain_rule):
    flat, start = PROBLEM.flat(), PROBLEM.init().expand(N, -1).clone()
    out = {}
    for kind, net_w in _networks(name, **kw).items():
        net = SimulatedNetwork(N)
        theta, sums = gradient_gossip_rounds(net, flat, start, _draw(2), net_w, rounds=3, lr=0.1, leavers=(0, 5),
                                             retrain_rule=retrain_rule)
        out[kind] = (theta, sums, net.counts["gossip"])
    theta, sums, msgs = out["dense"]
    assert sums.S.abs().max() > 1e-6
    for kind in ("sparse", "edges"):
        t2, s2, m2 = out[kind]
        assert m2 == msgs
        assert torch.abs(t2 - theta).max() < 1e-12
        for a, b in ((s2.A, sums.A), (s2.S, sums.S), (s2.D, sums.D)):
            assert torch.abs(a - b).max() < 1e-12
        for k in (0, 5):
            for scale in ("paper", "sum"):
                assert torch.abs(s2.correction(k, scale=scale) - sums.correction(k, scale=scale)).max() < 1e-12


def test_gradient_gossip_rounds_on_a_schedule_of_sparse_matrices():
    flat, start = PROBLEM.flat(), PROBLEM.init().expand(N, -1).clone()
    mats = [graphs.sparse_mixing_matrix(graphs.edge_list("random_regular", N, seed=s, degree=3), N) for s in range(3)]
    res = []
    for ws in (mats, [w.toarray() for w in mats]):
        net = SimulatedNetwork(N)
        res.append((*gradient_gossip_rounds(net, flat, start, _draw(4), ws, rounds=4, lr=0.1, leavers=(3,)),
                    net.counts["gossip"]))
    assert torch.abs(res[0][0] - res[1][0]).max() < 1e-12 and res[0][2] == res[1][2]
    assert torch.abs(res[0][1].S - res[1][1].S).max() < 1e-12


@pytest.mark.parametrize("order", ["dpsgd", "atc"])
def test_dpsgd_rounds_sparse_equals_dense(order):
    flat, start = PROBLEM.flat(), PROBLEM.init().expand(N, -1).clone()
    got = {}
    for kind, net_w in _networks("random_regular", degree=4).items():
        net = SimulatedNetwork(N)
        got[kind] = (dpsgd_rounds(net, flat, start, _draw(1), net_w, rounds=3, lr=0.2, order=order),
                     net.counts["gossip"])
    for kind in ("sparse", "edges"):
        assert torch.abs(got[kind][0] - got["dense"][0]).max() < 1e-12 and got[kind][1] == got["dense"][1]


def test_edge_array_is_told_from_a_matrix():
    e = graphs.edge_list("ring", 5)
    assert is_edge_array(e, 5) and not is_edge_array(e.astype(float), 5)
    assert not is_edge_array(np.eye(2, dtype=np.int64), 2) and not is_edge_array(np.eye(5), 5)


def test_gradient_gossip_rounds_at_200k_clients_builds_no_n_by_n_array():
    """A ring of 2 x 10^5 clients with one candidate leaver: a dense W would be 320 GB."""
    n, b = 200_000, 1
    flat = FlatParams(make_model("logreg", (2,), 2, generator=make_generator(0)).double())
    gen = torch.Generator(device="cpu").manual_seed(0)
    xs = torch.randn((n, b, 2), generator=gen, dtype=torch.float64, device="cpu")
    ys = torch.randint(0, 2, (n, b), generator=gen, device="cpu")
    start = flat.init().detach().expand(n, -1).clone()
    tracemalloc.start()
    edges = graphs.edge_list("ring", n)
    net = SimulatedNetwork(n)
    theta, sums = gradient_gossip_rounds(net, flat, start, lambda: (xs, ys), edges, rounds=2, lr=0.1, leavers=(7,))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert theta.shape == (n, flat.d) and torch.isfinite(theta).all()
    assert net.counts["gossip"] == 2 * 2 * n            # a ring: 2 messages per client per round
    corr = sums.correction(7, scale="sum")
    # the leaver's two neighbours (and theirs, under "recompute") correct; everyone else is untouched
    moved = torch.nonzero(corr.abs().sum(1) > 0).ravel().tolist()
    assert set(moved) <= {4, 5, 6, 8, 9, 10} and {6, 8} <= set(moved)
    assert peak < 300 * 2**20, f"traced peak {peak / 2**20:.0f} MiB"
    assert not any(sp.issparse(x) for x in (theta, corr))


@pytest.mark.slow
def test_one_million_clients_gossip_history_and_client_removal():
    """N = 10^6 (a ring; --runslow): one interface round with a candidate leaver, a one-round CSR history and
    its correction, and the network after a client leaves, all O(N + E); a dense W would be 8 TB."""
    from unlearnkit.decentral.gradient_gossip import HistoryCache
    from unlearnkit.graphs.flood import remove_client

    n = 1_000_000
    flat = FlatParams(make_model("logreg", (1,), 1, generator=make_generator(0)).double(), loss="logistic")
    gen = torch.Generator(device="cpu").manual_seed(0)
    xs = torch.randn((n, 1, 1), generator=gen, dtype=torch.float64, device="cpu")
    ys = torch.randint(0, 2, (n, 1), generator=gen, device="cpu").double()
    start = flat.init().detach().expand(n, -1).clone()
    tracemalloc.start()
    edges = graphs.edge_list("ring", n)
    theta, sums = gradient_gossip_rounds(SimulatedNetwork(n), flat, start, lambda: (xs, ys), edges, rounds=1,
                                         lr=0.1, leavers=(3,))
    W = graphs.sparse_mixing_matrix(edges, n)
    cache = HistoryCache()
    cache.update(W, torch.from_numpy(np.ones((n, 1))))
    corr = cache.correction(3, 0.1, scale="sum")
    after = remove_client(W, 3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert theta.shape == (n, flat.d) and sums.S.shape == (1, n, flat.d)
    assert after.shape == (n - 1, n - 1) and after.nnz == 3 * (n - 1) - 2    # a path of n - 1 clients
    assert not cache.dense and torch.nonzero(corr.abs().sum(1)).numel() > 0
    assert peak < 1500 * 2**20, f"traced peak {peak / 2**20:.0f} MiB"
