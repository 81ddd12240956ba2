"""Trade-off functions: the hypothesis-testing view of a Gaussian certificate (Gaussian differential privacy).

An adversary who tests "record in" against "record out" from the output, with type I error ``alpha``, has type
II error at least ``f(alpha)``; for a mechanism that is ``mu``-GDP the best it can do is

    ``G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu)``

(Dong, Roth & Su 2019, Def. 2.3). The Gaussian mechanism with L2 sensitivity ``Delta`` and noise ``sigma`` is
exactly ``(Delta / sigma)``-GDP, and ``T`` of them compose to ``sqrt(T) Delta / sigma`` (their Cor. 3.3;
:func:`unlearnkit.privacy.mixture.gaussian_composition_mu` for unequal steps), so a Gaussian-family certificate
has one number, ``mu``, that carries every (epsilon, delta) pair at once (their Cor. 2.13). An
``(epsilon, delta)`` certificate promises less: the piecewise-linear curve
``f_{eps,delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))`` (their Prop. 2.5;
Kairouz, Oh & Viswanath 2015), which lies below ``G_mu`` except where they touch. A mechanism that is
``(eps, delta(eps))``-DP for every ``eps`` (its privacy profile, e.g. read from a PLD) promises the upper envelope
``sup_eps f_{eps, delta(eps)}`` (their Prop. 2.12): :func:`pld_tradeoff` draws it for subsampled mechanisms,
which no single ``mu`` describes.

An audit sees the other side: a test (a threshold ``t`` on a score) has a false-positive rate ``P_out(S > t)``
and a false-negative rate ``P_in(S <= t)``, each estimated from samples with a confidence interval; a box that
lies entirely below the curve refutes the certificate (Nasr et al. 2023, Sec. 4).
:func:`tradeoff_operating_points` gives such points, with boxes that hold simultaneously.

References
----------
Dong, Roth & Su 2019, "Gaussian differential privacy" (J. R. Stat. Soc. B 2022).
Kairouz, Oh & Viswanath 2015, "The composition theorem for differential privacy", ICML.
Nasr, Hayes, Steinke, Balle, Tramer, Jagielski, Carlini & Terzis 2023, "Tight auditing of differentially private
machine learning", USENIX Security.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._validate import check_delta, check_int, check_positive, check_probability, check_scale


def _alphas(alpha) -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if np.any(~((a >= 0) & (a <= 1))):
        bad = a[~((a >= 0) & (a <= 1))].ravel()[0]
        raise ValueError(f"alpha contains {bad!r}, out of range: expected every alpha in [0, 1]")
    return a


def gdp_tradeoff(mu: float, alpha):
    """The trade-off function of ``mu``-GDP: ``beta = Phi(Phi^{-1}(1 - alpha) - mu)``.

    Parameters
    ----------
    mu : float >= 0
        GDP parameter (``0``: perfect privacy, ``beta = 1 - alpha``; ``inf``: ``beta = 0``).
    alpha : float or array in [0, 1]
        Type I error(s) of the test.

    Returns
    -------
    float or ndarray
        The smallest type II error any test can reach at each ``alpha``.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022 (arXiv 1905.02383),
       Definition 2.6 (mu-GDP, G_mu = T(N(0, 1), N(mu, 1)) = Phi(Phi^{-1}(1 - alpha) - mu)).
    """
    mu = float(mu)
    if not mu >= 0:  # NaN fails too
        raise ValueError(f"mu={mu!r} is out of range: expected mu in [0, inf]")
    a = _alphas(alpha)
    beta = special.ndtr(special.ndtri(1.0 - a) - mu) if np.isfinite(mu) else np.zeros_like(a)
    return float(beta) if np.ndim(beta) == 0 else beta


def gaussian_certificate_mu(sigma: float, sensitivity: float = 1.0, steps: int = 1) -> float:
    """The GDP ``mu`` of ``steps`` Gaussian mechanisms with noise ``sigma`` and L2 sensitivity ``sensitivity``.

    Parameters
    ----------
    sigma : float > 0
        Noise standard deviation (a certificate's ``sigma``).
    sensitivity : float > 0
        The L2 sensitivity the noise was calibrated to.
    steps : int >= 1
        Number of such mechanisms composed.

    Returns
    -------
    float
        ``mu = sqrt(steps) sensitivity / sigma`` (Dong, Roth & Su 2019, Thm 2.7 and Cor. 3.3).

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022 (arXiv 1905.02383),
       Theorem 2.7 (a Gaussian mechanism of sensitivity Delta and noise sigma is Delta/sigma-GDP) and Corollary 3.3
       (composition).
    """
    sigma = check_scale("sigma", sigma)
    sensitivity = check_positive("sensitivity", sensitivity)
    steps = check_int("steps", steps, low=1)
    return float(np.sqrt(steps) * sensitivity / sigma)


def dp_tradeoff(epsilon: float, delta: float, alpha):
    """The trade-off function of ``(epsilon, delta)``-DP: ``max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))``.

    Parameters
    ----------
    epsilon : float >= 0
        The certificate's epsilon (finite).
    delta : float in [0, 1]
        The certificate's delta.
    alpha : float or array in [0, 1]
        Type I error(s) of the test.

    Returns
    -------
    float or ndarray
        The smallest type II error an ``(epsilon, delta)`` certificate guarantees at each ``alpha``.

    References
    ----------
    Dong, Roth & Su 2019, "Gaussian differential privacy", Proposition 2.5; Kairouz, Oh & Viswanath 2015,
    "The composition theorem for differential privacy", ICML, Theorem 2.1.
    """
    epsilon = check_positive("epsilon", epsilon, allow_zero=True)
    delta = check_probability("delta", delta)
    a = _alphas(alpha)
    beta = np.maximum(0.0, np.maximum(1.0 - delta - math.exp(epsilon) * a, math.exp(-epsilon) * (1.0 - delta - a)))
    return float(beta) if np.ndim(beta) == 0 else beta


@dataclass(frozen=True)
class OperatingPoints:
    """Threshold tests of an audit in the trade-off plane, with boxes that hold simultaneously.

    ``fpr[i]`` (type I error, ``P_out(S > thresholds[i])``) lies in ``[fpr_low[i], fpr_high[i]]`` and ``fnr[i]``
    (type II error, ``P_in(S <= thresholds[i])``) in ``[fnr_low[i], fnr_high[i]]``, all boxes at once with
    probability at least ``1 - alpha``. ``fpr`` is the mean ``(k + 1) / (n + 1)`` of its exact law and ``fnr``
