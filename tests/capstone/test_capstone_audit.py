"""The empirical audit: Clopper-Pearson arithmetic, the Gaussian oracle, and the two behaviours the issue asks
for (an under-noised Gaussian is refuted, a calibrated one is not)."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from unlearnkit import audit as A
from unlearnkit.experiments.audits import methods as AM, recipes as AR


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_clopper_pearson_pinned():
    # zero successes: the upper bound solves (1 - p)^n = alpha
    lo, hi = A.bounds.clopper_pearson(0, 100, 0.05)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-9)
    lo, hi = A.bounds.clopper_pearson(100, 100, 0.05)
    assert hi == 1.0 and lo == pytest.approx(0.05 ** (1 / 100), rel=1e-9)
    lo, hi = A.bounds.clopper_pearson(50, 100, 0.025)
    assert lo < 0.5 < hi and hi - lo == pytest.approx(0.2, abs=0.02)


def test_epsilon_lower_bound_matches_hand_computation():
    from scipy.stats import beta

    eps = A.bounds.epsilon_lower_bound(900, 1000, 10, 1000, delta=0.0, alpha=0.05)
    lo = beta.ppf(0.025, 900, 101)
    hi = beta.ppf(0.975, 11, 990)
    assert eps == pytest.approx(math.log(lo / hi), rel=1e-9)
    # identical rates can never prove anything
    assert A.bounds.epsilon_lower_bound(500, 1000, 500, 1000, delta=1e-5) == 0.0


def test_gaussian_oracle_pinned_and_inverse():
    # Balle & Wang (2018): analytic sigma for (1, 1e-5) at sensitivity 1 is about 3.73
    s = A.mechanisms.gaussian_sigma(1.0, 1.0, 1e-5)
    assert s == pytest.approx(3.7306, abs=2e-3)
    assert A.mechanisms.gaussian_epsilon(1.0, s, 1e-5) == pytest.approx(1.0, abs=1e-6)
    # the classic calibration sqrt(2 ln(1.25/delta))/eps is valid (conservative) for eps < 1
    classic = math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    assert A.mechanisms.gaussian_epsilon(1.0, classic, 1e-5) < 0.5
    # epsilon only depends on sensitivity / sigma
    assert A.mechanisms.gaussian_epsilon(2.0, 4.0, 1e-6) == pytest.approx(A.mechanisms.gaussian_epsilon(1.0, 2.0, 1e-6))


def test_underNoised_gaussian_is_a_violation():
    sigma_ok = A.mechanisms.gaussian_sigma(1.0, 1.0, 1e-5)
    res = A.audit_gaussian(sensitivity=1.0, sigma=sigma_ok / 8, epsilon=1.0, delta=1e-5, dim=4,
                           config=A.AuditConfig(n_trials=6000), generator=gen(1))
    assert res.violation and res.epsilon_lower > 1.0
    assert "VIOLATION" in res.verdict and "VIOLATION" in str(res)
    # a sound audit never exceeds the truth
    assert res.epsilon_lower <= res.extras["true_epsilon"]


def test_calibrated_gaussian_is_not_a_violation():
    sigma_ok = A.mechanisms.gaussian_sigma(1.0, 1.0, 1e-5)
    res = A.audit_gaussian(sensitivity=1.0, sigma=sigma_ok, epsilon=1.0, delta=1e-5, dim=4,
                           config=A.AuditConfig(n_trials=6000), generator=gen(2))
    assert not res.violation and res.epsilon_lower <= 1.0
    assert res.to_dict()["verdict"].startswith("consistent")


def test_same_distribution_gives_no_signal():
    mech = A.mechanisms.GaussianMechanism(center=(0.0, 0.0), sigma=1.0)
    res = A.audit(mech, mech, delta=1e-5, epsilon=0.0, config=A.AuditConfig(n_trials=4000), generator=gen(3))
    assert res.epsilon_lower == 0.0 and not res.violation


@settings(max_examples=8, deadline=None, derandomize=True)
@given(mu=st.floats(0.3, 4.0), seed=st.integers(0, 10_000))
def test_audit_never_exceeds_true_epsilon(mu, seed):
    res = A.audit_gaussian(sensitivity=mu, sigma=1.0, epsilon=100.0, delta=1e-5, dim=2,
                           config=A.AuditConfig(n_trials=3000), generator=gen(seed))
    assert 0.0 <= res.epsilon_lower <= res.extras["true_epsilon"] + 1e-9


def test_audit_signal_grows_with_shift():
    lbs = [A.audit_gaussian(sensitivity=mu, sigma=1.0, epsilon=10.0, delta=1e-5,
                            config=A.AuditConfig(n_trials=4000), generator=gen(7)).epsilon_lower
           for mu in (0.5, 2.0, 5.0)]
    assert lbs[0] < lbs[1] < lbs[2]


def test_per_trial_is_fresh_and_reproducible():
    mech = A.mechanisms.per_trial(lambda g: torch.randn(3, generator=g, dtype=torch.float64))
    x1 = mech(5, gen(11))
    x2 = mech(5, gen(11))
    assert torch.equal(x1, x2)
    assert len({tuple(r.tolist()) for r in x1}) == 5  # each trial drew fresh noise


def test_callback_and_chunks():
    events = []
    mech = A.mechanisms.GaussianMechanism(center=(0.0,), sigma=1.0)
    A.audit(mech, mech, delta=1e-5, config=A.AuditConfig(n_trials=100), generator=gen(0),
            callback=events.append, chunk=40)
    assert [e.step for e in events] == [40, 80, 100]


def test_norm_statistic_also_detects():
    res = A.audit_gaussian(sensitivity=6.0, sigma=1.0, epsilon=1.0, delta=1e-5, dim=1,
                           config=A.AuditConfig(n_trials=3000, statistic="norm"), generator=gen(4))
    assert res.violation


@pytest.mark.parametrize("kw, name", [
    (dict(n_trials=5), "n_trials"), (dict(alpha=0.0), "alpha"), (dict(select_fraction=1.0), "select_fraction"),
    (dict(statistic="mean"), "statistic"),
])
def test_config_validation_names_field(kw, name):
    with pytest.raises(ValueError, match=name):
        A.AuditConfig(**kw)


def test_bad_inputs():
    with pytest.raises(ValueError, match="coordinates"):
        A.run.audit_samples(np.zeros((50, 2)), np.zeros((50, 3)), delta=1e-5)
    with pytest.raises(ValueError, match="at least 20"):
        A.run.audit_samples(np.zeros((5, 2)), np.zeros((5, 2)), delta=1e-5)
    with pytest.raises(ValueError, match="NaN"):
        A.run.audit_samples(np.full((50, 2), np.nan), np.zeros((50, 2)), delta=1e-5)
    with pytest.raises(ValueError, match="sigma"):
        A.mechanisms.GaussianMechanism(center=(0.0,), sigma=0.0)


# ---------------------------------------------------------------- method-level audits on the toy task ------

def _broken_output_perturbation(scale):
    """Clip the model to C0 and add noise calibrated for (1, 1e-5) times ``scale``, claiming (1, 1e-5)."""
    from unlearnkit.core import Cost, Result
    from unlearnkit.privacy import Certificate

    C0 = 5.0
    sigma = A.mechanisms.gaussian_sigma(2 * C0, 1.0, 1e-5) * scale

    def fn(state, request, config, *, generator):
        x = state.params * min(1.0, C0 / float(state.params.norm()))
        z = torch.randn(x.shape, generator=generator, dtype=x.dtype)
        cert = Certificate(epsilon=1.0, delta=1e-5, sigma=sigma, mode="paper", mechanism="test")
        return Result(params=x + sigma * z, certificate=cert, history=[], cost=Cost())

    return fn


def test_method_level_audit_refutes_an_under_noised_method():
    task = AR.ToyTask(n_train=40, steps=10)
    res = AR.audit_unlearner(_broken_output_perturbation(1 / 5000), None, task=task, certifier="unlearn_retrained",
                            config_audit=A.AuditConfig(n_trials=200), generator=gen(5), label="broken OP",
                            fresh_training=False)
    assert res.violation and res.mode == "paper" and res.certified_epsilon == 1.0


def test_method_level_audit_accepts_calibrated_output_perturbation():
    out = AM.audit_methods(methods=("output_perturbation",), modes=("sound",), include_gaussian=False,
                          task=AR.ToyTask(n_train=40, steps=10), config=A.AuditConfig(n_trials=150), seed=1)
    assert not out["skipped"], out["skipped"]
    (res,) = out["results"]
    assert res.label == "output_perturbation" and res.mode == "sound" and not res.violation
    assert res.extras["sigma"] > 0 and res.to_dict()["certified_epsilon"] == 1.0


def test_toy_task_validation():
    with pytest.raises(ValueError, match="forget"):
        AR.ToyTask(forget="all")
    with pytest.raises(ValueError, match="m="):
        AR.ToyTask(n_train=10, m=9)
    with pytest.raises(ValueError, match="method"):
        AM.audit_methods(methods=("nope",))


def test_worst_case_starts_separate_the_worlds_more():
    """At the two ends of the C0 ball the worlds differ most, so the audit's signal grows."""
    fn = _broken_output_perturbation(1 / 20)
    task = AR.ToyTask(n_train=40, steps=5)
    kw = dict(task=task, certifier="unlearn_retrained", config_audit=A.AuditConfig(n_trials=200),
              fresh_training=False)
    near = AR.audit_unlearner(fn, None, generator=gen(8), **kw)
    far = AR.audit_unlearner(fn, None, generator=gen(8), worst_case_starts=True, **kw)
    assert far.epsilon_point > near.epsilon_point and far.extras["worst_case_starts"]
    with pytest.raises(ValueError, match="worst_case_starts"):
        AR.unlearner_worlds(fn, None, task, certifier="retrain_plus_noise", worst_case_starts=True)
