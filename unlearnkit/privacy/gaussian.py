"""The Gaussian mechanism: classic and analytic calibration, the exact privacy profile, and the relaxed
("sensitivity bounded in expectation") calibration of D2D/R2D.

Adding ``N(0, sigma^2 I)`` to a quantity whose value moves by at most ``Delta`` (L2) between neighbouring
data sets hides the difference. How well is exactly described by the *privacy profile*

    delta(epsilon) = Phi(Delta/(2 sigma) - epsilon sigma/Delta) - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta)

(Balle & Wang 2018, Theorem 8), which is the hockey-stick divergence between N(0, sigma^2) and
N(Delta, sigma^2). Everything in this module is that one formula, read in different directions:

- :func:`gaussian_delta` evaluates it; :func:`theta_epsilon` is the same curve as a function of
  ``r = Delta/sigma`` (Koloskova et al. 2025, eq. 9, used by model clipping);
- :func:`analytic_gaussian_sigma` solves it for sigma (the analytic Gaussian mechanism, Balle & Wang 2018,
  Algorithm 1, done here by root finding on the exact profile), :func:`analytic_gaussian_epsilon` for epsilon;
- :func:`classic_gaussian_sigma` is the textbook sufficient condition
  ``sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon`` (Dwork & Roth 2014, Theorem A.1), proven only for
  ``epsilon < 1``. All five papers use it; beyond ``epsilon >= 1`` it can *under*-noise, and we warn;
- :func:`relaxed_gaussian_sigma` is Lemma 4.4 of Mu & Klabjan (D2D/R2D): when only ``E||X - Y||`` or
  ``E||X - Y||^2`` is bounded, Markov's inequality turns the moment into a high-probability sensitivity
  and part of delta pays for the tail.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Union

import numpy as np
from scipy import optimize, special

from .._validate import SCALE_MAX, SCALE_MIN, check_choice, check_delta, check_positive, check_scale, check_probability


ArrayLike = Union[float, np.ndarray]


class ClassicGaussianRangeWarning(UserWarning):
    """The classic formula was used outside ``epsilon < 1``, the range Dwork & Roth's Theorem A.1 proves."""


def _check_epsilon(epsilon: float) -> float:
    return check_scale("epsilon", epsilon)


def _check_delta(delta: float) -> float:
    return check_delta("delta", delta)


def _log_profile(epsilon: np.ndarray, r: np.ndarray) -> np.ndarray:
    """log delta(epsilon) for ``r = Delta/sigma`` > 0, in log space so tiny deltas keep their digits."""
    a = r / 2.0 - epsilon / r
    b = -r / 2.0 - epsilon / r
    la = special.log_ndtr(a)
    lb = special.log_ndtr(b)
    # delta = Phi(a) (1 - e^{eps} Phi(b)/Phi(a)); the ratio is < 1 because the profile is positive.
    with np.errstate(divide="ignore", invalid="ignore"):
        out = la + np.log(-np.expm1(np.minimum(epsilon + lb - la, 0.0)))
    return out


def gaussian_delta(epsilon: ArrayLike, sigma: float, sensitivity: float = 1.0) -> ArrayLike:
    """The exact privacy profile of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).

    ``delta(eps) = Phi(D/(2 s) - eps s/D) - e^eps Phi(-D/(2 s) - eps s/D)`` with ``D = sensitivity`` and
    ``s = sigma``: the smallest delta for which adding ``N(0, sigma^2 I)`` is (eps, delta)-DP.

    Parameters
    ----------
    epsilon : float or array
        Privacy level(s), ``>= 0``.
    sigma : float
        Noise standard deviation, ``> 0``.
    sensitivity : float
        L2 sensitivity ``Delta > 0``.

    Returns
    -------
    float or ndarray
        delta(epsilon), in [0, 1), same shape as ``epsilon``.

    References
    ----------
    Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and Optimal
    Denoising", ICML 2018, Theorem 8.
    """
    sigma = check_scale("sigma", sigma)
    sensitivity = check_scale("sensitivity", sensitivity)
    eps = np.asarray(epsilon, dtype=float)
    if np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError(f"epsilon={epsilon!r} is out of range: expected epsilon in [0, inf)")
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.exp(_log_profile(eps, np.full_like(eps, sensitivity / sigma)))
    out = np.where(np.isnan(out) & (eps > 0), 0.0, out)  # an epsilon so large that delta underflows to 0
    return float(out) if out.ndim == 0 else out


