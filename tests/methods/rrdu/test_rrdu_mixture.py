"""RR-DU accountant "M" (per-visit Gaussian averaged over the visit count) and the exact composition in "S"."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from unlearnkit.methods.rrdu.mixture import (accountant_comparison, observer_visit_pmf, rrdu_mixture_certify,
                                             rrdu_mixture_epsilon, rrdu_mixture_sigma, rrdu_visit_pmf)
from unlearnkit.methods.rrdu import sound
from unlearnkit.methods.rrdu.certify import rrdu_epsilon
from unlearnkit.privacy.amplification import visit_count_bound


def test_pinned_comparison_from_the_docstring():
    c = accountant_comparison(sigma=5.0, delta=1e-5, T_unlearn=100, p=0.25, sensitivity=1.0)
    assert c["capped_rdp"] == pytest.approx(7.51, abs=0.01)
    assert c["capped_gaussian"] == pytest.approx(6.35, abs=0.01)
    assert c["mixture"] == pytest.approx(4.67, abs=0.01)


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 200), p=st.floats(0.01, 1.0), sigma=st.floats(0.5, 50.0), rho=st.floats(0.0, 2.0))
def test_never_looser_than_capped_nor_than_accountant_c(T, p, sigma, rho):
    c = accountant_comparison(sigma=sigma, delta=1e-5, T_unlearn=T, p=p, sensitivity=1.0, train_rho=rho)
    assert c["mixture"] <= c["capped_gaussian"] + 1e-9 <= c["capped_rdp"] + 2e-9
    # accountant C's per-visit diagnostic (quantile, RDP at delta/2, Delta = sens_factor L = 1)
    diag = rrdu_epsilon("C", sigma=sigma, delta=1e-5, n_clients=4, p=p, T_unlearn=T, L=0.5)
    assert rrdu_mixture_epsilon(sigma=sigma, delta=1e-5, T_unlearn=T, p=p, sensitivity=1.0) <= diag + 1e-9


def test_fixed_count_equals_exact_composition_and_monotone():
    # p = 1: every hop visits u, so the count is fixed at T and the mixture is the exact composition
    e = rrdu_mixture_epsilon(sigma=4.0, delta=1e-5, T_unlearn=30, p=1.0, sensitivity=1.0, train_rho=0.1)
    rho = 0.1 + 30 / (2 * 16.0)
    assert e == pytest.approx(sound._rho_epsilon(rho, 1e-5, "gaussian"), rel=1e-9)
    es = [rrdu_mixture_epsilon(sigma=s, delta=1e-5, T_unlearn=50, p=0.2, sensitivity=1.0) for s in (1, 2, 4, 8)]
    assert es == sorted(es, reverse=True)
    ts = [rrdu_mixture_epsilon(sigma=3.0, delta=1e-5, T_unlearn=t, p=0.2, sensitivity=1.0) for t in (10, 50, 200)]
    assert ts == sorted(ts)


def test_sigma_round_trip_and_edges():
    s = rrdu_mixture_sigma(epsilon=1.0, delta=1e-5, T_unlearn=100, p=0.1, sensitivity=0.9, train_rho=0.005)
    e = rrdu_mixture_epsilon(sigma=s, delta=1e-5, T_unlearn=100, p=0.1, sensitivity=0.9, train_rho=0.005)
    assert e == pytest.approx(1.0, rel=1e-7) and e <= 1.0 + 1e-12
    assert rrdu_mixture_sigma(epsilon=1.0, delta=1e-5, T_unlearn=100, p=0.1, sensitivity=0.0) == 0.0
    assert rrdu_mixture_epsilon(sigma=1.0, delta=1e-5, T_unlearn=100, p=0.0, sensitivity=1.0) == 0.0
    assert rrdu_mixture_epsilon(sigma=0.0, delta=1e-5, T_unlearn=100, p=0.5, sensitivity=1.0) == math.inf
    assert rrdu_mixture_epsilon(sigma=1e9, delta=1e-5, T_unlearn=100, p=0.5, sensitivity=1.0) < 1e-6
    with pytest.raises(ValueError, match="observer"):
        rrdu_mixture_epsilon(sigma=1.0, delta=1e-5, T_unlearn=10, p=0.5, sensitivity=1.0, observer="me")
    with pytest.raises(ValueError, match="n_clients"):
        rrdu_mixture_epsilon(sigma=1.0, delta=1e-5, T_unlearn=10, p=0.5, sensitivity=1.0, observer="own_visits")


def test_observer_pmf_against_simulated_routes():
    from unlearnkit.graphs.walks import rrdu_route

    T, p, N, u, v = 20, 0.3, 4, 0, 2
    pmf = observer_visit_pmf(T, p, N)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    rng = np.random.default_rng(0)
    counts = np.zeros(T + 1)
    for _ in range(20000):
        r = rrdu_route(N, u, p, T, rng=rng)
        last = np.nonzero(r == v)[0]
        counts[0 if last.size == 0 else int(np.sum(r[: last[-1]] == u))] += 1
    assert np.abs(counts / counts.sum() - pmf).max() < 0.015
    # the own-visits observer sees fewer visits: never a larger epsilon than the every-model observer
    kw = dict(sigma=2.0, delta=1e-5, T_unlearn=T, p=p, sensitivity=1.0)
    assert rrdu_mixture_epsilon(observer="own_visits", n_clients=N, **kw) <= rrdu_mixture_epsilon(**kw)
    assert rrdu_visit_pmf(T, p).sum() == pytest.approx(1.0)


def test_certificate_modes():
    sound_cert = rrdu_mixture_certify(sigma=3.0, delta=1e-5, T_unlearn=50, p=0.2, sensitivity=1.0, train_rho=0.2)
    assert sound_cert.mode == "sound" and sound_cert.certified and math.isfinite(sound_cert.epsilon)
    diag = rrdu_mixture_certify(sigma=3.0, delta=1e-5, T_unlearn=50, p=0.2, sensitivity=1.0)
    assert diag.mode == "none" and diag.epsilon == math.inf and not diag.certified
    assert diag.constants["epsilon_diagnostic"] < sound_cert.epsilon


@settings(max_examples=40, deadline=None)
@given(steps=st.integers(0, 400), sigma=st.floats(0.5, 100.0), visits=st.integers(0, 50),
       variant=st.sampled_from(["exact", "lightweight", "corrected"]))
def test_accountant_s_exact_composition_never_looser_than_rdp(steps, sigma, visits, variant):
    for name in ("noisy_walk_epsilon",):
        exact = getattr(sound, name)(sigma=sigma, L=0.5, u_steps=steps, delta=1e-5)
        rdp = getattr(sound, name)(sigma=sigma, L=0.5, u_steps=steps, delta=1e-5, composition="rdp")
        assert exact <= rdp + 1e-9
    rho = sound.noisy_walk_rho(sigma=sigma, L=0.5, u_steps=steps)
    kw = dict(train_rho=rho, variant=variant, sigma=sigma, L=0.5, m=5, n_u=10, u_visits=visits, delta=1e-5)
    a, b = sound.rrdu_noisy_start_certify(**kw), sound.rrdu_noisy_start_certify(composition="rdp", **kw)
    assert a.epsilon <= b.epsilon + 1e-9 and a.mode == b.mode == "sound"


def test_noisy_walk_sigma_exact_round_trip_and_saving():
    s = sound.noisy_walk_sigma(epsilon=1.0, delta=1e-5, L=1.0, hops=20, n_clients=4, local_steps=2)
    s_rdp = sound.noisy_walk_sigma(epsilon=1.0, delta=1e-5, L=1.0, hops=20, n_clients=4, local_steps=2,
                                   composition="rdp")
    steps = 2 * visit_count_bound(20, 0.25, 1e-5 / 4)
    assert sound.noisy_walk_epsilon(sigma=s, L=1.0, u_steps=steps, delta=1e-5 / 2) == pytest.approx(1.0, rel=1e-9)
    assert s < s_rdp and s / s_rdp == pytest.approx(0.7707, abs=0.001)
