"""The PLD accountant: brackets around exact GDP, agreement with dp_accounting, never looser than RDP."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from unlearnkit.privacy import PLD, dpsgd_epsilon, gaussian_composition_epsilon, pld_epsilon
from unlearnkit.privacy.pld import DeltaBracket, EpsilonBracket, pld_delta
from unlearnkit.privacy.mixture import gaussian_composition_delta

# -- (a) plain Gaussian composition: exactly mu-GDP with mu = sqrt(T) / sigma --------------------------------


@pytest.mark.parametrize("sigma, steps, delta", [(10.0, 100, 1e-5), (2.0, 10, 1e-6), (0.8, 3, 1e-5)])
def test_bracket_contains_exact_gdp_and_narrows(sigma, steps, delta):
    exact = gaussian_composition_epsilon([math.sqrt(steps) / sigma], delta)
    widths = []
    for grid in (1e-2, 1e-3):
        b = pld_epsilon(1.0, sigma, steps, delta, grid=grid)
        assert isinstance(b, EpsilonBracket)
        assert b.lower <= exact <= b.upper, (grid, b, exact)
        widths.append(b.width)
    assert widths[1] < widths[0] / 3
    assert widths[1] < 0.05


def test_gaussian_constructor_and_delta_bracket():
    sigma, sens, steps = 6.0, 2.0, 30
    pld = PLD.gaussian(sigma, sensitivity=sens).self_compose(steps)
    mu = math.sqrt(steps) * sens / sigma
    for eps in (0.5, 2.0, 4.0):
        exact = float(gaussian_composition_delta(eps, [mu]))
        d = pld.delta(eps)
        assert isinstance(d, DeltaBracket)
        assert d.lower <= exact <= d.upper
        assert d.upper <= exact * 1.05 + 1e-12


def test_compose_equals_self_compose():
    one = PLD.subsampled_gaussian(0.1, 1.2, grid=1e-3)
    twice = one.compose(one).compose(one)
    thrice = one.self_compose(3)
    a, b = twice.epsilon(1e-5), thrice.epsilon(1e-5)
    assert a.upper == pytest.approx(b.upper, rel=1e-9)
    assert a.lower == pytest.approx(b.lower, rel=1e-9)


def test_pessimistic_pmf_is_a_distribution():
    pmf = PLD.subsampled_gaussian(0.01, 1.1, grid=1e-3).pmf("remove")
    assert np.all(pmf.probs >= 0)
    assert pmf.probs.sum() + pmf.inf_mass == pytest.approx(1.0, abs=1e-12)
    # connect-the-dots keeps the Q mass: E_P[e^{-L}] = 1 (the Q-mass beyond the grid is negligible)
    assert np.sum(pmf.probs * np.exp(-pmf.losses)) == pytest.approx(1.0, abs=1e-9)


# -- (b) against dp_accounting's PLD accountant at 10^4 steps -----------------------------------------------

POINTS = [(0.01, 1.1), (0.04, 1.5), (0.005, 0.8)]


def _dp_accounting_pld(q: float, sigma: float, steps: int, delta: float, grid: float) -> float:
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import PLDAccountant

    acc = PLDAccountant(value_discretization_interval=grid)
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    return float(acc.get_epsilon(delta))


@pytest.mark.parametrize("q, sigma", POINTS)
def test_agrees_with_dp_accounting(q, sigma):
    """Our upper end is within 1 % of dp_accounting's at the same grid (1e-3), and dp_accounting's value on
    a ten times finer grid (1e-4; itself an upper bound within its discretisation) lies inside our bracket."""
    steps, delta = 10_000, 1e-5
    ours = pld_epsilon(q, sigma, steps, delta, grid=1e-3)
    theirs = _dp_accounting_pld(q, sigma, steps, delta, 1e-3)
    assert ours.upper == pytest.approx(theirs, rel=0.01)
    finer = _dp_accounting_pld(q, sigma, steps, delta, 1e-4)
    assert ours.lower <= finer <= ours.upper


# -- (c) never looser than RDP -------------------------------------------------------------------------------


@settings(max_examples=8)
@given(q=st.floats(0.005, 0.3), sigma=st.floats(0.7, 3.0), steps=st.integers(1, 3000),
       delta=st.sampled_from([1e-5, 1e-6]))
def test_never_looser_than_rdp(q, sigma, steps, delta):
    b = pld_epsilon(q, sigma, steps, delta, grid=1e-3)
    assert b.lower <= b.upper <= dpsgd_epsilon(sigma, q, steps, delta) + 1e-9


# -- pinned values (RDP: the package's accountant; PLD: confirmed by dp_accounting's PLD accountant) -----------

PINS = [  # q, sigma, steps, delta, RDP, PLD
    (0.04, 1.5, 2250, 1e-5, 7.33, 6.77),
    (0.01, 1.1, 10_000, 1e-5, 5.63, 5.19),
    (0.005, 0.8, 1000, 1e-6, 2.63, 2.00),
    (1.0, 10.0, 100, 1e-5, 4.73, 4.38),
]


@pytest.mark.parametrize("q, sigma, steps, delta, rdp, pld", PINS)
def test_pinned_values(q, sigma, steps, delta, rdp, pld):
    assert round(dpsgd_epsilon(sigma, q, steps, delta), 2) == rdp
    b = pld_epsilon(q, sigma, steps, delta, grid=1e-3)
    # the two-decimal value lies in the bracket (up to rounding) and the certified end is within 0.01 of it
    assert b.lower <= pld + 0.005
    assert pld - 0.005 <= b.upper <= pld + 0.01


# -- argument validation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, name", [
    (dict(q=0.0, sigma=1.0, steps=10, delta=1e-5), "q"),
    (dict(q=1.5, sigma=1.0, steps=10, delta=1e-5), "q"),
    (dict(q=0.1, sigma=-1.0, steps=10, delta=1e-5), "sigma"),
    (dict(q=0.1, sigma=1.0, steps=0, delta=1e-5), "steps"),
    (dict(q=0.1, sigma=1.0, steps=10, delta=1.0), "delta"),
    (dict(q=0.1, sigma=1.0, steps=10, delta=1e-5, grid=0.0), "grid"),
])
def test_errors_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}="):
        pld_epsilon(**kwargs)


def test_compose_rejects_other_grid():
    with pytest.raises(ValueError, match="grid"):
        PLD.gaussian(1.0, grid=1e-3).compose(PLD.gaussian(1.0, grid=1e-2))
    with pytest.raises(ValueError, match="epsilon="):
        pld_delta(0.1, 1.0, 10, -1.0)


# -- the benchmark row ---------------------------------------------------------------------------------------


def test_bench_pld_quick_row():
    from unlearnkit.benchmarks import available_benches
    from unlearnkit.benchmarks.pld import bench_pld

    assert "pld" in available_benches()
    rows = bench_pld(quick=True)
    assert [r["kind"] for r in rows] == ["add_remove", "substitution", "mixture", "mixture"]
    row, sub, gauss, subsampled = rows
    assert row["steps"] == 10_000 and row["grid"] == 1e-3
    assert row["unlearnkit_lower"] <= row["unlearnkit_upper"] <= row["rdp_epsilon"]
    if row["dp_accounting_epsilon"] is not None:
        assert row["unlearnkit_upper"] == pytest.approx(row["dp_accounting_epsilon"], rel=0.01)
    # substitution: one record replaced costs more than one added or removed; dp_accounting's REPLACE_ONE agrees
    assert sub["add_remove_upper"] < sub["unlearnkit_lower"] <= sub["unlearnkit_upper"]
    if sub["dp_accounting_epsilon"] is not None:
        assert sub["unlearnkit_upper"] == pytest.approx(sub["dp_accounting_epsilon"], rel=1e-6)
    # mixture: brackets accountant M's exact value (plain Gaussian steps), never above the capped RDP path
    assert gauss["unlearnkit_lower"] <= gauss["accountant_m_epsilon"] <= gauss["unlearnkit_upper"]
    for r in (gauss, subsampled):
        assert r["unlearnkit_upper"] <= r["capped_rdp_epsilon"] and r["unlearnkit_seconds"] > 0
    assert subsampled["accountant_m_epsilon"] is None  # the GDP form cannot express a subsampled step
