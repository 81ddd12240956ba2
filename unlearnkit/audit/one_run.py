"""The one-run canary audit's statistic (Steinke, Nasr & Jagielski 2023, "Privacy Auditing with One (1)
Training Run", NeurIPS; arXiv 2305.08846).

Setting: ``m`` canaries, each included independently with probability 1/2 (``S_i`` uniform on {-1, +1}); one
run of the mechanism; the auditor looks at the output, abstains on most canaries and guesses the inclusion
of ``r`` of them (e.g. "in" for the ``k+`` highest scores, "out" for the ``k-`` lowest); ``v`` guesses are
right. If the mechanism is (eps, delta)-DP with respect to each canary, the number of correct guesses is
(nearly) dominated by a Binomial(r, e^eps / (1 + e^eps)): their Theorem 5.2 (the (eps, delta) version of
Theorem 3.1), in the form of their Algorithm 2 / Appendix D code::

    P[W >= v] <= P[Binomial(r, q) >= v] + 2 m delta max_{i in 1..v} (1/i) P[v - i <= Binomial(r, q) < v],
    q = e^eps / (1 + e^eps).

The audit reports the largest eps whose p-value is ``<= alpha``: a lower bound on epsilon that holds with
probability ``>= 1 - alpha`` over the canaries' coin flips and the mechanism's randomness.

**Assumptions** (what a user must make true): the inclusion bits are independent fair coins drawn *after*
nothing that the guesses may see; the guesses are a function of the output only (post-processing), made with
the numbers of guesses ``k+``, ``k-`` fixed in advance (choosing them after seeing the result needs a
correction, e.g. Bonferroni over the values tried); the privacy claim is about adding or removing *one*
canary (the bound is for every canary at once only through this per-example guarantee). With every guess
right the bound still cannot exceed a ceiling that grows with ``r`` (about 3.5 for 100 guesses, 5.8 for 1,000
at delta = 1e-5 and 95 %), the one-run analogue of the Clopper-Pearson ceiling.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_int, check_positive, check_probability
from ..core import MAX_TRIALS


def _check_counts(n_guesses: int, n_correct: int, m: int) -> tuple[int, int, int]:
    m = check_int("m", m, low=1, high=MAX_TRIALS)
    r = check_int("n_guesses", n_guesses, low=0, high=m)
    v = check_int("n_correct", n_correct, low=0, high=r)
    return r, v, m


def one_run_p_value(n_guesses: int, n_correct: int, m: int, *, epsilon: float, delta: float) -> float:
    """Probability of ``>= n_correct`` right guesses out of ``n_guesses`` if the mechanism is (eps, delta)-DP.

    Steinke, Nasr & Jagielski 2023, Theorem 5.2 (code of their Appendix D): ``P[Binomial(r, q) >= v]`` plus
    ``2 m delta`` times the largest ``(1/i) P[v - i <= Binomial(r, q) < v]``, ``q = e^eps / (1 + e^eps)``.
    """
    from scipy.stats import binom  # deferred: imports scipy.stats

    r, v, m = _check_counts(n_guesses, n_correct, m)
    check_positive("epsilon", epsilon, allow_zero=True)
    check_probability("delta", delta)
    q = 1.0 / (1.0 + math.exp(-epsilon))
    tail = float(binom.sf(v - 1, r, q))  # P[Binomial(r, q) >= v]
    if v == 0 or delta == 0:
        return min(tail, 1.0)
    i = np.arange(1, v + 1)
    partial = np.cumsum(binom.pmf(v - i, r, q))  # P[v - i <= Binomial(r, q) < v]
    return float(min(tail + 2.0 * m * delta * float(np.max(partial / i)), 1.0))


def one_run_epsilon_lower_bound(n_guesses: int, n_correct: int, m: int, delta: float,
                                alpha: float = 0.05) -> float:
    """Largest epsilon refuted at confidence ``1 - alpha`` by ``n_correct`` of ``n_guesses`` right guesses.

    The p-value of :func:`one_run_p_value` increases with epsilon; the bound is the eps where it crosses
    ``alpha`` (solved by Brent's method to 1e-10), 0 when even eps = 0 is not refuted. Steinke et al. 2023,
    Sec. 5 (they bisect; the root is the same).

    Parameters
    ----------
    n_guesses:
        ``r``, the canaries guessed (the others abstained on), ``0 <= r <= m``.
    n_correct:
        ``v``, the right guesses, ``0 <= v <= r``.
    m:
        Canaries in the run, each included with probability 1/2.
    delta:
        The claim's delta, in [0, 1).
    alpha:
        The bound holds with probability ``>= 1 - alpha``.
    """
    from scipy.optimize import brentq  # deferred: imports scipy.optimize

    r, v, m = _check_counts(n_guesses, n_correct, m)
    check_probability("delta", delta, allow_one=False)
    check_probability("alpha", alpha, allow_zero=False, allow_one=False)

    def f(eps: float) -> float:
        return one_run_p_value(r, v, m, epsilon=eps, delta=delta) - alpha

    if r == 0 or f(0.0) > 0:
        return 0.0
    hi = 1.0
    while f(hi) <= 0:
        hi *= 2.0
        if hi > 1e3:
            return math.inf
    return float(brentq(f, 0.0, hi, xtol=1e-10))


def one_run_guesses(scores: Any, included: Any, *, k_plus: int, k_minus: int = 0) -> tuple[int, int]:
    """``(n_guesses, n_correct)`` from guessing "in" for the ``k_plus`` highest scores, "out" for the ``k_minus``
    lowest and abstaining on the rest (Steinke et al. 2023, Sec. 6: guesses from the top-k scores).

    ``scores``: one number per canary, higher meaning "more likely included" (e.g. minus the loss);
    ``included``: the true inclusion bits (bool or 0/1). ``k_plus`` and ``k_minus`` must be chosen before the
    scores are seen.
    """
    s = np.asarray(scores, dtype=float).reshape(-1)
    inc = np.asarray(included).reshape(-1).astype(bool)
    if s.size != inc.size:
        raise ValueError(f"scores has {s.size} entries but included has {inc.size}: expected one per canary")
    m = s.size
    kp = check_int("k_plus", k_plus, low=0, high=m)
    km = check_int("k_minus", k_minus, low=0, high=m - kp)
    order = np.argsort(s, kind="stable")
    correct = int(inc[order[m - kp:]].sum()) if kp else 0
    correct += int((~inc[order[:km]]).sum())
    return kp + km, correct
