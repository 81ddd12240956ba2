"""Gradient gossip (PDUDT's training): Eq. (4) unrolled, retrain matrices, running sums == full history."""

import networkx as nx
import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit import graphs
from unlearnkit.decentral import GradientGossipConfig, run_gradient_gossip
from unlearnkit.decentral.gradient_gossip import HistoryCache, RunningSumCache, paper_storage_bytes
from unlearnkit.decentral.correction import retrain_matrices
from unlearnkit.decentral.correction import mixing_residuals as residuals
from unlearnkit.models import FlatParams, make_model


@pytest.fixture(scope="module")
def setup():
    ds = uk.data.load("digits", device="cpu")
    fed = uk.data.partition(ds, 6, seed=1)
    flat = FlatParams(make_model("logreg", ds.input_shape, 10, generator=uk.make_generator(0)))
    return ds, fed, flat


@pytest.mark.parametrize("rule", ["metropolis", "max_degree", "lazy"])
def test_recomputed_retrain_matrices_match_mixing_matrix_on_G_minus_k(rule):
    G = graphs.topology.erdos_renyi(7, 0.5, seed=3)
    W = torch.tensor(graphs.mixing_matrix(G, rule))
    Wt = retrain_matrices(W, retrain_rule="recompute", rule=rule)
    for k in range(7):
        H = G.copy()
        H.remove_node(k)
        H = nx.convert_node_labels_to_integers(H, ordering="sorted")
        keep = [i for i in range(7) if i != k]
        ref = graphs.mixing_matrix(H, rule, require_connected=False)
        np.testing.assert_allclose(Wt[k][np.ix_(keep, keep)].numpy(), ref, atol=1e-12)
        assert Wt[k][k].abs().sum() == 0 and Wt[k][:, k].abs().sum() == 0


def test_absorb_rule_closed_form_and_eq15_invariant():
    """Digest 002 section 2.7: absorb gives delta_i = lr W_ik (g_i - g_k); for any doubly stochastic W~,
    sum_{i != k} delta_i = lr (sum_j W_kj g_j - g_k) (Eq. 15)."""
    G = graphs.topology.erdos_renyi(6, 0.5, seed=0)
    W = torch.tensor(graphs.mixing_matrix(G))
    g = torch.randn(6, 5, dtype=torch.float64, generator=uk.make_generator(0))
    lr = 0.1
    absorb = residuals(W, g, lr, retrain_matrices(W, retrain_rule="absorb"))
    recompute = residuals(W, g, lr, retrain_matrices(W, retrain_rule="recompute"))
    for k in range(6):
        expected = lr * W[:, k, None] * (g - g[k])
        expected[k] = 0
        torch.testing.assert_close(absorb[k], expected)
        for delta in (absorb[k], recompute[k]):
            torch.testing.assert_close(delta.sum(0), lr * (W[k] @ g - g[k]))


def test_complete_graph_residual_is_the_federated_one():
    W = torch.full((5, 5), 0.2, dtype=torch.float64)
    g = torch.randn(5, 3, dtype=torch.float64, generator=uk.make_generator(1))
    delta = residuals(W, g, 0.5, retrain_matrices(W))
    for k in range(5):
        expected = 0.5 / 4 * (g.mean(0) - g[k])  # digest 002 section 2.7 case 1
        keep = [i for i in range(5) if i != k]
        torch.testing.assert_close(delta[k][keep], expected.expand(4, 3))


@pytest.mark.parametrize("retrain_rule", ["recompute", "absorb"])
def test_running_sums_equal_full_history(setup, retrain_rule):
    ds, fed, flat = setup
    sched = graphs.dynamic.ErdosRenyiSchedule(6, 0.4, seed=2)
    cfg = GradientGossipConfig(rounds=12, lr=0.2, batch_size=8, cache="both", retrain_rule=retrain_rule)
    st = run_gradient_gossip(flat, fed, sched, cfg, generator=uk.make_generator(0))
    run, hist = st.extras["running"], st.extras["history"]
    assert run.rounds == hist.rounds == 12
    for k in range(6):
        for scale in ("paper", "sum"):
            a = run.correction(k, scale=scale)
            b = hist.correction(k, 0.2, retrain_rule=retrain_rule, scale=scale)
            torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)
            assert a[k].abs().sum() == 0
        assert run.correction(k).abs().sum() > 0
    # early stopping: running sums fed 12 rounds with es_rounds=5 equal the history truncated at 5
    es = RunningSumCache(6, flat.d, 0.2, retrain_rule=retrain_rule, es_rounds=5)
    for t in range(12):
        es.update(hist.W[t], hist.grads[t])
    torch.testing.assert_close(es.correction(3), hist.correction(3, 0.2, retrain_rule=retrain_rule, es_rounds=5))
    assert run.memory_bytes < hist.memory_bytes * 6  # O(N d) per client vs O(T N d) in total


