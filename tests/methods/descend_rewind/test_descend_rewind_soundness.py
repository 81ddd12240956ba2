"""Issue 20, finding 5 (and the R2D/D2D part of 7): the certificates check the training they certify.

Each test would have caught the old behaviour: a certificate built on constants whose strong convexity the
training does not have, F0 at w0 = 0 with a random start, the unprojected SGD-D2D bound on projected
training, and paper modes using the classic Gaussian at epsilon >= 1 without a note.
"""

import math

import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit import data
from unlearnkit.audit import AuditConfig, audit
from unlearnkit.constants import logistic_constants, softmax_constants
from unlearnkit.core import Request
from unlearnkit.experiments.audits.recipes import ToyTask, audit_unlearner, toy_setup
from unlearnkit.experiments.descend_rewind.lab import gd_r2d_worlds
from unlearnkit.methods.descend_rewind import D2D, R2D, D2DConfig, R2DConfig
from unlearnkit.methods.descend_rewind.d2d import d2d_certificate
from unlearnkit.methods.descend_rewind.coverage import psgd_d2d_sensitivity
from unlearnkit.models import FlatParams, make_model
from unlearnkit.train import SGDConfig, train_sgd

R = 5.0


@pytest.fixture(scope="module")
def problem():
    torch.set_num_threads(1)
    ds = data.load("synthetic", device="cpu", n_train=200, n_test=50, dim=5, seed=3)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, generator=uk.make_generator(5)), loss="logistic")
    req = Request("samples", np.arange(10))
    return ds, flat, req


def _train(problem, **kw):
    ds, flat, req = problem
    cfg = SGDConfig(**{"steps": 40, "lr": 0.5, "batch_size": 8, "radius": R, "checkpoint_every": 10, **kw})
    return train_sgd(flat, ds, None, cfg, generator=uk.make_generator(0))


def test_weight_decay_must_equal_the_constants_lambda(problem):
    """Weight decay 0 with lambda = 0.1 declared: the strongly convex bound does not hold; not certified."""
    _, _, req = problem
    c = logistic_constants(lam=0.1, radius=R, bias=True)
    state = _train(problem, weight_decay=0.0)
    for method, conf in [(R2D(), R2DConfig(K=20, constants=c)), (D2D(), D2DConfig(K=20, constants=c))]:
        cert = method.unlearn(state, req, conf, generator=uk.make_generator(1)).certificate
        assert cert.mode == "none" and cert.epsilon == math.inf and not cert.certified
        assert "weight_decay=0.0" in cert.note and "lambda=0.1" in cert.note
    matched = R2D().unlearn(_train(problem, weight_decay=0.1), req, R2DConfig(K=20, constants=c),
                            generator=uk.make_generator(1)).certificate
    assert matched.mode == "sound" and matched.certified
    # the same check the other way round: convex constants (lambda 0) under a weight-decayed training
    cert = R2D().unlearn(_train(problem, weight_decay=0.1), req,
                         R2DConfig(K=20, constants=logistic_constants(lam=0.0, radius=R, bias=True)),
                         generator=uk.make_generator(1)).certificate
    assert cert.mode == "none" and "weight_decay=0.1" in cert.note


def test_f0_holds_at_the_actual_initialisation(problem):
    """Unprojected SGD-R2D/D2D use F0: it must bound the per-sample loss at the init training started from."""
    ds, flat, req = problem
    state = _train(problem, weight_decay=0.1, radius=math.inf)
    w0 = state.extras["init"]
    assert float(w0.norm()) > 0  # a random init, not w0 = 0
    x, y = ds.train_subset(state.train_indices)
    losses = torch.stack([flat.loss(w0, x[i:i + 1], y[i:i + 1], weight_decay=0.1) for i in range(len(x))])
    at_zero = logistic_constants(lam=0.1, bias=True)
    assert float(losses.max()) > at_zero.F0  # F0 at w0 = 0 is exceeded at the actual start
    for method, conf in [(R2D(), R2DConfig(K=20, constants=at_zero)), (D2D(), D2DConfig(K=20, constants=at_zero))]:
        cert = method.unlearn(state, req, conf, generator=uk.make_generator(1)).certificate
        assert cert.mode == "none" and "F0" in cert.note
    at_init = logistic_constants(lam=0.1, bias=True, init_norm=float(w0.norm()))
    for method, conf in [(R2D(), R2DConfig(K=20, constants=at_init)), (D2D(), D2DConfig(K=20, constants=at_init))]:
        cert = method.unlearn(state, req, conf, generator=uk.make_generator(1)).certificate
        assert cert.mode == "sound" and cert.certified
        assert float(losses.max()) <= cert.constants["F0"]  # the initial loss gap f(w0) - 0 is bounded by F0


def test_softmax_f0_bounds_the_loss_in_the_init_ball():
    g = torch.Generator().manual_seed(0)
    k, d, r = 10, 8, 1.7
    x = torch.randn(500, d, generator=g)
    x = x / x.norm(dim=1, keepdim=True).clamp(min=1.0)
    for _ in range(20):
        W = torch.randn(k, d, generator=g)
        W = W / W.norm() * r
        loss = torch.nn.functional.cross_entropy(x @ W.T, torch.randint(0, k, (500,), generator=g), reduction="none")
        assert float(loss.max()) <= softmax_constants(n_classes=k, init_norm=r).F0


