"""RR-DU algorithm: routing, noise placement, freshness, trust ball, alignment variants (digest 000, 2.3-2.6)."""

import dataclasses
import math

import networkx as nx
import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit.core import TrainedState
from unlearnkit.methods.rrdu import RRDU, RRDUConfig
from unlearnkit.methods.rrdu.walk import WalkData, expected_update, make_route, retrain_gradient
from unlearnkit.models import FlatParams, logreg


@pytest.fixture(scope="module")
def problem():
    ds = uk.data.load("synthetic", device="cpu", n_train=300, n_test=50, dim=4, seed=1)
    fed = uk.data.partition(ds, 5, seed=0)
    req = uk.data.forget_samples(fed, 2, m=20, seed=0)
    flat = FlatParams(logreg((4,), 1), loss="logistic")
    theta0 = torch.tensor([0.3, -0.2, 0.5, 0.1, 0.05])
    state = TrainedState(flat=flat, params=theta0, dataset=ds, train_indices=np.arange(ds.n_train), federation=fed)
    return state, req, WalkData.from_state(state, req)


def _run(state, req, data, cfg, theta, sigma, g, **kw):
    """RR-DU from ``theta`` with noise ``sigma``: ``(theta, history, cost, path)``."""
    res = RRDU().unlearn(state.replace(params=theta), req, dataclasses.replace(cfg, sigma=sigma), generator=g, **kw)
    return res.params, res.history, res.cost, np.asarray(res.extras["path"])


def test_routing_frequencies_match_p(problem):
    state, req, data = problem
    p = 0.3
    route = make_route(data, p, 6000, routing="rrdu_complete", rng=np.random.default_rng(0))
    counts = np.bincount(route, minlength=data.n_clients) / len(route)
    assert abs(counts[data.u] - p) < 0.02
    others = np.delete(counts, data.u)
    assert np.allclose(others, (1 - p) / (data.n_clients - 1), atol=0.02)


def test_graph_routing_follows_edges(problem):
    state, req, data = problem
    G = nx.cycle_graph(data.n_clients)
    route = make_route(data, 0.3, 3000, routing="walk_with_restart", rng=np.random.default_rng(1), network=G)
    for a, b in zip(route[:-1], route[1:]):
        assert a == b or G.has_edge(int(a), int(b))
    assert abs(np.mean(route == data.u) - 0.3) < 0.05
    with pytest.raises(ValueError, match="network"):
        make_route(data, 0.3, 10, routing="walk_with_restart", rng=np.random.default_rng(1))


def test_noise_only_at_u_and_trust_ball(problem):
    state, req, data = problem
    cfg = RRDUConfig(T_unlearn=40, p=0.3, s=2, batch_size=8, lr=0.5, rho=0.4, clip_L=1.0)
    theta, hist, cost, path = _run(state, req, data, cfg, state.params, 2.0, uk.make_generator(3))
    noisy = [h for h in hist if h["node"] == data.u]
    quiet = [h for h in hist if h["node"] != data.u]
    assert noisy and quiet
    assert all(h["noise_norm"] > 0 and h["noisy"] == 1 for h in noisy)
    assert all(h["noise_norm"] == 0 and h["noisy"] == 0 for h in quiet)
    # the big noise pushes past rho; every u-step ends inside the ball
    assert max(h["step_norm"] for h in noisy) > cfg.rho
    assert all(h["dist_ref"] <= cfg.rho + 1e-6 for h in noisy)
    assert cost.messages == 40 and cost.grad_evals > 0


def test_noise_is_fresh_each_visit(problem):
    state, req, data = problem
    # p = 1, no projection, tiny clipping: each hop moves by lr*(g_u + Z) with ||g_u|| <= 1e-9
    cfg = RRDUConfig(T_unlearn=1, p=1.0, lr=1.0, project=False, clip_L=1e-9)
    g = uk.make_generator(4)
    t1, *_ = _run(state, req, data, cfg, state.params, 1.0, g)
    t2, *_ = _run(state, req, data, cfg, t1, 1.0, g)
    z1, z2 = t1 - state.params, t2 - t1
    assert not torch.allclose(z1, z2)
    assert z1.norm() > 0.1 and z2.norm() > 0.1
    # many visits: the increments have std sigma per coordinate
    zs, th = [], t2
    for _ in range(100):
        nxt, *_ = _run(state, req, data, cfg, th, 1.0, g)
        zs.append(nxt - th)
        th = nxt
    zs = torch.stack(zs)
    assert 0.85 < zs.std().item() < 1.15
    assert abs(zs.mean().item()) < 0.15