def test_unrolled_eq4_and_memory_accounting(setup):
    ds, fed, flat = setup
    G = graphs.topology.ring(6)
    cfg = GradientGossipConfig(rounds=6, lr=0.3, batch_size=4, cache="history", local_steps=2)
    st = run_gradient_gossip(flat, fed, G, cfg, generator=uk.make_generator(4))
    h = st.extras["history"]
    theta0 = st.extras["theta0"].to(torch.float64)
    unrolled = theta0 - 0.3 * torch.einsum("tij,tjd->id", h.W, h.grads)  # digest 002, Eq. (4)
    torch.testing.assert_close(st.params.to(torch.float64), unrolled, rtol=1e-4, atol=1e-5)
    assert h.per_client_bytes().tolist() == [6 * 3 * flat.d * 4] * 6  # ring: self + 2 neighbours
    assert paper_storage_bytes(6, 2, flat.d) == 6 * 3 * flat.d * 4
    assert st.cost.memory_bytes == h.memory_bytes


def test_exclude_runs_the_coupled_retraining(setup):
    ds, fed, flat = setup
    G = graphs.topology.ring(6)
    cfg = GradientGossipConfig(rounds=8, lr=0.2, batch_size=4)
    full = run_gradient_gossip(flat, fed, G, cfg, generator=uk.make_generator(7))
    rt = run_gradient_gossip(flat, fed, G, cfg, generator=uk.make_generator(7), exclude=2)
    torch.testing.assert_close(rt.params[2], rt.extras["theta0"][2])  # the leaver never moves
    assert not torch.allclose(rt.params[0], full.params[0])
    assert rt.cost.grad_evals == 8 * 5 * 4
    assert 2 not in set(np.concatenate([fed.client_indices[2]]).tolist()) or \
        not np.isin(fed.client_indices[2], rt.train_indices).any()
    # isolated leaver (digest 002, section 2.7 case 5): coupled runs of the others coincide
    W = graphs.mixing_matrix(nx.union(graphs.topology.ring(5), nx.empty_graph(range(5, 6))), require_connected=False)
    a = run_gradient_gossip(flat, fed, W, cfg, generator=uk.make_generator(3))
    b = run_gradient_gossip(flat, fed, W, cfg, generator=uk.make_generator(3), exclude=5)
    torch.testing.assert_close(a.params[:5], b.params[:5])


def test_gradient_gossip_learns_and_validates(setup):
    ds, fed, flat = setup
    events = []
    cfg = GradientGossipConfig(rounds=30, lr=0.2, batch_size=16, eval_every=30)
    st = run_gradient_gossip(flat, fed, graphs.topology.ring(6), cfg, generator=uk.make_generator(0), callback=events.append)
    assert st.history[-1]["loss"] < 0.85 * st.history[0]["loss"]
    assert st.history[-1]["accuracy"] > 0.5
    # nothing pulls the models together (digest 002, section 1.3): the consensus distance grows
    assert st.history[-1]["consensus"] > 5 * st.history[2]["consensus"]
    assert [e.kind for e in events].count("round") == 30
    with pytest.raises(ValueError, match="cache"):
        GradientGossipConfig(rounds=1, lr=0.1, cache="all")
    with pytest.raises(ValueError, match="retrain_rule"):
        GradientGossipConfig(rounds=1, lr=0.1, retrain_rule="metropolis")
    with pytest.raises(ValueError, match="exclude"):
        run_gradient_gossip(flat, fed, graphs.topology.ring(6), cfg, generator=uk.make_generator(0), exclude=6)
    c = RunningSumCache(6, flat.d, 0.1, leavers=[1])
    with pytest.raises(ValueError, match="leaver=2"):
        c.correction(2)
    with pytest.raises(ValueError, match="nothing to unlearn"):
        c.correction(1)
    with pytest.raises(ValueError, match="empty"):
        HistoryCache().correction(0, 0.1)


@pytest.mark.parametrize("junk", ["ab", 1.5, [0, 1.5], [True, False], [-1], {"a": 1}, None.__class__])
def test_gradient_gossip_config_leavers_junk_is_named(junk):
    from unlearnkit.decentral.gradient_gossip import GradientGossipConfig

    with pytest.raises(ValueError, match="leavers"):
        GradientGossipConfig(rounds=2, lr=0.1, leavers=junk)


def test_gradient_gossip_config_leavers_accepts_one_id_or_many():
    from unlearnkit.decentral.gradient_gossip import GradientGossipConfig

    assert GradientGossipConfig(rounds=2, lr=0.1, leavers=3).leavers == (3,)
    assert GradientGossipConfig(rounds=2, lr=0.1, leavers=[4, 2.0]).leavers == (4, 2)
