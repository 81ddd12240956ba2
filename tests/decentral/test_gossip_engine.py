"""D-PSGD engine: vectorised == per-client loop, mixing invariants, dynamic W_t, events, validation."""

import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit import graphs
from unlearnkit.decentral import GossipConfig, run_gossip
from unlearnkit.decentral._engine import ClientSampler, MixingSource, consensus_distance
from unlearnkit.decentral.gossip import gossip_step, simulate_averaging
from unlearnkit.decentral.gossip import client_accuracies
from unlearnkit.models import FlatParams, make_model


@pytest.fixture(scope="module")
def setup():
    ds = uk.data.load("digits", device="cpu")
    fed = uk.data.partition(ds, 6, scheme="dirichlet", alpha=1.0, seed=0)
    flat = FlatParams(make_model("mlp", ds.input_shape, 10, hidden=(16,), generator=uk.make_generator(0)))
    return ds, fed, flat


@pytest.mark.parametrize("order", ["dpsgd", "atc"])
@pytest.mark.parametrize("sparse", [False, True])
def test_vectorized_equals_loop(setup, order, sparse):
    ds, fed, flat = setup
    cfg = GossipConfig(rounds=4, lr=0.3, batch_size=8, local_steps=2, order=order, sparse=sparse, weight_decay=1e-3)
    net = graphs.make_graph("erdos_renyi", 6, p_edge=0.5, seed=1)
    a = run_gossip(flat, fed, net, cfg, generator=uk.make_generator(5))
    b = run_gossip(flat, fed, net, cfg, generator=uk.make_generator(5), engine="loop")
    torch.testing.assert_close(a.params, b.params, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.extras["client_losses"], b.extras["client_losses"], rtol=1e-5)
    assert not torch.allclose(a.params[0], a.params[1])  # the clients really differ


def test_vectorized_equals_loop_on_a_dynamic_schedule(setup):
    ds, fed, flat = setup
    sched = graphs.dynamic.ErdosRenyiSchedule(6, 0.3, seed=2)
    cfg = GossipConfig(rounds=5, lr=0.2, batch_size=4)
    a = run_gossip(flat, fed, sched, cfg, generator=uk.make_generator(1))
    b = run_gossip(flat, fed, sched, cfg, generator=uk.make_generator(1), engine="loop")
    torch.testing.assert_close(a.params, b.params, rtol=1e-5, atol=1e-6)
    # a list of matrices and a callable give the same run
    Ws = [sched.mixing(t) for t in range(5)]
    c = run_gossip(flat, fed, Ws, cfg, generator=uk.make_generator(1))
    d = run_gossip(flat, fed, lambda t: sched.mixing(t), cfg, generator=uk.make_generator(1))
    torch.testing.assert_close(a.params, c.params)
    torch.testing.assert_close(a.params, d.params)


