"""Gaussian mechanism: pinned values, the exact profile, classic vs analytic, relaxed (Lemma 4.4)."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from unlearnkit.privacy import analytic_gaussian_epsilon, analytic_gaussian_sigma, classic_gaussian_sigma
from unlearnkit.privacy.gaussian import (ClassicGaussianRangeWarning, gaussian_delta, relaxed_gaussian_sigma,
                                         theta_epsilon, zcdp_gaussian_sigma)


def test_analytic_sigma_golden_dp_accounting():
    # dp_accounting's test comment: the exact Gaussian needs only sigma = 4.22467888933 for (1, 1e-6)
    assert analytic_gaussian_sigma(1.0, 1e-6) == pytest.approx(4.22467888933, rel=1e-10)


def test_analytic_sigma_scales_with_sensitivity():
    assert analytic_gaussian_sigma(0.7, 1e-5, 3.0) == pytest.approx(3.0 * analytic_gaussian_sigma(0.7, 1e-5), rel=1e-12)


def test_profile_matches_direct_formula():
    from scipy.stats import norm

    for eps, sigma, d in [(0.5, 2.0, 1.0), (1.0, 4.0, 1.0), (3.0, 0.8, 2.0), (0.0, 1.0, 1.0)]:
        a = d / (2 * sigma) - eps * sigma / d
        b = -d / (2 * sigma) - eps * sigma / d
        expected = norm.cdf(a) - math.exp(eps) * norm.cdf(b)
        assert gaussian_delta(eps, sigma, d) == pytest.approx(expected, rel=1e-10, abs=1e-300)


def test_profile_vectorised_and_decreasing_in_epsilon():
    eps = np.linspace(0, 5, 50)
    d = gaussian_delta(eps, 1.3)
    assert d.shape == eps.shape
    assert np.all(np.diff(d) < 0)


def test_theta_epsilon_digest_values():
    # digest 004 section 1.3: theta_1(r) at r = 0.5, 1, 2, 3, 4
    got = theta_epsilon(1.0, np.array([0.5, 1, 2, 3, 4]))
    np.testing.assert_allclose(got, [0.00683, 0.1269, 0.5099, 0.7876, 0.9267], atol=6e-5)
    assert theta_epsilon(1.0, 0.0) == 0.0
    assert theta_epsilon(1.0, 2.0) == pytest.approx(gaussian_delta(1.0, 1.0, 2.0), rel=1e-14)


def test_classic_formula_value_and_range_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = classic_gaussian_sigma(0.5, 1e-5, 2.0)
    assert s == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-14)
    with pytest.warns(ClassicGaussianRangeWarning, match="does NOT hold"):
        s10 = classic_gaussian_sigma(10.0, 1e-5)
    # at (10, 1e-5) the classic sigma under-noises: the exact profile exceeds the target
    assert gaussian_delta(10.0, s10) > 1e-5
    with pytest.warns(ClassicGaussianRangeWarning, match="still holds"):
        classic_gaussian_sigma(1.0, 1e-5)
    # digest 004 section 3.6: OP with sensitivity 2 C0 at (1, 1e-5): classic 9.69, analytic 7.46
    assert classic_gaussian_sigma(1.0, 1e-5, 2.0, warn=False) == pytest.approx(9.6896, abs=1e-3)
    assert analytic_gaussian_sigma(1.0, 1e-5, 2.0) == pytest.approx(7.4613, abs=1e-3)


def test_analytic_epsilon_inverse_and_zero_case():
    s = analytic_gaussian_sigma(2.0, 1e-7)
    assert analytic_gaussian_epsilon(s, 1e-7) == pytest.approx(2.0, rel=1e-9)
    # huge noise: already (0, delta)-DP
    assert analytic_gaussian_epsilon(1e6, 0.1) == 0.0


def test_zcdp_sigma_is_valid_but_looser():
    for eps, delta in [(0.5, 1e-5), (1.0, 1e-6), (4.0, 1e-3)]:
        s = zcdp_gaussian_sigma(eps, delta)
        assert s >= analytic_gaussian_sigma(eps, delta)
        assert gaussian_delta(eps, s) <= delta


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(1e-3, 30.0), log_delta=st.floats(-14.0, -0.3), sens=st.floats(0.01, 100.0))
def test_analytic_sigma_hits_target_and_never_overshoots(eps, log_delta, sens):
    delta = 10.0**log_delta
    s = analytic_gaussian_sigma(eps, delta, sens)
    got = gaussian_delta(eps, s, sens)
    assert got <= delta
    assert got == pytest.approx(delta, rel=1e-8)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(1e-3, 0.999), log_delta=st.floats(-14.0, -0.3))
def test_analytic_below_classic_where_classic_is_valid(eps, log_delta):
    delta = 10.0**log_delta
    c = classic_gaussian_sigma(eps, delta)
    assert analytic_gaussian_sigma(eps, delta) <= c
    assert gaussian_delta(eps, c) <= delta  # Dwork & Roth Thm A.1 holds on eps < 1


def test_relaxed_gaussian_digest_003_values():
    # digest 003 section 3.7: PSGD-R2D, eps=1, delta=1e-3, first moment
    assert relaxed_gaussian_sigma(1.0, 1e-3, first_moment=2.49874).sigma == pytest.approx(19768.9, rel=1e-5)
    assert relaxed_gaussian_sigma(1.0, 1e-3, first_moment=0.197536).sigma == pytest.approx(1562.81, rel=1e-5)
    assert relaxed_gaussian_sigma(1.0, 1e-3, first_moment=12.5).sigma == pytest.approx(98894.2, rel=1e-5)
    assert relaxed_gaussian_sigma(1.0, 1e-3, first_moment=0.0).sigma == 0.0


def test_relaxed_gaussian_boxed_formulas_and_split():
    eps, delta, d1, d2 = 0.5, 1e-4, 0.3, 0.7
    r1 = relaxed_gaussian_sigma(eps, delta, first_moment=d1)
    assert r1.sigma == pytest.approx(2 * d1 / delta * math.sqrt(2 * math.log(2.5 / delta)) / eps, rel=1e-12)
    r2 = relaxed_gaussian_sigma(eps, delta, second_moment=d2)
    assert r2.sigma == pytest.approx(2 * d2 / eps * math.sqrt(math.log(2.5 / delta) / delta), rel=1e-12)
    assert r2.delta_tail + r2.delta_gauss == pytest.approx(delta)
    # the cost of "in expectation": second moment is far cheaper than first (digest: x460 vs x205821 at 1e-5)
    assert r2.sigma / d2 < r1.sigma / d1
    best = relaxed_gaussian_sigma(eps, delta, first_moment=d1, mechanism="analytic", tail_fraction="optimal")
    half = relaxed_gaussian_sigma(eps, delta, first_moment=d1, mechanism="analytic")
    assert best.sigma <= half.sigma
    # the Gaussian part of the guarantee holds exactly at the chosen threshold
    assert gaussian_delta(eps, best.sigma, best.threshold) <= best.delta_gauss * (1 + 1e-9)


def test_relaxed_markov_split_monte_carlo():
    """Simulate X - Y with E||X - Y|| = d1 and check the mixture is (eps, delta)-close on a tail event set."""
    rng = np.random.default_rng(0)
    eps, delta, d1 = 1.0, 0.05, 0.01
    r = relaxed_gaussian_sigma(eps, delta, first_moment=d1, mechanism="analytic")
    # worst case for Markov: mass delta_tail at distance t, rest at 0
    dist = np.where(rng.random(200_000) < r.delta_tail, r.threshold, 0.0)
    assert dist.mean() == pytest.approx(d1, rel=0.1)
    from scipy.stats import norm

    # 1-D exact: P(X+Z > c) vs e^eps P(Y+Z > c) for many c, Y = 0, X = dist
    for c in np.linspace(0, 10 * r.sigma, 25):
        px = np.mean(norm.sf(c - dist, scale=r.sigma))
        py = norm.sf(c, scale=r.sigma)
        assert px <= math.exp(eps) * py + delta + 3e-3


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: classic_gaussian_sigma(0.0, 1e-5), "epsilon"),
        (lambda: classic_gaussian_sigma(-1.0, 1e-5), "epsilon"),
        (lambda: classic_gaussian_sigma(0.5, 0.0), "delta"),
        (lambda: classic_gaussian_sigma(0.5, 1.0), "delta"),
        (lambda: analytic_gaussian_sigma(1.0, 1.5), "delta"),
        (lambda: analytic_gaussian_sigma(1.0, 1e-5, 0.0), "sensitivity"),
        (lambda: gaussian_delta(1.0, 0.0), "sigma"),
        (lambda: gaussian_delta(-1.0, 1.0), "epsilon"),
        (lambda: analytic_gaussian_epsilon(-2.0, 1e-5), "sigma"),
        (lambda: theta_epsilon(1.0, -1.0), "r"),
        (lambda: relaxed_gaussian_sigma(1.0, 1e-3), "first_moment"),
        (lambda: relaxed_gaussian_sigma(1.0, 1e-3, first_moment=-1.0), "first_moment"),
        (lambda: relaxed_gaussian_sigma(1.0, 1e-3, first_moment=1.0, tail_fraction=1.0), "tail_fraction"),
        (lambda: relaxed_gaussian_sigma(1.0, 1e-3, first_moment=1.0, mechanism="laplace"), "mechanism"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
