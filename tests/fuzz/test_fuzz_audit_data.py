"""Fuzz the audit statistics and the data loaders and scalers: a clear error or a finite result."""

from __future__ import annotations

import numpy as np
import pytest
from fuzzkit import FUZZ, check_contract, junk, wild_floats, wild_ints
from hypothesis import example, given
from hypothesis import strategies as st

from unlearnkit import audit, data

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")
samples = st.one_of(st.lists(st.one_of(wild_floats, st.floats(-5, 5)), min_size=0, max_size=60),
                    st.integers(0, 60).map(lambda n: list(np.linspace(-1, 1, n))))


@FUZZ
@given(k=st.one_of(wild_ints, st.floats(0, 5), junk), n=st.one_of(wild_ints, junk), alpha=wild_floats,
       delta=wild_floats)
@example(k=None, n=10, alpha=0.05, delta=1e-5)  # a bare TypeError from int() before the fix
@example(k=1.7, n=10, alpha=0.05, delta=1e-5)  # silently truncated to 1 before the fix
def test_clopper_pearson(k, n, alpha, delta):
    names = ("k", "n", "alpha", "delta")
    bounds = check_contract(audit.bounds.clopper_pearson, k, n, alpha, names=names)
    if bounds is not None:
        assert 0.0 <= bounds[0] <= bounds[1] <= 1.0
    check_contract(audit.bounds.epsilon_lower_bound, k, n, k, n, delta=delta, names=names, allow_inf=True)


@FUZZ
@given(a=samples, b=samples, delta=wild_floats, method=st.one_of(st.sampled_from(audit.statistics.AUDIT_STATISTICS),
                                                                 st.text(max_size=3)))
def test_estimate(a, b, delta, method):
    def bounds(*args, **kw):  # tpr_at_fpr is NaN by design where too few samples measure that FPR
        est = audit.statistics.estimate(*args, **kw)
        return est.epsilon_lower, est.epsilon_point, est.auroc

    out = check_contract(bounds, a, b, delta=delta, method=method,
                         names=("samples_a", "samples_b", "delta", "method"), allow_inf=True)
    if out is not None:
        assert out[0] >= 0


@FUZZ
@given(sens=wild_floats, sigma=wild_floats, eps=wild_floats, delta=wild_floats)
@example(sens=1.0, sigma=5e-324, eps=1.0, delta=1e-300)  # gdp_epsilon: a message about "sensitivity" before
def test_gaussian_mechanism_formulas(sens, sigma, eps, delta):
    names = ("sensitivity", "sigma", "epsilon", "delta")
    check_contract(audit.mechanisms.gaussian_epsilon, sens, sigma, delta, names=names, allow_inf=True)
    check_contract(audit.mechanisms.gaussian_sigma, sens, eps, delta, names=names)
    check_contract(audit.statistics.gdp_epsilon, sigma, delta, names=("mu", "delta"), allow_inf=True)


@FUZZ
@given(n_trials=wild_ints, alpha=wild_floats, frac=wild_floats, thresholds=wild_ints)
def test_audit_config(n_trials, alpha, frac, thresholds):
    check_contract(audit.AuditConfig, n_trials=n_trials, alpha=alpha, select_fraction=frac,
                   max_thresholds=thresholds)


@FUZZ
@given(kw=st.fixed_dictionaries({}, optional={"n_train": wild_ints, "n_test": wild_ints, "dim": wild_ints,
                                              "separation": wild_floats, "flip": wild_floats}),
       seed=st.one_of(st.integers(0, 3), st.sampled_from([-1, 2**64, 10**30])))
@example(kw={"n_train": 10**12}, seed=0)  # MemoryError/RuntimeError from torch before the fix
@example(kw={}, seed=-1)  # a numpy error about the seed before the fix
def test_synthetic_loader(kw, seed):
    ds = check_contract(data.load, "synthetic", device="cpu", seed=seed, **kw,
                        names=tuple(kw) + ("seed", "device"))
    if ds is not None:
        check_contract(data.preprocess.scale_to_unit_ball, ds, names=("dataset",))


@FUZZ
@given(device=st.one_of(st.sampled_from(["cpu", "cuda", "cuda:7", "tpu", "meta", "", "mps"]), junk),
       frac=st.one_of(st.just(None), wild_floats))
@example(device="cuda", frac=None)  # a torch RuntimeError without a GPU before the fix
@example(device="tpu", frac=None)
def test_load_device(device, frac):
    kw = {} if frac is None else {"test_fraction": frac}
    check_contract(data.load, "digits", device=device, **kw, names=("device", "test_fraction"))
