"""Gradient gossip on a sparse mixing matrix: the same numbers as the dense path, and no N x N array."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import unlearnkit as uk
from unlearnkit import graphs
from unlearnkit.decentral import GradientGossipConfig, run_gradient_gossip
from unlearnkit.decentral.mixer import GossipKernel
from unlearnkit.decentral.gradient_gossip import gradient_gossip_round
from unlearnkit.models import FlatParams, make_model

FAMILIES = [("ring", {}), ("torus", {}), ("random_regular", {"degree": 4}), ("erdos_renyi", {"p_edge": 0.2}),
            ("exponential", {})]


@pytest.mark.parametrize("name,kw", FAMILIES)
def test_sparse_round_equals_dense_round(name, kw):
    n, d = 36, 5
    W = graphs.sparse_mixing_matrix(graphs.edge_list(name, n, seed=2, **kw), n)
    gen = uk.make_generator(0)
    thetas = torch.randn((n, d), generator=gen, dtype=torch.float64, device="cpu")
    grads = torch.randn((n, d), generator=gen, dtype=torch.float64, device="cpu")
    dense = gradient_gossip_round(W.toarray(), thetas, grads, 0.3)
    for kind in ("auto", "csr", "dense"):
        k = GossipKernel(W, kind=kind, dtype=torch.float64)
        torch.testing.assert_close(gradient_gossip_round(k, thetas, grads, 0.3), dense, atol=1e-12, rtol=0)
    torch.testing.assert_close(gradient_gossip_round(W, thetas, grads, 0.3), dense, atol=1e-12, rtol=0)


def test_round_rejects_mismatched_shapes():
    W = graphs.sparse_mixing_matrix(graphs.edge_list("ring", 6), 6)
    x = torch.zeros((5, 2), dtype=torch.float64, device="cpu")
    with pytest.raises(ValueError, match="grads has N=5"):
        gradient_gossip_round(W, x, x, 0.1)
    with pytest.raises(ValueError, match="lr"):
        gradient_gossip_round(W, x, x, 0.0)


@pytest.mark.parametrize("name,kw", [("ring", {}), ("random_regular", {"degree": 3})])
def test_run_on_sparse_matrix_matches_dense_run(name, kw):
    ds = uk.data.load("digits", device="cpu")
    n = 18
    fed = uk.data.partition(ds, n, seed=1)
    flat = FlatParams(make_model("logreg", ds.input_shape, 10, generator=uk.make_generator(0)))
    W = graphs.sparse_mixing_matrix(graphs.edge_list(name, n, **kw), n)
    init = flat.init()
    cfg = GradientGossipConfig(rounds=3, lr=0.05, batch_size=4)
    a = run_gradient_gossip(flat, fed, W.toarray(), cfg, generator=uk.make_generator(5), init=init)
    b = run_gradient_gossip(flat, fed, W, cfg, generator=uk.make_generator(5), init=init)
    assert b.extras["mixing"].large and not a.extras["mixing"].large
    # float32 training (the rounds agree to 1e-12 in float64 above): kernels sum in another order
    torch.testing.assert_close(b.params, a.params, atol=1e-5, rtol=1e-5)
    assert a.cost.messages == b.cost.messages == 3 * 2 * W.shape[0] * (W.nnz - n) // (2 * n)
    # the all-leaver running sums are N x N x d floats: refused (the CSR history is not: test_sparse_pdudt_history)
    with pytest.raises(ValueError, match="N x N x d"):
        run_gradient_gossip(flat, fed, W, GradientGossipConfig(rounds=1, lr=0.05, cache="running"),
                            generator=uk.make_generator(5))


def test_round_at_200k_clients_builds_no_n_by_n_array():
    n, d = 200_000, 4
    tracemalloc.start()
    W = graphs.sparse_mixing_matrix(graphs.edge_list("ring", n), n)
    thetas = torch.from_numpy(np.ones((n, d)))  # numpy-backed: tracemalloc sees it
    grads = torch.from_numpy(np.full((n, d), 0.5))
    out = gradient_gossip_round(W, thetas, grads, 0.1)
    k = GossipKernel(W, kind="csr", dtype=torch.float64)
    out2 = gradient_gossip_round(k, thetas, grads, 0.1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sp.issparse(W) and out.shape == (n, d)
    # W is doubly stochastic, so a constant gradient stays constant after mixing
    assert torch.allclose(out, torch.full((n, d), 0.95, dtype=torch.float64, device="cpu"), atol=1e-12)
    assert torch.allclose(out2, out, atol=1e-12)
    assert peak < 300 * 2**20, f"traced peak {peak / 2**20:.0f} MiB (N x N bool alone would be {n * n / 2**30:.0f} GiB)"


@pytest.mark.parametrize("retrain_rule", ["recompute", "absorb"])
@pytest.mark.parametrize("rule", ["metropolis", "max_degree", "lazy"])
def test_sparse_retrain_matrix_and_running_sums_equal_dense(retrain_rule, rule):
    from unlearnkit.decentral.gradient_gossip import RunningSumCache
    from unlearnkit.decentral.correction import retrain_matrices
    from unlearnkit.decentral.correction import sparse_retrain_matrix

    for name, kw in FAMILIES[:4]:
        n, d = 20, 3
        W = graphs.sparse_mixing_matrix(graphs.edge_list(name, n, seed=1, **kw), n, rule)
        Wd = torch.tensor(W.toarray(), device="cpu")
        for k in (0, 9):
            ref = retrain_matrices(Wd, [k], retrain_rule=retrain_rule, rule=rule)[0].numpy()
            got = sparse_retrain_matrix(W, k, retrain_rule=retrain_rule, rule=rule)
            assert sp.issparse(got) and np.abs(got.toarray() - ref).max() < 1e-12
        caches = [RunningSumCache(n, d, 0.1, leavers=[0, 9], retrain_rule=retrain_rule, rule=rule) for _ in "ab"]
        gen = uk.make_generator(3)
        for _ in range(3):
            g = torch.randn((n, d), generator=gen, dtype=torch.float64, device="cpu")
            caches[0].update(Wd, g)
            caches[1].update(W, g)
        for k in (0, 9):
            for scale in ("paper", "sum"):
                torch.testing.assert_close(caches[1].correction(k, scale=scale), caches[0].correction(k, scale=scale),
                                           atol=1e-12, rtol=0)


def test_sparse_run_excluding_a_client_and_running_sums_match_dense():
    ds = uk.data.load("digits", device="cpu")
    n = 18
    fed = uk.data.partition(ds, n, seed=1)
    flat = FlatParams(make_model("logreg", ds.input_shape, 10, generator=uk.make_generator(0)))
    W = graphs.sparse_mixing_matrix(graphs.edge_list("random_regular", n, degree=3), n)
    cfg = GradientGossipConfig(rounds=3, lr=0.05, batch_size=4, cache="running", leavers=(2, 7))
    runs = [run_gradient_gossip(flat, fed, net, cfg, generator=uk.make_generator(5), exclude=2)
            for net in (W.toarray(), W)]
    torch.testing.assert_close(runs[1].params, runs[0].params, atol=1e-5, rtol=1e-5)
    assert runs[1].extras["mixing"].large and runs[0].cost.messages == runs[1].cost.messages
    for k in (2, 7):
        torch.testing.assert_close(runs[1].extras["running"].correction(k), runs[0].extras["running"].correction(k),
                                   atol=1e-6, rtol=1e-5)
