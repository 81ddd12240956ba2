"""The audit must not refute a valid certificate (issue 20, finding 3).

- Exact retraining (the ``retrain`` recipe, and R2D with K = T, which rewinds to the initialisation and *is*
  retraining) has true epsilon 0: auditing it never reports a violation. Before the fix, ``audit_methods``
  trained world B once (one fixed retrained model), so it lacked retraining's own randomness and R2D with
  K = T was "refuted" at epsilon >= 3.18; that design is now refused.
- The audits of one ``audit_methods`` call are Bonferroni-corrected: each at alpha / k, jointly at 1 - alpha.
- Power control: a correctly calibrated Gaussian mechanism is never refuted, one with 1/8 of the noise is.
- Only a mode a recipe cannot audit is skipped; programming errors raise.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from unlearnkit import audit as A
from unlearnkit.experiments.audits import methods as AM, recipes as AR
from unlearnkit.methods.descend_rewind import R2D, R2DConfig

SMALL = AR.ToyTask(n_train=40, steps=10)


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _r2d_full_rewind(task):
    consts = AR.toy_setup(task)[4]
    return R2DConfig(K=task.steps, epsilon=1.0, delta=1e-5, constants=consts, mode="sound")


@pytest.mark.parametrize("seed", [0, 1])
def test_auditing_exact_retraining_never_reports_a_violation(seed):
    out = AM.audit_methods(methods=("retrain", "r2d_full_rewind"), include_gaussian=False, task=SMALL,
                           config=A.AuditConfig(n_trials=100), seed=seed)
    assert not out["skipped"], out["skipped"]
    assert [r.label for r in out["results"]] == ["retrain", "r2d_full_rewind"]
    for res in out["results"]:
        assert res.extras["fresh_training"] is True
        assert not res.violation, str(res)
        assert res.epsilon_lower <= res.certified_epsilon
    retrain, r2d = out["results"]
    assert retrain.certified_epsilon == 0.0 and retrain.epsilon_lower == 0.0
    assert r2d.extras["sigma"] == 0.0  # K = T: no noise at all, so only fresh retraining keeps world B honest


def test_fixed_training_refuted_exact_retraining_and_is_now_refused():
    """The old default (one fixed retrained model in world B) refutes R2D with K = T; the new one does not."""
    from unlearnkit.train import train_sgd

    cfg = _r2d_full_rewind(SMALL)
    flat, ds, request, sgd, _ = AR.toy_setup(SMALL)
    full = np.arange(ds.n_train)
    fixed_a = train_sgd(flat, ds, full, sgd, generator=gen(2))
    fixed_b = train_sgd(flat, ds, request.retain(full), sgd, generator=gen(3))
    # the old design, rebuilt by hand: world B is one retrained model plus sigma = 0 noise
    old_a = A.mechanisms.per_trial(lambda g: R2D().unlearn(fixed_a, request, cfg, generator=g).params)
    old_b = A.mechanisms.per_trial(lambda g: fixed_b.params.clone())
    old = A.audit(old_a, old_b, delta=1e-5, epsilon=1.0, config=A.AuditConfig(n_trials=100), generator=gen(0))
    assert old.violation  # a valid certificate (true epsilon 0) "refuted": the audit's fault

    new = AR.audit_unlearner(R2D().unlearn, cfg, task=SMALL, config_audit=A.AuditConfig(n_trials=100),
                             generator=gen(0), label="r2d K=T")
    assert not new.violation and new.epsilon_lower <= 1.0 and new.alpha == 0.05

    with pytest.raises(ValueError, match="fresh_training=False"):
        AR.unlearner_worlds(R2D().unlearn, cfg, SMALL, certifier="retrain_plus_noise", fresh_training=False)
    with pytest.raises(ValueError, match="fresh_training=False"):
        AR.unlearner_worlds(R2D().unlearn, cfg, SMALL, certifier="retrain", fresh_training=False)


def test_audit_methods_defaults_to_fresh_training_and_corrects_for_multiplicity():
    out = AM.audit_methods(methods=("output_perturbation",), task=AR.ToyTask(n_train=40, steps=5),
                           config=A.AuditConfig(n_trials=40, alpha=0.1), seed=3)
    k = 2 + 2  # two Gaussian controls, output perturbation in paper and sound mode
    assert out["n_audits"] == k and out["alpha_family"] == 0.1
    assert out["alpha_per_audit"] == pytest.approx(0.1 / k)
    for res in out["results"]:
        assert res.alpha == pytest.approx(0.1 / k)
        d = res.to_dict()
        assert d["alpha_family"] == 0.1 and d["n_audits"] == k and d["correction"] == "bonferroni"
        assert "family-wise 90% over 4 audits" in str(res)
    assert all(r.extras["fresh_training"] for r in out["results"][2:])
    # a single audit is not corrected
    assert A.run.bonferroni(A.AuditConfig(alpha=0.1), 1).alpha == 0.1
    with pytest.raises(ValueError, match="n_audits"):
        A.run.bonferroni(A.AuditConfig(), 0)


def test_corrected_bound_is_more_conservative():
    """Same samples, smaller alpha: the lower bound can only drop (so correction never adds violations)."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.5, 1.0, (2000, 1)), rng.normal(0.0, 1.0, (2000, 1))
    single = A.run.audit_samples(a, b, delta=1e-5, config=A.AuditConfig(alpha=0.05))
    family = A.run.audit_samples(a, b, delta=1e-5, config=A.run.bonferroni(A.AuditConfig(alpha=0.05), 11))
    assert 0 < family.epsilon_lower <= single.epsilon_lower


