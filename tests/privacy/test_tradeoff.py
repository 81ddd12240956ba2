"""GDP trade-off functions and the mu of a Gaussian certificate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from unlearnkit.privacy import gaussian_certificate_mu, gaussian_composition_epsilon, gdp_tradeoff, pld_epsilon


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
