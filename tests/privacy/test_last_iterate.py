"""The last-iterate heuristic (Steinke et al. 2025): pinned values, the exact Gaussian at q = 1, and its place
between nothing and the composition bound."""

import math

import pytest

from unlearnkit.privacy import analytic_gaussian_epsilon, last_iterate_epsilon, pld_epsilon
from unlearnkit.privacy.last_iterate import last_iterate_delta


# (q, sigma, T, delta): the heuristic's epsilon, checked here by a direct numerical integration of the
# hockey-stick divergence of N(0, T sigma^2) against the binomial mixture (400,001-point grid): 5.9421,
# 4.0005, 0.8987, 4.3772
@pytest.mark.parametrize("q,sigma,steps,delta,expected", [
    (0.04, 1.5, 2250, 1e-5, 5.94), (0.01, 1.1, 10_000, 1e-5, 4.00), (0.005, 0.8, 1000, 1e-6, 0.90),
    (1.0, 10.0, 100, 1e-5, 4.38)])
def test_pinned_values(q, sigma, steps, delta, expected):
    assert last_iterate_epsilon(q, sigma, steps, delta) == pytest.approx(expected, abs=0.006)


def test_full_batch_is_the_exact_gaussian():
    """q = 1: the last iterate is N(T, T sigma^2) against N(0, T sigma^2), a Gaussian of mu = sqrt(T)/sigma."""
    for sigma, steps in ((10.0, 100), (3.0, 16), (50.0, 400)):
        exact = analytic_gaussian_epsilon(sigma, 1e-5, sensitivity=math.sqrt(steps))
        assert last_iterate_epsilon(1.0, sigma, steps, 1e-5) == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("q,sigma,steps", [(0.04, 1.5, 2250), (0.01, 1.1, 10_000), (0.2, 2.0, 50)])
def test_never_above_the_composition_bound(q, sigma, steps):
    """Releasing less cannot cost more: the heuristic sits below the PLD accountant's composed epsilon."""
    assert last_iterate_epsilon(q, sigma, steps, 1e-5) <= pld_epsilon(q, sigma, steps, 1e-5, grid=1e-3).upper


def test_delta_is_decreasing_in_epsilon_and_validated():
    ds = [last_iterate_delta(0.04, 1.5, 2250, e) for e in (0.0, 1.0, 3.0, 6.0)]
    assert all(a >= b for a, b in zip(ds, ds[1:])) and ds[-1] < 1e-5 < ds[0]
    with pytest.raises(ValueError, match="q="):
        last_iterate_epsilon(0.0, 1.0, 10, 1e-5)
    with pytest.raises(ValueError, match="delta="):
        last_iterate_epsilon(0.1, 1.0, 10, 1.5)
