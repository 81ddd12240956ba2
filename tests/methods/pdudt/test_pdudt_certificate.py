"""Theorem 4.9's gap bound and Corollary 4.10's noise, in paper, sound and manual mode."""

import math

import pytest

from unlearnkit.methods import pdudt as P

C = P.certify.GapConstants(L=1.0, sgd_var=1.0, het_var=1.0, delta_f=2.3, delta_f_tilde=2.3, rho1=0.9, rho2=0.9)


def test_gap_bound_pinned_to_digest_numbers():
    # digest 002, section 3.3: eta=1e-3, t1=100, n=10, L=1, rho=0.9, sigma^2=1, Delta f=2.3
    b = P.certify.gap_bound(lr=1e-3, t1=100, n=10, constants=C)
    assert b.terms["lr_max"] == pytest.approx(0.00289, abs=1e-5)
    assert b.terms["D1"] == pytest.approx(0.981, abs=1e-3)
    assert b.terms["D2"] == pytest.approx(0.974, abs=1e-3)
    assert b.B1 == pytest.approx(31.7, abs=0.05)
    assert b.B2 == pytest.approx(11.9, abs=0.05)
    assert b.d1 == pytest.approx(43.6, abs=0.05)
    assert b.terms["I3*Delta_f"] == pytest.approx(858, abs=1)
    half = P.certify.GapConstants(**{**C.__dict__, "rho1": 0.5, "rho2": 0.5})
    assert P.certify.gap_bound(lr=1e-3, t1=100, n=10, constants=half).d1 == pytest.approx(32.5, abs=0.05)
    assert P.certify.gap_bound(lr=1e-3, t1=80, n=10, constants=C).d1 == pytest.approx(35.4, abs=0.05)


def test_sound_gap_bound_is_never_smaller():
    for lr in (1e-4, 1e-3, 2.5e-3):
        paper = P.certify.gap_bound(lr=lr, t1=100, n=10, constants=C, mode="paper")
        sound = P.certify.gap_bound(lr=lr, t1=100, n=10, constants=C, mode="sound")
        assert sound.d1 >= paper.d1
        assert sound.B1 == paper.B1


def test_gap_bound_grows_with_t1_and_lr():
    ds = [P.certify.gap_bound(lr=1e-4, t1=t, n=10, constants=C).d1 for t in (10, 50, 100)]
    assert ds == sorted(ds)
    ds = [P.certify.gap_bound(lr=lr, t1=50, n=10, constants=C).d1 for lr in (1e-5, 1e-4, 1e-3)]
    assert ds == sorted(ds)


def test_step_size_condition_names_lr():
    with pytest.raises(ValueError, match=r"lr=0\.01 .*Theorem 4\.9"):
        P.certify.gap_bound(lr=0.01, t1=100, n=10, constants=C)


@pytest.mark.parametrize("eps,mult", [(0.1, 48.09), (0.5, 9.70), (1.0, 4.90), (2.0, 2.50), (5.0, 1.06), (10.0, 0.57)])
def test_paper_sigma_multiplier_table(eps, mult):
    # digest 002 section 3.3, "exact" column at delta = 1e-5
    assert P.certify.pdudt_sigma(1.0, eps, 1e-5, "paper") == pytest.approx(mult, abs=0.006)
    assert P.certify.bun_steinke_epsilon(1.0, P.certify.pdudt_sigma(1.0, eps, 1e-5, "paper"), 1e-5) == pytest.approx(eps)


def test_sound_sigma_covers_the_markov_tail():
    from unlearnkit.privacy.gaussian import analytic_gaussian_sigma

    delta = 1e-5
    s = P.certify.pdudt_sigma(2.0, 1.0, delta, "sound")
    assert s == pytest.approx(analytic_gaussian_sigma(1.0, delta / 2, 2.0 / math.sqrt(delta / 2)))
    assert s > P.certify.pdudt_sigma(2.0, 1.0, delta, "paper")


def test_certificates_paper_sound_manual():
    paper = P.certify.pdudt_certificate(lr=1e-3, t1=100, n=10, constants=C, mode="paper", epsilon=1.0, delta=1e-5)
    assert paper.mode == "paper" and not paper.certified  # paper mode is a reproduction, not a proof
    assert paper.sigma == pytest.approx(43.6 * 4.90, rel=2e-3)  # about 214 (digest 3.3)
    assert paper.constants["d1"] == pytest.approx(43.6, abs=0.05)
    sound = P.certify.pdudt_certificate(lr=1e-3, t1=100, n=10, constants=C, mode="sound", epsilon=1.0, delta=1e-5)
    assert sound.sigma > paper.sigma
    # hand-set constants (variances, Delta_f) depend on the leaver's data: the sound calibration certifies nothing
    assert sound.mode == "none" and not sound.certified and math.isinf(sound.epsilon)
    assert "set by hand" in sound.note and sound.constants["calibration_mode"] == "sound"
    manual = P.certify.pdudt_certificate(lr=1e-3, t1=100, n=10, constants=C, noise="manual", sigma=0.01)
    assert manual.mode == "none" and not manual.certified and math.isinf(manual.epsilon)
    assert "not certified" in manual.note and manual.sigma == 0.01
    assert "213.7" in manual.note  # the certified sigma beside the manual one
    assert manual.constants["certified_sigma"] == pytest.approx(paper.sigma)
    assert manual.constants["implied_epsilon"] > 1e6  # "epsilon in the millions" (digest 3.3)
    bare = P.certify.pdudt_certificate(lr=1e-3, t1=100, n=10, constants=None, noise="manual", sigma=0.0)
    assert not bare.certified


def test_certificate_bad_inputs():
    with pytest.raises(ValueError, match="sigma"):
        P.certify.pdudt_certificate(lr=1e-3, t1=10, n=10, constants=C, noise="manual")
    with pytest.raises(ValueError, match="constants"):
        P.certify.pdudt_certificate(lr=1e-3, t1=10, n=10, constants=None)
    with pytest.raises(ValueError, match="noise"):
        P.certify.pdudt_certificate(lr=1e-3, t1=10, n=10, constants=C, noise="auto")
    with pytest.raises(ValueError, match="rho1"):
        P.certify.GapConstants(L=1.0, sgd_var=1.0, het_var=1.0, delta_f=1.0, delta_f_tilde=1.0, rho1=1.5, rho2=0.5)
    with pytest.raises(ValueError, match="delta"):
        P.certify.pdudt_sigma(1.0, 1.0, 0.0)
