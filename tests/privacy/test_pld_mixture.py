"""A mixture of PLDs over a random, data-independent number of steps: the PLD form of the visit-count mixture."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from unlearnkit.privacy import PLD, dpsgd_epsilon, gaussian_composition_epsilon, mixture_epsilon, pld_epsilon
from unlearnkit.privacy.mixture import capped_epsilon, mixture_delta
from unlearnkit.privacy.pld_mixture import pld_mixture_delta, pld_mixture_epsilon
from unlearnkit.methods.rrdu.mixture import rrdu_mixture_epsilon, rrdu_visit_pmf


def test_a_fixed_count_is_the_composition():
    pmf = np.zeros(8)
    pmf[7] = 1.0
    b = pld_mixture_epsilon(1e-5, pmf, PLD.gaussian(5.0))
    assert b.lower <= gaussian_composition_epsilon([1 / 5.0] * 7, 1e-5) <= b.upper
    assert b.upper == pytest.approx(pld_epsilon(1.0, 5.0, 7, 1e-5).upper, rel=1e-9)


@pytest.mark.parametrize("T, p, mu, rho", [(100, 0.25, 0.2, None), (60, 0.1, 0.3, 0.5)])
def test_brackets_the_exact_gaussian_mixture_of_rrdu(T, p, mu, rho):
    """For plain Gaussian u-steps the GDP mixture (accountant M) is exact: the PLD bracket contains it."""
    pmf = rrdu_visit_pmf(T, p)
    base = None if rho is None else PLD.gaussian(1.0, sensitivity=math.sqrt(2 * rho))
    b = pld_mixture_epsilon(1e-5, pmf, PLD.gaussian(1.0 / mu), base=base)
    exact = rrdu_mixture_epsilon(sigma=1.0 / mu, delta=1e-5, T_unlearn=T, p=p, sensitivity=1.0, train_rho=rho)
    assert b.lower <= exact <= b.upper and b.width < 0.02
    d = pld_mixture_delta(exact, pmf, PLD.gaussian(1.0 / mu), base=base)
    assert d.lower <= mixture_delta(exact, pmf, mu, mu_base=0.0 if rho is None else math.sqrt(2 * rho)) <= d.upper


@settings(max_examples=6, deadline=None)
@given(T=st.integers(1, 60), p=st.floats(0.05, 0.5), mu=st.floats(0.05, 0.5))
def test_never_looser_than_the_capped_rdp_path_for_gaussian_visits(T, p, mu):
    pmf = rrdu_visit_pmf(T, p)
    b = pld_mixture_epsilon(1e-5, pmf, PLD.gaussian(1.0 / mu))
    rdp = capped_epsilon(1e-5, pmf, mu, tail_delta=1e-5 / 4, conversion="rdp")
    assert b.lower <= b.upper <= rdp
    assert b.lower <= mixture_epsilon(1e-5, pmf, mu) <= b.upper + 1e-9


@settings(max_examples=5, deadline=None)
@given(T=st.integers(5, 60), p=st.floats(0.1, 0.5), q=st.floats(0.02, 0.3), sigma=st.floats(0.8, 2.0))
def test_never_looser_than_the_capped_rdp_path_for_subsampled_visits(T, p, q, sigma):
    """Subsampled per-visit steps, which the Gaussian form cannot express: the RDP path caps the count at its
    (1 - delta/4)-quantile and composes the subsampled RDP curve at the remaining 3 delta / 4."""
    delta = 1e-5
    pmf = rrdu_visit_pmf(T, p)
    k_cap = int(np.argmax(1.0 - np.cumsum(pmf) <= delta / 4))
    b = pld_mixture_epsilon(delta, pmf, PLD.subsampled_gaussian(q, sigma))
    rdp = dpsgd_epsilon(sigma, q, k_cap, 3 * delta / 4) if k_cap > 0 else 0.0
    assert b.lower <= b.upper <= rdp + 1e-9


def test_missing_mass_is_charged_and_nothing_released_is_free():
    step = PLD.gaussian(2.0, grid=1e-2)
    assert pld_mixture_epsilon(1e-5, [0.5, 0.499], step).upper == math.inf       # 1e-3 missing > delta
    assert pld_mixture_epsilon(1e-5, [1.0], step).upper == 0.0                   # K = 0 always
    d = pld_mixture_delta(0.0, [1.0], step)
    assert d.lower == d.upper == 0.0


def test_errors_name_the_parameter():
    step = PLD.gaussian(2.0, grid=1e-2)
    with pytest.raises(ValueError, match="pmf"):
        pld_mixture_epsilon(1e-5, [0.7, 0.7], step)
    with pytest.raises(ValueError, match="pmf_tail="):
        pld_mixture_epsilon(1e-5, [1.0], step, pmf_tail=0.5)
    with pytest.raises(ValueError, match="delta="):
        pld_mixture_epsilon(0.0, [1.0], step)
    with pytest.raises(ValueError, match="epsilon="):
        pld_mixture_delta(-1.0, [1.0], step)
    with pytest.raises(ValueError, match="other.grid="):
        pld_mixture_epsilon(1e-5, [0.5, 0.5], step, base=PLD.gaussian(2.0, grid=1e-3))
    with pytest.raises(ValueError, match="other.relation="):
        pld_mixture_epsilon(1e-5, [0.5, 0.5], step,
                            base=PLD.subsampled_gaussian(1.0, 2.0, grid=1e-2, relation="substitution"))
    with pytest.raises(TypeError, match="step="):
        pld_mixture_epsilon(1e-5, [0.5, 0.5], 2.0)


def test_tiny_deltas_keep_enough_of_the_count_law():
    pmf = rrdu_visit_pmf(40, 0.3)
    b = pld_mixture_epsilon(1e-14, pmf, PLD.gaussian(5.0, grid=1e-2))
    assert math.isfinite(b.upper) and b.lower <= mixture_epsilon(1e-14, pmf, 0.2) <= b.upper
