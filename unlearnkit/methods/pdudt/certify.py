"""PDUDT's certificate: Theorem 4.9's gap bound ``d1`` and Corollary 4.10's Gaussian noise (pure maths).

Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies", ICML 2025 (digest 002).

- :func:`gap_bound`: ``d1 = B1 + B2`` (Lemma B.1 + Lemma B.2 => Theorem 4.9), with the step-size condition
  :func:`step_size_limit`; constants of Assumptions 4.5 to 4.8 in :class:`GapConstants`.
- :func:`pdudt_sigma`: the noise on the *average* model for an ``(epsilon, delta)`` target (Def. 4.3, Alg. 2
  line 14), in ``mode="paper"`` (the paper's zCDP calibration with ``d1`` taken as a sensitivity) or
  ``mode="sound"`` (a Markov tail on the expected ``d1`` plus the analytic Gaussian mechanism);
  :func:`bun_steinke_epsilon` is its inverse in epsilon.
- :func:`pdudt_certificate`: the :class:`~unlearnkit.core.Certificate` of Corollary 4.10, issued only for a
  correction the bound covers (:func:`lemma_coverage`) and only when the spectral constants bound the rounds.

Which correction the bound covers (paper, Appendix D, Eq. 50). Lemma B.2 and Corollary 4.10 are *stated* for
Algorithm 2, i.e. Eq. (9) with the convex weights ``p_i^t`` of Eq. (8) (and PDUDT(ES), Eq. 52). The *proof*
bounds ``E||sum_t p_i^t delta_i^t||^2 <= t1 sum_t (p_i^t)^2 E||delta_i^t||^2 <= t1 sum_t E||delta_i^t||^2``
(Cauchy-Schwarz, then ``p_i^t <= 1``; the ``t1`` is confirmed by the printed ``t1^2 I1'`` and ``I3' = 36 eta n
t1 + ...``): the only property of the weights it uses is ``0 <= w_i^t <= 1``. So ``mode="paper"`` (a
reproduction of what the paper states) covers ``correction_scale="paper"`` only, while ``mode="sound"`` covers
every scale of :mod:`unlearnkit.decentral.correction`: ``"paper"``, ``"sum"`` (``w = 1``) and ``"none"``
(``w = 0``; Theorem 4.9's triangle inequality then needs only ``B1 <= d1``). Either retrain rule is covered:
both give a symmetric doubly-stochastic ``W~`` (Assumption 4.7), provided ``rho2`` bounds *that* ``W~`` and the
reference (perturbed retraining) retrains with the same ``W~``.

The failure probability of Definition 4.3 is called ``delta`` here, as in the certificate's ``delta`` field;
the paper writes it ``beta`` (its ``delta`` names the residuals of Eq. 7). Plain numbers in, plain numbers
out: no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ..._validate import check_choice, check_int, check_positive, check_range
from ...core import Certificate
from ...privacy.gaussian import analytic_gaussian_sigma, zcdp_gaussian_sigma
from ...privacy.linear_rdp import linear_rdp_epsilon


NOISE_MODES = ("certified", "manual")
# the correction scales of unlearnkit.decentral.correction (which imports torch; this module may not)
_SCALES = ("paper", "sum", "none")


def _check_delta(delta: float) -> float:
    # the paper writes it beta (its delta are the residuals of Eq. 7); the message also names the certificate
    # field it ends up in, so a reader can match the two
    v = float(delta)
    if not (math.isfinite(v) and 0.0 < v < 1.0):
        raise ValueError(f"delta={delta!r} is out of range: expected delta in (0, 1) (the failure probability of "
                         f"Definition 4.3, the paper's beta)")
    return v


@dataclass(frozen=True, kw_only=True)
class GapConstants:
    """The constants Theorem 4.9 assumes (digest 3.1), all user-supplied or estimated.

    Attributes
    ----------
    L:
        Smoothness of every local loss (Assumption 4.5).
    sgd_var, het_var:
        ``sigma_1^2`` (stochastic-gradient variance) and ``sigma_2^2`` (heterogeneity), Assumption 4.6.
    delta_f, delta_f_tilde:
        ``E f(theta^0) - E f(avg theta^{t1})`` and the same for the retrain run; for a non-negative loss
        ``f(theta^0)`` bounds both (digest 3.3).
    rho1, rho2:
        The largest second eigenvalue modulus of ``W^t`` and ``W~^t`` over rounds (Assumption 4.8).
    """

    L: float
    sgd_var: float
    het_var: float
    delta_f: float
    delta_f_tilde: float
    rho1: float
    rho2: float

    def __post_init__(self) -> None:
        check_positive("L", self.L)
        for name in ("sgd_var", "het_var", "delta_f", "delta_f_tilde"):
            check_positive(name, getattr(self, name), allow_zero=True)
        check_range("rho1", self.rho1, 0.0, 1.0)
        check_range("rho2", self.rho2, 0.0, 1.0)

    def as_dict(self) -> dict[str, float]:
        return {"L": self.L, "sigma1^2": self.sgd_var, "sigma2^2": self.het_var, "Delta_f": self.delta_f,
                "Delta_f_tilde": self.delta_f_tilde, "rho1": self.rho1, "rho2": self.rho2}


def step_size_limit(*, L: float, t1: int, n: int, rho1: float, rho2: float) -> float:
    """The step-size condition of Lemmas B.1, B.2 and Theorem 4.9 (digest 3.2)::

        eta < min{ sqrt(1/(12 L^2 t1^2)), sqrt(1/(24 L^2 rho1^2 n t1)), sqrt(1/(36 L^2 rho2^2 (n-1) t1)) }

    Parameters
    ----------
    L : float
        Smoothness constant of Assumption 4.5.
    t1 : int
        Request round.
    n : int
        Number of clients, ``>= 2``.
    rho1 : float
        Spectral constant of the rounds' ``W^t`` (a term is dropped when 0).
    rho2 : float
        Spectral constant of the retrain rule's ``W~^t`` (a term is dropped when 0).

    Returns
    -------
    float
        The bound on ``eta`` (the condition is strict: ``eta`` must be below it).

    References
    ----------
    Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies" (ICML 2025, digest 002),
    Lemmas B.1 and B.2 and Theorem 4.9.
    """
    lims = [math.sqrt(1.0 / (12 * L**2 * t1**2))]
    if rho1 > 0:
        lims.append(math.sqrt(1.0 / (24 * L**2 * rho1**2 * n * t1)))
    if rho2 > 0:
        lims.append(math.sqrt(1.0 / (36 * L**2 * rho2**2 * (n - 1) * t1)))
    return min(lims)


@dataclass(frozen=True)
class GapBound:
    """``d1 = B1 + B2`` of Theorem 4.9 and the terms it is made of (for the calculator in notebook 08)."""

    B1: float
    B2: float
    terms: dict[str, float]
    mode: str

    @property
    def d1(self) -> float:
        return self.B1 + self.B2


def gap_bound(*, lr: float, t1: int, n: int, constants: GapConstants, mode: str = "paper") -> GapBound:
    """Theorem 4.9's bound ``d1`` on the distance between the average corrected and average retrained model.

    ``B1`` (Lemma B.1: original vs retrain) and ``B2`` (Lemma B.2: size of the correction, with or without
    ES) use the constants ``D1..D3, E1..E3, I1..I4, I1'..I3'`` of digest 3.2. The theorem statement rounds the
    lemma's ``(n - 1)`` up to ``n`` in the ``E2`` parts of ``I2`` and ``I4``; both modes use the theorem's ``n``.

    ``mode="paper"`` prints ``D2`` in ``I2'`` as the paper does; ``mode="sound"`` uses ``min(D1, D2)``
    because the derivation gives ``D1`` (digest P9). Both bound an *expected* distance
    ``sqrt(E||.||^2)``, not a worst case (digest P8): :func:`pdudt_sigma` handles that in sound mode.

    Raises ``ValueError`` naming ``lr`` when the step-size condition fails.

    Parameters
    ----------
    lr : float
        Training step size ``eta``, ``> 0`` and below :func:`step_size_limit`.
    t1 : int
        Request round, ``>= 1``.
    n : int
        Number of clients, ``>= 2``.
    constants : GapConstants
        The constants of Assumptions 4.5 to 4.8.
    mode : {"paper", "sound"}, default "paper"
        How ``I2'`` is read (see above).

    Returns
    -------
    GapBound
        ``B1``, ``B2`` (``d1 = B1 + B2``), the intermediate terms and ``mode``.

    References
    ----------
    Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies" (ICML 2025, digest 002),
    Theorem 4.9, Lemmas B.1 and B.2.
    """
    check_choice("mode", mode, ("paper", "sound"))
    eta = check_positive("lr", lr)
    t1 = check_int("t1", t1, low=1)
    n = check_int("n_clients", n, low=2)
    c = constants
    L, r1, r2 = c.L, c.rho1**2, c.rho2**2
    lim = step_size_limit(L=L, t1=t1, n=n, rho1=c.rho1, rho2=c.rho2)
    if not eta < lim:
        raise ValueError(f"lr={lr!r} is out of range: Theorem 4.9 needs lr in (0, {lim:.4g}) for t1={t1}, "
                         f"n={n}, L={L}, rho1={c.rho1}, rho2={c.rho2}")
    D1 = 1 - 24 * eta**2 * L**2 * r1 * n * t1
    D2 = 1 - 36 * eta**2 * L**2 * r2 * (n - 1) * t1
    D3 = r1 + r2 + 1.0 / (n - 1) ** 2
    E1 = (6 + 4 * r1) * r1 / D1
    E2 = r2 / D2
    E3 = 8 * (1 + r1) * r1 / (n * D1)
    I1 = (24 * eta**4 * L**2 * n * t1**4 + 144 * eta**5 * L**3 * t1**4) * (E1 + E2 + E3) \
        + 8 * eta**2 * (5 + 2 * r1) * t1**3
    I2 = 144 * eta**4 * L**2 * n * t1**4 * (E1 + 3 * E2 + 2 * E3) + 48 * eta**2 * (1 + r1) * t1**3
    I3 = 288 * eta**3 * L**2 * n * t1**3 * (E1 + E3) + 192 * eta * (1 + r1) * t1**2 / n
    I4 = 288 * eta**3 * L**2 * n * t1**3 * E2
    I1p = 6 * (eta**2 * n + 3 * eta**3 * L + 12 * eta**4 * L**2 * r1 * n**2 * t1 / D1
               + 72 * eta**5 * L**3 * r1 * n * t1 / D1)
    D_I2p = D2 if mode == "paper" else min(D1, D2)
    I2p = 18 * eta**2 * n + 432 * eta**4 * L**2 * r1 * n**2 * t1 / D_I2p
    I3p = 36 * eta * n * t1 + 864 * eta**3 * L**2 * r1 * n**2 * t1**2 / D1
    b1_terms = {"I1*sigma1^2": I1 * c.sgd_var, "I2*sigma2^2": I2 * c.het_var,
                "I3*Delta_f": I3 * c.delta_f, "I4*Delta_f_tilde": I4 * c.delta_f_tilde}
    b2_terms = {"D3*t1^2*I1'*sigma1^2": D3 * t1**2 * I1p * c.sgd_var,
                "D3*t1^2*I2'*sigma2^2": D3 * t1**2 * I2p * c.het_var,
                "D3*I3'*Delta_f": D3 * I3p * c.delta_f}
    B1 = math.sqrt(sum(b1_terms.values()))
    B2 = math.sqrt(sum(b2_terms.values()))
    terms = {"D1": D1, "D2": D2, "D3": D3, "E1": E1, "E2": E2, "E3": E3, "I1": I1, "I2": I2, "I3": I3,
             "I4": I4, "I1'": I1p, "I2'": I2p, "I3'": I3p, "lr_max": lim, **b1_terms, **b2_terms}
    return GapBound(B1, B2, terms, mode)


def bun_steinke_epsilon(sensitivity: float, sigma: float, delta: float) -> float:
    """The epsilon that the paper's calibration grants at std ``sigma`` for means ``sensitivity`` apart.

    Qiao et al. 2025, Def. 4.3 and Alg. 2 line 14 (digest 3.3): the inverse in epsilon of :func:`pdudt_sigma`
    in paper mode. The Gaussian is ``rho = Delta^2 / (2 sigma^2)``-zCDP (Bun & Steinke 2016, Prop. 1.6), which
    gives ``eps = rho + 2 sqrt(rho ln(1/delta))`` (Prop. 1.3): the closed-form linear Renyi conversion
    :func:`unlearnkit.privacy.linear_rdp.linear_rdp_epsilon` with ``method="mironov"``.

    Parameters
    ----------
    sensitivity : float
        Distance of the two means.
    sigma : float
        Noise std, ``> 0``.
    delta : float
        Failure probability, in ``(0, 1)``.

    Returns
    -------
    float
        The epsilon.

    References
    ----------
    Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies" (ICML 2025, digest 002),
    Definition 4.3 and Algorithm 2; Bun & Steinke, "Concentrated Differential Privacy: Simplifications,
    Extensions, and Lower Bounds" (TCC 2016), Propositions 1.3 and 1.6.
    """
    check_positive("sigma", sigma)
    delta = _check_delta(delta)
    rho = sensitivity**2 / (2.0 * sigma**2)
    return linear_rdp_epsilon(rho, delta, method="mironov")


def pdudt_sigma(d1: float, epsilon: float, delta: float, mode: str = "paper") -> float:
    """The std of the noise on the *average* model (per client: ``sqrt(n-1)`` times it), Cor. 4.10.

    ``mode="paper"``: ``sigma = d1 / (sqrt(2 ln(1/delta) + 2 eps) - sqrt(2 ln(1/delta)))`` (Def 4.3, Alg. 2
    line 14; digest 3.3 reconstructs it as the Bun-Steinke zCDP conversion that Neel et al. state, which is
    :func:`unlearnkit.privacy.gaussian.zcdp_gaussian_sigma`), treating ``d1`` as a deterministic bound on the
    distance of the means. It is not: Theorem 4.9 bounds
    ``sqrt(E ||gap||^2)`` over the SGD randomness (digest P8).

    ``mode="sound"`` (ours): by Markov on ``||gap||^2``, ``P(||gap|| > d1 / sqrt(gamma)) <= gamma``; on the
    complement the two averages are Gaussians whose means are at most ``Delta = d1 / sqrt(gamma)`` apart. We
    split ``delta`` as ``gamma = delta / 2`` for the tail and ``delta / 2`` for the mechanism, and calibrate
    with the analytic Gaussian mechanism (Balle & Wang 2018), exact for two Gaussians. The two runs are
    coupled through the shared minibatch draws, as in the lemmas.

    Parameters
    ----------
    d1 : float
        The gap bound of :func:`gap_bound`, ``>= 0``.
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Failure probability, in ``(0, 1)``.
    mode : {"paper", "sound"}, default "paper"
        Calibration (see above).

    Returns
    -------
    float
        The std on the average model; ``0.0`` when ``d1 == 0``.

    References
    ----------
    Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies" (ICML 2025, digest 002),
    Definition 4.3, Algorithm 2 and Corollary 4.10; Balle & Wang, "Improving the Gaussian Mechanism for
    Differential Privacy" (ICML 2018).
    """
    check_choice("mode", mode, ("paper", "sound"))
    check_positive("d1", d1, allow_zero=True)
    check_positive("epsilon", epsilon)
    delta = _check_delta(delta)
    if d1 == 0:
        return 0.0
    if mode == "paper":
        return float(zcdp_gaussian_sigma(epsilon, delta, sensitivity=d1))

    gamma = delta / 2.0
    return float(analytic_gaussian_sigma(epsilon, delta - gamma, sensitivity=d1 / math.sqrt(gamma)))


def lemma_coverage(correction_scale: str, mode: str) -> tuple[bool, str]:
    """Whether Theorem 4.9's ``d1`` bounds the gap for this correction, read as ``mode`` reads the paper.

    Returns ``(covered, reason)``. ``mode="paper"`` takes the paper's statements (Lemma B.2, Thm 4.9, Cor. 4.10
    are about Algorithm 2): only ``"paper"`` (Eq. 9, convex weights). ``mode="sound"`` takes the proof of Lemma
    B.2 (Eq. 50), which uses only ``0 <= w_i^t <= 1``: ``"paper"``, ``"sum"`` and ``"none"`` (module docstring).

    Parameters
    ----------
    correction_scale : {"paper", "sum", "none"}
        The correction's weights.
    mode : {"paper", "sound"}
        How the paper is read.

    Returns
    -------
    tuple of (bool, str)
        ``(covered, reason)``.

    References
    ----------
    Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies" (ICML 2025, digest 002),
    Lemma B.2 (Eq. 50), Theorem 4.9 and Corollary 4.10.
    """
    check_choice("correction_scale", correction_scale, _SCALES)
    check_choice("mode", mode, ("paper", "sound"))
    if correction_scale == "paper":
        return True, "Eq. (9), the convex weights of Eq. (8): the correction Lemma B.2 and Cor. 4.10 are stated for"
    if mode == "paper":
        return False, (f"correction_scale={correction_scale!r} is not Algorithm 2: Lemma B.2, Theorem 4.9 and "
                       f"Corollary 4.10 are stated for Eq. (9)'s convex weights only, so the paper's calibration "
                       f"claims nothing for it (mode='sound' covers it: the proof of Lemma B.2 uses only weights "
                       f"in [0, 1])")
    if correction_scale == "sum":
        return True, ("weights 1 (correction_scale='sum'): the proof of Lemma B.2 (Eq. 50, Cauchy-Schwarz then "
                      "p <= 1) uses only weights in [0, 1], so B2 bounds sum_t delta_i^t too")
    return True, ("no correction (correction_scale='none'): Theorem 4.9's triangle inequality needs only B1 <= d1 "
                  "(Lemma B.1)")


def _check_rho(constants: GapConstants, measured_rho: Optional[tuple[float, float]]) -> Optional[str]:
    # the spectral constants must bound every round's W^t and the W~^t of the retrain rule in use (Assumption 4.8)
    if measured_rho is None:
        return None
    bad = [f"{name}={getattr(constants, name):g} < {m:.4g} measured on the cached rounds"
           for name, m in zip(("rho1", "rho2"), measured_rho) if getattr(constants, name) < m - 1e-9]
    return "; ".join(bad) or None


def pdudt_certificate(*, lr: float, t1: int, n: int, constants: Optional[GapConstants], noise: str = "certified",
                      mode: str = "paper", epsilon: float = 1.0, delta: float = 1e-5,
                      sigma: Optional[float] = None, correction_scale: str = "paper",
                      measured_rho: Optional[tuple[float, float]] = None) -> Certificate:
    """The :class:`~unlearnkit.core.Certificate` of Corollary 4.10 for PDUDT and PDUDT(ES).

    ``noise="certified"``: sigma from ``d1`` (Theorem 4.9) in ``mode`` ``"paper"`` or ``"sound"``, for a
    ``correction_scale`` the bound covers in that mode (:func:`lemma_coverage`); any other scale, or
    ``constants`` whose ``rho1``/``rho2`` are below ``measured_rho`` (the largest second eigenvalue moduli of
    the cached ``W^t`` and of the retrain rule's ``W~^t``), gives ``mode="none"``, ``epsilon=inf`` and a note
    saying why. Paper-mode certificates do not hold (``d1`` bounds an expected distance) and say so.
    Sound-mode certificates from ``constants`` are not certified either (``mode="none"``, ``epsilon=inf``, the
    sound calibration's sigma still added): ``L``, ``sigma_1^2``, ``sigma_2^2``, ``Delta_f`` and
    ``Delta_f_tilde`` depend on the leaver's data and no routine of the package measures or verifies them (only
    ``rho1``/``rho2`` are checked, against ``measured_rho``). The certified PDUDT is
    :class:`~unlearnkit.methods.pdudt.PDUDTConfig` with ``mode="sound"`` and ``smoothness``
    (:mod:`~unlearnkit.methods.pdudt.sound`: public bounds only).
    ``noise="manual"``: the given ``sigma`` (the paper's experiments sweep 0.001 to 0.015 and never compute
    ``d1``, digest P7); the certificate says "not certified" (``mode="none"``, ``epsilon=inf``) and, when
    ``constants`` are given, notes the epsilon the paper's bound would grant at that sigma.

    Parameters
    ----------
    lr : float
        Training step size ``eta``.
    t1 : int
        Request round.
    n : int
        Number of clients, ``>= 2``.
    constants : GapConstants or None
        Theorem 4.9's constants; required for ``noise="certified"``.
    noise : {"certified", "manual"}, default "certified"
        Where sigma comes from.
    mode : {"paper", "sound"}, default "paper"
        Calibration of :func:`pdudt_sigma` and reading of :func:`lemma_coverage`.
    epsilon : float, default 1.0
        Privacy target.
    delta : float, default 1e-5
        Failure probability, in ``(0, 1)``.
    sigma : float, optional
        The std for ``noise="manual"`` (required there), ``>= 0``.
    correction_scale : {"paper", "sum", "none"}, default "paper"
        The correction's weights.
    measured_rho : tuple of (float, float), optional
        ``(rho1, rho2)`` measured on the rounds (:func:`~unlearnkit.methods.pdudt.measured_rho`).

    Returns
    -------
    Certificate
        ``mode="paper"`` with ``epsilon`` as requested (which does not hold, see its note), or ``mode="none"``
        with ``epsilon = inf``; ``sigma`` is the noise to add in every case.

    Raises
    ------
    ValueError
        For ``noise="manual"`` without ``sigma``, ``noise="certified"`` without ``constants``, or ``lr`` beyond the
        step-size condition.

    References
    ----------
    Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies" (ICML 2025, digest 002),
    Theorem 4.9 and Corollary 4.10.
    """
    check_choice("noise", noise, NOISE_MODES)
    check_choice("correction_scale", correction_scale, _SCALES)
    mechanism = "Gaussian output perturbation of the average of n-1 client models"
    source = "Qiao et al. 2025, Thm 4.9 + Cor. 4.10 (Def 4.3 Gaussian mechanism)"
    if noise == "manual":
        if sigma is None:
            raise ValueError("sigma=None: noise='manual' needs sigma >= 0 (the paper sweeps 0.001 to 0.015)")
        check_positive("sigma", sigma, allow_zero=True)
        note = "not certified: sigma set by hand, as in the paper's experiments"
        consts: dict[str, float] = {}
        if constants is not None:
            d1 = gap_bound(lr=lr, t1=t1, n=n, constants=constants, mode="paper").d1
            need = pdudt_sigma(d1, epsilon, delta, "paper")
            implied = bun_steinke_epsilon(d1, sigma, delta) if sigma > 0 else math.inf
            consts = {**constants.as_dict(), "d1": d1, "certified_sigma": need, "implied_epsilon": implied}
            note += (f"; the paper's bound would need sigma={need:.4g} for eps={epsilon:g}, "
                     f"and grants eps={implied:.4g} at sigma={sigma:g}")
        return Certificate(epsilon=math.inf, delta=delta, sigma=float(sigma), mechanism=mechanism, source=source,
                           mode="none", constants=consts, note=note)
    if constants is None:
        raise ValueError("constants=None: noise='certified' needs GapConstants (L, sigma_1^2, sigma_2^2, "
                         "Delta_f, Delta_f_tilde, rho1, rho2)")
    check_choice("mode", mode, ("paper", "sound"))
    covered, why = lemma_coverage(correction_scale, mode)
    bad_rho = _check_rho(constants, measured_rho)
    bound = gap_bound(lr=lr, t1=t1, n=n, constants=constants, mode=mode)
    s = pdudt_sigma(bound.d1, epsilon, delta, mode)
    consts = {**constants.as_dict(), "lr": lr, "t1": t1, "n": n, "B1": bound.B1, "B2": bound.B2, "d1": bound.d1,
              "correction_scale": correction_scale}
    if not covered or bad_rho:
        # the noise of the mode's calibration is still added (not silently dropped), but it certifies nothing
        reason = why if not covered else (f"the spectral constants do not bound the rounds ({bad_rho}), so "
                                          f"Assumption 4.8 and with it d1 fail")
        return Certificate(epsilon=math.inf, delta=delta, sigma=float(s), mechanism=mechanism, source=source,
                           mode="none", constants={**consts, "calibration_mode": mode},
                           note=(f"not certified ({mode} mode, correction_scale={correction_scale!r}): {reason}; "
                                 f"sigma={s:.4g} is the {mode}-mode calibration, added but certifying nothing"))
    covers = (f"covers only the average of the n-1 models, for correction_scale={correction_scale!r} ({why}), "
              f"against perturbed retraining with the same retrain rule W~")
    if mode == "sound":
        # the sound calibration is right *if* the constants hold, but nothing here checks the data-dependent ones
        return Certificate(epsilon=math.inf, delta=float(delta), sigma=float(s), mechanism=mechanism,
                           source=source + " [sound calibration: Markov + analytic Gaussian]", mode="none",
                           constants={**consts, "calibration_mode": mode, "epsilon_target": float(epsilon)},
                           note=(f"not certified: the GapConstants were set by hand and L, sigma_1^2, sigma_2^2, "
                                 f"Delta_f, Delta_f_tilde (Assumptions 4.5, 4.6) depend on the leaver's data; no "
                                 f"routine of the package verifies them; sigma={s:.4g} is the sound calibration "
                                 f"for eps={epsilon:g} under them, added but certifying nothing (certified: "
                                 f"mode='sound' with smoothness=GossipSmoothness(...)); {covers}"))
    note = (f"does not hold as stated: d1 bounds an expected distance sqrt(E||gap||^2), not a worst case, and "
            f"the paper treats it as a deterministic sensitivity (use mode='sound'); {covers}")
    return Certificate(epsilon=float(epsilon), delta=float(delta), sigma=float(s), mechanism=mechanism, source=source,
                       mode=mode, constants=consts, note=note)
