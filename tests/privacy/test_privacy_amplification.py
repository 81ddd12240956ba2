"""Amplification by iteration, model-clipping contraction, random-walk primitives (digests 000 and 004)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from unlearnkit.privacy import calibrate_sigma
from unlearnkit.privacy.rdp import linear_rdp
from unlearnkit.privacy.amplification import (expected_inverse_delay, first_observation_delay_pmf,
                                              first_observation_rate, gradient_clipping_rho, iteration_rdp,
                                              model_clipping_delta, model_clipping_sigma_paper, model_clipping_steps,
                                              optimal_shift_schedule, sample_first_observation_delay,
                                              visit_count_bound)
from unlearnkit.privacy.rdp import rdp_to_dp
from unlearnkit.privacy.gaussian import theta_epsilon

# digest 004 section 3.3: a dense grid of orders q > 1 for the linear-curve conversion
QS = np.exp(np.linspace(np.log(1 + 1e-4), np.log(1e6), 200_000))


def _eps_linear(rho, delta):
    return rdp_to_dp(QS, linear_rdp(rho, QS), delta, method="balle", warn_edge=False)[0]


def test_linear_curve_inverse_table_digest_004():
    # rho*(eps=1, delta=1e-5) = 3.0557e-2 and rho*(1, 1e-6) = 2.4356e-2 (digest 004 section 1.5)
    assert _eps_linear(3.0557e-2, 1e-5) == pytest.approx(1.0, abs=2e-4)
    assert _eps_linear(2.4356e-2, 1e-6) == pytest.approx(1.0, abs=2e-4)


def test_gradient_clipping_sigma_digest_reference():
    # lam=0, C0=1, C1=10, gamma=0.01, T=10 -> sigma 5.117 for (1, 1e-5); C0=0.1, gamma=1e-3 -> 0.5117
    s = calibrate_sigma(lambda s: _eps_linear(gradient_clipping_rho(1, 10, 0.01, 0, 10, s), 1e-5), 1.0)
    assert s == pytest.approx(5.117, abs=1e-3)
    s2 = calibrate_sigma(lambda s: _eps_linear(gradient_clipping_rho(0.1, 10, 1e-3, 0, 10, s), 1e-5), 1.0)
    assert s2 == pytest.approx(0.5117, abs=1e-4)


@settings(max_examples=40, deadline=None)
@given(C0=st.floats(0.01, 10), C1=st.floats(0.01, 100), gamma=st.floats(1e-4, 0.1), lam=st.floats(0.0, 9.0),
       T=st.integers(1, 200), sigma=st.floats(0.01, 10))
def test_general_shift_reduction_equals_closed_form(C0, C1, gamma, lam, T, sigma):
    if gamma * lam >= 0.99:
        lam = 0.0
    general = iteration_rdp(2 * gamma * C1, 1 - gamma * lam, sigma, 2 * C0, steps=T)
    assert general == pytest.approx(gradient_clipping_rho(C0, C1, gamma, lam, T, sigma), rel=1e-9)


def test_optimal_schedule_properties():
    sch = optimal_shift_schedule([0.2] * 8, [0.9] * 8, [0.3, 0.4, 0.5, 0.5, 0.5, 0.6, 0.6, 1.0], 2.0)
    assert sch.budget[0] == 2.0 and abs(sch.budget[-1]) < 1e-12  # all shift paid off at the end
    assert sch.rho == pytest.approx(sch.costs.sum(), rel=1e-12)  # eq. 21 = sum of eq. 20 at the optimum
    # any other feasible schedule (sum w_t a_t = B) costs more: try uniform
    w = sch.weights
    a_uniform = np.full(8, sch.B / w.sum())
    assert np.sum(a_uniform**2 / (2 * np.array([0.3, 0.4, 0.5, 0.5, 0.5, 0.6, 0.6, 1.0]) ** 2)) >= sch.rho
    # more noise or more steps with no drift means more amplification
    assert iteration_rdp(0.0, 1.0, 1.0, 2.0, steps=20) < iteration_rdp(0.0, 1.0, 1.0, 2.0, steps=10)
    assert iteration_rdp(0.0, 1.0, 1.0, 2.0, steps=10) == pytest.approx(4.0 / (2 * 10))


def test_model_clipping_steps_digest_table():
    # digest 004 section 3.5, (1, 1e-5) without initial noise, as a function of C2/sigma
    ratios = [0.1, 0.25, 0.5, 1, 1.25, 1.5, 1.95, 2.5, 3]
    tight = [1, 2, 3, 6, 9, 14, 36, 137, 602]
    paper = [1, 3, 6, 18, 29, 49, 134, 566, 2612]
    tight_01 = [2, 3, 5, 12, 18, 29, 77, 315, 1430]
    tight_10 = [1, 1, 1, 1, 2, 2, 4, 11, 31]
    for r, t, p, t01, t10 in zip(ratios, tight, paper, tight_01, tight_10):
        assert model_clipping_steps(1.0, 1e-5, r, 1.0) == t
        assert model_clipping_steps(1.0, 1e-5, r, 1.0, recursion="paper") == p
        assert model_clipping_steps(0.1, 1e-5, r, 1.0) == t01
        assert model_clipping_steps(10.0, 1e-5, r, 1.0) == t10


def test_model_clipping_delta_recursions():
    d_paper = model_clipping_delta(1.0, 5, 0.5, 1.0, recursion="paper")
    np.testing.assert_allclose(d_paper, theta_epsilon(1.0, 1.0) ** np.arange(6), rtol=1e-12)
    d_tight = model_clipping_delta(1.0, 5, 0.5, 1.0)
    assert np.all(d_tight <= d_paper + 1e-15) and np.all(np.diff(d_tight) <= 0)
    assert d_tight[3] < 1e-15  # super-geometric: eps~ grows as delta falls
    d0 = model_clipping_delta(1.0, 3, 0.5, 1.0, C0=1.0, sigma0=4.0)[0]
    assert d0 == pytest.approx(theta_epsilon(1.0, 0.5))
    with pytest.raises(ValueError, match="C0"):
        model_clipping_delta(1.0, 3, 0.5, 1.0, sigma0=1.0)


def test_model_clipping_sigma_paper_eq11():
    s = model_clipping_sigma_paper(0.5, 1e-5, 10, 1.0)
    assert s**2 == pytest.approx(8 * math.log(1.25) / 0.25 * (1 + math.log(1.25e5) / 10))
    with pytest.raises(ValueError, match="epsilon"):
        model_clipping_sigma_paper(1.0, 1e-5, 10, 1.0)


def test_random_walk_primitives_digest_000():
    assert first_observation_rate(0.1, 10) == pytest.approx(0.1)
    assert expected_inverse_delay(0.1, 10) == pytest.approx(0.2558, abs=1e-4)
    assert expected_inverse_delay(0.1, 10) == pytest.approx(math.log(10) / 9)
    assert visit_count_bound(100, 0.1, 1e-5 / 4) == 26
    k = np.arange(1, 2000)
    pmf = first_observation_delay_pmf(k, 0.3, 6)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.sum(pmf / k) == pytest.approx(expected_inverse_delay(0.3, 6), rel=1e-10)
    rng = np.random.default_rng(0)
    draws = sample_first_observation_delay(0.1, 10, 200_000, rng=rng)
    assert draws.min() >= 1
    assert np.mean(1.0 / draws) == pytest.approx(expected_inverse_delay(0.1, 10), rel=0.01)
    assert expected_inverse_delay(0.0, 2) == 1.0  # q = 1: the observer always sees the next hop


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: gradient_clipping_rho(1, 1, 0.5, 2.0, 10, 1.0), "gamma\\*lam"),
        (lambda: gradient_clipping_rho(1, 1, 0.1, 0.0, 0, 1.0), "T"),
        (lambda: gradient_clipping_rho(1, 1, 0.1, 0.0, 5, 0.0), "sigma"),
        (lambda: optimal_shift_schedule(0.1, 1.0, 0.0, 1.0, steps=3), "sigmas"),
        (lambda: optimal_shift_schedule(0.1, 1.0, 1.0, -1.0, steps=3), "initial_distance"),
        (lambda: optimal_shift_schedule(0.1, 1.0, 1.0, 1.0), "steps"),
        (lambda: model_clipping_steps(1.0, 0.0, 1.0, 1.0), "delta"),
        (lambda: model_clipping_delta(0.0, 3, 1.0, 1.0), "epsilon"),
        (lambda: model_clipping_delta(1.0, 3, 1.0, 1.0, recursion="loose"), "recursion"),
        (lambda: first_observation_rate(1.0, 10), "p"),
        (lambda: first_observation_rate(0.1, 1), "n_nodes"),
        (lambda: visit_count_bound(10, 0.1, 0.0), "tail"),
    ],
)
def test_amplification_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()
