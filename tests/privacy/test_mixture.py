"""Exact Gaussian composition and the random-length mixture bound (unlearnkit.privacy.mixture)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, stats

from unlearnkit.privacy import gaussian_composition_epsilon, mixture_epsilon
from unlearnkit.privacy.mixture import (capped_delta, capped_epsilon, composition_saving_table,
                                        gaussian_composition_delta, gaussian_composition_mu, mixture_delta,
                                        mixture_sigma)
from unlearnkit.privacy.linear_rdp import linear_rdp_epsilon


def binom(T, p):
    return stats.binom.pmf(np.arange(T + 1), T, p)


def test_composition_closed_form_and_peers_anchor():
    mu = gaussian_composition_mu([0.3, 0.4])
    assert mu == pytest.approx(0.5)
    eps = 1.3
    closed = stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)
    assert gaussian_composition_delta(eps, [0.3, 0.4]) == pytest.approx(closed, rel=1e-12)
    # peers-2 anchor: sigma 10, 100 plain steps, delta 1e-5 -> PLD 4.38 (RDP 4.73)
    assert gaussian_composition_epsilon([0.1] * 100, 1e-5) == pytest.approx(4.377, abs=2e-3)
    assert gaussian_composition_epsilon([], 1e-5) == 0.0
    assert gaussian_composition_epsilon([0.1, math.inf], 1e-5) == math.inf


@settings(max_examples=60, deadline=None)
@given(mu=st.floats(0.01, 20.0), delta=st.sampled_from([1e-3, 1e-5, 1e-8]))
def test_exact_composition_never_looser_than_rdp(mu, delta):
    assert gaussian_composition_epsilon([mu], delta) <= linear_rdp_epsilon(mu**2 / 2, delta, method="mironov") + 1e-9


def test_saving_table_is_what_the_docstring_prints():
    rows = composition_saving_table()
    assert [round(r["exact"], 3) for r in rows] == [0.926, 1.993, 4.377, 9.997, 24.382]
    assert [round(r["rdp"], 3) for r in rows] == [1.231, 2.524, 5.299, 11.597, 27.194]
    assert all(r["saving"] > 0.1 for r in rows)


def test_fixed_length_equals_exact_composition():
    for k in (0, 1, 7, 40):
        pmf = np.zeros(k + 1)
        pmf[k] = 1.0
        for eps in (0.0, 0.5, 3.0):
            want = gaussian_composition_delta(eps, [0.3] * k) if k else 0.0
            assert mixture_delta(eps, pmf, 0.3) == pytest.approx(want, rel=1e-12, abs=1e-300)
        if k:
            assert mixture_epsilon(1e-5, pmf, 0.3) == pytest.approx(gaussian_composition_epsilon([0.3] * k, 1e-5),
                                                                    rel=1e-9)


@settings(max_examples=80, deadline=None)
@given(T=st.integers(1, 300), p=st.floats(0.001, 1.0), mu=st.floats(0.01, 3.0), eps=st.floats(0.0, 10.0),
       q=st.floats(0.0, 1.0))
def test_mixture_never_looser_than_capped(T, p, mu, eps, q):
    pmf = binom(T, p)
    k_cap = int(round(q * T))
    assert mixture_delta(eps, pmf, mu) <= capped_delta(eps, pmf, mu, k_cap) + 1e-12
    # and in epsilon, against the quantile accountants' split (tail delta/4, conversion at the rest)
    d = 1e-5
    m = mixture_epsilon(d, pmf, mu)
    assert m <= capped_epsilon(d, pmf, mu, tail_delta=d / 4) + 1e-9
    assert capped_epsilon(d, pmf, mu, tail_delta=d / 4) <= capped_epsilon(d, pmf, mu, tail_delta=d / 4,
                                                                           conversion="rdp") + 1e-9


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 200), p=st.floats(0.01, 0.9), mu=st.floats(0.01, 2.0), grow=st.floats(1.01, 3.0),
       base=st.floats(0.0, 1.0))
def test_monotone_in_sigma_and_in_visits(T, p, mu, grow, base):
    pmf = binom(T, p)
    e = mixture_epsilon(1e-5, pmf, mu, mu_base=base)
    assert mixture_epsilon(1e-5, pmf, mu * grow, mu_base=base) >= e - 1e-9  # less noise: larger epsilon
    assert mixture_epsilon(1e-5, binom(T + 20, p), mu, mu_base=base) >= e - 1e-9  # more visits
    assert mixture_epsilon(1e-5, pmf, mu, mu_base=base + 0.1) >= e - 1e-9


def test_sigma_round_trip_and_edges():
    pmf = binom(100, 0.25)
    s = mixture_sigma(1.0, 1e-5, pmf, sensitivity=2.0)
    assert mixture_delta(1.0, pmf, 2.0 / s) <= 1e-5
    assert mixture_delta(1.0, pmf, 2.0 / (s * (1 - 1e-6))) > 1e-5
    assert mixture_epsilon(1e-5, pmf, 2.0 / s) == pytest.approx(1.0, rel=1e-7)
    # p = 0: no visits, delta 0, no noise needed
    none = binom(50, 0.0)
    assert mixture_delta(0.0, none, 5.0) == 0.0 and mixture_epsilon(1e-5, none, 5.0) == 0.0
    assert mixture_sigma(1.0, 1e-5, none) == 0.0
    # huge sigma: epsilon -> 0
    assert mixture_epsilon(1e-5, pmf, 1e-9) < 1e-6
    # noise-free steps with positive probability: no finite epsilon unless that mass is below delta
    assert mixture_epsilon(1e-5, pmf, math.inf) == math.inf
    assert mixture_epsilon(0.5, [0.9, 0.1], math.inf) == 0.0
    # a truncated pmf is charged its missing mass
    assert mixture_delta(100.0, [0.5, 0.3], 0.1) == pytest.approx(0.2, abs=1e-12)
    with pytest.raises(ValueError, match="pmf"):
        mixture_delta(1.0, [0.7, 0.7], 0.1)
    with pytest.raises(ValueError, match="epsilon"):
        mixture_delta(-1.0, [1.0], 0.1)
    with pytest.raises(ValueError, match="mu_per_step"):
        mixture_delta(1.0, [1.0], -0.1)
    with pytest.raises(ValueError, match="out of range"):  # the start alone already spends more than delta
        mixture_sigma(0.1, 1e-5, pmf, mu_base=3.0)


def test_per_k_profile_matches_dp_accounting_pld():
    from dp_accounting.pld import privacy_loss_distribution as pld

    sigma, Delta = 4.0, 2.0
    for k in (1, 5, 20):
        ref = pld.from_gaussian_mechanism(standard_deviation=sigma, sensitivity=Delta,
                                          value_discretization_interval=1e-4).self_compose(k)
        for eps in (0.5, 1.0, 2.0):
            ours = gaussian_composition_delta(eps, [Delta / sigma] * k)
            theirs = ref.get_delta_for_epsilon(eps)
            assert theirs >= ours * (1 - 1e-6)  # dp_accounting's pessimistic estimate is an upper bound
            assert theirs == pytest.approx(ours, rel=2e-2, abs=1e-9)


def test_mixture_against_numerical_integration_and_hidden_count_pld():
    from dp_accounting.pld import privacy_loss_distribution as pld

    pmf = binom(12, 0.3)
    mu_step = 0.6
    mus = np.sqrt(np.arange(pmf.size)) * mu_step
    # the count hidden (one dimension, sensitivity mu_k with probability P(k)), coarse so the test stays fast
    hidden = pld.from_mixture_gaussian_mechanism(standard_deviation=1.0, sensitivities=list(mus[:5]),
                                                 sampling_probs=list(pmf[:5] / pmf[:5].sum()),
                                                 value_discretization_interval=1e-2)
    hidden_deltas = []
    for eps in (0.25, 1.0, 2.0):
        # the count revealed: sum_k P(k) int max(0, phi(x - mu_k) - e^eps phi(x)) dx
        direct = sum(w * integrate.quad(lambda x, m=m: max(0.0, stats.norm.pdf(x - m) - math.exp(eps)
                                                           * stats.norm.pdf(x)), -12, 12 + m, limit=200)[0]
                     for w, m in zip(pmf, mus))
        ours = mixture_delta(eps, pmf, mu_step)
        assert ours == pytest.approx(direct, rel=1e-6, abs=1e-12)
        # joint convexity: the hidden-count mixture is never above the revealed-count bound
        ours = mixture_delta(eps, pmf[:5] / pmf[:5].sum(), mu_step)
        hidden_deltas.append((hidden.get_delta_for_epsilon(eps), ours))
    for theirs, ours in hidden_deltas:
        assert theirs <= ours * (1 + 1e-2) + 1e-9
