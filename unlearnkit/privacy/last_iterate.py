"""The last-iterate heuristic for DP-SGD: epsilon when only the final model is released (a heuristic, not a bound).

DP-SGD's certificate composes every step, as if each intermediate model were released. When only the last
iterate is released, Steinke et al. (2025) propose a heuristic: analyse the loss that is *linear* in the
parameters, for which the last iterate is exactly a Gaussian around the number of times the differing example
was sampled. With ``T`` steps at Poisson rate ``q``, noise multiplier ``sigma`` and clipped gradients of norm 1,
the two worlds release

    P = N(0, T sigma^2)        and        Q = sum_k Binomial(T, q)(k) N(k, T sigma^2),

and the heuristic epsilon is that of the pair (P, Q), both directions. It is exact for linear losses and is
**not** an upper bound for others: there are (contrived) losses for which the last iterate leaks more. It
sits between the audited lower bound and the composition bound; the package shows it labelled as a
heuristic and never certifies with it.

Computation: the privacy loss ``L(x) = log sum_k b_k exp((k x - k^2 / 2) / s^2)`` (``s^2 = T sigma^2``) is
increasing in ``x``, so each hockey-stick divergence is a difference of Gaussian tails at the point where
``L = +-epsilon`` (found by bracketing): exact up to the truncation of the binomial at ``1e-300`` mass.

References
----------
Steinke, Nasr, Ganesh, Balle, Choquette-Choo, Jagielski, Hayes, Thakurta, Smith, Terzis, "The Last Iterate
Advantage: Empirical Auditing and Principled Heuristic Analysis of Differentially Private SGD", ICLR 2025.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import check_int, check_positive, check_range


_SD = 40.0  # binomial support kept: mean +- 40 standard deviations (mass outside below 1e-300)


def _support(q: float, steps: int) -> tuple[np.ndarray, np.ndarray]:
    from scipy import stats  # deferred: imports scipy.stats

    mean, sd = steps * q, math.sqrt(steps * q * (1 - q))
    k = np.arange(max(0, int(mean - _SD * sd) - 1), min(steps, int(mean + _SD * sd) + 1) + 1)
    logb = stats.binom.logpmf(k, steps, q)
    keep = np.isfinite(logb)
    return k[keep].astype(float), logb[keep]


def _check(q: float, sigma: float, steps: int) -> None:
    check_range("q", q, 0.0, 1.0, low_open=True)
    check_positive("sigma", sigma)
    check_int("steps", steps, low=1, high=10**9)


def last_iterate_delta(q: float, sigma: float, steps: int, epsilon: float) -> float:
    """delta(epsilon) of the last-iterate heuristic (module docstring), the larger of the two directions.

    Parameters
    ----------
    q, sigma, steps:
        Poisson sampling rate, noise multiplier (std over the clipping norm), number of steps.
    epsilon:
        The epsilon at which delta is read, ``>= 0``.

    Returns
    -------
    float
        ``max(H_{e^eps}(Q || P), H_{e^eps}(P || Q))``: a heuristic, exact for linear losses only.

    References
    ----------
    .. [1] T. Steinke, M. Nasr, A. Ganesh, B. Balle, C. A. Choquette-Choo, M. Jagielski, J. Hayes, A. G. Thakurta, A.
       Smith, A. Terzis, "The Last Iterate Advantage: Empirical Auditing and Principled Heuristic Analysis of
       Differentially Private SGD", ICLR 2025, Section 4 (the linear-loss heuristic).
    """
    from scipy import optimize, special, stats  # deferred: imports scipy.stats

    _check(q, sigma, steps)
    check_positive("epsilon", epsilon, allow_zero=True)
    s = sigma * math.sqrt(steps)
    k, logb = _support(q, steps)

    def loss(x: float) -> float:  # log Q(x)/P(x), increasing in x
        return float(special.logsumexp(logb + (k * x - 0.5 * k * k) / (s * s)))

    def crossing(level: float) -> float:
        lo, hi = -s, float(k.max()) + s
        while loss(lo) > level:
            lo -= 10 * s + abs(lo)
        while loss(hi) < level:
            hi += 10 * s + abs(hi)
        return optimize.brentq(lambda x: loss(x) - level, lo, hi, xtol=1e-12 * s, rtol=1e-14)

    e = math.exp(epsilon)
    x1 = crossing(epsilon)  # Q over P: the event L > epsilon = {x > x1}
    q_tail = float(np.exp(special.logsumexp(logb + stats.norm.logsf(x1, k, s))))
    remove = q_tail - e * float(stats.norm.sf(x1 / s))
    x2 = crossing(-epsilon)  # P over Q: the event L < -epsilon = {x < x2}
    q_head = float(np.exp(special.logsumexp(logb + stats.norm.logcdf(x2, k, s))))
    add = float(stats.norm.cdf(x2 / s)) - e * q_head
    return max(remove, add, 0.0)


def last_iterate_epsilon(q: float, sigma: float, steps: int, delta: float) -> float:
    """The last-iterate heuristic's epsilon at ``delta`` (module docstring): a heuristic, not a bound.

    Parameters
    ----------
    q, sigma, steps:
        Poisson sampling rate, noise multiplier, number of steps.
    delta:
        Target delta in ``(0, 1)``.

    Returns
    -------
    float
        The smallest epsilon with :func:`last_iterate_delta` ``<= delta`` (0 when even epsilon = 0 meets it).

    References
    ----------
    Steinke et al., ICLR 2025, section 4 (the linear-loss heuristic).
    """
    from scipy import optimize  # deferred: imports scipy.optimize

    check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    _check(q, sigma, steps)
    if last_iterate_delta(q, sigma, steps, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while last_iterate_delta(q, sigma, steps, hi) > delta:
        hi *= 2
        if hi > 1e4:
            return math.inf
    return float(optimize.brentq(lambda e: last_iterate_delta(q, sigma, steps, e) - delta, 0.0, hi, xtol=1e-9))
