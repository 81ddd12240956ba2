"""Gradient clipping with ``accountant="pld"``: the first noisy step read exactly, never looser than Thm A.9."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from unlearnkit.methods import noisy_finetune as nf
from unlearnkit.methods.noisy_finetune.gc_accountant import (gc_accountant_epsilon, gc_accountant_sigma,
                                                             gc_first_step_sensitivity, gc_pld_epsilon)
from unlearnkit.privacy.mixture import gaussian_composition_epsilon

_CONSTS = dict(C0=st.floats(0.01, 10.0), C1=st.floats(0.01, 100.0), gamma=st.floats(1e-4, 0.5),
               gl=st.floats(0.0, 0.99), T=st.integers(1, 200), log_delta=st.floats(-12.0, -3.0),
               noise=st.floats(0.2, 20.0))


@settings(max_examples=15, deadline=None)
@given(**_CONSTS)
def test_never_looser_than_rdp_and_the_first_step_bracket_holds_the_exact_gaussian(C0, C1, gamma, gl, T,
                                                                                      log_delta, noise):
    lam, delta = gl / gamma, 10.0 ** log_delta
    kw = dict(C0=C0, C1=C1, gamma=gamma, lam=lam)
    sigma = noise * gc_first_step_sensitivity(**kw)
    rdp = gc_accountant_epsilon(sigma, delta, **kw, T=T)
    pld = gc_accountant_epsilon(sigma, delta, **kw, T=T, accountant="pld")
    assert pld <= rdp
    b = gc_pld_epsilon(sigma, delta, **kw)
    exact = gaussian_composition_epsilon([1.0 / noise], delta)  # the first step is exactly (B_1 / sigma)-GDP
    assert b.lower - 1e-9 <= exact <= b.upper + 1e-9
    if T == 1:  # one step: Thm A.9's curve is this very Gaussian's, so the exact reading is never worse
        assert b.upper <= nf.bounds.gc_epsilon(sigma, delta, **kw, T=1) + 1e-9


@settings(max_examples=6, deadline=None)
@given(eps=st.floats(0.2, 8.0), T=st.integers(1, 30), gl=st.floats(0.0, 0.9))
def test_calibrated_noise_never_above_rdp_and_certified(eps, T, gl):
    kw = dict(C0=1.0, C1=1.0, gamma=0.1, lam=gl / 0.1)
    rdp = nf.bounds.gc_sigma(eps, 1e-5, **kw, T=T)
    pld = gc_accountant_sigma(eps, 1e-5, **kw, T=T, accountant="pld", sigma_hint=rdp)
    assert pld <= rdp * (1 + 1e-4)
    assert gc_accountant_epsilon(pld, 1e-5, **kw, T=T, accountant="pld") <= eps


def test_paper_profile_needs_less_noise_and_reports_both():
    """Table 5's MNIST constants take T = 1 noisy step: the pair is one Gaussian, read without the RDP
    conversion's loss (7.8 % less noise at epsilon 1; the paper's sigma certifies 6.573 instead of 7.077)."""
    base = nf.GradientClippingConfig(epsilon=1.0, delta=1e-5, C0=0.01, C1=100.0, gamma=1e-4, lam=10.0)
    assert base.steps == 1
    rdp, pld = base.certificate(), replace(base, accountant="pld").certificate()
    assert "accountant" not in rdp.constants and rdp.sigma == pytest.approx(0.16172, abs=1e-5)
    assert pld.sigma == pytest.approx(0.14916, abs=1e-4) and pld.epsilon <= 1.0
    c = pld.constants
    assert c["pld_lower"] <= c["pld_upper"] == pld.epsilon < c["rdp_epsilon"]
    assert c["first_step_sensitivity"] == pytest.approx(gc_first_step_sensitivity(0.01, 100.0, 1e-4, 10.0))
    paper = replace(base, mode="paper", accountant="pld").certificate()
    assert paper.sigma == pytest.approx(0.02827, abs=1e-5)  # the paper's calibration is not changed
    assert paper.constants["sound_epsilon"] == pytest.approx(6.573, abs=1e-3)
    assert paper.constants["sound_epsilon"] < paper.constants["rdp_epsilon"] == pytest.approx(7.077, abs=1e-3)


def test_many_contracting_steps_keep_the_rdp_epsilon():
    """The quick profile (T = 10, gamma lam = 0.5): the first step alone is far looser (53 vs 1), so the
    certificate is Theorem A.9's and the noise is unchanged."""
    base = nf.GradientClippingConfig(epsilon=1.0, C0=1.0, C1=0.1, gamma=0.1, lam=5.0)
    rdp, pld = base.certificate(), replace(base, accountant="pld").certificate()
    assert pld.sigma == pytest.approx(rdp.sigma, rel=1e-4) and pld.epsilon <= 1.0
    assert pld.constants["pld_upper"] > 50 and pld.constants["rdp_epsilon"] == pytest.approx(1.0, rel=1e-4)


def test_errors_name_the_parameter():
    with pytest.raises(ValueError, match="^accountant="):
        nf.GradientClippingConfig(accountant="prv")
    with pytest.raises(ValueError, match="^pld_grid="):
        nf.GradientClippingConfig(pld_grid=0.0)
    with pytest.raises(ValueError, match="^accountant="):
        gc_accountant_epsilon(1.0, 1e-5, C0=1, C1=1, gamma=0.1, T=3, accountant="exact")
    assert gc_pld_epsilon(1e-9, 1e-5, C0=1, C1=1, gamma=0.1).upper == math.inf


@pytest.mark.slow  # 2400 unlearning runs: about 3 minutes on one core
def test_audit_at_the_worst_case_starts_keeps_the_pld_certificate_and_refutes_an_eighth_of_its_noise():
    """The toy audit task (logistic regression in 2-D), starts at the two ends of the C0 ball, one noisy step:
    the certificate of accountant "pld" is the exact Gaussian of that pair. Not refuted at its noise; the same
    claim with an eighth of the noise is refuted (the audit has power here)."""
    import torch

    from unlearnkit.audit import AuditConfig, audit
    from unlearnkit.experiments.audits.recipes import ToyTask, unlearner_worlds

    task = ToyTask()
    cfg = nf.GradientClippingConfig(epsilon=2.0, delta=1e-5, C0=task.radius, C1=task.radius, gamma=0.5,
                                    lam=task.weight_decay, T=1, batch_size=task.batch_size, accountant="pld",
                                    finetune=nf.CleanFinetuneConfig(steps=0))
    cert = cfg.certificate()
    assert cert.constants["pld_upper"] < cert.constants["rdp_epsilon"]  # the PLD reading certifies here
    out = {}
    for name, c in (("calibrated", cfg), ("eighth", replace(cfg, sigma=cert.sigma / 8))):
        wa, wb, _ = unlearner_worlds(nf.GradientClipping().unlearn, c, task, certifier="unlearn_retrained",
                                     worst_case_starts=True)
        out[name] = audit(wa, wb, delta=1e-5, epsilon=cert.epsilon, config=AuditConfig(n_trials=600),
                          generator=torch.Generator().manual_seed(5))
    print({k: (r.epsilon_lower, r.epsilon_point) for k, r in out.items()}, cert.epsilon, cert.sigma)
    assert not out["calibrated"].violation and out["calibrated"].epsilon_lower <= cert.epsilon
    assert out["eighth"].violation
