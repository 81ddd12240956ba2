"""Newton/Fisher decentralized unlearning (digest 001): the step, the flood, certificates, requests."""

import math

import networkx as nx
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from unlearnkit import data
from unlearnkit.graphs import make_graph
from unlearnkit.core import Request, TrainedState
from unlearnkit.decentral.gossip import GossipConfig
from unlearnkit.graphs import flood
from unlearnkit.methods.newton import Newton, NewtonConfig
from unlearnkit.methods.newton.training import exact_minimizer, train_dpsgd
from unlearnkit.methods.newton.steps import newton_model_constants
from unlearnkit.methods.newton.certify import paper_sensitivity
from unlearnkit.models import FlatParams, logreg

LAM = 0.5


@pytest.fixture(scope="module")
def problem():
    """Synthetic binary logistic regression on 4 clients (ring), trained to the exact consensus optimum."""
    ds = data.load("synthetic", n_train=160, n_test=80, dim=3, seed=1)
    ds = ds.with_train(ds.x_train.double(), ds.y_train) if hasattr(ds, "with_train") else ds
    fed = data.partition(ds, 4, "iid", seed=0)
    flat = FlatParams(logreg(ds.input_shape, 1), loss="logistic")
    flat.module.double()
    G = make_graph("ring", 4)
    cfg = GossipConfig(rounds=1, lr=0.1, batch_size=8, weight_decay=LAM)
    parts = [tuple(t.double() if t.is_floating_point() else t for t in fed.client_data(i)) for i in range(4)]
    x_star = exact_minimizer(flat, parts, weight_decay=LAM)
    # the exact consensus optimum the theory assumes (digest P9), as if D-PSGD had converged
    state = TrainedState(flat=flat, params=x_star.expand(4, -1).clone(), dataset=ds,
                         train_indices=np.arange(ds.n_train), config=cfg, federation=fed, network=G)
    return ds, fed, flat, state, parts


def _retrained(flat, fed, request, parts_fn=None):
    after = fed.without(request) if request.kind != "client" else None
    if request.kind == "client":
        parts = [fed.client_data(i) for i in range(fed.n_clients) if i != request.client]
    else:
        parts = [after.client_data(i) for i in range(after.n_clients)]
    parts = [(x.double(), y) for x, y in parts]
    return exact_minimizer(flat, parts, weight_decay=LAM)


def test_exact_newton_step_lands_within_the_papers_bound(problem):
    """Lemma 3: every client deletes m of n, one global Newton step from the optimum is within
    2 M L^2 m^2 / (lam^3 n^2) of the retrained optimum (and second order: far closer than x*)."""
    ds, fed, flat, state, _ = problem
    rng = np.random.default_rng(0)
    m = 4
    idx = np.concatenate([rng.choice(ix, m, replace=False) for ix in fed.client_indices])
    req = Request("samples", idx)
    cfg = NewtonConfig(mode="none", scope="global", center_gradient=False, curvature="hessian")
    res = Newton().unlearn(state, req, cfg, generator=torch.Generator().manual_seed(0))
    x_hat = res.params.mean(0)
    x_ret = _retrained(flat, fed, req)
    n = int(fed.sizes.min())
    k = newton_model_constants(flat, weight_decay=LAM, x_norm=1.0)
    bound = paper_sensitivity(m, n, L=k["L"], M=k["M"], lam=LAM)
    err = float((x_hat - x_ret).norm())
    moved = float((state.params[0] - x_ret).norm())
    assert err <= bound
    assert err < 0.05 * moved  # second order in m/n
    # all clients apply the same correction: consensus is kept
    assert torch.allclose(res.params, x_hat.expand_as(res.params), atol=1e-12)


def test_local_step_of_algorithm1_and_forget_loss_goes_up(problem):
    ds, fed, flat, state, _ = problem
    req = data.forget_samples(fed, 2, m=6, seed=3)
    res = Newton().unlearn(state, req, NewtonConfig(mode="none"), generator=torch.Generator().manual_seed(0))
    x_ret = _retrained(flat, fed, req)
    xf, yf = ds.train_subset(req.indices)
    before = float(flat.loss(state.params[0], xf.double(), yf))
    after = float(flat.loss(res.params[0], xf.double(), yf))
    assert after > before  # plus sign: ascent on the forget set (digest P1)
    # at the *global* optimum client 2 is not at its own optimum, so the uncentered local step of
    # Algorithm 1 carries a first-order error; centring the gradient removes it (digest 2.5)
    moved = float((state.params[0] - x_ret).norm())
    centred = Newton().unlearn(state, req, NewtonConfig(mode="none", center_gradient=True),
                               generator=torch.Generator().manual_seed(0))
    err_paper = float((res.params.mean(0) - x_ret).norm())
    err_centred = float((centred.params.mean(0) - x_ret).norm())
    assert err_centred < 0.5 * moved and err_centred < err_paper
    assert res.certificate.mode == "none" and not res.certificate.certified