def theta_epsilon(epsilon: float, r: ArrayLike) -> ArrayLike:
    """``theta_eps(r) = Q(eps/r - r/2) - e^eps Q(eps/r + r/2)`` (Koloskova et al. 2025, eq. 9; Lemma A.3).

    The hockey-stick divergence ``E_eps(N(m1, s^2 I) || N(m2, s^2 I))`` with ``r = ||m1 - m2|| / s``: the same
    curve as :func:`gaussian_delta` with ``sensitivity = r`` and ``sigma = 1``. It increases with ``r``.
    (The paper's Lemma A.3 normalises Q by ``1/sqrt(pi)``, a typo; eq. 9 and the code use the standard
    normal tail, as we do.)

    Parameters
    ----------
    epsilon : float
        ``>= 0``, finite.
    r : float or array_like
        Distance between the means over the noise std, ``>= 0``, finite.

    Returns
    -------
    float or ndarray
        ``theta_eps(r)`` in [0, 1), shaped like ``r`` (0 where ``r = 0``).

    References
    ----------
    Koloskova, Allouah, Jha, Guerraoui & Koyejo, "Certified Unlearning for Neural Networks", ICML 2025, eq. (9) and
    Lemma A.3.
    Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and Optimal
    Denoising", ICML 2018, Theorem 8 (the same profile).
    """
    epsilon = check_positive("epsilon", epsilon, allow_zero=True)
    rr = np.asarray(r, dtype=float)
    if np.any(~np.isfinite(rr)) or np.any(rr < 0):
        raise ValueError(f"r={r!r} is out of range: expected r in [0, inf)")
    with np.errstate(divide="ignore"):
        out = np.where(rr > 0, np.exp(_log_profile(np.full_like(rr, epsilon), np.where(rr > 0, rr, 1.0))), 0.0)
    return float(out) if out.ndim == 0 else out


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0, *, warn: bool = True) -> float:
    """The textbook calibration ``sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon``.

    Dwork & Roth 2014, Theorem A.1: (epsilon, delta)-DP **for epsilon in (0, 1)**. Every one of the five
    papers uses it (D2D/R2D Lemma 4.4, noisy fine-tuning output perturbation, RR-DU's DDP baseline...).
    For ``epsilon >= 1`` it is outside its proof and may under-noise (at (10, 1e-5) it gives sigma 0.48
    where the exact answer is 0.50): a :class:`ClassicGaussianRangeWarning` says so and reports the delta
    the exact profile actually achieves. Prefer :func:`analytic_gaussian_sigma`.

    Parameters
    ----------
    epsilon, delta : float
        Target, ``epsilon > 0`` and ``delta in (0, 1)``.
    sensitivity : float
        L2 sensitivity ``Delta > 0``.
    warn : bool
        Emit the range warning when ``epsilon >= 1`` (paper-reproduction code may turn it off knowingly).

    Returns
    -------
    float
        ``sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon``, the same value whether or not it warns.

    References
    ----------
    Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Theorem A.1.
    """
    epsilon = _check_epsilon(epsilon)
    delta = _check_delta(delta)
    sensitivity = check_scale("sensitivity", sensitivity)
    sigma = sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
    if warn and epsilon >= 1:
        achieved = gaussian_delta(epsilon, sigma, sensitivity)
        verdict = "still holds" if achieved <= delta else "does NOT hold: the classic sigma under-noises"
        warnings.warn(
            f"classic Gaussian formula used at epsilon={epsilon:g} >= 1, outside Dwork & Roth Thm A.1 "
            f"(proved for epsilon < 1); the exact profile gives delta={achieved:.3g} against target "
            f"{delta:.3g}, so the guarantee {verdict}; use analytic_gaussian_sigma",
            ClassicGaussianRangeWarning,
            stacklevel=2,
        )
    return sigma


