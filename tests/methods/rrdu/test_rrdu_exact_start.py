"""Accountant "S"'s a-priori u-step noise: the exact Gaussian composition (GDP) of the noisy start and the u-steps
against the former RDP (Prop. A.8) calibration, which stays available as ``composition="rdp"``."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from unlearnkit.methods.rrdu import sound
from unlearnkit.methods.rrdu.sound import rrdu_noisy_start_sigma
from unlearnkit.privacy import analytic_gaussian_sigma, gaussian_composition_epsilon
from unlearnkit.privacy.linear_rdp import linear_rdp_epsilon, linear_rdp_slope


def _sig(composition, **kw):
    base = dict(epsilon=2.0, delta=1e-5, train_rho=0.02, sensitivity=0.3, visit_cap=8)
    return rrdu_noisy_start_sigma(**{**base, **kw}, composition=composition)


def test_closed_form_meets_the_budget_exactly():
    s = _sig("gaussian")
    mu_eps = 1 / analytic_gaussian_sigma(2.0, 0.5e-5)
    assert s == pytest.approx(0.3 * math.sqrt(8 / (mu_eps**2 - 0.04)), rel=1e-12)
    # composed with the training's mu^2 = 2 rho, the u-steps spend the rest of (epsilon, delta/2) exactly
    eps = gaussian_composition_epsilon([math.sqrt(0.04)] + [0.3 / s] * 8, 0.5e-5)
    assert eps == pytest.approx(2.0, rel=1e-6)
    # the RDP calibration meets the same budget through Prop. A.8
    r = _sig("rdp")
    assert linear_rdp_epsilon(0.02 + 8 * 0.09 / (2 * r**2), 0.5e-5, method="mironov") == pytest.approx(2.0, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.2, 64.0), frac=st.floats(0.0, 0.99), sens=st.floats(0.01, 3.0), cap=st.integers(1, 60))
def test_exact_never_needs_more_noise_than_rdp(eps, frac, sens, cap):
    # the training spends a share of the RDP budget; the exact composition leaves at least as much room
    rho = frac * linear_rdp_slope(eps, 0.5e-5, method="mironov")
    kw = dict(epsilon=eps, train_rho=rho, sensitivity=sens, visit_cap=cap)
    assert _sig("gaussian", **kw) <= _sig("rdp", **kw) * (1 + 1e-12)


def test_monotone_in_epsilon_visits_sensitivity_and_training():
    sig = [_sig("gaussian", epsilon=e, train_rho=0.001) for e in (0.5, 1, 2, 4, 16, 64)]
    assert all(a > b for a, b in zip(sig, sig[1:]))
    caps = [_sig("gaussian", visit_cap=c) for c in (1, 4, 16)]
    assert all(a < b for a, b in zip(caps, caps[1:]))
    assert _sig("gaussian", sensitivity=0.6) == pytest.approx(2 * _sig("gaussian"), rel=1e-12)
    assert _sig("gaussian", train_rho=0.0) < _sig("gaussian") < _sig("gaussian", train_rho=0.1)


def test_edges_and_errors():
    assert _sig("gaussian", sensitivity=0.0) == 0.0 and _sig("gaussian", visit_cap=0) == 0.0
    with pytest.raises(ValueError, match="epsilon=0.5"):
        _sig("gaussian", epsilon=0.5, train_rho=5.0)
    with pytest.raises(ValueError, match="composition"):
        _sig("pld")


def test_rrdu_uses_the_exact_calibration_by_default():
    import torch

    from unlearnkit.experiments.rrdu.audit import WalkAuditTask, walk_setup
    from unlearnkit.methods.rrdu import RRDU, RRDUConfig
    from unlearnkit.methods.rrdu.noisy import NoisyWalkConfig, NoisyWalkTraining

    task = WalkAuditTask(train_hops=4, T_unlearn=4)
    flat, fed, req, init, token = walk_setup(task)
    g = torch.Generator().manual_seed(0)
    noisy = NoisyWalkTraining().train(flat, fed, NoisyWalkConfig(token=token, hops=4, L=1.0, epsilon=1.0),
                                      generator=g, init=init)
    out = {}
    for comp in ("gaussian", "rdp"):
        cfg = RRDUConfig(T_unlearn=4, variant="lightweight", clip_L=1.0, accountant="S", epsilon=3.0, composition=comp)
        res = RRDU().unlearn(noisy, req, cfg, generator=torch.Generator().manual_seed(1))
        assert res.certificate.certified and res.certificate.epsilon <= 3.0 + 1e-9
        out[comp] = res.extras["sigma"]
    assert 0 < out["gaussian"] < out["rdp"]
    with pytest.raises(ValueError, match="composition"):
        RRDUConfig(composition="pld")
    assert sound.rrdu_u_sensitivity("lightweight", L=1.0, m=45, n_u=50) == pytest.approx(0.9)
