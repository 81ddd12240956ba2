"""Sensitivity bounds and noise calibration of R2D and D2D (digest 003 sections 3.1-3.7)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unlearnkit.constants import Constants, logistic_constants, sigmoid_loss_constants, softmax_constants
from unlearnkit.methods import descend_rewind as dr
from unlearnkit.privacy.gaussian import analytic_gaussian_sigma

TOY = dict(G=1.25, L=0.3, mu=0.05, eta=0.5, T=300, m=10, n=200)


@pytest.mark.parametrize("regime,K,delta1,sigma,sigma_det", [
    ("strongly_convex", 0, 2.49874, 19768.9, 9.43645),
    ("strongly_convex", 100, 0.197536, 1562.81, 0.745992),
    ("strongly_convex", 200, 0.0145505, 115.117, 0.0549498),
    ("convex", 100, 12.5, 98894.2, 47.206),
    ("nonconvex", 0, 6.747e17, 5.338e21, 2.548e18),
    ("nonconvex", 200, 6.747e17, 5.338e21, 2.548e18),
])
def test_psgd_r2d_reference_values(regime, K, delta1, sigma, sigma_det):
    d = dr.bounds.psgd_r2d_sensitivity(regime, K=K, **TOY)
    assert d == pytest.approx(delta1, rel=1e-4)
    assert dr.bounds.descend_rewind_sigma(d, 1.0, 1e-3, mode="paper") == pytest.approx(sigma, rel=1e-4)
    det = dr.bounds.descend_rewind_sigma(d, 1.0, 1e-3, kind="deterministic", mode="paper")
    assert det == pytest.approx(sigma_det, rel=1e-4)


def test_full_rewind_is_retraining():
    for regime in dr.bounds.REGIMES:
        assert dr.bounds.psgd_r2d_sensitivity(regime, K=300, **TOY) == 0
        assert dr.bounds.descend_rewind_sigma(0.0, 1.0, 1e-3) == 0


@pytest.mark.parametrize("T,K", [(10, 9.87), (50, 49.65), (100, 98.76), (300, 229.05), (1000, 236.21), (100000, 236.21)])
def test_corollary_4_6(T, K):
    kw = dict(G=1.25, mu=0.05, eta=0.5, m=10, n=200, epsilon=1.0, delta=1e-3)
    assert dr.bounds.k_for_sigma_sc(50.0, T=T, **kw) == pytest.approx(K, abs=0.01)
    assert dr.bounds.k_for_sigma_sc(50.0, T=T, **kw) <= dr.bounds.k_infinity(50.0, **kw) + 1e-9
    assert dr.bounds.k_for_sigma_sc(1e9, T=T, **kw) == 0  # huge noise: no unlearning steps needed


def test_derived_bounds_reference_values():
    kw = dict(L=0.3, mu=0.05, F0=math.log(2), b=8, T=300, m=10, n=200)
    for K, v in [(0, 5.11), (100, 0.352), (250, 0.0047)]:
        assert dr.bounds.sgd_r2d_sensitivity_derived("strongly_convex", eta=0.5, K=K, **kw) == pytest.approx(v, rel=0.01)
    for K, v in [(0, 47.5), (50, 14.3), (200, 13.9)]:
        assert dr.bounds.sgd_d2d_sensitivity_derived(eta=1 / 0.6, K=K, **kw) ** 2 == pytest.approx(v, rel=0.01)


def test_sound_mode_is_analytic_and_capped():
    d = dr.bounds.psgd_r2d_sensitivity("convex", K=100, **TOY)
    paper = dr.bounds.descend_rewind_sigma(d, 0.5, 1e-3, mode="paper")
    sound = dr.bounds.descend_rewind_sigma(d, 0.5, 1e-3, mode="sound")
    assert sound < paper  # analytic Gaussian beats the classic one at eps < 1
    capped = dr.bounds.descend_rewind_sigma(d, 0.5, 1e-3, mode="sound", radius=1.0)
    assert capped == pytest.approx(analytic_gaussian_sigma(0.5, 1e-3, 2.0))
    # relaxed Gaussian: sound = analytic sigma for threshold Delta_1 / (delta/2) at delta/2
    assert sound == pytest.approx(analytic_gaussian_sigma(0.5, 5e-4, d / 5e-4), rel=1e-9)


def test_certified_epsilon_inverts_calibration():
    d = dr.bounds.psgd_r2d_sensitivity("strongly_convex", K=100, **TOY)
    s = dr.bounds.descend_rewind_sigma(d, 2.0, 1e-3)
    assert dr.bounds.descend_rewind_epsilon(s, d, 1e-3) == pytest.approx(2.0, rel=1e-6)
    assert dr.bounds.descend_rewind_epsilon(1e-12, d, 1e-3) == math.inf


@settings(max_examples=30, deadline=None)
@given(K=st.integers(0, 298), m=st.integers(1, 50), eps=st.floats(0.1, 5))
def test_sigma_monotone_in_K_m_eps(K, m, eps):
    kw = dict(TOY, m=m)
    for regime in ("strongly_convex", "convex"):
        d = dr.bounds.psgd_r2d_sensitivity(regime, K=K, **kw)
        assert dr.bounds.psgd_r2d_sensitivity(regime, K=K + 1, **kw) < d
        assert dr.bounds.psgd_r2d_sensitivity(regime, K=K, **dict(kw, m=m + 1)) > d
        assert dr.bounds.descend_rewind_sigma(d, eps * 1.2, 1e-4) < dr.bounds.descend_rewind_sigma(d, eps, 1e-4)


def test_d2d_noise_floor_and_neel_formula():
    kw = dict(L=0.3, mu=0.05, F0=math.log(2), eta=1.0, b=8, T=300, m=10, n=200)
    vals = [dr.bounds.sgd_d2d_sensitivity_derived(K=K, **kw) for K in (0, 100, 1000, 10000)]
    assert all(a >= b for a, b in zip(vals, vals[1:]))
    assert vals[-1] > 0.9 * vals[-2] > 0  # a floor that K cannot remove
    # peers.md A.4 / descent-to-delete defaults: l2 = 0.05, beta = 4 - l2, M = 1 + l2, n = 1000, I = 25
    s = dr.bounds.neel_sigma(5.0, 1e-6, G=1.05, L=3.95, mu=0.05, n=1000, I=25)
    g = 3.9 / 4.0
    expect = 4 * math.sqrt(2) * 1.05 * g**25 / (0.05 * 1000 * (1 - g**25) * (math.sqrt(math.log(1e6) + 5) - math.sqrt(math.log(1e6))))
    assert s == pytest.approx(expect)
    det = [dr.bounds.gd_d2d_sensitivity(G=1.05, L=3.95, mu=0.05, eta=0.5, radius=1, T=500, I=I, m=1, n=1000) for I in (0, 10, 50)]
    assert det[0] > det[1] > det[2]


def test_constants():
    c = logistic_constants(lam=0.1, radius=5)
    assert (c.G, c.L, c.mu, c.regime) == (1.5, 0.35, 0.1, "strongly_convex")
    assert logistic_constants(bias=True).L == pytest.approx(0.5)
    assert softmax_constants(n_classes=10, lam=0.0).L == 0.5
    assert sigmoid_loss_constants().L == pytest.approx(1 / (6 * math.sqrt(3)))
    with pytest.raises(ValueError, match="mu"):
        Constants(G=1, L=0.1, mu=0.5, regime="strongly_convex")


@pytest.mark.parametrize("call,name", [
    (lambda: dr.bounds.psgd_r2d_sensitivity("convex", **dict(TOY, K=301)), "K"),
    (lambda: dr.bounds.psgd_r2d_sensitivity("strongly_convex", **dict(TOY, K=3, eta=50.0)), "eta"),
    (lambda: dr.bounds.psgd_r2d_sensitivity("convex", **dict(TOY, K=3, eta=7.0)), "eta"),
    (lambda: dr.bounds.psgd_r2d_sensitivity("convex", **dict(TOY, K=3, m=200)), "m"),
    (lambda: dr.bounds.psgd_r2d_sensitivity("flat", K=3, **TOY), "regime"),
    (lambda: dr.bounds.descend_rewind_sigma(1.0, 1.0, 0.0), "delta"),
    (lambda: dr.R2DConfig(K=-1, constants=logistic_constants(lam=0.1)), "K"),
    (lambda: dr.R2DConfig(K=3), "constants"),
    (lambda: dr.bounds.sgd_d2d_sensitivity_derived(L=0.3, mu=0.05, F0=1, eta=2.0, b=8, T=3, K=1, m=1, n=10), "eta"),
    (lambda: dr.D2DConfig(K=3, publish="maybe", constants=logistic_constants(lam=0.1)), "publish"),
])
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