def test_projected_training_gets_the_projected_sgd_d2d_bound(problem):
    _, flat, req = problem
    c = logistic_constants(lam=0.1, radius=R, bias=True)
    state = _train(problem, weight_decay=0.1)
    cert = D2D().unlearn(state, req, D2DConfig(K=20, constants=c), generator=uk.make_generator(1)).certificate
    assert cert.mode == "sound" and cert.constants["theorem"] == "psgd" and "Nemirovski" in cert.source
    forced = D2D().unlearn(state, req, D2DConfig(K=20, constants=c, theorem="sgd_derived"),
                           generator=uk.make_generator(1)).certificate
    assert forced.mode == "none" and "unprojected" in forced.note
    r2d_forced = R2D().unlearn(state, req, R2DConfig(K=20, constants=c, theorem="sgd_derived"),
                               generator=uk.make_generator(1)).certificate
    assert r2d_forced.mode == "none" and "unprojected" in r2d_forced.note


def test_projected_sgd_d2d_bound_holds_by_monte_carlo():
    """Independent projected-SGD runs on a ridge-logistic toy where the diameter cap does not bind."""
    from unlearnkit.experiments.descend_rewind.coupled import ArrayLogistic

    rng = np.random.default_rng(0)
    n, m, d, lam, eta, b, T, K, Rb, trials = 40, 4, 2, 0.2, 0.5, 4, 30, 15, 3.0, 400
    X = rng.normal(size=(n, d))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    s = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    s[:m] = 1.0
    X[:m] = np.array([1.0, 0.0])  # the forget set pulls as hard as it can along e_1
    prob = ArrayLogistic(X, s, lam=lam)
    retain = np.arange(m, n)

    def run(W, pool, steps):
        for _ in range(steps):
            idx = pool[rng.integers(0, pool.size, size=(trials, b))]
            W = W - eta * prob.grad(W, idx)
            nrm = np.linalg.norm(W, axis=1, keepdims=True)
            W = W * np.minimum(1.0, Rb / np.maximum(nrm, 1e-300))
        return W

    w0 = np.zeros((trials, d))
    u = run(run(w0, np.arange(n), T), retain, K)
    w_retrain = run(w0, retain, T)
    ms = float((np.linalg.norm(u - w_retrain, axis=1) ** 2).mean())
    c = logistic_constants(lam=lam, radius=Rb)
    bound = psgd_d2d_sensitivity(G=c.G, mu=c.mu, eta=eta, radius=Rb, T=T, K=K, m=m, n=n)
    assert ms <= bound**2
    assert bound < 2 * Rb  # the cap would not hide a wrong bound here


def test_paper_modes_note_the_classic_gaussian_outside_its_range(problem):
    _, flat, req = problem
    c = logistic_constants(lam=0.1, radius=R, bias=True)
    state = _train(problem, weight_decay=0.1)
    for eps, noted in [(2.0, True), (0.5, False)]:
        for method, conf in [(R2D(), R2DConfig(K=20, epsilon=eps, constants=c, mode="paper")),
                             (D2D(), D2DConfig(K=20, epsilon=eps, constants=c, mode="paper"))]:
            cert = method.unlearn(state, req, conf, generator=uk.make_generator(1)).certificate
            assert cert.mode == "paper" and not cert.certified
            assert ("epsilon >= 1" in cert.note) is noted
    # sound mode uses the analytic Gaussian: no such note
    cert = R2D().unlearn(state, req, R2DConfig(K=20, epsilon=2.0, constants=c), generator=uk.make_generator(1))
    assert "epsilon >= 1" not in cert.certificate.note
    # d2d_certificate without a known start is not certified (the start cannot be checked)
    assert d2d_certificate(D2DConfig(K=20, constants=c), state.config, m=10, n=200, d=flat.d)[1].mode == "none"


def test_audit_refutes_the_mismatched_weight_decay_and_not_the_matched_one():
    """Full-batch GD-R2D, cap not binding: weight decay 0 with lambda 0.1 declared is refuted at the epsilon
    the old code certified (now mode "none"); weight decay 0.1 = lambda is not refuted. Fresh training per
    trial (GD is deterministic given the fixed init, so it is the definition's randomness)."""
    cfg = AuditConfig(n_trials=40)
    wa, wb, cert = gd_r2d_worlds(weight_decay=0.0)
    assert cert.mode == "none" and not cert.certified and cert.sigma < 0.01
    bad = audit(wa, wb, delta=1e-5, epsilon=cert.constants["nominal_epsilon"], config=cfg,
                generator=uk.make_generator(3))
    assert bad.violation and bad.epsilon_lower > 1.0
    wa, wb, cert = gd_r2d_worlds(weight_decay=0.1)
    assert cert.mode == "sound" and cert.certified
    good = audit(wa, wb, delta=1e-5, epsilon=cert.epsilon, config=cfg, generator=uk.make_generator(3))
    assert not good.violation and good.epsilon_lower <= cert.epsilon


@pytest.mark.parametrize("name", ["r2d", "d2d"])
def test_sound_modes_survive_an_audit_with_fresh_training(name):
    task = ToyTask()
    consts = toy_setup(task)[4]
    method, conf = ((R2D(), R2DConfig(K=task.steps // 2, constants=consts)) if name == "r2d" else
                    (D2D(), D2DConfig(K=task.steps // 2, constants=consts)))
    res = audit_unlearner(method.unlearn, conf, task=task, config_audit=AuditConfig(n_trials=40),
                          fresh_training=True, generator=uk.make_generator(0))
    assert res.mode == "sound" and not res.violation and res.epsilon_lower <= res.certified_epsilon