the observed share. ``sign`` is ``+1`` when
    the "in" world scores higher (the tests are ``S > t``), ``-1`` when the scores were negated first.
    """

    fpr: np.ndarray
    fnr: np.ndarray
    fpr_low: np.ndarray
    fpr_high: np.ndarray
    fnr_low: np.ndarray
    fnr_high: np.ndarray
    thresholds: np.ndarray
    alpha: float
    sign: float

    @property
    def mu_lower(self) -> float:
        """The largest ``mu`` some box refutes: ``max_i Phi^-1(1 - fpr_high_i) - Phi^-1(fnr_high_i)``, at least 0.

        Every ``mu``-GDP claim with ``mu`` below it has a box entirely under its curve (since ``G_mu`` is
        decreasing, the box's corner ``(fpr_high, fnr_high)`` is its point nearest the curve).
        """
        with np.errstate(divide="ignore"):
            v = special.ndtri(1.0 - self.fpr_high) - special.ndtri(self.fnr_high)
        return float(max(np.max(v), 0.0))

    def refutes(self, beta_of_alpha) -> np.ndarray:
        """Which boxes lie entirely below a trade-off curve (a callable ``alpha -> beta``): refutations.

        Parameters
        ----------
        beta_of_alpha : callable
            The claimed trade-off function, e.g. ``lambda a: gdp_tradeoff(mu, a)``.

        Returns
        -------
        ndarray of bool
            ``fnr_high < f(fpr_high)`` for every point.
        """
        return np.asarray(self.fnr_high < np.asarray(beta_of_alpha(self.fpr_high), dtype=float))


def tradeoff_operating_points(scores_out, scores_in, *, alpha: float = 0.05, n_points: int = 12) -> OperatingPoints:
    """Operating points ``(FPR, FNR)`` of threshold tests between two samples of a score, with joint boxes.

    The thresholds sit at order statistics of the "out" sample (``k`` of its ``n`` scores above, ``k``
    geometric in ``[0, n - 1]``), so ``FPR = P_out(S > t)`` is exactly ``Beta(k + 1, n - k)``-distributed
    (continuous scores; David & Nagaraja 2003, Sec. 2.2) and its interval is that law's quantiles; the
    "in" sample's count at the threshold is binomial given ``t`` (independent samples) and gets a
    Clopper-Pearson interval. The orientation (which world scores higher) is chosen from the medians, and the
    ``2 n_points`` tests of both orientations share ``alpha`` by Bonferroni, so every reported box holds at
    once with probability at least ``1 - alpha``.

    Parameters
    ----------
    scores_out : array of float
        Scores of the world without the record (an audit's world B: retrained plus noise), at least 20.
    scores_in : array of float
        Scores of the world with it (world A: the unlearned model), at least 20.
    alpha : float in (0, 1)
        One minus the joint confidence of all boxes.
    n_points : int >= 1
        Thresholds (ranks) tried; duplicates at small sample sizes are merged.

    Returns
    -------
    OperatingPoints
        Points ordered by increasing FPR.

    References
    ----------
    Nasr et al. 2023, "Tight auditing of differentially private machine learning", USENIX Security, Sec. 4;
    Clopper & Pearson 1934; David & Nagaraja 2003, "Order statistics", Sec. 2.2.
    """
    from scipy.stats import beta as beta_law  # deferred: imports scipy.stats

    alpha = check_probability("alpha", alpha, allow_zero=False, allow_one=False)
    n_points = check_int("n_points", n_points, low=1, high=10_000)
    out = np.asarray(scores_out, dtype=float).reshape(-1)
    inn = np.asarray(scores_in, dtype=float).reshape(-1)
    for name, s in (("scores_out", out), ("scores_in", inn)):
        if s.size < 20:
            raise ValueError(f"{name} has {s.size} scores: expected at least 20")
        if not np.isfinite(s).all():
            raise ValueError(f"{name} contains NaN or infinite scores: expected finite scores")
    sign = 1.0 if np.median(inn) >= np.median(out) else -1.0
    so, si = np.sort(sign * out), np.sort(sign * inn)
    n_o, n_i = so.size, si.size
    ks = np.unique(np.floor(np.geomspace(1, n_o, n_points)).astype(int)) - 1  # out-scores above the threshold
    t = so[n_o - ks - 1]
    c = np.searchsorted(si, t, side="right")  # in-scores at or below the threshold: the false negatives
    a = alpha / (2 * ks.size) / 4  # Bonferroni: 2 orientations x points, 4 one-sided ends per box
    fpr_low, fpr_high = beta_law.ppf(a, ks + 1, n_o - ks), beta_law.ppf(1 - a, ks + 1, n_o - ks)
    fnr_low = np.where(c > 0, beta_law.ppf(a, np.maximum(c, 1), n_i - c + 1), 0.0)
    fnr_high = np.where(c < n_i, beta_law.ppf(1 - a, c + 1, np.maximum(n_i - c, 1)), 1.0)
    order = np.argsort(ks)
    return OperatingPoints(fpr=((ks + 1) / (n_o + 1))[order], fnr=(c / n_i)[order], fpr_low=fpr_low[order],
                           fpr_high=fpr_high[order], fnr_low=fnr_low[order], fnr_high=fnr_high[order],
                           thresholds=(sign * t)[order], alpha=float(alpha), sign=sign)


def pld_tradeoff(pld, alpha, *, n_eps: int = 400):
    """The trade-off curve a PLD certifies: ``sup_eps f_{eps, delta(eps)}(alpha)`` over a grid of epsilons.

    ``delta(eps)`` is the PLD's certified (upper) delta, the larger of its directions, so the curve is a valid
    promise for both orders of the two worlds; a finite epsilon grid (``n_eps`` points from 0 to where the
    upper delta falls below ``1e-12``) can only lower it, which keeps it valid.

    Parameters
    ----------
    pld : PLD
        A composed :class:`unlearnkit.privacy.PLD`.
    alpha : float or array in [0, 1]
        Type I error(s).
    n_eps : int in [2, 100000]
        Epsilon grid points.

    Returns
    -------
    float or ndarray
        The type II error the certificate guarantees at each ``alpha``.

    References
    ----------
    Dong, Roth & Su 2019, "Gaussian differential privacy", Proposition 2.12 (the profile's envelope).
    """
    from .pld import PLD  # deferred: imports scipy.optimize

    if not isinstance(pld, PLD):
        raise TypeError(f"pld={type(pld).__name__} is not a PLD")
    n_eps = check_int("n_eps", n_eps, low=2, high=100_000)
    a = _alphas(alpha)
    hi = 1.0
    while pld.delta(hi).upper > 1e-12 and hi < 1e4:
        hi *= 2.0
    eps = np.linspace(0.0, hi, n_eps)
    deltas = np.array([pld.delta(float(e)).upper for e in eps])
    flat = a.reshape(-1)
    beta = np.zeros_like(flat)
    for e, d in zip(eps, deltas):
        beta = np.maximum(beta, np.maximum(1.0 - d - math.exp(e) * flat, math.exp(-e) * (1.0 - d - flat)))
    beta = np.clip(beta, 0.0, 1.0).reshape(a.shape)
    return float(beta) if np.ndim(beta) == 0 else beta