def test_average_follows_mean_gradient(setup):
    """Doubly stochastic W: mean_i theta_i moves by -lr * mean_i g_i (the mixing leaves the average alone)."""
    ds, fed, flat = setup
    g = uk.make_generator(0)
    sampler = ClientSampler(ds, fed.client_indices, 8, generator=g)
    thetas = torch.randn(6, flat.d, generator=uk.make_generator(3)) * 0.1
    xs, ys, _ = sampler.sample()
    W = torch.tensor(graphs.mixing_matrix(graphs.topology.ring(6)), dtype=torch.float32)
    new, _ = gossip_step(flat, thetas, [(xs, ys)], W, lr=0.1)
    G = flat.batched_grad(thetas, xs, ys)
    torch.testing.assert_close(new.mean(0), thetas.mean(0) - 0.1 * G.mean(0), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(new, W @ thetas - 0.1 * G, rtol=1e-5, atol=1e-6)


def test_complete_graph_reaches_consensus_in_one_round(setup):
    ds, fed, flat = setup
    init = torch.randn(6, flat.d, generator=uk.make_generator(2))
    st = run_gossip(flat, fed, graphs.topology.complete(6), GossipConfig(rounds=1, lr=0.1, order="atc"),
                    generator=uk.make_generator(0), init=init)
    assert consensus_distance(st.params) < 1e-10


def test_training_learns_and_reports(setup):
    ds, fed, flat = setup
    events = []
    cfg = GossipConfig(rounds=60, lr=0.5, batch_size=16, eval_every=30)
    st = run_gossip(flat, fed, graphs.topology.ring(6), cfg, generator=uk.make_generator(0), callback=events.append)
    assert st.params.shape == (6, flat.d)
    assert st.history[-1]["loss"] < 0.7 * st.history[0]["loss"]
    assert st.history[-1]["accuracy"] > 0.6
    kinds = [e.kind for e in events]
    assert kinds.count("round") == 60 and kinds.count("eval") == 2
    assert events[-1].kind == "round" and "consensus" in events[-1].values
    assert st.cost.grad_evals == 60 * 6 * 16
    assert st.cost.messages == 60 * 12  # ring: 2 messages per client per round
    assert st.extras["client_losses"].shape == (60, 6)
    acc = client_accuracies(flat, st.params, ds.x_test, ds.y_test)
    assert acc.shape == (6,) and acc.min() == pytest.approx(st.history[-1]["client_accuracy_min"])


def test_same_seed_same_run(setup):
    ds, fed, flat = setup
    cfg = GossipConfig(rounds=3, lr=0.1)
    a = run_gossip(flat, fed, graphs.topology.ring(6), cfg, generator=uk.make_generator(9))
    b = run_gossip(flat, fed, graphs.topology.ring(6), cfg, generator=uk.make_generator(9))
    c = run_gossip(flat, fed, graphs.topology.ring(6), cfg, generator=uk.make_generator(10))
    torch.testing.assert_close(a.params, b.params)
    assert not torch.allclose(a.params, c.params)


def test_simulate_averaging_preserves_mean_and_contracts():
    W = graphs.mixing_matrix(graphs.topology.ring(10))
    x0 = np.arange(10.0)
    traj = simulate_averaging(W, x0, 50)
    np.testing.assert_allclose(traj.mean(1), 4.5)
    spread = np.linalg.norm(traj - 4.5, axis=1)
    assert np.all(spread[1:] <= spread[:-1] * graphs.mixing.slem(W) + 1e-9)
    bridge = simulate_averaging(graphs.topology.two_clusters(10), x0, 50)
    assert np.linalg.norm(bridge[-1] - 4.5) > np.linalg.norm(simulate_averaging(graphs.topology.complete(10), x0, 50)[-1] - 4.5)


def test_errors_name_the_problem(setup):
    ds, fed, flat = setup
    with pytest.raises(ValueError, match="lr"):
        GossipConfig(rounds=1, lr=0)
    with pytest.raises(ValueError, match="order"):
        GossipConfig(rounds=1, lr=0.1, order="cta")
    with pytest.raises(ValueError, match="N=5"):
        run_gossip(flat, fed, graphs.topology.ring(5), GossipConfig(rounds=1, lr=0.1), generator=uk.make_generator(0))
    with pytest.raises(ValueError, match="stochastic"):
        run_gossip(flat, fed, np.eye(6) * 0.5, GossipConfig(rounds=1, lr=0.1), generator=uk.make_generator(0))
    with pytest.raises(ValueError, match="disconnected"):
        MixingSource(np.eye(6))
    with pytest.raises(ValueError, match="generator"):
        run_gossip(flat, fed, graphs.topology.ring(6), GossipConfig(rounds=1, lr=0.1), generator=0)
    one = uk.data.partition(ds, 2, seed=0)
    with pytest.raises(ValueError, match="at least 2"):
        run_gossip(flat, type(one)(ds, one.client_indices[:1]), graphs.topology.ring(2), GossipConfig(rounds=1, lr=0.1),
                   generator=uk.make_generator(0))
