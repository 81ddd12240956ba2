"""R2D, D2D and noisy fine-tuning on small real data: behaviour, certificates, fresh noise."""


import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit import data, evaluate
from unlearnkit.constants import estimate_constants, logistic_constants
from unlearnkit.methods.descend_rewind import d2d, r2d
from unlearnkit.methods import noisy_finetune as nf
from unlearnkit.core import Request
from unlearnkit.models import FlatParams, make_model
from unlearnkit.train import SGDConfig, train_sgd

LAM = 0.05
R = 5.0


@pytest.fixture(scope="module")
def setup():
    torch.set_num_threads(1)
    ds = data.load("synthetic", device="cpu", n_train=300, n_test=100, dim=5, seed=3)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, bias=False), loss="logistic")
    cfg = SGDConfig(steps=100, lr=0.5, batch_size=8, weight_decay=LAM, radius=R, checkpoint_every=25)
    state = train_sgd(flat, ds, None, cfg, generator=uk.make_generator(0), init=torch.zeros(flat.d))
    req = Request("samples", np.nonzero(ds.y_train.numpy() == 1)[0][:40])
    return ds, flat, cfg, state, req, None


def test_r2d_moves_towards_retraining(setup):
    """Full-batch GD-R2D on a strongly convex loss: deterministic, so the claim is checked pathwise."""
    ds, flat, _, _, req, _ = setup
    cfg = SGDConfig(steps=80, lr=1.0, sampling="full", weight_decay=LAM, radius=R, checkpoint_every=20)
    w0 = torch.zeros(flat.d)
    state = train_sgd(flat, ds, None, cfg, generator=uk.make_generator(0), init=w0)
    ret = train_sgd(flat, ds, req.retain(np.arange(ds.n_train)), cfg, generator=uk.make_generator(1), init=w0).params
    c = logistic_constants(lam=LAM, radius=R)
    res = r2d.R2D().unlearn(state, req, r2d.R2DConfig(K=60, epsilon=1.0, delta=1e-5, constants=c),
                            generator=uk.make_generator(2))
    u = res.extras["noiseless"]
    assert evaluate.distance(u, ret) < 0.5 * evaluate.distance(state.params, ret)
    cert = res.certificate
    assert cert.mode == "sound" and cert.epsilon == 1.0 and cert.sigma > 0
    assert cert.constants["provenance"] == "derived" and cert.constants["moment"] == "deterministic"
    # the deterministic GD bound holds pathwise: ||u - w'|| <= Delta
    assert evaluate.distance(u, ret) <= cert.constants["Delta"]
    assert res.cost.grad_evals == 60 * req.retain(np.arange(ds.n_train)).size


def test_psgd_r2d_certificate(setup):
    ds, flat, cfg, state, req, _ = setup
    c = logistic_constants(lam=LAM, radius=R)
    res = r2d.R2D().unlearn(state, req, r2d.R2DConfig(K=75, epsilon=1.0, constants=c), generator=uk.make_generator(2))
    assert res.certificate.constants["provenance"] == "reconstructed" and res.certificate.constants["K"] == 75
    assert res.cost.grad_evals == 75 * cfg.batch_size < cfg.steps * cfg.batch_size
    paper = r2d.R2D().unlearn(state, req, r2d.R2DConfig(K=75, epsilon=0.5, mode="paper", constants=c),
                              generator=uk.make_generator(2))
    assert paper.certificate.mode == "paper"
    full = r2d.R2D().unlearn(state, req, r2d.R2DConfig(K=100, epsilon=1.0, constants=c),
                             generator=uk.make_generator(2))
    assert full.certificate.sigma == 0  # K = T: retraining, no noise


