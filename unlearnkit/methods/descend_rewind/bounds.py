"""The certificates of "Descend or Rewind?" as plain formulas: sensitivities, noise and their inverses.

Mu & Klabjan, "Descend or Rewind? Stochastic Gradient Descent Unlearning" (arXiv 2511.15983, digest 003), the
full-batch predecessor (Mu & Klabjan, NeurIPS 2025) and Neel, Roth & Sharifi-Malvajerdi (ALT 2021). Pure
maths (math, numpy, scipy; no torch), shared by :mod:`.r2d` and :mod:`.d2d`. The seed lost most formulas,
so each carries its provenance:

- **PSGD-R2D, Theorem 4.5 / A.14** [reconstructed]: ``E||u_T - w'_T|| <= rho^K (2 eta G m / n) S_{T-K}(rho)``
  with ``rho = 1 - eta mu`` (strongly convex), 1 (convex) or ``1 + eta L`` (nonconvex) and
  ``S_j(rho) = (rho^j - 1)/(rho - 1)`` (``j`` when ``rho = 1``); batches *with replacement*.
- **SGD-R2D without projection, Theorem 4.9** [derived substitute]: the paper gives only O~(.); we use the
  explicit sound bound of digest 003 section 3.3 (``sqrt(m/n)`` scaling, no bounded gradients).
- **GD-R2D (full batch)** [derived]: the same recursion holds *deterministically*, so no Markov step.
- **SGD-D2D, Theorem 4.10** [derived substitute, digest 003 section 3.4]: a second-moment bound with a floor
  that does not vanish as K grows (in :mod:`.d2d_bounds`, re-exported here).
- **Full-batch D2D** (Neel et al. 2021, Thm 3.1): the paper-mode code formula, and our derived deterministic
  single-request bound for ``mode="sound"`` (in :mod:`.d2d_bounds`, re-exported here).
- **Lemma 4.4** (relaxed Gaussian, :func:`unlearnkit.privacy.gaussian.relaxed_gaussian_sigma`) turns a moment
  bound into sigma: ``mode="paper"`` uses the classic mechanism with the delta/2 split (valid for epsilon < 1
  only); ``mode="sound"`` uses the analytic Gaussian mechanism (any epsilon) and the deterministic **diameter
  cap**: on the ball of radius R, ``||u_T - w'_T|| <= 2R`` always, so ``sigma = min(sigma, analytic_sigma(2R))``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import brentq

from ..._validate import check_choice, check_int, check_positive, check_probability
from ...privacy.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma, relaxed_gaussian_sigma
from .d2d_bounds import (gd_d2d_contraction, gd_d2d_sensitivity, neel_initial_iterations, neel_sigma,
                         sgd_d2d_sensitivity_derived)

if TYPE_CHECKING:  # only attributes (G, L, mu, F0, radius) are read: no torch import at run time
    from ...constants import Constants


REGIMES = ("strongly_convex", "convex", "nonconvex")
DESCEND_REWIND_PAPER = "Mu & Klabjan 2025 (Descend or Rewind?)"
PAPER_SGD = "Mu & Klabjan 2025, Thm 4.10 (derived substitute, digest 003 3.4) + Lemma 4.4"
PAPER_NEEL = "Neel, Roth & Sharifi-Malvajerdi 2021, Thm 3.1 (descent-to-delete compute_sigma)"

#: source and provenance of each R2D theorem, as the certificate reports them
R2D_PROVENANCE = {
    "psgd": ("Mu & Klabjan 2025, Thm 4.5 (Thm A.14) + Lemma 4.4", "reconstructed"),
    "sgd_derived": ("Mu & Klabjan 2025, Thm 4.9 (derived substitute, digest 003 3.3) + Lemma 4.4", "derived"),
    "gd": ("full-batch GD-R2D, deterministic sensitivity (derived, digest 003 Alg. 4)", "derived"),
}


# ----------------------------------------------------------------------------------------------------------
# R2D sensitivity bounds
# ----------------------------------------------------------------------------------------------------------


def contraction_factor(regime: str, *, eta: float, L: float, mu: float = 0.0, strict: bool = True) -> float:
    """Lipschitz factor of the gradient map ``w -> w - eta grad f(w; z)`` (digest 003, Lemma A.11).

    strongly convex: ``1 - eta mu`` for ``eta <= 2/(L + mu)``; convex: 1 for ``eta <= 2/L``; nonconvex:
    ``1 + eta L`` for any eta. ``strict`` raises ``ValueError`` naming ``eta`` when the step-size condition of
    the regime fails (the theorem does not apply).

    Parameters
    ----------
    regime : {"strongly_convex", "convex", "nonconvex"}
        Which of the three bounds applies.
    eta : float
        Step size, ``> 0``.
    L : float
        Smoothness constant of the per-sample loss, ``> 0``.
    mu : float, default 0.0
        Strong-convexity constant, ``>= 0``; must be ``> 0`` for ``"strongly_convex"``.
    strict : bool, default True
        Check the regime's step-size condition (``eta <= 2/(L + mu)`` or ``eta <= 2/L``).

    Returns
    -------
    float
        ``rho``: ``1 - eta mu``, ``1.0`` or ``1 + eta L``.

    Raises
    ------
    ValueError
        On an unknown regime, ``mu <= 0`` in the strongly convex regime, or (``strict``) a step size the regime's
        bound does not cover.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Lemma A.11.
    """
    check_choice("regime", regime, REGIMES)
    check_positive("eta", eta)
    check_positive("L", L)
    check_positive("mu", mu, allow_zero=True)
    if regime == "strongly_convex":
        if mu <= 0:
            raise ValueError(f"mu={mu!r} must be > 0 for regime='strongly_convex'")
        if strict and eta > 2.0 / (L + mu) * (1 + 1e-12):  # rounding: eta = 2/(L + mu) computed elsewhere
            raise ValueError(f"eta={eta!r} is out of range: the strongly convex bound needs eta in (0, 2/(L+mu)] = "
                             f"(0, {2.0 / (L + mu):.6g}]")
        return 1.0 - eta * mu
    if regime == "convex":
        if strict and eta > 2.0 / L:
            raise ValueError(f"eta={eta!r} is out of range: the convex bound needs eta in (0, 2/L] = (0, {2.0 / L:.6g}]")
        return 1.0
    return 1.0 + eta * L


def geometric_sum(rho: float, j: int) -> float:
    """``S_j(rho) = sum_{s<j} rho^s`` = ``(rho^j - 1)/(rho - 1)``, or ``j`` when ``rho = 1`` (Theorem A.14).

    Parameters
    ----------
    rho : float
        The ratio, as returned by :func:`contraction_factor`.
    j : int
        Number of terms; ``j <= 0`` gives 0.

    Returns
    -------
    float
        ``S_j(rho)``; ``0.0`` for ``j <= 0`` and ``float(j)`` for ``rho = 1``.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Theorem A.14.
    """
    if j <= 0:
        return 0.0
    if abs(rho - 1.0) < 1e-15:
        return float(j)
    return math.expm1(j * math.log(rho)) / (rho - 1.0) if rho > 0 else (1 - rho**j) / (1 - rho)


def _check_TKmn(T: int, K: int, m: int, n: int) -> None:
    check_int("T", T, low=1)
    check_int("K", K, low=0)
    if K > T:
        raise ValueError(f"K={K!r} is out of range: the rewind depth must satisfy 0 <= K <= T={T}")
    check_int("n", n, low=2)
    check_int("m", m, low=1)
    if m >= n:
        raise ValueError(f"m={m!r} is out of range: expected 1 <= m < n={n}")


def psgd_r2d_sensitivity(regime: str, *, G: float, L: float, mu: float = 0.0, eta: float, T: int, K: int,
                         m: int, n: int) -> float:
    """``Delta_1 >= E||u_T - w'_T||`` for PSGD-R2D (Theorem 4.5 via Theorem A.14) [reconstructed].

    ``Delta_1 = rho^K * (2 eta G m / n) * S_{T-K}(rho)``: the coupled training/retraining runs drift apart by
    at most ``2 eta G / b`` per batch slot that hits the forget set (expected ``b m / n`` slots, so b cancels),
    that gap is amplified by ``rho`` per step, and the K shared-batch unlearning steps contract (or expand) it
    by ``rho^K`` (Lemma A.12). Strongly convex: ``(2 G m / (mu n)) [(1-eta mu)^K - (1-eta mu)^T]``.

    Parameters
    ----------
    regime : {"strongly_convex", "convex", "nonconvex"}
        Loss regime; sets ``rho`` through :func:`contraction_factor`.
    G : float
        Bound on the per-sample gradient norm on the feasible set, ``> 0``.
    L : float
        Smoothness constant, ``> 0``.
    mu : float, default 0.0
        Strong-convexity constant (``> 0`` for ``"strongly_convex"``).
    eta : float
        Step size; must satisfy the regime's step-size condition.
    T : int
        Training steps, ``>= 1``.
    K : int
        Rewind depth (unlearning steps), ``0 <= K <= T``.
    m : int
        Number of deleted samples, ``1 <= m < n``.
    n : int
        Training-set size, ``>= 2``.

    Returns
    -------
    float
        ``Delta_1``, a bound on the first moment ``E||u_T - w'_T||``; ``0.0`` when ``K == T``.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Theorem 4.5 (Theorem A.14), reconstructed.
    """
    _check_TKmn(T, K, m, n)
    check_positive("G", G)
    rho = contraction_factor(regime, eta=eta, L=L, mu=mu)
    if K == T:
        return 0.0
    return float(rho**K * (2.0 * eta * G * m / n) * geometric_sum(rho, T - K))


def gd_r2d_sensitivity(regime: str, *, G: float, L: float, mu: float = 0.0, eta: float, T: int, K: int,
                       m: int, n: int) -> float:
    """Deterministic ``||u_T - w'_T||`` bound for full-batch (projected) GD-R2D [derived, digest 003 Alg. 4].

    ``||grad f_D - grad f_D'|| = (m/n) ||grad f_U - grad f_D'|| <= 2 G m / n`` at every point, so the PSGD
    recursion holds pathwise and the bound has the same value as :func:`psgd_r2d_sensitivity`, but it is a
    worst-case sensitivity: the plain Gaussian mechanism applies, no Markov step, no 1/delta.

    Parameters
    ----------
    regime : {"strongly_convex", "convex", "nonconvex"}
        Loss regime; sets ``rho`` through :func:`contraction_factor`.
    G : float
        Bound on the per-sample gradient norm, ``> 0``.
    L : float
        Smoothness constant, ``> 0``.
    mu : float, default 0.0
        Strong-convexity constant (``> 0`` for ``"strongly_convex"``).
    eta : float
        Step size; must satisfy the regime's step-size condition.
    T : int
        Training steps, ``>= 1``.
    K : int
        Rewind depth, ``0 <= K <= T``.
    m : int
        Number of deleted samples, ``1 <= m < n``.
    n : int
        Training-set size, ``>= 2``.

    Returns
    -------
    float
        A worst-case bound on ``||u_T - w'_T||`` (same value as :func:`psgd_r2d_sensitivity`).

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Algorithm 4; the bound is derived here.
    """
    return psgd_r2d_sensitivity(regime, G=G, L=L, mu=mu, eta=eta, T=T, K=K, m=m, n=n)


def sgd_r2d_sensitivity_derived(regime: str, *, L: float, mu: float = 0.0, F0: float, eta: float, b: int, T: int,
                                K: int, m: int, n: int) -> float:
    """``Delta_1`` for SGD-R2D without projection (Theorem 4.9 substitute, digest 003 section 3.3) [derived].

    Not the paper's constants (its statement is only O~). Needs per-sample L-smooth nonnegative losses with
    ``f(w0; z) <= F0``, with-replacement batches and ``eta <= 2/L`` (C, NC) or ``2/(L + mu)`` (SC)::

        Delta_1 = eta c_m sqrt(2 L F0) sum_{t < T-K} rho^{T-1-t} (1 + L^2 eta^2 / b)^{t/2}
                <= eta c_m sqrt(2 L F0) exp(L^2 eta^2 (T-K) / (2b)) rho^K S_{T-K}(rho),
        c_m = sqrt(m/n) + m / sqrt(n (n - m)).

    The sum (first line) is returned.

    Parameters
    ----------
    regime : {"strongly_convex", "convex", "nonconvex"}
        Loss regime; sets ``rho`` through :func:`contraction_factor`.
    L : float
        Per-sample smoothness constant, ``> 0``.
    mu : float, default 0.0
        Strong-convexity constant (``> 0`` for ``"strongly_convex"``).
    F0 : float
        Bound on the per-sample loss at the start, ``f(w0; z) <= F0``, ``>= 0``.
    eta : float
        Step size, ``<= 2/L`` (C, NC) or ``<= 2/(L + mu)`` (SC).
    b : int
        Batch size, ``>= 1``.
    T : int
        Training steps, ``>= 1``.
    K : int
        Rewind depth, ``0 <= K <= T``.
    m : int
        Number of deleted samples, ``1 <= m < n``.
    n : int
        Training-set size, ``>= 2``.

    Returns
    -------
    float
        ``Delta_1`` (the sum form above), a bound on ``E||u_T - w'_T||``; ``0.0`` when ``K == T``.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), substitute for Theorem 4.9 (digest 003
    section 3.3).
    """
    _check_TKmn(T, K, m, n)
    check_positive("F0", F0, allow_zero=True)
    check_int("b", b, low=1)
    if regime == "nonconvex" and eta > 2.0 / L:
        raise ValueError(f"eta={eta!r} is out of range: the derived SGD-R2D bound needs eta in (0, 2/L] = "
                         f"(0, {2.0 / L:.6g}]")
    rho = contraction_factor(regime, eta=eta, L=L, mu=mu)
    if K == T:
        return 0.0
    c_m = math.sqrt(m / n) + m / math.sqrt(n * (n - m))
    t = np.arange(T - K, dtype=float)
    # the sum form (tighter than the closed form with exp(L^2 eta^2 (T-K)/(2b)); digest 003 3.8 pins it)
    log_terms = (T - 1 - t) * math.log(rho) + 0.5 * t * math.log1p(L * L * eta * eta / b)
    return float(eta * c_m * math.sqrt(2.0 * L * F0) * np.exp(log_terms).sum())


def r2d_sensitivity(theorem: str, regime: str, c: "Constants", *, eta: float, T: int, K: int, m: int, n: int,
                    b: int) -> tuple[float, str]:
    """``(Delta, kind)`` of R2D's ``theorem`` (``"psgd"``: Thm 4.5, ``"gd"``: derived, else Thm 4.9 substitute).

    ``kind`` is the moment that Lemma 4.4 needs: ``"first"`` or ``"deterministic"``. ``c`` provides the loss
    constants ``G, L, mu, F0``.

    Parameters
    ----------
    theorem : str
        ``"psgd"``, ``"gd"``, or anything else for the SGD (Theorem 4.9 substitute) bound.
    regime : {"strongly_convex", "convex", "nonconvex"}
        Loss regime.
    c : Constants
        Supplies ``G``, ``L``, ``mu`` and ``F0``.
    eta : float
        Step size.
    T : int
        Training steps, ``>= 1``.
    K : int
        Rewind depth, ``0 <= K <= T``.
    m : int
        Number of deleted samples, ``1 <= m < n``.
    n : int
        Training-set size, ``>= 2``.
    b : int
        Batch size (read by the SGD bound only).

    Returns
    -------
    tuple of (float, str)
        The sensitivity and its kind, ``"first"`` (psgd, SGD) or ``"deterministic"`` (gd).

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Theorems 4.5 and 4.9.
    """
    if theorem == "psgd":
        return psgd_r2d_sensitivity(regime, G=c.G, L=c.L, mu=c.mu, eta=eta, T=T, K=K, m=m, n=n), "first"
    if theorem == "gd":
        return gd_r2d_sensitivity(regime, G=c.G, L=c.L, mu=c.mu, eta=eta, T=T, K=K, m=m, n=n), "deterministic"
    return sgd_r2d_sensitivity_derived(regime, L=c.L, mu=c.mu, F0=c.F0, eta=eta, b=b, T=T, K=K, m=m, n=n), "first"


# ----------------------------------------------------------------------------------------------------------
# From sensitivity to sigma (Lemma 4.4) and back
# ----------------------------------------------------------------------------------------------------------


def diameter_cap_sigma(radius: float, epsilon: float, delta: float, *, mode: str = "sound") -> float:
    """sigma for the worst-case sensitivity ``2R`` of any two points of the ball (derived; digest 003 3.1).

    ``mode="paper"``: classic Gaussian mechanism; ``"sound"``: analytic Gaussian mechanism.

    Parameters
    ----------
    radius : float
        Radius ``R`` of the feasible ball, ``> 0`` (``inf`` gives ``inf``).
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    mode : {"sound", "paper"}, default "sound"
        ``"paper"``: classic Gaussian mechanism; otherwise the analytic one.

    Returns
    -------
    float
        The noise std for sensitivity ``2R``; ``inf`` when ``radius`` is infinite.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003 section 3.1); the cap is derived here.
    """
    check_positive("radius", radius)
    if not math.isfinite(radius):
        return math.inf
    if mode == "paper":
        return classic_gaussian_sigma(epsilon, delta, 2.0 * radius, warn=False)
    return analytic_gaussian_sigma(epsilon, delta, 2.0 * radius)


def descend_rewind_sigma(sensitivity: float, epsilon: float, delta: float, *, kind: str = "first",
                         mode: str = "sound", radius: float = math.inf, tail_fraction: float = 0.5) -> float:
    """sigma for a sensitivity bound of ``kind`` ``"first"`` (moment), ``"second"`` or ``"deterministic"``.

    Lemma 4.4 of Mu & Klabjan 2025. ``mode="paper"``: as reconstructed, classic Gaussian with the delta/2
    split: ``sigma = (2 Delta_1 / delta) sqrt(2 ln(2.5/delta)) / epsilon`` (first moment) and
    ``(2 Delta_2 / epsilon) sqrt(ln(2.5/delta)/delta)`` (second). ``mode="sound"``: the analytic Gaussian
    mechanism in the same Markov argument, and ``min`` with :func:`diameter_cap_sigma` when ``radius`` is finite.

    Parameters
    ----------
    sensitivity : float
        The bound ``Delta``, ``>= 0`` (``inf`` gives ``inf`` before the diameter cap).
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    kind : {"first", "second", "deterministic"}, default "first"
        Which moment ``sensitivity`` bounds.
    mode : {"sound", "paper"}, default "sound"
        Calibration (see above).
    radius : float, default inf
        Feasible-ball radius; finite values cap sigma in ``mode="sound"``.
    tail_fraction : float, default 0.5
        Share of ``delta`` spent on the Markov tail (moment kinds only).

    Returns
    -------
    float
        The noise std ``sigma``; ``0.0`` when ``sensitivity == 0``.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Lemma 4.4 (reconstructed).
    """
    check_choice("mode", mode, ("paper", "sound"))
    check_choice("kind", kind, ("first", "second", "deterministic"))
    check_positive("sensitivity", sensitivity, allow_zero=True)
    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    if sensitivity == 0:
        return 0.0
    mech = "classic" if mode == "paper" else "analytic"
    if not math.isfinite(sensitivity):
        sigma = math.inf
    elif kind == "deterministic":
        sigma = (classic_gaussian_sigma(epsilon, delta, sensitivity, warn=False) if mode == "paper"
                 else analytic_gaussian_sigma(epsilon, delta, sensitivity))
    else:
        kw = {"first_moment": sensitivity} if kind == "first" else {"second_moment": sensitivity}
        sigma = relaxed_gaussian_sigma(epsilon, delta, mechanism=mech, tail_fraction=tail_fraction, **kw).sigma
    if mode == "sound" and math.isfinite(radius):
        sigma = min(sigma, diameter_cap_sigma(radius, epsilon, delta))
    return float(sigma)


def descend_rewind_epsilon(sigma: float, sensitivity: float, delta: float, *, kind: str = "first",
                           mode: str = "sound", radius: float = math.inf, eps_max: float = 1e4) -> float:
    """The smallest epsilon that noise ``sigma`` certifies (inverts :func:`descend_rewind_sigma`; inf if none).

    Parameters
    ----------
    sigma : float
        Noise std, ``>= 0``.
    sensitivity : float
        The bound ``Delta``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    kind : {"first", "second", "deterministic"}, default "first"
        Which moment ``sensitivity`` bounds.
    mode : {"sound", "paper"}, default "sound"
        Calibration, as in :func:`descend_rewind_sigma`.
    radius : float, default inf
        Feasible-ball radius (diameter cap in ``mode="sound"``).
    eps_max : float, default 1e4
        Largest epsilon searched.

    Returns
    -------
    float
        The epsilon found by root finding on ``log epsilon`` in ``[1e-8, eps_max]``: ``0.0`` for zero sensitivity,
        ``1e-8`` when even that is certified, ``inf`` when ``sigma == 0`` or ``eps_max`` is not reached.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Lemma 4.4 (inverted).
    """
    check_positive("sigma", sigma, allow_zero=True)
    if sensitivity == 0:
        return 0.0
    if sigma == 0:
        return math.inf

    def f(log_eps: float) -> float:
        return descend_rewind_sigma(sensitivity, math.exp(log_eps), delta, kind=kind, mode=mode,
                                    radius=radius) - sigma

    lo, hi = math.log(1e-8), math.log(eps_max)
    if f(hi) > 0:
        return math.inf
    if f(lo) <= 0:
        return 1e-8
    return math.exp(brentq(f, lo, hi, xtol=1e-10))


def r2d_sigma_curve(regime: str, Ks: np.ndarray | list[int], *, constants: "Constants", eta: float, T: int, m: int,
                    n: int, epsilon: float, delta: float, mode: str = "sound", theorem: str = "psgd",
                    b: int = 1) -> np.ndarray:
    """sigma for each rewind depth K (Theorem 4.5's noise-vs-K trade-off; digest 003 section 8.3).

    Parameters
    ----------
    regime : {"strongly_convex", "convex", "nonconvex"}
        Loss regime.
    Ks : array_like of int
        Rewind depths, each in ``[0, T]``.
    constants : Constants
        Loss constants (``G``, ``L``, ``mu``, ``F0``) and ``radius``.
    eta : float
        Step size.
    T : int
        Training steps.
    m : int
        Number of deleted samples, ``1 <= m < n``.
    n : int
        Training-set size.
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    mode : {"sound", "paper"}, default "sound"
        Calibration, as in :func:`descend_rewind_sigma`.
    theorem : str, default "psgd"
        Sensitivity bound, as in :func:`r2d_sensitivity`.
    b : int, default 1
        Batch size (SGD bound only).

    Returns
    -------
    numpy.ndarray
        Float array of sigma, one per entry of ``Ks``.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Theorem 4.5 and Lemma 4.4.
    """
    out = []
    for K in Ks:
        d1, kind = r2d_sensitivity(theorem, regime, constants, eta=eta, T=T, K=int(K), m=m, n=n, b=b)
        out.append(descend_rewind_sigma(d1, epsilon, delta, kind=kind, mode=mode, radius=constants.radius))
    return np.asarray(out, dtype=float)


def k_for_sigma_sc(sigma: float, *, G: float, mu: float, eta: float, T: int, m: int, n: int, epsilon: float,
                   delta: float) -> float:
    """Corollary 4.6 [reconstructed]: the unlearning steps K that strongly convex PSGD-R2D needs at fixed sigma.

    With ``c = sigma mu n eps delta / (4 G m sqrt(2 ln(2.5/delta)))`` (paper-mode Lemma 4.4):
    ``K = ln(1/(c + (1-eta mu)^T)) / ln(1/(1-eta mu))`` if ``c + (1-eta mu)^T < 1``, else 0 (noise alone
    suffices). Returned unrounded (digest 003 3.7 pins these values); round up for an actual run.

    Parameters
    ----------
    sigma : float
        Noise std, ``> 0``.
    G : float
        Gradient-norm bound.
    mu : float
        Strong-convexity constant, ``> 0``.
    eta : float
        Step size, ``> 0``.
    T : int
        Training steps, ``>= 1``.
    m : int
        Number of deleted samples.
    n : int
        Training-set size.
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.

    Returns
    -------
    float
        The (unrounded) number of unlearning steps ``K``, ``>= 0``.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Corollary 4.6 (reconstructed).
    """
    check_positive("sigma", sigma)
    check_positive("mu", mu)
    check_int("T", T, low=1)
    q = contraction_factor("strongly_convex", eta=eta, L=mu, mu=mu, strict=False)
    lam = math.sqrt(2.0 * math.log(2.5 / delta))
    c = sigma * mu * n * epsilon * delta / (4.0 * G * m * lam)
    v = c + q**T
    if v >= 1:
        return 0.0
    return math.log(1.0 / v) / math.log(1.0 / q)


def k_infinity(sigma: float, *, G: float, mu: float, eta: float, m: int, n: int, epsilon: float, delta: float) -> float:
    """``lim_{T -> inf} K(T) = ln(1/c) / ln(1/(1-eta mu))`` (Corollary 4.6, eq. 6): K saturates in T.

    Parameters
    ----------
    sigma : float
        Noise std, ``> 0``.
    G : float
        Gradient-norm bound.
    mu : float
        Strong-convexity constant, ``> 0``.
    eta : float
        Step size, ``> 0``.
    m : int
        Number of deleted samples.
    n : int
        Training-set size.
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.

    Returns
    -------
    float
        ``K`` of :func:`k_for_sigma_sc` at ``T = 10**9``, standing in for the limit.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Corollary 4.6.
    """
    return k_for_sigma_sc(sigma, G=G, mu=mu, eta=eta, T=10**9, m=m, n=n, epsilon=epsilon, delta=delta)
