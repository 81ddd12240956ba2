"""The audit-statistics menu (issue 15, item 2) and the one-run canary bound (item 3).

Validation on Gaussian mechanisms of known epsilon: a calibrated (1, 1e-5) mechanism is refuted in at most
5 % of independent repetitions, one with 1/8 of the noise in all of them, for every statistic; the GDP-shape
estimate gets closer to the true epsilon than Clopper-Pearson at the same sample size (peers-2 anchor: at
10,000 trials per world, CP with Bonferroni about 0.25, GDP about 0.80). The one-run bound is pinned to its
closed form at delta = 0 and to the ceilings in peers-2 (100 / 1,000 canaries all right: 3.49 / 5.78).
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from unlearnkit import audit as A

SIGMA = A.mechanisms.gaussian_sigma(1.0, 1.0, 1e-5)  # 3.7306..., the analytic calibration of (1, 1e-5)
METHODS = A.statistics.AUDIT_STATISTICS


def _worlds(rng, n, sigma):
    """Ideal attacker on the Gaussian mechanism: the 1-D output itself (the likelihood-ratio statistic)."""
    return rng.normal(1.0, sigma, n), rng.normal(0.0, sigma, n)


def _refutations(method, sigma, reps, n, seed):
    rng = np.random.default_rng(seed)
    return sum(A.statistics.estimate(*_worlds(rng, n, sigma), delta=1e-5, method=method).epsilon_lower > 1.0
               for _ in range(reps))


# --------------------------------------------------------------------------------------------------------
# Validation on Gaussian mechanisms of known epsilon
# --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_calibrated_gaussian_is_refuted_in_at_most_5_percent_of_repetitions(method):
    assert _refutations(method, SIGMA, reps=40, n=1000, seed=11) <= 2  # 5 % of 40


@pytest.mark.parametrize("method", METHODS)
def test_under_noised_gaussian_is_refuted_every_time(method):
    assert _refutations(method, SIGMA / 8, reps=40, n=500, seed=12) == 40


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_calibrated_gaussian_validation_400_repetitions(method):
    assert _refutations(method, SIGMA, reps=400, n=2000, seed=13) <= 20


def test_gdp_mu_lower_bound_covers_the_true_mu():
    """The mu bound needs no assumption: it exceeds the true mu (0.268) in at most ~5 % of repetitions."""
    mu = 1.0 / SIGMA
    rng = np.random.default_rng(14)
    lows = [A.statistics.estimate(*_worlds(rng, 2000, SIGMA), delta=1e-5, method="gdp").mu_lower for _ in range(100)]
    assert sum(m > mu for m in lows) <= 5  # Bonferroni over 124 tests makes it conservative: expect ~0
    assert np.median(lows) > 0.25 * mu  # and it is not vacuous (measured median 0.10 at 2,000 per world)


def test_gdp_gets_closer_to_the_true_epsilon_than_clopper_pearson():
    """peers-2 section 3: 10,000 trials per world, ideal attacker, (1, 1e-5): CP ~0.25, GDP ~0.80."""
    rng = np.random.default_rng(15)
    out = {m: [] for m in METHODS}
    for _ in range(3):
        a, b = _worlds(rng, 10_000, SIGMA)
        for m in METHODS:
            out[m].append(A.statistics.estimate(a, b, delta=1e-5, method=m).epsilon_lower)
    mean = {m: float(np.mean(v)) for m, v in out.items()}
    assert 0.1 < mean["cp_bonferroni"] < 0.5, mean  # measured 0.29 (peers-2: 0.25)
    assert 0.1 < mean["cp_split"] < 0.5, mean  # measured ~0.2
    assert 0.55 < mean["gdp"] < 1.0, mean  # measured ~0.7 (peers-2: 0.80); below the true 1.0
    assert mean["gdp"] > mean["cp_bonferroni"] + 0.2 and mean["gdp"] > mean["cp_split"] + 0.2


def test_validate_statistics_reports_the_figures():
    rows = A.validation.validate_statistics(n_trials=(200,), reps=3, seed=1)
    assert [r["method"] for r in rows] == list(METHODS)
    assert all(r["refuted_under"] == 1.0 and r["refuted_calibrated"] == 0.0 for r in rows)
    assert rows[0]["true_epsilon"] == pytest.approx(1.0)


@pytest.mark.slow
def test_gdp_versus_cp_at_100k_trials():
    """peers-2: CP with Bonferroni 0.49, GDP 0.94 at 100,000 trials per world."""
    rng = np.random.default_rng(16)
    a, b = _worlds(rng, 100_000, SIGMA)
    cp = A.statistics.estimate(a, b, delta=1e-5, method="cp_bonferroni").epsilon_lower
    gdp = A.statistics.estimate(a, b, delta=1e-5, method="gdp").epsilon_lower
    assert 0.35 < cp < 0.7 and 0.8 < gdp < 1.0


# --------------------------------------------------------------------------------------------------------
# Behaviour and properties
# --------------------------------------------------------------------------------------------------------

def test_default_audit_numbers_are_unchanged():
    """``method="cp_split"`` is the default and gives exactly what the audit gave before the menu."""
    g = torch.Generator().manual_seed(3)
    res = A.audit_gaussian(sensitivity=1.0, sigma=0.5, epsilon=1.0, delta=1e-5, generator=g,
                           config=A.AuditConfig(n_trials=400))
    g = torch.Generator().manual_seed(3)
    res2 = A.audit_gaussian(sensitivity=1.0, sigma=0.5, epsilon=1.0, delta=1e-5, generator=g,
                            config=A.AuditConfig(n_trials=400, method="cp_split"))
    assert A.AuditConfig().method == "cp_split"
    assert res.epsilon_lower == res2.epsilon_lower and res.threshold == res2.threshold
    e = A.statistics.estimate(res.stat_a, res.stat_b, delta=1e-5, method="cp_split")  # held-out part only: a new split
    assert e.n_select + e.n_eval == res.n_eval


@pytest.mark.parametrize("method", ["cp_bonferroni", "gdp"])
def test_audit_takes_the_statistic_name(method):
    g = torch.Generator().manual_seed(4)
    res = A.audit_gaussian(sensitivity=1.0, sigma=SIGMA / 8, epsilon=1.0, delta=1e-5, generator=g,
                           config=A.AuditConfig(n_trials=500, method=method))
    assert res.violation and res.n_select == 0 and res.n_eval == 500
    assert res.extras["method"] == method and "assumption" in res.extras and 0.5 < res.extras["auroc"] <= 1
    g = torch.Generator().manual_seed(4)
    res3 = A.audit_gaussian(sensitivity=1.0, sigma=SIGMA / 8, epsilon=1.0, delta=1e-5, dim=3, generator=g,
                            config=A.AuditConfig(n_trials=500, method=method))
    assert res3.n_select == 250 and res3.n_eval == 250 and res3.violation  # d > 1: the split fixes the score


def test_gdp_is_labelled_with_its_assumption():
    rng = np.random.default_rng(5)
    e = A.statistics.estimate(*_worlds(rng, 500, SIGMA), delta=1e-5, method="gdp")
    assert "Gaussian" in e.assumption and e.mu_lower is not None and "assumes" in str(e)
    assert A.statistics.estimate(*_worlds(rng, 500, SIGMA), delta=1e-5, method="cp_bonferroni").assumption.startswith("none")


def test_descriptive_numbers_match_the_gaussian():
    """AUROC of N(mu, 1) vs N(0, 1) is Phi(mu / sqrt 2); TPR at FPR f is Phi(mu - Phi^-1(1 - f))."""
    from scipy.stats import norm

    rng = np.random.default_rng(6)
    a, b = rng.normal(1.0, 1.0, 20_000), rng.normal(0.0, 1.0, 20_000)
    e = A.statistics.estimate(a, b, delta=1e-5, method="gdp")
    assert e.auroc == pytest.approx(norm.cdf(1 / math.sqrt(2)), abs=0.01)
    assert e.tpr_at_fpr[0.1] == pytest.approx(norm.cdf(1 - norm.ppf(0.9)), abs=0.015)
    assert e.mu_point == pytest.approx(1.0, abs=0.04)
    assert math.isnan(A.statistics.estimate(a[:50], b[:50], delta=1e-5).tpr_at_fpr[1e-3])  # too few B points


def test_gdp_epsilon_is_the_analytic_gaussian():
    assert A.statistics.gdp_epsilon(1.0 / SIGMA, 1e-5) == pytest.approx(1.0, rel=1e-9)
    assert A.statistics.gdp_epsilon(0.0, 1e-5) == 0.0 and A.statistics.gdp_epsilon(math.inf, 1e-5) == math.inf


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(20, 300), method=st.sampled_from(["cp_bonferroni", "gdp"]))
def test_fixed_family_is_symmetric_and_zero_on_identical_samples(seed, n, method):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(0.3, 1.0, n), rng.normal(0.0, 1.0, n)
    e1 = A.statistics.estimate(a, b, delta=1e-5, method=method).epsilon_lower
    e2 = A.statistics.estimate(b, a, delta=1e-5, method=method).epsilon_lower
    assert e1 == pytest.approx(e2, rel=1e-12, abs=1e-12) and e1 >= 0
    assert A.statistics.estimate(a, a.copy(), delta=1e-5, method=method).epsilon_lower == 0.0


def test_errors_name_the_parameter():
    x = np.zeros(30)
    with pytest.raises(ValueError, match="method='lira'"):
        A.statistics.estimate(x, x, delta=1e-5, method="lira")
    with pytest.raises(ValueError, match="samples_b has 5 scores"):
        A.statistics.estimate(x, x[:5], delta=1e-5)
    with pytest.raises(ValueError, match="method="):
        A.AuditConfig(method="bonferroni")
    with pytest.raises(ValueError, match="n_thresholds"):
        A.AuditConfig(n_thresholds=0)


# --------------------------------------------------------------------------------------------------------
# One-run canary audit (Steinke, Nasr & Jagielski 2023)
# --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("r", [10, 100, 1000])
def test_one_run_pure_dp_closed_form(r):
    """delta = 0, every guess right: p = q^r with q = e^eps / (1 + e^eps), so eps = logit(alpha^(1/r))."""
    q = 0.05 ** (1 / r)
    assert A.one_run.one_run_epsilon_lower_bound(r, r, r, 0.0, 0.05) == pytest.approx(math.log(q / (1 - q)), abs=1e-8)


@pytest.mark.parametrize("m, expected", [(100, 3.49), (1000, 5.78)])
def test_one_run_ceiling_matches_peers_2(m, expected):
    """peers-2 section 3: one run, every guess right, delta 1e-5, 95 %: 100 canaries 3.49, 1,000: 5.78."""
    assert A.one_run.one_run_epsilon_lower_bound(m, m, m, 1e-5, 0.05) == pytest.approx(expected, abs=0.005)


def test_one_run_bound_behaviour():
    assert A.one_run.one_run_epsilon_lower_bound(100, 50, 1000, 1e-5) == 0.0  # chance level refutes nothing
    assert A.one_run.one_run_epsilon_lower_bound(0, 0, 1000, 1e-5) == 0.0
    lbs = [A.one_run.one_run_epsilon_lower_bound(200, v, 1000, 1e-5) for v in (120, 150, 180, 200)]
    assert lbs == sorted(lbs) and lbs[0] < lbs[-1]
    p = A.one_run.one_run_p_value(200, 180, 1000, epsilon=lbs[2], delta=1e-5)
    assert p == pytest.approx(0.05, abs=1e-6)
    with pytest.raises(ValueError, match="n_correct"):
        A.one_run.one_run_epsilon_lower_bound(10, 11, 100, 1e-5)


def test_one_run_on_randomized_response_is_valid():
    """Canaries through eps-DP randomized response (eps = 1): the bound exceeds 1 in <= 5 % of runs.

    Guessing the observed bit makes the correct-guess count exactly Binomial(r, e^eps / (1 + e^eps)), the
    worst case of the theorem, so the refutation rate is ~5 % (not ~0): 200 runs, at most 18 (P ~ 1 %).
    """
    rng = np.random.default_rng(7)
    m, eps, bad = 1000, 1.0, 0
    for _ in range(200):
        inc = rng.random(m) < 0.5
        keep = rng.random(m) < math.exp(eps) / (1 + math.exp(eps))
        scores = np.where(inc == keep, 1.0, 0.0) + 1e-6 * rng.random(m)  # observed bit, ties broken at random
        r, v = A.one_run.one_run_guesses(scores, inc, k_plus=100, k_minus=100)
        bad += A.one_run.one_run_epsilon_lower_bound(r, v, m, 1e-5) > eps
    assert bad <= 18


def test_one_run_guesses_counts_top_and_bottom():
    scores = np.array([0.1, 0.9, 0.5, 0.8, 0.2])
    inc = np.array([0, 1, 0, 0, 0], dtype=bool)
    assert A.one_run.one_run_guesses(scores, inc, k_plus=2, k_minus=2) == (4, 3)  # top {0.9 in, 0.8 out}, bottom both out
    with pytest.raises(ValueError, match="k_minus"):
        A.one_run.one_run_guesses(scores, inc, k_plus=4, k_minus=2)