def test_clientwise_weight_one_is_the_global_newton_step(problem):
    ds, fed, flat, state, _ = problem
    req = data.forget_client(fed, 1)
    x_ret = _retrained(flat, fed, req)
    errs = {}
    for w in ("1", "1/N"):
        res = Newton().unlearn(state, req, NewtonConfig(mode="none", clientwise_weight=w, scope="global"),
                               generator=torch.Generator().manual_seed(0))
        assert res.params.shape[0] == 3 and res.extras["state"].network.number_of_nodes() == 3
        errs[w] = float((res.params.mean(0) - x_ret).norm())
    moved = float((state.params[0] - x_ret).norm())
    assert errs["1"] < 0.05 * moved < errs["1/N"]  # 1/N under-corrects by a factor N (digest P2)


def test_flood_counts_messages_like_the_graph():
    graphs = [make_graph("ring", 10), make_graph("star", 7), make_graph("complete", 6), make_graph("path", 5),
              make_graph("erdos_renyi", 12, seed=3, p_edge=0.3), make_graph("grid", 9)]
    for G in graphs:
        N, E = G.number_of_nodes(), G.number_of_edges()
        for src in range(N):
            fl = flood(G, src)
            assert fl.messages == 2 * E - (N - 1)
            assert fl.duplicates == fl.messages - (N - 1)
            assert set(fl.hops) == set(range(N))
            assert fl.rounds == nx.eccentricity(G, src)
            assert fl.hops == nx.single_source_shortest_path_length(G, src)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 14), p=st.floats(0.1, 0.9), seed=st.integers(0, 10_000))
def test_flood_messages_property(n, p, seed):
    G = nx.gnp_random_graph(n, p, seed=seed)
    if not nx.is_connected(G):
        with pytest.raises(ValueError, match="disconnected"):
            flood(G, 0)
        return
    assert flood(G, seed % n).messages == 2 * G.number_of_edges() - n + 1


def test_unlearn_counts_flood_messages_and_applies_one_nth(problem):
    ds, fed, flat, state, _ = problem
    req = data.forget_samples(fed, 0, m=3, seed=1)
    res = Newton().unlearn(state, req, NewtonConfig(mode="none"), generator=torch.Generator().manual_seed(0))
    G = state.network
    assert res.cost.messages == 2 * G.number_of_edges() - (G.number_of_nodes() - 1)
    delta = res.params - state.params
    assert torch.allclose(delta, (res.extras["x_delta"][0] / 4).expand_as(delta), atol=1e-14)


def test_disconnected_graph_and_foreign_samples_raise(problem):
    ds, fed, flat, state, _ = problem
    g = torch.Generator().manual_seed(0)
    foreign = fed.client_indices[1][:2]
    with pytest.raises(ValueError, match=r"not held by client 0|request\.client=0 does not hold"):
        Newton().unlearn(state, Request("samples", foreign, client=0), NewtonConfig(), generator=g)
    broken = nx.Graph([(0, 1), (2, 3)])
    with pytest.raises(ValueError, match="disconnected"):
        Newton().unlearn(state.replace(network=broken), data.forget_samples(fed, 0, m=2), NewtonConfig(),
                         generator=g)
    star = make_graph("star", 4)
    with pytest.raises(ValueError, match="removing client 0 disconnects"):
        Newton().unlearn(state.replace(network=star), data.forget_client(fed, 0), NewtonConfig(), generator=g)
    with pytest.raises(ValueError, match="client-wise"):
        Newton().unlearn(state, Request("samples", fed.client_indices[2], client=2), NewtonConfig(), generator=g)
    with pytest.raises(ValueError, match="clientwise_weight"):
        NewtonConfig(clientwise_weight="2")
    with pytest.raises(ValueError, match="epsilon"):
        NewtonConfig(epsilon=0.0)


@settings(max_examples=30, deadline=None)
@given(e1=st.floats(0.05, 5.0), e2=st.floats(0.05, 5.0), m1=st.integers(1, 40), m2=st.integers(1, 40),
       mode=st.sampled_from(["paper", "sound"]))
def test_certificates_are_monotone_in_epsilon_and_m(e1, e2, m1, m2, mode):
    consts = {"L": 2.0, "M": 0.3, "lam": 0.5}
    n = 100

    def sig(eps, m):
        s, cert = NewtonConfig(epsilon=eps, mode=mode, grad_tol=0.0).certificate(kind="samples", fractions={0: (m, n), 3: (m, n)},
                                                                   n_clients=5, constants=consts, weight=0.2)
        return s[0]

    lo_e, hi_e = sorted((e1, e2))
    lo_m, hi_m = sorted((m1, m2))
    assert sig(lo_e, 10) >= sig(hi_e, 10)
    assert sig(1.0, lo_m) <= sig(1.0, hi_m)


