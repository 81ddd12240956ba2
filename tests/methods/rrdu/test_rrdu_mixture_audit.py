"""Accountant "M" (the certified quick profile's accountant) under the walk audit: RR-DU's exact variant from a start
trained with noise calibrated on its realised, data-independent route (exact Gaussian composition), the observer's
first received model, fresh training in both worlds (:mod:`unlearnkit.experiments.rrdu.audit`)."""

import math

import pytest

from unlearnkit.experiments.rrdu.audit import WalkAuditTask, audit_walk, rrdu_worlds


def _check(res):
    assert res.extras["certified"] and res.extras["certificate_mode"] == "sound"
    assert math.isfinite(res.extras["certificate_epsilon"]) and res.extras["certificate_epsilon"] <= 1.0 + 1e-9
    assert res.extras["claimed_epsilon"] == pytest.approx(res.extras["certificate_epsilon"])
    assert res.epsilon_lower <= res.extras["claimed_epsilon"]  # not refuted


def test_accountant_m_is_not_refuted_fast():
    _check(audit_walk("rrdu_mixture", n_trials=20, seed=0))


@pytest.mark.slow
def test_accountant_m_is_not_refuted_full():
    res = audit_walk("rrdu_mixture", n_trials=300, seed=0)
    _check(res)
    assert res.epsilon_lower <= 0.25  # measured: 0.000 at 1000 trials per world (docs/frontiers/accountants.md)


def test_mixture_worlds_need_a_noisy_start_and_a_known_accountant():
    with pytest.raises(ValueError, match="noisy_start"):
        rrdu_worlds(WalkAuditTask(), accountant="M")
    with pytest.raises(ValueError, match="accountant"):
        rrdu_worlds(WalkAuditTask(), noisy_start=True, accountant="X")
