"""Renyi-DP curves and conversions against dp_accounting, Opacus and exact (mpmath) integration."""

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from unlearnkit.privacy.rdp import linear_rdp
from unlearnkit.privacy.rdp import (DEFAULT_ORDERS, OrderGridWarning, compose_rdp, gaussian_rdp, rdp_to_delta,
                                    rdp_to_dp, subsampled_gaussian_rdp)

dp_rdp = pytest.importorskip("dp_accounting.rdp")
import dp_accounting  # noqa: E402

OPACUS_ALPHAS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))


def _opacus_rdp_module():
    """Opacus' RDP analysis file alone: importing the ``opacus`` package would import torch (seconds)."""
    import importlib.util

    spec = importlib.util.find_spec("opacus")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("opacus is not installed")
    path = f"{list(spec.submodule_search_locations)[0]}/accountants/analysis/rdp.py"
    mod_spec = importlib.util.spec_from_file_location("_opacus_rdp_analysis", path)
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    return mod


def _dp_accounting_curve(q, sigma, orders, count=1):
    acc = dp_rdp.RdpAccountant(list(orders))
    ev = dp_accounting.GaussianDpEvent(sigma) if q == 1 else dp_accounting.PoissonSampledDpEvent(
        q, dp_accounting.GaussianDpEvent(sigma))
    acc.compose(dp_accounting.SelfComposedDpEvent(ev, count))
    return np.asarray(acc._rdp)


def _exact_rdp(q, sigma, alpha, dps=30):
    """log E_{N(0,s^2)}[(1-q+q e^{(2z-1)/(2s^2)})^alpha] / (alpha-1) by mpmath quadrature."""
    with mp.workdps(dps):
        q, s, a = mp.mpf(q), mp.mpf(sigma), mp.mpf(alpha)
        f = lambda z: mp.exp(-z * z / (2 * s * s)) / (s * mp.sqrt(2 * mp.pi)) * (
            1 - q + q * mp.exp((2 * z - 1) / (2 * s * s))) ** a
        pts = sorted({-30 * s, mp.mpf(0), mp.mpf(1) / 2, mp.mpf(1), a, a + 30 * s})
        return float(mp.log(mp.quad(f, pts)) / (a - 1))


# -- integer orders: dp_accounting's closed form is the oracle ------------------------------------------------

INT_ORDERS = np.array(list(range(2, 64)) + [128, 256, 512, 1024], dtype=float)


@pytest.mark.parametrize("q, sigma", [(1e-4, 0.8), (1e-3, 1.0), (0.01, 2.5), (0.04, 1.5), (0.1, 0.7),
                                      (0.25, 5.0), (0.5, 1.2), (0.5, 20.0), (1.0, 3.0)])
def test_integer_orders_match_dp_accounting(q, sigma):
    ours = subsampled_gaussian_rdp(q, sigma, INT_ORDERS)
    ref = _dp_accounting_curve(q, sigma, INT_ORDERS)
    finite = np.isfinite(ref)
    # dp_accounting sums A_alpha ~ 1 + O(q^2) directly, so below rdp ~ 1e-10 its own rounding dominates
    big = finite & (ref > 1e-9)
    np.testing.assert_allclose(ours[big], ref[big], rtol=1e-6)
    np.testing.assert_allclose(ours[finite], ref[finite], rtol=1e-6, atol=1e-15)


# -- fractional orders: dp_accounting 0.6 is loose there; exact integration and Opacus are the oracles -----

FRAC_POINTS = [(0.04, 1.5, 1.5), (0.04, 1.5, 3.9), (0.01, 2.5, 2.5), (1e-4, 5.0, 1.3), (0.5, 0.7, 7.5),
               (1e-3, 0.5, 10.9), (0.2, 3.0, 1.1), (0.3, 0.3, 4.4), (0.05, 1.0, 33.3), (0.02, 8.0, 2.7)]


