"""Gossip kernels: every kernel computes W @ X; a sparse W runs D-PSGD with the dense run's numbers."""

import networkx as nx
import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit import graphs
from unlearnkit.decentral import GossipConfig, run_gossip
from unlearnkit.decentral._engine import MixingSource
from unlearnkit.decentral.mixer import GossipKernel
from unlearnkit.models import FlatParams, make_model

CASES = [("ring", 2, {}), ("ring", 3, {}), ("ring", 50, {}), ("exponential", 50, {}), ("exponential", 64, {}),
         ("torus", 36, {}), ("torus", 35, {}), ("torus", 300, {}), ("path", 40, {}), ("random_regular", 60, {"degree": 4})]


@pytest.mark.parametrize("name,n,kw", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_every_kernel_is_w_times_x(name, n, kw, dtype):
    W = graphs.sparse_mixing_matrix(graphs.edge_list(name, n, **kw), n)
    X = torch.randn((n, 23), generator=uk.make_generator(0), device="cpu", dtype=dtype)
    ref = torch.as_tensor(W.toarray() @ X.double().numpy(), dtype=dtype, device="cpu")
    tol = 1e-6 if dtype == torch.float32 else 1e-13
    kinds = ["dense", "csr"] + (["circulant"] if name in ("ring", "exponential", "torus") else [])
    for kind, cells in ((k, b) for k in kinds for b in (3, 7, n)):  # wrap-around inside and across blocks
        k = GossipKernel(W, kind=kind, dtype=dtype, block_bytes=cells * 23 * X.element_size())
        torch.testing.assert_close(k(X), ref, rtol=0, atol=tol)
        torch.testing.assert_close(k(X[:, 0]), ref[:, 0], rtol=0, atol=tol)
        out = torch.full_like(X, float("nan"))
        assert k(X, out=out) is out
        torch.testing.assert_close(out, ref, rtol=0, atol=tol)
        with pytest.raises(ValueError, match="distinct from X"):
            k(X, out=X)
    Xg = X.clone().requires_grad_()
    torch.testing.assert_close(GossipKernel(W, dtype=dtype)(Xg).detach(), ref, rtol=0, atol=tol)


def test_auto_picks_by_structure_and_size():
    ring = graphs.sparse_mixing_matrix(graphs.edge_list("ring", 1000), 1000)
    rr = graphs.sparse_mixing_matrix(graphs.edge_list("random_regular", 1000, degree=3), 1000)
    assert GossipKernel(ring).kind == "circulant" and GossipKernel(ring).grid == (1, 1000)
    torus = graphs.sparse_mixing_matrix(graphs.edge_list("torus", 1000), 1000)
    assert GossipKernel(torus).kind == "circulant" and GossipKernel(torus).grid == (25, 40)
    assert GossipKernel(rr).kind == "csr"
    assert GossipKernel(graphs.mixing_matrix(graphs.make_graph("complete", 20))).kind == "dense"
    with pytest.raises(ValueError, match="not circulant"):
        GossipKernel(rr, kind="circulant")


@pytest.mark.parametrize("rule,weight", [("metropolis", 2 / 3), ("max_degree", 2 / 3), ("lazy", 1 / 3)])
def test_a_ring_mixes_with_two_lerps_per_block(rule, weight):
    """A ring whose neighbours share one weight takes the two-``lerp`` kernel; it equals ``W @ X``, also with
    the wrap-around rows inside a block; other circulant stencils keep the weighted adds."""
    n = 40
    W = graphs.sparse_mixing_matrix(graphs.edge_list("ring", n), n, rule=rule)
    X = torch.randn((n, 5), generator=uk.make_generator(1), device="cpu", dtype=torch.float64)
    ref = torch.as_tensor(W.toarray() @ X.numpy(), dtype=torch.float64, device="cpu")
    for rows in (1, 3, n):
        k = GossipKernel(W, dtype=torch.float64, block_bytes=rows * 5 * 8)
        assert k.kind == "circulant" and k.lerp_weight == pytest.approx(weight)
        torch.testing.assert_close(k(X), ref, rtol=0, atol=1e-14)
    torus = graphs.sparse_mixing_matrix(graphs.edge_list("torus", 400), 400)
    assert GossipKernel(torus, kind="circulant").lerp_weight is None


def test_sparse_matrix_runs_dpsgd_like_the_graph():
    ds = uk.data.load("digits", device="cpu")
    fed = uk.data.partition(ds, 12, seed=0)
    flat = FlatParams(make_model("mlp", ds.input_shape, 10, hidden=(16,), generator=uk.make_generator(0)))
    cfg = GossipConfig(rounds=3, lr=0.3, batch_size=8, order="atc")
    for name, kw in (("ring", {}), ("random_regular", {"degree": 3})):
        e = graphs.edge_list(name, 12, seed=2, **kw)
        G = nx.Graph(map(tuple, e))
        a = run_gossip(flat, fed, graphs.sparse_mixing_matrix(e, 12), cfg, generator=uk.make_generator(5))
        b = run_gossip(flat, fed, G, cfg, generator=uk.make_generator(5))
        c = run_gossip(flat, fed, graphs.sparse_mixing_matrix(e, 12), cfg, generator=uk.make_generator(5),
                       engine="loop")
        torch.testing.assert_close(a.params, b.params, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(c.params, b.params, rtol=1e-5, atol=1e-6)
        assert a.cost.messages == b.cost.messages == 3 * 2 * len(e)


def test_graph_beyond_the_dense_limit_stays_sparse():
    n = graphs.topology.MAX_CLIENTS + 2_000
    m = MixingSource(nx.cycle_graph(n), sparse=True)
    assert m.large and m.messages(0) == 2 * n and m.kernel(0).kind == "circulant"
    x = torch.arange(n, dtype=torch.float32, device="cpu")[:, None]
    assert float(m.kernel(0)(x).sum()) == pytest.approx(float(x.sum()), rel=1e-6)
