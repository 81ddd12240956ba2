"""Per-example forgetting scores: the metric of the NeurIPS 2023 machine-unlearning competition.

Triantafillou et al. 2024 ("Are we making progress in unlearning? Findings from the first NeurIPS
unlearning competition", arXiv 2406.09073, Sec. 3; the organisers' evaluation note of August 2023) score an
unlearning algorithm by how well an attacker can tell, *for one forgotten example at a time*, its models
from retrained ones:

1. train and unlearn many times (``N_u`` unlearned models) and retrain many times without the forget set
   (``N_r`` retrained models); for each forgotten example take one number per model (here its margin, the
   label-signed logit);
2. for each example, every threshold test on that number ("unlearned if above t", and "below t") gives a
   false-positive and a false-negative rate; each gives an epsilon at ``delta``::

       eps = max( log((1 - delta - FPR) / FNR), log((1 - delta - FNR) / FPR) )

   (the (eps, delta) inequality of the two error rates, Kairouz et al. 2015), and the example's epsilon is
   the largest over the tests (the best threshold attack). The competition uses ``delta = 0.01``;
3. each example's epsilon falls in a bin of width ``bin_width`` (0.5); bin ``k`` scores ``2^-k`` (perfect
   forgetting, eps < 0.5, scores 1, each further half unit halves it); the forgetting score ``F`` is the mean
   over the forgotten examples.

These are *point estimates*: with 256 models per side the best of many thresholds overstates epsilon (two
identical distributions give a mean per-example epsilon of about 1, because a tail threshold with 10
retrained and 1 unlearned model beyond it already gives ``log(7.4) = 2``), so compare with the
exact-retraining control; the interval
of :func:`score_interval` comes from independent repetitions of the whole experiment (a sampling spread, not
a guarantee). Unlike the audit's lower bounds, nothing here refutes a certificate; a certificate with
``epsilon`` at ``delta`` does imply that no test reaches a higher epsilon in the population, so the score's
population value is at least ``2^-floor(eps / bin_width)`` for a certified (eps, 0.01) method.
Zero error counts are counted as half a model (else a perfect test gives an infinite epsilon).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_int, check_positive, check_probability


def example_epsilon(unlearned: Any, retrained: Any, *, delta: float = 0.01) -> float:
    """The best threshold attack's epsilon for one example: ``unlearned`` and ``retrained`` are 1-D samples of
    its score (one per model). See the module docstring."""
    check_probability("delta", delta, allow_one=False)
    u = np.sort(np.asarray(unlearned, dtype=float).reshape(-1))
    r = np.sort(np.asarray(retrained, dtype=float).reshape(-1))
    if u.size < 2 or r.size < 2:
        raise ValueError(f"got {u.size} unlearned and {r.size} retrained scores: expected at least 2 of each")
    t = np.concatenate([[-np.inf], np.unique(np.concatenate([u, r]))])
    # "unlearned if score > t": FNR = share of unlearned <= t; FPR = share of retrained > t
    fnr = np.searchsorted(u, t, side="right") / u.size
    fpr = 1.0 - np.searchsorted(r, t, side="right") / r.size
    out = 0.0
    # the opposite test ("unlearned if score <= t") has rates (1 - FNR, 1 - FPR)
    for a, b in ((fpr, fnr), (1.0 - fpr, 1.0 - fnr)):
        a = np.maximum(a, 0.5 / r.size)
        b = np.maximum(b, 0.5 / u.size)
        with np.errstate(divide="ignore", invalid="ignore"):
            e1 = np.log(np.maximum(1.0 - delta - a, 1e-300) / b)
            e2 = np.log(np.maximum(1.0 - delta - b, 1e-300) / a)
        out = max(out, float(np.nanmax(np.maximum(e1, e2))))
    return max(out, 0.0)


def _score(eps: np.ndarray, bin_width: float) -> float:
    return float(np.mean(2.0 ** -np.floor(eps / bin_width)))


def forgetting_score(unlearned: Any, retrained: Any, *, delta: float = 0.01,
                     bin_width: float = 0.5) -> dict[str, Any]:
    """Forgetting score ``F`` from ``(N_u, m)`` and ``(N_r, m)`` score arrays (one row per model, one column
    per forgotten example, the same examples in the same order). ``delta`` is the delta of each example's
    epsilon (0.01 in the competition), ``bin_width`` the width of the epsilon bins (0.5).

    Returns ``{"score", "example_epsilons" (m,), "n_unlearned", "n_retrained", "delta", "bin_width"}``; for an
    interval repeat the whole experiment with fresh models and use :func:`score_interval`.
    """
    u = np.asarray(unlearned, dtype=float)
    r = np.asarray(retrained, dtype=float)
    u = u.reshape(u.shape[0], -1)
    r = r.reshape(r.shape[0], -1)
    if u.shape[1] != r.shape[1]:
        raise ValueError(f"unlearned has {u.shape[1]} examples but retrained has {r.shape[1]}: expected the same")
    check_positive("bin_width", bin_width)
    eps = np.array([example_epsilon(u[:, j], r[:, j], delta=delta) for j in range(u.shape[1])])
    return dict(score=_score(eps, bin_width), example_epsilons=eps, n_unlearned=int(u.shape[0]),
                n_retrained=int(r.shape[0]), delta=float(delta), bin_width=float(bin_width))


def score_interval(scores: Any, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: Student-t interval of the mean of forgetting scores from independent repetitions
    (fresh unlearned and retrained models each time).

    Why repetitions and not a bootstrap over models: resampling models with replacement duplicates scores,
    and the best of many thresholds then overstates epsilon, so bootstrap percentiles sit systematically
    below the score (we saw intervals that excluded their own point estimate). Independent repetitions of a
    vectorised experiment cost seconds and need no such correction.
    """
    from scipy.stats import t as student  # deferred: imports scipy.stats

    check_probability("confidence", confidence, allow_zero=False, allow_one=False)
    v = np.asarray(scores, dtype=float).reshape(-1)
    check_int("len(scores)", v.size, low=2)
    mean, half = float(v.mean()), float(student.ppf(0.5 + confidence / 2, v.size - 1) * v.std(ddof=1)
                                        / math.sqrt(v.size))
    return mean, max(mean - half, 0.0), min(mean + half, 1.0)