@settings(max_examples=6, deadline=None, derandomize=True)
@given(eps=st.floats(0.25, 3.5), delta_exp=st.integers(5, 7), seed=st.integers(0, 10_000))
def test_power_control_calibrated_gaussian_survives_and_eighth_noise_is_refuted(eps, delta_exp, seed):
    out = AM.audit_methods(methods=(), epsilon=eps, delta=10.0 ** -delta_exp, config=A.AuditConfig(n_trials=100),
                           seed=seed)
    calibrated, eighth = out["results"]
    assert out["n_audits"] == 2 and calibrated.alpha == pytest.approx(0.025)
    assert not calibrated.violation and calibrated.epsilon_lower <= calibrated.extras["true_epsilon"]
    assert eighth.violation and eighth.epsilon_lower <= eighth.extras["true_epsilon"]


def test_only_unsupported_modes_are_skipped(monkeypatch):
    with pytest.raises(AR.ModeNotSupported, match="mode='paper'"):
        AR.METHOD_RECIPES["retrain"]("paper", 1.0, 1e-5, SMALL, None)

    def unsupported(mode, eps, delta, task, consts):
        raise AR.ModeNotSupported(f"mode={mode!r}: not auditable")

    def broken(mode, eps, delta, task, consts):
        raise TypeError("a programming error")

    monkeypatch.setitem(AR.METHOD_RECIPES, "unsupported", unsupported)
    out = AM.audit_methods(methods=("unsupported",), modes=("paper",), config=A.AuditConfig(n_trials=20))
    assert set(out["skipped"]) == {"unsupported [paper]"} and out["n_audits"] == 2
    monkeypatch.setitem(AR.METHOD_RECIPES, "broken", broken)
    with pytest.raises(TypeError, match="programming error"):
        AM.audit_methods(methods=("broken",), include_gaussian=False)


def test_state_dependent_noise_cannot_use_retrain_plus_noise():
    """world B reuses the probe's sigma; a sigma that moves with the trained model would bias world B."""
    from unlearnkit.core import Cost, Result
    from unlearnkit.privacy import Certificate

    def fn(state, request, config, *, generator):
        sigma = 1.0 + float(state.params.norm())
        cert = Certificate(epsilon=1.0, delta=1e-5, sigma=sigma, mode="sound", mechanism="test")
        return Result(params=state.params + sigma * torch.randn(state.params.shape, generator=generator,
                                                                dtype=state.params.dtype),
                      certificate=cert, history=[], cost=Cost())

    with pytest.raises(ValueError, match="sigma="):
        AR.audit_unlearner(fn, None, task=AR.ToyTask(n_train=40, steps=5), config_audit=A.AuditConfig(n_trials=20),
                           generator=gen(0))


@pytest.mark.slow
def test_benchmark_exact_retraining_full_size():
    """The benchmark-size version of the regression test (about 1 to 3 minutes on the 2-core CPU)."""
    out = AM.audit_benchmark(methods=("retrain", "r2d_full_rewind"), n_trials=1000)
    assert out["n_audits"] == 4
    for res in out["results"]:
        assert not res.violation, str(res)
    assert math.isclose(out["alpha_family"], 0.05)