def test_paper_and_sound_calibration_numbers():
    consts = {"L": 1.0, "M": 1 / (6 * math.sqrt(3)), "lam": 0.1}
    # digest 001 table 3.6: lam=0.1, r=0.01, eps=1, delta=1e-5 -> Delta F = 0.0192, sigma = 0.0932
    s, cert = NewtonConfig(epsilon=1.0, delta=1e-5, mode="paper").certificate(
        kind="samples", fractions={0: (1, 100)}, n_clients=10, constants=consts, weight=0.1)
    assert cert.constants["sensitivity"] == pytest.approx(0.0192, abs=5e-5)
    assert s[0] == pytest.approx(0.0932, abs=5e-5)
    assert cert.mode == "paper" and "outside its proof" in cert.note
    # sound: each model must carry the calibrated std after the 1/N weighting (digest pitfall 1)
    s2, cert2 = NewtonConfig(epsilon=1.0, mode="sound", scope="global", center_gradient=True, grad_tol=0.0).certificate(
        kind="samples", fractions={0: (1, 100), 1: (1, 100)}, n_clients=10, constants=consts, weight=0.1)
    assert s2[0] * 0.1 * math.sqrt(2) == pytest.approx(cert2.constants["model_sigma"])
    assert cert2.constants["bound"].startswith("second-order")
    from unlearnkit.privacy.gaussian import gaussian_delta
    assert gaussian_delta(1.0, cert2.sigma, cert2.constants["sensitivity"]) <= 1e-5 * (1 + 1e-9)
    _, cert3 = NewtonConfig(epsilon=1.0, mode="sound", grad_tol=0.0).certificate(kind="samples", fractions={0: (1, 100)},
                                                                   n_clients=10, constants=consts, weight=0.1)
    assert cert3.constants["bound"].startswith("first-order") and cert3.sigma > cert2.sigma


def test_noise_is_fresh_and_calibrated(problem):
    ds, fed, flat, state, _ = problem
    req = data.forget_samples(fed, 0, m=3, seed=1)
    g = torch.Generator().manual_seed(0)
    cfg = NewtonConfig(mode="paper", epsilon=0.5)
    r1 = Newton().unlearn(state, req, cfg, generator=g)
    r2 = Newton().unlearn(state, req, cfg, generator=g)
    n1, n2 = r1.params - r1.extras["x_delta"][0] / 4, r2.params - r2.extras["x_delta"][0] / 4
    assert not torch.allclose(n1, n2)
    sigma = r1.extras["sigmas"][0]
    assert sigma == pytest.approx(r1.certificate.sigma) and sigma > 0
    assert r1.history[0]["noise_norm"] == pytest.approx(sigma * math.sqrt(flat.d), rel=1.0)


def test_sequential_requests_use_the_current_n(problem):
    ds, fed, flat, state, _ = problem
    n0 = fed.client_indices[0].size
    rng = np.random.default_rng(0)
    picks = rng.choice(fed.client_indices[0], 9, replace=False)
    reqs = [Request("samples", picks[i::3], client=0) for i in range(3)]
    out = Newton().unlearn_sequence(state, reqs, NewtonConfig(mode="none"), generator=torch.Generator().manual_seed(0))
    assert [r.history[0]["n"] for r in out] == [n0, n0 - 3, n0 - 6]
    assert out[-1].extras["state"].federation.client_indices[0].size == n0 - 9
    with pytest.raises(ValueError, match=r"not held by client 0|would remove nothing"):
        Newton().unlearn(out[-1].extras["state"], reqs[0], NewtonConfig(), generator=torch.Generator())


def test_end_to_end_dpsgd_finetune_and_retrain():
    """float32 digits-like pipeline: D-PSGD training, client-wise removal with a fine-tuning round, RT."""
    from unlearnkit.methods.newton import GossipRetrain

    ds = data.load("synthetic", n_train=200, n_test=100, dim=4, seed=2)
    fed = data.partition(ds, 5, "dirichlet", alpha=1.0, seed=0, min_size=10)
    flat = FlatParams(logreg(ds.input_shape, 1), loss="logistic")
    G = make_graph("ring", 5)
    cfg = GossipConfig(rounds=20, lr=0.5, batch_size=8, weight_decay=0.1)
    g = torch.Generator().manual_seed(0)
    state = train_dpsgd(flat, fed, G, cfg, generator=g)
    req = data.forget_client(fed, 2)
    res = Newton().unlearn(state, req, NewtonConfig(mode="paper", finetune_rounds=1), generator=g)
    after = res.extras["state"]
    assert res.params.shape == (4, flat.d) and after.federation.n_clients == 4
    # flood on the 5-ring + (N-1) collected statistics over shortest paths + one gossip round on the 4-path
    stats = sum(nx.single_source_shortest_path_length(G, 2).values()) * flat.d
    assert res.cost.messages == (2 * 5 - 4) + stats + 2 * 3
    rt = GossipRetrain().unlearn(state, req, generator=g)
    assert rt.params.shape == (4, flat.d) and torch.equal(rt.extras["state"].extras["init"], state.extras["init"])
    assert res.certificate.mode == "paper"
    assert 0 < res.extras["parallel_seconds"] <= res.cost.seconds