def _bracket_log(f, lo: float, hi: float) -> tuple[float, float]:
    """Expand [lo, hi] (in log space) until f changes sign; f decreasing."""
    for _ in range(200):
        if f(lo) > 0:
            break
        lo -= 2.0
    for _ in range(200):
        if f(hi) < 0:
            break
        hi += 2.0
    return lo, hi


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest sigma for which the Gaussian mechanism is (epsilon, delta)-DP (Balle & Wang 2018).

    Solves ``gaussian_delta(epsilon, sigma, sensitivity) = delta`` for sigma (the profile falls as sigma
    grows) by Brent's method on ``log sigma`` to machine precision, then nudges upward so that the returned
    sigma never gives a delta above the target. Valid for every ``epsilon > 0``. At (1, 1e-6) it returns
    4.22467888933 (the classic formula is invalid there; RDP + CKS needs 4.530877117).

    Parameters
    ----------
    epsilon : float
        Target epsilon, in [1e-100, 1e100].
    delta : float
        Target delta, in [1e-300, 1).
    sensitivity : float
        L2 sensitivity ``Delta``, in [1e-100, 1e100].

    Returns
    -------
    float
        The smallest sigma (to the last ulp) with :func:`gaussian_delta` ``<= delta``; ``ValueError`` when
        the pair is beyond double precision.

    References
    ----------
    Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and Optimal
    Denoising", ICML 2018, Theorem 8 and Algorithm 1 (solved here by root finding on the exact profile).
    """
    epsilon = _check_epsilon(epsilon)
    delta = _check_delta(delta)
    sensitivity = check_scale("sensitivity", sensitivity)
    log_delta = math.log(delta)

    def f(log_s: float) -> float:  # log delta(eps; sigma) - log delta: decreasing in log sigma
        return float(_log_profile(np.float64(epsilon), np.float64(1.0 / math.exp(log_s)))) - log_delta

    guess = math.log(math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon)
    lo, hi = _bracket_log(f, guess - 2.0, guess + 2.0)
    try:
        log_s = optimize.brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    except (ValueError, RuntimeError):  # no sign change or NaN: the pair is beyond double precision
        raise ValueError(f"analytic_gaussian_sigma: epsilon={epsilon!r} with delta={delta!r} is beyond the "
                         f"precision of the solver: expected epsilon in [{SCALE_MIN:g}, {SCALE_MAX:g}] and delta in [1e-300, 1) "
                         "with a solution sigma representable in double precision") from None
    sigma = math.exp(log_s) * sensitivity

    def over(sig: float) -> bool:  # evaluated exactly as gaussian_delta will evaluate it
        return float(np.exp(_log_profile(np.float64(epsilon), np.float64(sensitivity / sig)))) > delta

    while over(sigma):  # never overshoot delta because of the last ulps
        sigma = math.nextafter(sigma, math.inf)
    return sigma


def analytic_gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The inverse of :func:`analytic_gaussian_sigma`: the smallest epsilon with ``delta(epsilon) <= delta``.

    Returns 0 when the mechanism is already (0, delta)-DP (``delta >= 2 Phi(Delta/(2 sigma)) - 1``).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, in [1e-100, 1e100].
    delta : float
        Target delta, in [1e-300, 1).
    sensitivity : float
        L2 sensitivity ``Delta``, in [1e-100, 1e100].

    Returns
    -------
    float
        The smallest epsilon ``>= 0`` (to the last ulp) with :func:`gaussian_delta` ``<= delta``.

    References
    ----------
    Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and Optimal
    Denoising", ICML 2018, Theorem 8.
    """
    sigma = check_scale("sigma", sigma)
    delta = _check_delta(delta)
    sensitivity = check_scale("sensitivity", sensitivity)
    r = sensitivity / sigma
    log_delta = math.log(delta)

    def f(eps: float) -> float:
        return float(_log_profile(np.float64(eps), np.float64(r))) - log_delta

    if f(0.0) <= 0:
        return 0.0
    hi = max(1.0, r * r)
    while f(hi) > 0 and hi < 1e300:
        hi *= 2.0
    try:
        eps = optimize.brentq(f, 0.0, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    except (ValueError, RuntimeError):  # no sign change or NaN: the pair is beyond double precision
        raise ValueError(f"analytic_gaussian_epsilon: sigma={sigma!r} with delta={delta!r} is beyond the "
                         f"precision of the solver: expected sigma/sensitivity in [{SCALE_MIN:g}, {SCALE_MAX:g}]") from None
    while f(eps) > 0:
        eps = math.nextafter(eps, math.inf)
    return eps


def zcdp_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """sigma from zCDP: ``Delta / (sqrt(2) (sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta))))``.

    Bun & Steinke 2016 (Prop. 1.3 and 1.6): the Gaussian is ``Delta^2/(2 sigma^2)``-zCDP and rho-zCDP gives
    ``(rho + 2 sqrt(rho ln(1/delta)), delta)``; solved for sigma. Valid for every epsilon > 0, looser than
    :func:`analytic_gaussian_sigma`. The D2D/R2D digest lists it as an alternative for Lemma 4.4.

    Parameters
    ----------
    epsilon : float
        Target epsilon, in [1e-100, 1e100].
    delta : float
        Target delta, in [1e-300, 1).
    sensitivity : float
        L2 sensitivity ``Delta``, in [1e-100, 1e100].

    Returns
    -------
    float
        ``Delta (sqrt(ln(1/delta) + eps) + sqrt(ln(1/delta))) / (sqrt(2) eps)``, the formula above without
        its cancellation.

    References
    ----------
    Bun & Steinke, "Concentrated Differential Privacy: Simplifications, Extensions, and Lower Bounds",
    TCC 2016, Propositions 1.3 and 1.6.
    """
    epsilon = _check_epsilon(epsilon)
    delta = _check_delta(delta)
    sensitivity = check_scale("sensitivity", sensitivity)
    b = math.log(1.0 / delta)
    # sqrt(b + eps) - sqrt(b) written as eps / (sqrt(b + eps) + sqrt(b)): the same number without the
    # cancellation that made it exactly 0 (a ZeroDivisionError) for epsilon << b
    return sensitivity * (math.sqrt(b + epsilon) + math.sqrt(b)) / (math.sqrt(2.0) * epsilon)


_MECHANISMS = {
    "classic": lambda e, d, s: classic_gaussian_sigma(e, d, s, warn=False),
    "analytic": analytic_gaussian_sigma,
    "zcdp": zcdp_gaussian_sigma,
}


@dataclass(frozen=True)
class RelaxedGaussian:
    """The result of :func:`relaxed_gaussian_sigma`: sigma and how delta was split to get it."""

    sigma: float
    threshold: float  # the high-probability sensitivity t: P(||X - Y|| >= t) <= delta_tail
    delta_tail: float  # paid by Markov's inequality
    delta_gauss: float  # given to the Gaussian mechanism with sensitivity t
    moment: str  # "first" or "second"
    mechanism: str  # "classic", "analytic" or "zcdp"


def relaxed_gaussian_sigma(
    epsilon: float,
    delta: float,
    *,
    first_moment: float | None = None,
    second_moment: float | None = None,
    mechanism: str = "classic",
    tail_fraction: float | str = 0.5,
) -> RelaxedGaussian:
    """Gaussian calibration when the sensitivity is bounded only in expectation (Mu & Klabjan, Lemma 4.4).

    If ``E||X - Y|| <= Delta_1`` (``first_moment``) or ``E||X - Y||^2 <= Delta_2^2`` (``second_moment`` is
    ``Delta_2``, the root of the bound), Markov's inequality gives ``P(||X - Y|| >= t) <= delta_tail`` with
    ``t = Delta_1/delta_tail`` or ``t = Delta_2/sqrt(delta_tail)``. Outside that event the Gaussian mechanism
    with sensitivity ``t`` at ``delta_gauss = delta - delta_tail`` applies, so ``X + Z`` and ``Y + Z`` are
    (epsilon, delta)-indistinguishable, without any independence between X and Y (proof: Lemmas A.9-A.10).

    The paper's choice (``mechanism="classic", tail_fraction=0.5``) gives the boxed formulas
    ``sigma = (2 Delta_1/delta) sqrt(2 ln(2.5/delta)) / epsilon`` and
    ``sigma = (2 Delta_2/epsilon) sqrt(ln(2.5/delta)/delta)``; the classic step needs ``epsilon < 1``.
    ``mechanism="analytic"`` is valid for every epsilon; ``tail_fraction="optimal"`` chooses the split that
    minimises sigma (our generalisation of the paper's "delta/2", a choice we document, not the paper's).

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee: epsilon in [1e-100, 1e100], delta in [1e-300, 1).
    first_moment, second_moment : float
        Exactly one of them: ``Delta_1 >= E||X-Y||`` or ``Delta_2 >= sqrt(E||X-Y||^2)``; 0 means identical
        outputs (sigma 0).
    mechanism : {"classic", "analytic", "zcdp"}
        How to calibrate the Gaussian for the high-probability sensitivity ``t``.
    tail_fraction : float in (0, 1) or "optimal"
        ``delta_tail = tail_fraction * delta``; ``"optimal"`` returns the split with the smaller sigma of
        the numerical optimum and 0.5.

    Returns
    -------
    RelaxedGaussian
        ``sigma`` (0 when the moment bound is 0), the high-probability sensitivity ``threshold``, the split
        ``delta_tail + delta_gauss = delta``, and the ``moment`` and ``mechanism`` used.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind? Stochastic Gradient Descent Unlearning", Lemma 4.4 (proof: Lemmas
    A.9-A.10).
    """
    epsilon = _check_epsilon(epsilon)
    delta = _check_delta(delta)
    check_choice("mechanism", mechanism, tuple(_MECHANISMS))
    if (first_moment is None) == (second_moment is None):
        raise ValueError("relaxed_gaussian_sigma needs exactly one of first_moment= or second_moment=")
    moment = "first" if first_moment is not None else "second"
    bound = check_positive(f"{moment}_moment", first_moment if moment == "first" else second_moment,
                           allow_zero=True)
    calibrate = _MECHANISMS[mechanism]

    def split(frac: float) -> RelaxedGaussian:
        d_tail = frac * delta
        d_gauss = delta - d_tail
        t = bound / d_tail if moment == "first" else bound / math.sqrt(d_tail)
        sigma = 0.0 if t == 0 else calibrate(epsilon, d_gauss, t)
        return RelaxedGaussian(sigma, t, d_tail, d_gauss, moment, mechanism)

    if isinstance(tail_fraction, str):
        check_choice("tail_fraction", tail_fraction, ("optimal",))
        if bound == 0:
            return split(0.5)
        res = optimize.minimize_scalar(lambda z: split(special.expit(z)).sigma, bounds=(-12.0, 12.0),
                                       method="bounded", options={"xatol": 1e-10})
        best = split(float(special.expit(res.x)))
        return best if best.sigma <= split(0.5).sigma else split(0.5)
    frac = check_probability("tail_fraction", tail_fraction, allow_zero=False, allow_one=False)
    return split(frac)
