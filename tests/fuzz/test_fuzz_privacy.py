"""Fuzz the privacy accountants and calibrations: a clear error or a non-NaN result, never a hang."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from fuzzkit import CALL_SECONDS, FUZZ, check_contract, junk, pos_floats, time_limit, wild_floats, wild_ints
from hypothesis import example, given, settings
from hypothesis import strategies as st

from unlearnkit import privacy as P

warnings.filterwarnings("ignore", category=RuntimeWarning)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")

eps_s = st.one_of(wild_floats, pos_floats)
delta_s = st.one_of(wild_floats, st.floats(1e-300, 0.5), st.sampled_from([1e-5, 1e-300, 0.999999]))
sigma_s = st.one_of(wild_floats, pos_floats)
# subsampled curves at sigma < 0.1 are correct but take seconds each (fractional-order integration): not fuzzed
acc_sigma_s = st.one_of(st.floats(0.1, 1e100), st.sampled_from([0.0, -1.0, 5e-324, 1e-300, 1e-160, 1e300, 1e308,
                                                                  math.nan, math.inf, -math.inf]))


@FUZZ
@given(eps=eps_s, delta=delta_s)
@example(eps=1e-300, delta=1e-5)  # zcdp_gaussian_sigma: ZeroDivisionError before the fix
@example(eps=1e-300, delta=0.999999)  # mixture_sigma: OverflowError before the fix
@example(eps=1e308, delta=1e-300)
def test_sigma_calibrations(eps, delta):
    for fn in (P.classic_gaussian_sigma, P.analytic_gaussian_sigma, P.gaussian.zcdp_gaussian_sigma,
               P.gaussian.relaxed_gaussian_sigma):
        check_contract(fn, eps, delta, names=("epsilon", "delta", "sigma"))
    check_contract(P.linear_rdp.linear_rdp_slope, eps, delta, names=("epsilon", "delta"))
    check_contract(P.mixture.mixture_sigma, eps, delta, [0.5, 0.5], names=("epsilon", "delta", "sigma"))


@FUZZ
@given(sigma=sigma_s, delta=delta_s, q=st.one_of(wild_floats, st.floats(1e-6, 1.0)))
@example(sigma=1e308, delta=1e-5, q=0.01)  # gaussian_rdp, mixture_epsilon: OverflowError before the fix
@example(sigma=1e154, delta=1e-5, q=0.01)  # gaussian_composition_epsilon: a message about "sensitivity"
def test_epsilon_of_sigma(sigma, delta, q):
    names = ("sigma", "delta", "q", "sample_rate", "mu")
    check_contract(P.analytic_gaussian_epsilon, sigma, delta, names=names, allow_inf=True)
    check_contract(P.rdp.gaussian_rdp, sigma, names=names, allow_inf=True)
    check_contract(P.gaussian_composition_epsilon, [sigma], delta, names=names + ("mus",), allow_inf=True)
    check_contract(P.mixture_epsilon, delta, [0.5, 0.5], sigma, names=names + ("mu_per_step",), allow_inf=True)


@FUZZ
@given(sigma=acc_sigma_s, delta=delta_s, q=st.one_of(wild_floats, st.floats(1e-6, 1.0)))
@example(sigma=1e-300, delta=1e-5, q=0.01)  # subsampled_gaussian_rdp: ZeroDivisionError before the fix
@example(sigma=1e308, delta=1e-5, q=0.01)  # OverflowError before the fix
@example(sigma=1e-160, delta=1e-5, q=0.01)  # "cannot convert float infinity to integer" before the fix
def test_subsampled_epsilon_of_sigma(sigma, delta, q):
    names = ("sigma", "delta", "q", "sample_rate")
    check_contract(P.rdp.subsampled_gaussian_rdp, q, sigma, names=names, allow_inf=True)
    check_contract(P.dpsgd_epsilon, sigma, q, 10, delta, names=names, allow_inf=True)


@settings(FUZZ, deadline=12_000)  # one refusal evaluates the floor (about 2 s); the alarm bounds each call
@given(eps=st.one_of(eps_s, st.sampled_from([1e8, 1e308, 1e-300])), q=st.one_of(wild_floats, st.floats(1e-4, 1.0)),
       steps=wild_ints)
@example(eps=1e308, q=0.01, steps=100)  # never returned before the fix
@example(eps=1e8, q=0.01, steps=100)  # 115 s before the fix
def test_get_noise_multiplier_is_bounded(eps, q, steps):
    check_contract(P.get_noise_multiplier, target_epsilon=eps, target_delta=1e-5, sample_rate=q, steps=steps,
                   names=("target_epsilon", "sample_rate", "steps", "sigma"), seconds=10.0)


@FUZZ
@given(target=eps_s, hint=st.one_of(wild_floats, pos_floats))
def test_calibrate_sigma(target, hint):
    check_contract(P.calibrate_sigma, lambda s: 1.0 / s, target, sigma_hint=hint,
                   names=("target_epsilon", "sigma_hint", "sigma"))


curve = st.lists(st.one_of(wild_floats, st.floats(0, 10)), min_size=3, max_size=3)


@FUZZ
@given(curves=st.lists(curve, min_size=0, max_size=3), counts=st.one_of(st.none(), st.lists(
    st.one_of(wild_ints, st.floats(-2, 2), junk), min_size=0, max_size=3)))
@example(curves=[[float("nan"), 1.0, 1.0]], counts=None)  # NaN curve accepted before the fix
@example(curves=[[-1.0, 1.0, 1.0]], counts=None)  # negative curve accepted before the fix
@example(curves=[[1.0, 1.0, 1.0]], counts=[0.5])  # fractional count accepted before the fix
def test_compose_rdp(curves, counts):
    out = check_contract(P.rdp.compose_rdp, curves, counts, names=("curve", "count"), allow_inf=True)
    if out is not None:
        assert np.all(out >= 0)


@FUZZ
@given(sigma=acc_sigma_s, q=st.one_of(wild_floats, st.floats(1e-4, 1.0)), count=wild_ints, delta=delta_s,
       orders=st.one_of(st.just(None), st.lists(wild_floats, min_size=0, max_size=3)))
def test_accountant(sigma, q, count, delta, orders):
    acc = check_contract(lambda: P.RDPAccountant() if orders is None else P.RDPAccountant(orders),
                         names=("orders",))
    if acc is None:
        return
    ev = check_contract(P.accountant.SubsampledGaussianEvent, q, sigma, names=("q", "sigma"))
    if ev is None:
        return
    if check_contract(acc.compose, ev, count, names=("count",)) is None and count not in range(0, 41):
        return
    check_contract(acc.epsilon, delta, names=("delta",), allow_inf=True)


@FUZZ
@given(C0=wild_floats, C1=wild_floats, gamma=wild_floats, lam=wild_floats, T=wild_ints, sigma=sigma_s)
@example(C0=1.0, C1=1.0, gamma=0.1, lam=1e-308, T=10, sigma=1.0)
@example(C0=1e300, C1=0.0, gamma=5e-324, lam=0.0, T=1, sigma=5e-324)  # once an OverflowError, now rho = inf
def test_amplification(C0, C1, gamma, lam, T, sigma):
    check_contract(P.amplification.gradient_clipping_rho, C0, C1, gamma, lam, T, sigma,
                   names=("C0", "C1", "gamma", "lam", "T", "sigma"), allow_inf=True)


@FUZZ
@given(p=wild_floats, n=wild_ints, tail=wild_floats, hops=wild_ints)
def test_walk_amplification(p, n, tail, hops):
    check_contract(P.amplification.first_observation_rate, p, n, names=("p", "n_nodes"))
    check_contract(P.amplification.expected_inverse_delay, p, n, names=("p", "n_nodes"))
    check_contract(P.amplification.visit_count_bound, hops, p, tail, names=("n_hops", "p", "tail"))


# ---- dpsgd_epsilon at tiny noise multipliers: hopeless orders skipped, the answer unchanged

def _unpruned(sigma, q, steps, delta, orders=P.rdp.DEFAULT_ORDERS, method="cks"):
    """The minimum over every order of the composed curve, each fractional order integrated."""
    a = np.asarray(orders, dtype=float)
    return P.rdp.rdp_to_dp(a, P.rdp.subsampled_gaussian_rdp(q, sigma, a) * steps, delta, method=method, warn_edge=False)[0]


@settings(FUZZ, max_examples=12, deadline=None)
@given(log_sigma=st.floats(-8, -1), q=st.floats(1e-4, 0.9), steps=st.integers(1, 10_000),
       delta=st.floats(1e-12, 0.1), method=st.sampled_from(P.rdp.CONVERSIONS))
@example(log_sigma=-4.0, q=0.01, steps=100, delta=1e-5, method="cks")  # 2-6 s before orders were skipped
def test_dpsgd_epsilon_at_a_tiny_noise_multiplier_is_prompt(log_sigma, q, steps, delta, method):
    check_contract(P.dpsgd_epsilon, 10.0**log_sigma, q, steps, delta, method=method, seconds=CALL_SECONDS / 2,
                   names=("sigma",), allow_inf=True)


@pytest.mark.parametrize("sigma", [1e-4, 3e-3])
def test_skipping_hopeless_orders_keeps_the_epsilon_bit_for_bit(sigma):
    assert P.dpsgd_epsilon(sigma, 0.01, 100, 1e-5) == _unpruned(sigma, 0.01, 100, 1e-5)


@settings(FUZZ, max_examples=25, deadline=None)
@given(log_sigma=st.floats(-1, 1.5), log_q=st.floats(-4, 0), steps=st.integers(1, 10_000),
       log_delta=st.floats(-12, -1), method=st.sampled_from(P.rdp.CONVERSIONS), opacus=st.booleans())
def test_dpsgd_epsilon_equals_the_minimum_over_every_order(log_sigma, log_q, steps, log_delta, method, opacus):
    orders = P.calibrate.OPACUS_ORDERS if opacus else P.rdp.DEFAULT_ORDERS
    args = (10.0**log_sigma, 10.0**log_q, steps, 10.0**log_delta)
    assert P.dpsgd_epsilon(*args, orders=orders, method=method) == _unpruned(*args, orders=orders, method=method)


def test_thousands_of_fractional_orders_at_a_tiny_sigma_are_refused_at_once():
    orders = np.linspace(1.001, 1.999, 1000)
    with pytest.raises(ValueError, match=r"orders has 1000 fractional orders.*sigma=0\.0001.*MAX_QUADRATURE_WORK"
                                         r".*at most 500 fractional orders"), time_limit(1.0):
        P.rdp.subsampled_gaussian_rdp(0.01, 1e-4, orders)