def test_r2d_uncertified_cases(setup):
    ds, flat, cfg, state, req, ret = setup
    c = logistic_constants(lam=LAM, radius=R)
    from dataclasses import replace

    st2 = state.replace(config=replace(cfg, sampling="without_replacement"))
    res = r2d.R2D().unlearn(st2, req, r2d.R2DConfig(K=50, constants=c), generator=uk.make_generator(0))
    assert res.certificate.mode == "none" and "not certified" in res.certificate.note
    x, y = ds.train_subset(np.arange(64))
    est = estimate_constants(flat, x, y, radius=R, weight_decay=LAM, n_points=4, generator=uk.make_generator(0))
    assert not est.certified and est.G <= c.G + 1e-6  # probing finds a lower bound of the analytic G
    res = r2d.R2D().unlearn(state, req, r2d.R2DConfig(K=50, constants=est), generator=uk.make_generator(0))
    assert res.certificate.mode == "none" and "estimated" in res.certificate.note
    with pytest.raises(ValueError, match="K"):
        r2d.R2D().unlearn(state, req, r2d.R2DConfig(K=30, constants=c), generator=uk.make_generator(0))


def test_d2d_without_noise_is_finetuning(setup):
    ds, flat, cfg, state, req, ret = setup
    res = d2d.D2D().unlearn(state, req, d2d.D2DConfig(K=50, epsilon=None), generator=uk.make_generator(0))
    assert res.certificate is None
    assert torch.equal(res.params, res.extras["noiseless"])
    c = logistic_constants(lam=LAM, radius=R)
    res = d2d.D2D().unlearn(state, req, d2d.D2DConfig(K=50, constants=c, delta=1e-3), generator=uk.make_generator(0))
    assert res.certificate.mode == "sound" and res.certificate.constants["moment"] == "second"
    m, n = req.m, ds.n_train
    kw = dict(K=800, constants=c, delta=1e-3, mode="paper")  # paper mode: no diameter cap, so both uncapped
    imp = d2d.d2d_certificate(d2d.D2DConfig(**kw), cfg, m=m, n=n, d=flat.d, init_norm=0.0)[0]
    per = d2d.d2d_certificate(d2d.D2DConfig(**kw, publish="perfect"), cfg, m=m, n=n, d=flat.d, init_norm=0.0)[0]
    assert per > imp  # restarting from the noisy model costs noise
    capped = d2d.d2d_certificate(d2d.D2DConfig(K=800, constants=c, delta=1e-3), cfg, m=m, n=n, d=flat.d, init_norm=0.0)
    assert capped[0] < imp and "diameter cap" in capped[1].note
    with pytest.raises(ValueError, match="K=100"):
        d2d.d2d_certificate(d2d.D2DConfig(K=100, constants=c, delta=1e-3, publish="perfect"), cfg, m=m, n=n, d=flat.d, init_norm=0.0)
    with pytest.raises(ValueError, match="strongly convex"):
        d2d.D2D().unlearn(state, req, d2d.D2DConfig(K=5, constants=logistic_constants(lam=0.0, radius=R)),
                          generator=uk.make_generator(0))


def test_every_noisy_step_draws_fresh_noise(setup):
    ds, flat, cfg, state, req, ret = setup
    seen = []
    mc = nf.ModelClippingConfig(C2=1e-9, sigma=1.0, gamma=0.1, T=3)
    nf.ModelClipping(eval_fn=lambda x: seen.append(x.clone()) or {}).unlearn(state, req, mc, generator=uk.make_generator(0))
    # after clipping to ~0, each iterate is (almost exactly) that step's noise
    assert len(seen) == 3
    for a, b in [(0, 1), (1, 2), (0, 2)]:
        assert not torch.allclose(seen[a], seen[b], atol=1e-3)
        assert not torch.allclose(seen[a], -seen[b], atol=1e-3)
    g1 = r2d.add_output_noise(torch.zeros(5), 1.0, uk.make_generator(0))
    g2 = r2d.add_output_noise(torch.zeros(5), 1.0, uk.make_generator(0))
    assert torch.equal(g1, g2)  # same seed, same noise: reproducible


