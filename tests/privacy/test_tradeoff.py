"""GDP trade-off functions and the mu of a Gaussian certificate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from unlearnkit.privacy import gaussian_composition_epsilon, pld_epsilon
from unlearnkit.privacy.tradeoff import gaussian_certificate_mu, gdp_tradeoff


def test_tradeoff_ends_and_symmetry():
    alpha = np.linspace(0.0, 1.0, 201)
    assert np.allclose(gdp_tradeoff(0.0, alpha), 1.0 - alpha)
    beta = gdp_tradeoff(1.0, alpha)
    assert beta[0] == pytest.approx(1.0) and beta[-1] == pytest.approx(0.0)
    assert np.all(np.diff(beta) <= 1e-15)  # non-increasing
    # G_mu is symmetric: G_mu(G_mu(alpha)) = alpha (Dong, Roth & Su, Prop. 2.4)
    assert np.allclose(gdp_tradeoff(1.0, beta), alpha, atol=1e-9)
    assert gdp_tradeoff(2.0, 0.05) == pytest.approx(stats.norm.cdf(stats.norm.ppf(0.95) - 2.0))
    assert gdp_tradeoff(math.inf, 0.3) == 0.0


def test_certificate_mu_matches_the_composition_and_the_pld():
    mu = gaussian_certificate_mu(10.0, 1.0, steps=100)
    assert mu == pytest.approx(1.0)
    exact = gaussian_composition_epsilon([mu], 1e-5)
    b = pld_epsilon(1.0, 10.0, 100, 1e-5)
    assert b.lower <= exact <= b.upper
    assert gaussian_certificate_mu(3.0, sensitivity=1.5) == pytest.approx(0.5)


@pytest.mark.parametrize("call, name", [
    (lambda: gdp_tradeoff(-1.0, 0.1), "mu="),
    (lambda: gdp_tradeoff(1.0, [0.1, 1.2]), "alpha"),
    (lambda: gaussian_certificate_mu(0.0), "sigma="),
    (lambda: gaussian_certificate_mu(1.0, steps=0), "steps="),
])
def test_errors_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---- (epsilon, delta) curves and an audit's operating points -----------------------------------------------

from unlearnkit.privacy import dp_tradeoff
from unlearnkit.privacy.tradeoff import tradeoff_operating_points


def test_dp_tradeoff_lies_below_the_gdp_curve_of_the_same_sigma():
    # a Gaussian calibrated to (1, 1e-5) is mu-GDP; its (eps, delta) curve is weaker and touches G_mu once
    from unlearnkit.privacy import analytic_gaussian_sigma

    mu = gaussian_certificate_mu(analytic_gaussian_sigma(1.0, 1e-5))
    alpha = np.linspace(0.0, 1.0, 2001)
    f, g = dp_tradeoff(1.0, 1e-5, alpha), gdp_tradeoff(mu, alpha)
    assert np.all(f <= g + 1e-12)
    assert np.min(g - f) < 1e-3  # tangent somewhere: the pair is the curve's supporting line
    assert dp_tradeoff(0.0, 0.0, 0.3) == pytest.approx(0.7)
    assert dp_tradeoff(2.0, 0.1, 1.0) == 0.0


def _points(mu, n, seed, **kw):
    rng = np.random.default_rng(seed)
    return tradeoff_operating_points(rng.normal(0.0, 1.0, n), rng.normal(mu, 1.0, n), **kw)


def test_boxes_contain_the_true_curve_and_refute_only_smaller_mu():
    mu = 1.5
    pts = _points(mu, 2000, 0)
    assert np.all(np.diff(pts.fpr) > 0) and pts.sign == 1.0
    assert np.all((pts.fpr_low <= pts.fpr) & (pts.fpr <= pts.fpr_high))
    assert np.all((pts.fnr_low <= pts.fnr) & (pts.fnr <= pts.fnr_high))
    # the true operating point of the threshold lies in each box (the boxes hold jointly at 95 %)
    from scipy import stats as st
    true_fpr, true_fnr = st.norm.sf(pts.thresholds), st.norm.cdf(pts.thresholds - mu)
    assert np.all((pts.fpr_low <= true_fpr) & (true_fpr <= pts.fpr_high))
    assert np.all((pts.fnr_low <= true_fnr) & (true_fnr <= pts.fnr_high))
    assert not pts.refutes(lambda a: gdp_tradeoff(mu, a)).any()      # an honest claim is not refuted
    assert 0.8 < pts.mu_lower < mu                                        # the audit sees most of mu
    assert pts.refutes(lambda a: gdp_tradeoff(0.5, a)).any()          # an understated mu is refuted


def test_orientation_is_found_and_tiny_samples_merge_ranks():
    pts = _points(-2.0, 500, 1, n_points=40)
    assert pts.sign == -1.0 and pts.mu_lower > 1.0
    small = _points(1.0, 20, 2, n_points=50)
    assert small.fpr.size <= 20 and np.all(np.diff(small.fpr) > 0)


def test_coverage_of_the_joint_boxes():
    # over many audits of the same pair, all boxes contain the truth at least 1 - alpha of the time
    from scipy import stats as st
    mu, misses, runs = 1.0, 0, 200
    for seed in range(runs):
        pts = _points(mu, 200, 100 + seed, alpha=0.2)
        tf, tn = st.norm.sf(pts.thresholds), st.norm.cdf(pts.thresholds - mu)
        ok = (pts.fpr_low <= tf) & (tf <= pts.fpr_high) & (pts.fnr_low <= tn) & (tn <= pts.fnr_high)
        misses += not ok.all()
    assert misses / runs <= 0.2


@pytest.mark.parametrize("call, name", [
    (lambda: dp_tradeoff(-1.0, 1e-5, 0.1), "epsilon="),
    (lambda: dp_tradeoff(1.0, 2.0, 0.1), "delta="),
    (lambda: dp_tradeoff(1.0, 1e-5, -0.1), "alpha"),
    (lambda: tradeoff_operating_points(np.zeros(10), np.zeros(30)), "scores_out"),
    (lambda: tradeoff_operating_points(np.zeros(30), [np.nan] * 30), "scores_in"),
    (lambda: tradeoff_operating_points(np.zeros(30), np.zeros(30), alpha=1.0), "alpha="),
    (lambda: tradeoff_operating_points(np.zeros(30), np.zeros(30), n_points=0), "n_points="),
])
def test_new_errors_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_pld_tradeoff_is_the_gdp_curve_for_gaussians_and_a_valid_promise():
    from unlearnkit.privacy import PLD
    from unlearnkit.privacy.tradeoff import pld_tradeoff

    alpha = np.linspace(0.0, 1.0, 51)
    f = pld_tradeoff(PLD.gaussian(2.0).self_compose(4), alpha)   # exactly 1-GDP
    g = gdp_tradeoff(1.0, alpha)
    assert np.all(f <= g + 1e-9) and np.max(g - f) < 2e-3          # below the truth (a promise), and close
    pld = PLD.subsampled_gaussian(0.05, 1.0).self_compose(200)
    b = pld.epsilon(1e-5)
    assert np.all(pld_tradeoff(pld, alpha) >= dp_tradeoff(b.upper, 1e-5, alpha) - 1e-9)  # says more than one pair
    assert pld_tradeoff(pld, 0.0) == pytest.approx(1.0, abs=1e-4) and pld_tradeoff(pld, 1.0) == 0.0
    with pytest.raises(TypeError, match="pld="):
        pld_tradeoff(1.0, alpha)
    with pytest.raises(ValueError, match="n_eps="):
        pld_tradeoff(pld, alpha, n_eps=1)