@pytest.mark.parametrize("q, sigma, alpha", FRAC_POINTS)
def test_fractional_orders_match_exact_integration(q, sigma, alpha):
    ours = subsampled_gaussian_rdp(q, sigma, [alpha])[0]
    assert ours == pytest.approx(_exact_rdp(q, sigma, alpha), rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(log_q=st.floats(-4, 0), sigma=st.floats(0.5, 20.0), alpha=st.integers(2, 256))
def test_random_integer_orders_match_dp_accounting(log_q, sigma, alpha):
    q = 10.0**log_q
    ref = _dp_accounting_curve(q, sigma, [alpha])[0]
    ours = subsampled_gaussian_rdp(q, sigma, [alpha])[0]
    assert ours == pytest.approx(ref, rel=1e-6, abs=1e-15)


@settings(max_examples=6, deadline=None)
@given(log_q=st.floats(-3, -0.3), sigma=st.floats(0.5, 10.0), alpha=st.floats(1.05, 12.0))
def test_random_fractional_orders_match_mpmath(log_q, sigma, alpha):
    q = 10.0**log_q
    assert subsampled_gaussian_rdp(q, sigma, [alpha])[0] == pytest.approx(_exact_rdp(q, sigma, alpha), rel=1e-8)


def test_fractional_orders_match_opacus():
    rdp_mod = _opacus_rdp_module()
    # Opacus sums a slowly (polynomially) converging series: keep this cross-check small
    for q, sigma in [(0.04, 1.5), (0.3, 0.8)]:
        frac = [a for a in OPACUS_ALPHAS if a != int(a)][::7]
        ours = subsampled_gaussian_rdp(q, sigma, frac)
        ref = np.asarray(rdp_mod.compute_rdp(q=q, noise_multiplier=sigma, steps=1, orders=frac))
        np.testing.assert_allclose(ours, ref, rtol=1e-6)


def test_dp_accounting_overestimates_at_fractional_orders():
    """The finding taught in notebook 02: dp_accounting 0.6.0 drops the sign of binom(alpha, i)."""
    q, sigma = 0.04, 1.5
    lib = _dp_accounting_curve(q, sigma, [1.5, 3.9])
    exact = [_exact_rdp(q, sigma, 1.5), _exact_rdp(q, sigma, 3.9)]
    ours = subsampled_gaussian_rdp(q, sigma, [1.5, 3.9])
    np.testing.assert_allclose(ours, exact, rtol=1e-9)
    assert np.all(lib >= ours * (1 - 1e-12))  # loose, never optimistic
    import importlib.metadata

    if importlib.metadata.version("dp-accounting") == "0.6.0":  # the version the finding is about
        assert lib[0] / exact[0] - 1 == pytest.approx(0.098, abs=0.005)  # about 10% too large at order 1.5
        assert 1e-5 < lib[1] / exact[1] - 1 < 1e-4  # about 5e-5 at order 3.9


# -- golden values ----------------------------------------------------------------------------------------------

def test_golden_opacus_rdp_epsilon():
    # opacus/tests/accountants_test.py: sigma=1.5, q=0.04, steps=int(90/0.04), delta=1e-5 -> 7.32911117143
    rdp = subsampled_gaussian_rdp(0.04, 1.5, OPACUS_ALPHAS) * int(90 / 0.04)
    eps, order = rdp_to_dp(OPACUS_ALPHAS, rdp, 1e-5, method="balle")
    assert eps == pytest.approx(7.32911117143, rel=1e-9)
    assert order == 3.9


def test_golden_dp_accounting_subsampled_curve():
    orders = [1.5, 2.5, 5, 50, 100, np.inf]
    rdp = compose_rdp([subsampled_gaussian_rdp(0.01, 2.5, orders)], [50])
    np.testing.assert_allclose(rdp[:-1], [6.5007e-4, 1.0854e-3, 2.1808e-3, 2.3846e-2, 167.42], rtol=1e-4)
    assert rdp[-1] == np.inf


def test_golden_gaussian_cks_vs_analytic():
    orders = [0.001 * i for i in range(1001, 100000)]
    rdp = gaussian_rdp(4.530877117, orders)
    eps, _ = rdp_to_dp(orders, rdp, 1e-6, method="cks")
    assert eps == pytest.approx(1.0, abs=1e-7)
    delta, _ = rdp_to_delta(orders, rdp, 1.0, method="cks")
    assert delta == pytest.approx(1e-6, rel=1e-6)
    from unlearnkit.privacy import analytic_gaussian_sigma

    assert analytic_gaussian_sigma(1.0, 1e-6) < 4.530877117  # the exact profile is tighter than any RDP route


def test_golden_constant_rdp_pure_dp():
    orders = list(range(2, 33))
    eps, order = rdp_to_dp(orders, [1.1] * len(orders), 1e-5, method="cks", warn_edge=False)
    assert eps == pytest.approx(1.32783806176, rel=1e-10)
    assert order == 32


def test_golden_tf_privacy_order_two():
    # TF-privacy / autodp: order 2, q=0.01, sigma=0.1, 1 step
    assert subsampled_gaussian_rdp(0.01, 0.1, [2])[0] == pytest.approx(90.7896596280238, rel=1e-12)


# -- conversions equal the libraries ---------------------------------------------------------------------------

@pytest.mark.parametrize("q, sigma, steps, delta", [(0.01, 1.1, 1000, 1e-5), (0.04, 1.5, 2250, 1e-5),
                                                    (0.2, 4.0, 50, 1e-6), (1.0, 10.0, 10, 1e-3)])
def test_cks_equals_dp_accounting_and_balle_equals_opacus(q, sigma, steps, delta):
    orders = np.asarray(DEFAULT_ORDERS)
    rdp = subsampled_gaussian_rdp(q, sigma, orders) * steps
    eps_ref, order_ref = dp_rdp.compute_epsilon(orders, rdp, delta)
    eps, order = rdp_to_dp(orders, rdp, delta, method="cks")
    assert eps == pytest.approx(eps_ref, rel=1e-12) and order == order_ref
    from dp_accounting.rdp.rdp_privacy_accountant import compute_delta

    d_ref, _ = compute_delta(orders, rdp, eps)
    assert rdp_to_delta(orders, rdp, eps, method="cks")[0] == pytest.approx(d_ref, rel=1e-9)
    opa = _opacus_rdp_module()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eps_o, order_o = opa.get_privacy_spent(orders=orders, rdp=rdp, delta=delta)
        eps_b, order_b = rdp_to_dp(orders, rdp, delta, method="balle")
    assert eps_b == pytest.approx(eps_o, rel=1e-12) and order_b == order_o
    eps_m, _ = rdp_to_dp(orders, rdp, delta, method="mironov")
    assert eps_m == pytest.approx(np.min(rdp + np.log(1 / delta) / (orders - 1)), rel=1e-12)


def test_epsilons_per_order_minimum_is_the_conversion():
    from unlearnkit.privacy.rdp import epsilons_per_order

    rdp = subsampled_gaussian_rdp(0.02, 1.2) * 500
    for m in ("mironov", "balle", "cks"):
        e = epsilons_per_order(DEFAULT_ORDERS, rdp, 1e-6, m)
        eps, order = rdp_to_dp(DEFAULT_ORDERS, rdp, 1e-6, method=m)
        assert e.min() == eps and DEFAULT_ORDERS[int(np.argmin(e))] == order


def test_edge_of_grid_warns():
    with pytest.warns(OrderGridWarning, match="largest"):
        rdp_to_dp([2, 3, 4], gaussian_rdp(100.0, [2, 3, 4]), 1e-5)
    with pytest.warns(OrderGridWarning, match="smallest"):
        rdp_to_dp([2, 3, 4], gaussian_rdp(0.05, [2, 3, 4]), 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rdp_to_dp(DEFAULT_ORDERS, subsampled_gaussian_rdp(0.01, 1.0) * 100, 1e-5)


def test_small_q_large_order_stability():
    # A_alpha = 1 + O(q^2): the leading term of the RDP for tiny q is alpha q^2 (e^{1/s^2} - 1) / 2 per step
    q, sigma = 1e-7, 2.0
    r = subsampled_gaussian_rdp(q, sigma, [2.0, 2.5, 3.0])
    assert r[0] == pytest.approx(math.log1p(q * q * math.expm1(1 / sigma**2)), rel=1e-12)
    assert np.all(np.isfinite(subsampled_gaussian_rdp(0.3, 0.2, [1024, 4096.5])))
    assert np.all(np.diff(r) > 0)


def test_linear_curve_and_composition():
    assert np.array_equal(linear_rdp(0.5, [2, 4]), [1.0, 2.0])
    c = compose_rdp([gaussian_rdp(2.0, [2, 3]), linear_rdp(0.1, [2, 3])], [3, 2])
    np.testing.assert_allclose(c, 3 * np.array([2, 3]) / 8 + 2 * np.array([0.2, 0.3]))


# -- properties ------------------------------------------------------------------------------------------------

ORD = np.array([1.5, 2, 3, 4.5, 8, 16, 32, 64])


@settings(max_examples=40, deadline=None)
@given(q=st.floats(1e-4, 1.0), s1=st.floats(0.3, 30.0), ratio=st.floats(1.01, 3.0),
       steps=st.integers(1, 10_000), log_delta=st.floats(-12, -2))
def test_epsilon_monotone_in_sigma_steps_and_q(q, s1, ratio, steps, log_delta):
    delta = 10.0**log_delta
    e = lambda qq, ss, tt: rdp_to_dp(ORD, subsampled_gaussian_rdp(qq, ss, ORD) * tt, delta, warn_edge=False)[0]
    base = e(q, s1, steps)
    assert e(q, s1 * ratio, steps) <= base + 1e-12
    assert e(q, s1, steps + 1) >= base - 1e-12
    assert e(min(1.0, q * ratio), s1, steps) >= base - 1e-12


@settings(max_examples=40, deadline=None)
@given(q=st.floats(1e-4, 1.0), sigma=st.floats(0.3, 30.0), steps=st.integers(1, 10_000),
       log_delta=st.floats(-12, -1))
def test_conversion_ordering(q, sigma, steps, log_delta):
    delta = 10.0**log_delta
    rdp = subsampled_gaussian_rdp(q, sigma, ORD) * steps
    c, b, m = (rdp_to_dp(ORD, rdp, delta, method=k, warn_edge=False)[0] for k in ("cks", "balle", "mironov"))
    assert c <= b + 1e-12 <= m + 2e-12


@settings(max_examples=30, deadline=None)
@given(q=st.floats(1e-3, 0.9), sigma=st.floats(0.5, 10.0))
def test_subsampling_amplifies(q, sigma):
    sub = subsampled_gaussian_rdp(q, sigma, ORD)
    full = gaussian_rdp(sigma, ORD)
    assert np.all(sub <= full * (1 + 1e-12))
    assert np.all(np.diff(sub) >= -1e-15)  # RDP is non-decreasing in the order


# -- bad input -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: subsampled_gaussian_rdp(0.0, 1.0, [2]), "q"),
        (lambda: subsampled_gaussian_rdp(1.5, 1.0, [2]), "q"),
        (lambda: subsampled_gaussian_rdp(0.1, 0.0, [2]), "sigma"),
        (lambda: subsampled_gaussian_rdp(0.1, -1.0, [2]), "sigma"),
        (lambda: subsampled_gaussian_rdp(0.1, 1.0, [1.0, 2]), "order"),
        (lambda: gaussian_rdp(1.0, [0.5]), "order"),
        (lambda: gaussian_rdp(1.0, []), "orders"),
        (lambda: rdp_to_dp([2, 3], [0.1, 0.2], 0.0), "delta"),
        (lambda: rdp_to_dp([2, 3], [0.1, 0.2], 1.0), "delta"),
        (lambda: rdp_to_dp([2, 3], [0.1], 1e-5), "rdp"),
        (lambda: rdp_to_dp([2, 3], [0.1, 0.2], 1e-5, method="zcdp"), "method"),
        (lambda: rdp_to_delta([2, 3], [0.1, 0.2], -1.0), "epsilon"),
        (lambda: linear_rdp(-1.0, [2]), "rho"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_mpmath_oracle_function_matches_independent_integration():
    from unlearnkit.privacy.rdp import subsampled_gaussian_rdp_mpmath

    assert subsampled_gaussian_rdp_mpmath(0.04, 1.5, 1.5) == pytest.approx(_exact_rdp(0.04, 1.5, 1.5), rel=1e-12)
    with pytest.raises(ValueError, match="order"):
        subsampled_gaussian_rdp_mpmath(0.04, 1.5, 1.0)