def test_gradient_clipping_certificate_and_ablation(setup):
    ds, flat, cfg, state, req, ret = setup
    ft = nf.CleanFinetuneConfig(steps=20, lr=0.5, batch_size=8)
    paper = nf.GradientClippingConfig(C0=1, C1=1, gamma=0.1, lam=1, mode="paper", finetune=ft)
    res = nf.GradientClipping().unlearn(state, req, paper, generator=uk.make_generator(0))
    cert = res.certificate
    assert cert.mode == "paper" and cert.epsilon == pytest.approx(1.0036, abs=1e-3)
    assert cert.constants["sound_epsilon"] == pytest.approx(7.077, abs=0.01)
    assert len(res.history) == paper.steps + 0 or res.history[-1]["phase"] == 1.0
    sound = nf.GradientClipping().unlearn(state, req, nf.GradientClippingConfig(C0=1, C1=1, gamma=0.1, lam=1,
                                                                                finetune=ft),
                                          generator=uk.make_generator(0))
    assert sound.certificate.epsilon == pytest.approx(1.0, rel=1e-6)
    assert sound.certificate.sigma > cert.sigma * 5
    zero = nf.GradientClipping().unlearn(state, req, nf.GradientClippingConfig(C0=1, C1=1, gamma=0.1, lam=1,
                                                                               init="zeros", finetune=ft),
                                         generator=uk.make_generator(0))
    assert zero.cost.grad_evals == sound.cost.grad_evals
    op = nf.OutputPerturbation().unlearn(state, req, nf.OutputPerturbationConfig(C0=0.5, finetune=ft),
                                         generator=uk.make_generator(0))
    assert op.certificate.sigma == pytest.approx(nf.bounds.op_sigma(1, 1e-5, C0=0.5))
    assert float(res.extras["noisy"].norm()) > 0


def test_dp_sgd_group_privacy(setup):
    ds, flat, cfg, state, req, ret = setup
    conf = nf.DPSGDConfig(epsilon=10, k=5, steps=20, batch_size=32)
    th, cert, cost = nf.dpsgd.dp_sgd_train(flat, ds, np.arange(ds.n_train), conf, generator=uk.make_generator(0),
                                     init=torch.zeros(flat.d))
    _, cert_p, _ = nf.dpsgd.dp_sgd_train(flat, ds, np.arange(ds.n_train), nf.DPSGDConfig(epsilon=10, k=5, steps=20,
                                   batch_size=32, mode="paper"), generator=uk.make_generator(0), init=torch.zeros(flat.d))
    assert cert.sigma > cert_p.sigma  # the correct group delta needs more noise than the paper's code
    assert cert.constants["delta1"] == pytest.approx(cert_p.constants["delta1"] / 5)


def test_coupled_replay_on_real_data(setup):
    """Algorithm 6 on real data: R2D with K = T on the coupled retraining batches *is* the retrained model."""
    from dataclasses import replace

    from unlearnkit.experiments.descend_rewind.coupled import coupled_retrain_batches
    from unlearnkit.train import run_sgd

    ds, flat, cfg, state, req, _ = setup
    batches = coupled_retrain_batches(state, req, rng=np.random.default_rng(0))
    xr, yr = ds.train_subset(req.retain(state.train_indices))
    assert all(int(b.max()) < xr.shape[0] for b in batches)
    ret, _, _ = run_sgd(flat, state.extras["init"], xr, yr, replace(cfg, checkpoint_every=0),
                        generator=uk.make_generator(0), batches=batches)
    res = r2d.R2D(batches=batches).unlearn(state, req, r2d.R2DConfig(K=cfg.steps, epsilon=None),
                                           generator=uk.make_generator(5))
    assert torch.allclose(res.params, ret)
    half = r2d.R2D(batches=batches[50:]).unlearn(state, req, r2d.R2DConfig(K=50, epsilon=None),
                                                 generator=uk.make_generator(5))
    assert evaluate.distance(half.params, ret) < evaluate.distance(state.params, ret)