def _mc_mean_update(state, req, data, mode, p, n=500, seed=0):
    cfg = RRDUConfig(T_unlearn=1, p=p, s=8, batch_size=16, lr=1.0, project=False, clip_L=math.inf, variant=mode,
                     u_batch="full")
    g = uk.make_generator(seed)
    acc = torch.zeros_like(state.params)
    for _ in range(n):
        t, *_ = _run(state, req, data, cfg, state.params, 0.0, g)
        acc += t - state.params
    return acc / n


def test_exact_mode_expected_update_is_retraining_gradient(problem):
    """Paper eq. (13): with p = 1/N the exact-mode mean update is -grad L_{\\f} (checked by Monte Carlo)."""
    state, req, data = problem
    p = 1 / data.n_clients
    target = -retrain_gradient(state.flat, state.params, data)
    mc = _mc_mean_update(state, req, data, "exact", p)
    assert torch.allclose(expected_update(state.flat, state.params, data, "exact", p), target, atol=1e-6)
    assert (mc - target).norm() < 0.1 * target.norm()


def test_lightweight_biased_corrected_within_m_over_n(problem):
    state, req, data = problem
    p = 1 / data.n_clients
    flat, th = state.flat, state.params
    target = -retrain_gradient(flat, th, data)
    ratio = data.m / data.n_u
    g_ret = flat.grad(th, data.x[data.retained], data.y[data.retained])
    g_f = flat.grad(th, data.x[data.forget], data.y[data.forget])
    gap_light = (expected_update(flat, th, data, "lightweight", p) - target).norm()
    gap_corr = (expected_update(flat, th, data, "corrected", p) - target).norm()
    # digest 2.6: lightweight gap = (1/N) ||ratio g_f + g_ret||; corrected gap = (1/N) ratio ||g_ret||
    assert gap_light == pytest.approx(((ratio * g_f + g_ret).norm() / data.n_clients).item(), rel=1e-4)
    assert gap_corr == pytest.approx((ratio * g_ret.norm() / data.n_clients).item(), rel=1e-4)
    assert gap_corr < gap_light
    mc = _mc_mean_update(state, req, data, "lightweight", p, seed=5)
    assert (mc - expected_update(flat, th, data, "lightweight", p)).norm() < 0.1 * target.norm()


def test_adam_option_and_certificate_labels(problem):
    state, req, data = problem
    cfg = RRDUConfig(T_unlearn=20, p=0.2, optimizer="adam", lr=0.01, clip_L=1.0, rho=1.0)
    res = RRDU().unlearn(state, req, cfg, generator=uk.make_generator(0))
    assert res.certificate.mode == "none" and math.isinf(res.certificate.epsilon)
    assert "Adam" in res.certificate.note
    res_sgd = RRDU().unlearn(state, req, RRDUConfig(T_unlearn=20, p=0.2, clip_L=1.0, accountant="C"),
                             generator=uk.make_generator(0))
    # accountant C ignores the start-model gap (issue 20, finding 1): a diagnostic, not a certificate
    assert res_sgd.certificate.mode == "none" and not res_sgd.certificate.certified
    assert res_sgd.certificate.constants["epsilon_diagnostic"] == pytest.approx(1.0, rel=1e-6)
    assert res_sgd.extras["sigma"] > 0 and len(res_sgd.extras["path"]) == 20


def test_events_per_hop(problem):
    state, req, data = problem
    events = []
    cfg = RRDUConfig(T_unlearn=15, p=0.3, clip_L=1.0, eval_every=5)
    RRDU(monitor=lambda th: {"norm": float(th.norm())}).unlearn(state, req, cfg, generator=uk.make_generator(0),
                                                                callback=events.append)
    hops = [e for e in events if e.kind == "hop"]
    assert [e.step for e in hops] == list(range(1, 16))
    assert sum("norm" in e.values for e in hops) == 3
    assert all("dist_ref" in e.values for e in hops)


def test_same_seed_same_result(problem):
    state, req, data = problem
    cfg = RRDUConfig(T_unlearn=10, p=0.3, clip_L=1.0)
    a = RRDU().unlearn(state, req, cfg, generator=uk.make_generator(7)).params
    b = RRDU().unlearn(state, req, cfg, generator=uk.make_generator(7)).params
    assert torch.equal(a, b)


@pytest.mark.parametrize("field,value", [("p", 1.5), ("s", 0), ("variant", "fast"), ("rho", -1.0),
                                         ("accountant", "E"), ("optimizer", "rmsprop")])
def test_config_validation_names_field(field, value):
    with pytest.raises(ValueError, match=field):
        RRDUConfig(**{field: value})


def test_request_must_belong_to_u(problem):
    state, req, data = problem
    other = uk.core.Request("samples", state.federation.client_indices[0][:3], client=2)
    with pytest.raises(ValueError, match="does not hold"):
        WalkData.from_state(state, other)
