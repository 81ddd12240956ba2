"""Calibrators of noisy fine-tuning (Koloskova et al. 2025, digest 004 sections 3.3-3.6): the pure formulas of
:mod:`unlearnkit.methods.noisy_finetune.bounds`."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unlearnkit.methods import noisy_finetune as nf
from unlearnkit.privacy.linear_rdp import linear_rdp_slope

# digest 004 section 3.4: (lambda, C1, gamma, C0, table eps, T, sigma), all reproduced by the paper's code
VECTORS = [
    (200, 100, 1e-3, 0.1, 1, 1, 0.254558),
    (50, 10, 1e-2, 1.0, 1, 5, 0.275702),
    (50, 10, 1e-2, 20, 1, 11, 0.256790),
    (50, 100, 1e-4, 0.1, 1, 10, 0.088213),
    (1, 10, 1e-3, 0.1, 1, 10, 0.089197),
    (50, 10, 1e-3, 0.1, 1, 10, 0.077256),
    (50, 1, 1e-3, 1.0, 1, 93, 0.012501),
    (10, 100, 1e-4, 0.01, 1, 1, 0.028270),
    (750, 10, 1e-4, 0.01, 1, 6, 0.007752),
    (500, 100, 1e-3, 1, 0.1, 5, 0.871847),
    (1, 100, 0.1, 0.1, 10, 1, 4.512385),
    (0.1, 0.01, 0.1, 0.1, 10, 70, 0.007260),
    (500, 100, 1e-3, 0.01, 1, 1, 0.148492),
    (10, 0.1, 1e-2, 0.1, 1, 30, 0.008524),
]


@pytest.mark.parametrize("lam,C1,gamma,C0,eps,T,sigma", VECTORS)
def test_paper_mode_reproduces_tables(lam, C1, gamma, C0, eps, T, sigma):
    assert nf.bounds.paper_T(C0, C1, gamma, lam) == T
    got = nf.bounds.gc_sigma(eps, 1e-5, C0=C0, C1=C1, gamma=gamma, lam=lam, T=T, mode="paper")
    assert round(got, 6) == sigma


def _dp_accounting_eps(rho, delta):
    """Independent check: D_q <= q rho is the RDP curve of a Gaussian with noise multiplier 1/sqrt(2 rho)."""
    import dp_accounting as dpa
    from dp_accounting import rdp

    orders = [1 + x / 200 for x in range(1, 4000)] + list(range(21, 2000))
    acc = rdp.RdpAccountant(orders=orders)
    acc.compose(dpa.GaussianDpEvent(1.0 / math.sqrt(2 * rho)))
    return acc.get_epsilon(delta)


def test_paper_sigma_certifies_about_7_not_1():
    # the paper's table sigma at "eps = 1": Theorem A.9 gives D_q <= q * 1, i.e. (7.08, 1e-5)
    lam, C1, gamma, C0, eps, T, sigma = VECTORS[1]
    kw = dict(C0=C0, C1=C1, gamma=gamma, lam=lam, T=T)
    s = nf.bounds.gc_sigma(1, 1e-5, **kw, mode="paper")
    assert nf.bounds.gc_rdp_slope(s, **kw) == pytest.approx(1.0, rel=1e-12)
    sound = nf.bounds.gc_epsilon(s, 1e-5, **kw, mode="sound")
    assert sound == pytest.approx(7.0772, abs=1e-3)
    assert sound == pytest.approx(_dp_accounting_eps(1.0, 1e-5), abs=1e-3)
    assert nf.bounds.gc_epsilon(s, 1e-5, **kw, mode="paper") == pytest.approx(1.0036, abs=1e-4)
    ratio = nf.bounds.gc_sigma(1, 1e-5, **kw, mode="sound") / s
    assert ratio == pytest.approx(5.7207, abs=1e-3)


@pytest.mark.parametrize("eps", [0.1, 1.0, 10.0])
def test_sound_mode_round_trip_and_independent_accountant(eps):
    kw = dict(C0=1.0, C1=10.0, gamma=0.01, lam=0.0, T=10)
    s = nf.bounds.gc_sigma(eps, 1e-5, **kw)
    assert nf.bounds.gc_epsilon(s, 1e-5, **kw) == pytest.approx(eps, rel=1e-6)
    assert _dp_accounting_eps(nf.bounds.gc_rdp_slope(s, **kw), 1e-5) == pytest.approx(eps, rel=2e-3)


def test_sound_reference_values_and_closed_form():
    assert linear_rdp_slope(1, 1e-5, method="balle") == pytest.approx(0.030557, abs=1e-6)
    assert linear_rdp_slope(0.1, 1e-5, method="balle") == pytest.approx(4.330e-4, rel=1e-3)
    assert nf.bounds.gc_sigma(1, 1e-5, C0=1, C1=10, gamma=0.01, T=10) == pytest.approx(5.117, abs=1e-3)
    assert nf.bounds.gc_sigma_closed_form(1, 1e-5, C0=1, C1=10, gamma=0.01, T=10) == pytest.approx(6.438, abs=1e-3)
    # eq. (5) is conservative at eps = 1 ...
    s5 = nf.bounds.gc_sigma_closed_form(1, 1e-5, C0=1, C1=10, gamma=0.01, T=10)
    assert nf.bounds.gc_epsilon(s5, 1e-5, C0=1, C1=10, gamma=0.01, T=10) < 1
    # ... but not on the whole claimed range eps < 3 log(1/delta)
    e = 3 * math.log(1e5) * 0.99
    s5 = nf.bounds.gc_sigma_closed_form(e, 1e-5, C0=1, C1=10, gamma=0.01, T=10)
    assert nf.bounds.gc_epsilon(s5, 1e-5, C0=1, C1=10, gamma=0.01, T=10) > e


def test_best_T_is_near_the_papers_optimum_for_lam_zero():
    T, s = nf.bounds.best_T(1, 1e-5, C0=1, C1=10, gamma=0.01)
    assert T == 10  # T* = C0 / (gamma C1)
    for other in (5, 20):
        assert nf.bounds.gc_sigma(1, 1e-5, C0=1, C1=10, gamma=0.01, T=other) > s


@settings(max_examples=25, deadline=None)
@given(eps=st.floats(0.05, 20), C0=st.floats(0.01, 10), C1=st.floats(0.01, 10), lam=st.sampled_from([0.0, 1.0, 10.0]))
def test_sound_sigma_monotone(eps, C0, C1, lam):
    kw = dict(gamma=0.01, lam=lam, T=7)
    base = nf.bounds.gc_sigma(eps, 1e-5, C0=C0, C1=C1, **kw)
    assert nf.bounds.gc_sigma(eps * 1.5, 1e-5, C0=C0, C1=C1, **kw) < base
    assert nf.bounds.gc_sigma(eps, 1e-5, C0=C0 * 1.5, C1=C1, **kw) > base
    assert nf.bounds.gc_sigma(eps, 1e-5, C0=C0, C1=C1 * 1.5, **kw) > base


def test_model_clipping_steps_match_tables():
    ratios = [0.1, 0.25, 0.5, 1, 1.25, 1.5, 1.95, 2.5, 3]
    assert [nf.bounds.mc_steps(1, 1e-5, C2=r, sigma=1) for r in ratios] == [1, 2, 3, 6, 9, 14, 36, 137, 602]
    assert [nf.bounds.mc_steps(1, 1e-5, C2=r, sigma=1, tight=False) for r in ratios] == [1, 3, 6, 18, 29, 49, 134, 566, 2612]
    # Tables 6/8: (C2, sigma) -> T
    for C2, sigma, T in [(0.2, 0.2, 6), (0.5, 0.5, 6), (0.625, 0.5, 9), (0.975, 0.5, 36), (0.001, 0.01, 1),
                         (0.01, 0.01, 6)]:
        assert nf.bounds.mc_steps(1, 1e-5, C2=C2, sigma=sigma) == T
    tr = nf.bounds.mc_delta_trace(1, C2=1, sigma=1, T=10)
    assert tr[0] == 1 and np.all(np.diff(tr[tr > 0]) < 0) and tr[6] <= 1e-5 < tr[5]


def test_output_perturbation_and_group_privacy():
    for C0, s in [(1, 9.689610), (0.1, 0.968961), (0.01, 0.096896)]:
        assert nf.bounds.op_sigma(1, 1e-5, C0=C0, mode="paper") == pytest.approx(s, abs=1e-6)
    assert nf.bounds.op_sigma(1, 1e-5, C0=1) / 1 == pytest.approx(7.46, abs=0.01)
    assert nf.bounds.op_sigma(10, 1e-5, C0=1, mode="paper") < nf.bounds.op_sigma(10, 1e-5, C0=1)  # classic under-noises
    e1, d_sound = nf.bounds.dpsgd_group_targets(50, 1e-5, 10)
    _, d_paper = nf.bounds.dpsgd_group_targets(50, 1e-5, 10, mode="paper")
    assert e1 == 5 and d_sound == pytest.approx(d_paper / 10)
    assert nf.bounds.dpsgd_group_sigma_formula(1, 1e-5, C=1, k=4) > 3 * nf.bounds.dpsgd_group_sigma_formula(1, 1e-5, C=1, k=1)


@pytest.mark.parametrize("call,name", [
    (lambda: nf.bounds.gc_sigma(1, 1e-5, C0=1, C1=1, gamma=0.5, lam=2, T=3), "gamma*lam"),
    (lambda: nf.bounds.gc_sigma(1, 1e-5, C0=0, C1=1, gamma=0.1, T=3), "C0"),
    (lambda: nf.bounds.gc_sigma(1, 1e-5, C0=1, C1=-1, gamma=0.1, T=3), "C1"),
    (lambda: nf.bounds.gc_sigma(0, 1e-5, C0=1, C1=1, gamma=0.1, T=3), "epsilon"),
    (lambda: nf.bounds.gc_sigma(1, 1.5, C0=1, C1=1, gamma=0.1, T=3), "delta"),
    (lambda: nf.bounds.gc_sigma(1, 1e-5, C0=1, C1=1, gamma=0.1, T=0), "T"),
    (lambda: nf.bounds.gc_sigma_closed_form(1, 1e-5, C0=1, C1=1, gamma=0.1, lam=1, T=3), "gamma*lam"),
    (lambda: nf.bounds.mc_steps(1, 1e-5, C2=0, sigma=1), "C2"),
    (lambda: nf.bounds.op_sigma(1, 1e-5, C0=-1), "C0"),
    (lambda: nf.GradientClippingConfig(C0=1, C1=1, gamma=0.2, lam=5), "gamma*lam"),
    (lambda: nf.ModelClippingConfig(sigma=0), "sigma"),
])
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name.replace("*", r"\*")):
        call()


@pytest.mark.parametrize("mode", ["paper", "sound"])
def test_group_targets_refuse_a_delta_beyond_floating_point(mode):
    # epsilon 1000 over 60 records: delta1 = delta / (k e^{(k-1) eps1}) ~ e^-1000 (an OverflowError before)
    from unlearnkit.methods.noisy_finetune import bounds as B

    with pytest.raises(ValueError, match="epsilon=1000"):
        B.dpsgd_group_targets(1000.0, 1e-5, 60, mode=mode)
    e1, d1 = B.dpsgd_group_targets(50.0, 1e-5, 60, mode=mode)
    assert e1 == pytest.approx(50 / 60) and 0 < d1 < 1e-5
