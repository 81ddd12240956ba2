"""The shared primitives: the linear-RDP conversion (both methods) and the one Gaussian noise draw."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from unlearnkit.privacy import gaussian_noise
from unlearnkit.privacy.linear_rdp import linear_rdp_epsilon, linear_rdp_slope


def test_mironov_closed_form():
    rho, delta = 0.125, 1e-5
    b = math.log(1 / delta)
    assert linear_rdp_epsilon(rho, delta, method="mironov") == pytest.approx(rho + 2 * math.sqrt(rho * b), rel=1e-15)


def test_balle_is_tighter_than_mironov():
    for rho in (1e-4, 0.01, 0.3, 2.0):
        assert linear_rdp_epsilon(rho, 1e-5) < linear_rdp_epsilon(rho, 1e-5, method="mironov")


def test_balle_slope_pinned():
    # digest 004 section 3.3: the slope that certifies (1, 1e-5) under Balle et al. Thm 21
    assert linear_rdp_slope(1.0, 1e-5) == pytest.approx(0.030557, abs=1e-6)
    assert linear_rdp_slope(0.1, 1e-5) == pytest.approx(4.330e-4, rel=1e-3)


@given(st.floats(0.01, 20.0), st.sampled_from([1e-3, 1e-5, 1e-8]), st.sampled_from(["mironov", "balle"]))
def test_slope_inverts_epsilon(eps, delta, method):
    rho = linear_rdp_slope(eps, delta, method=method)
    assert linear_rdp_epsilon(rho, delta, method=method) == pytest.approx(eps, rel=1e-6)


def test_bad_method_names_the_parameter():
    with pytest.raises(ValueError, match="method"):
        linear_rdp_epsilon(0.1, 1e-5, method="exact")


def test_noise_follows_the_target_and_draws_afresh():
    like = torch.zeros(5, dtype=torch.float64)
    g = torch.Generator().manual_seed(0)
    a, b = gaussian_noise(like, 2.0, g), gaussian_noise(like, 2.0, g)
    assert a.dtype == torch.float64 and a.shape == (5,) and not torch.equal(a, b)
    g0 = torch.Generator().manual_seed(0)
    assert torch.equal(a, 2.0 * torch.randn(5, generator=g0, dtype=torch.float64))
    assert gaussian_noise(like, 1.0, g, shape=(3, 5)).shape == (3, 5)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_noise(like, -1.0, g)