def test_classwise_every_holder_requests(problem):
    ds, fed, flat, state, _ = problem
    req = data.forget_class(ds, 1)
    res = Newton().unlearn(state, req, NewtonConfig(mode="sound", scope="global", center_gradient=True,
                                                   grad_tol=1e-6), generator=torch.Generator().manual_seed(0))
    holders = {c for c, ix in enumerate(fed.client_indices) if np.isin(req.indices, ix).any()}
    assert set(res.extras["floods"]) == holders
    assert res.certificate.mode == "sound" and res.certificate.sigma > 0


def test_softmax_hessian_lipschitz_bound_holds_numerically():
    flat = FlatParams(logreg((3,), 4))
    flat.module.double()
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, 3, generator=g, dtype=torch.float64)
    x = x / x.norm()
    M = newton_model_constants(flat, weight_decay=1.0)["M"]
    worst = 0.0
    for _ in range(8):
        w = torch.randn(flat.d, generator=g, dtype=torch.float64) * 2
        v = torch.randn(flat.d, generator=g, dtype=torch.float64) * 1e-3
        for y in range(4):
            yy = torch.tensor([y])
            dH = flat.hessian(w + v, x, yy) - flat.hessian(w, x, yy)
            worst = max(worst, float(torch.linalg.matrix_norm(dH, 2)) / float(v.norm()))
    assert 0 < worst <= M


def test_lemma1_influence_distance_is_bounded_by_rho_k():
    from unlearnkit.graphs import mixing_matrix
    from unlearnkit.graphs.mixing import influence_distance, slem
    for G in (make_graph("ring", 10), make_graph("erdos_renyi", 10, seed=1, p_edge=0.3)):
        W = mixing_matrix(G)
        rho = slem(W) ** 2  # digest 001: rho is the *square* of the second-largest eigenvalue modulus
        ks = np.arange(0, 30)
        dist2 = influence_distance(W, ks) ** 2
        assert np.all(dist2 <= rho ** ks + 1e-12)


def test_single_requester_global_step_within_the_sound_bound(problem):
    from unlearnkit.methods.newton.certify import sound_sensitivity

    ds, fed, flat, state, _ = problem
    req = data.forget_samples(fed, 1, m=8, seed=5)
    res = Newton().unlearn(state, req, NewtonConfig(mode="none", scope="global", center_gradient=True),
                           generator=torch.Generator().manual_seed(0))
    x_ret = _retrained(flat, fed, req)
    k = newton_model_constants(flat, weight_decay=LAM)
    r = 8 / fed.client_indices[1].size / 4
    err = float((res.params.mean(0) - x_ret).norm())
    assert err <= sound_sensitivity(r, L=k["L"], M=k["M"], lam=LAM)
    assert err < 1e-3 * float((state.params[0] - x_ret).norm())


def test_mlp_is_not_certified_but_unlearns_with_a_damped_fisher():
    from unlearnkit.models import make_model

    ds = data.load("digits")
    fed = data.partition(ds, 4, "iid", seed=0)
    flat = FlatParams(make_model("mlp", ds.input_shape, 10, hidden=(16,), generator=torch.Generator().manual_seed(0)))
    cfg = GossipConfig(rounds=5, lr=0.5, batch_size=16, weight_decay=0.0)
    g = torch.Generator().manual_seed(0)
    state = train_dpsgd(flat, fed, make_graph("ring", 4), cfg, generator=g)
    req = data.forget_samples(fed, 0, m=5)
    for curv in ("cg_fisher", "diag_fisher"):
        res = Newton().unlearn(state, req, NewtonConfig(mode="paper", curvature=curv, damping=1e-2, sigma=1e-3),
                               generator=g)
        assert res.certificate.mode == "none" and not res.certificate.certified
        assert "non-convex" in res.certificate.note and res.certificate.sigma == 1e-3
        assert torch.isfinite(res.params).all() and not torch.equal(res.params, state.params)
    with pytest.raises(ValueError, match="damping"):
        Newton().unlearn(state, req, NewtonConfig(curvature="diag_fisher"), generator=g)
