"""Validation of the audit statistics on Gaussian mechanisms of known epsilon (the figures a benchmark reports)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._validate import check_int, check_positive, check_probability
from .mechanisms import gaussian_epsilon, gaussian_sigma
from .statistics import AUDIT_STATISTICS, estimate
from ..core import MAX_REPEATS, MAX_TRIALS


def validate_statistics(*, epsilon: float = 1.0, delta: float = 1e-5, n_trials: Sequence[int] = (1000, 10_000),
                        reps: int = 40, under_noise: float = 8.0, methods: Sequence[str] = AUDIT_STATISTICS,
                        alpha: float = 0.05, seed: int = 0) -> list[dict[str, Any]]:
    """Audit a Gaussian calibrated to ``(epsilon, delta)`` and one with ``1/under_noise`` of its noise.

    The ideal attacker sees the 1-D output (sensitivity 1, so the output *is* the likelihood-ratio statistic);
    each of ``reps`` independent repetitions draws ``n`` outputs per world. One row per (method, n):
    ``mean_lower`` (mean lower bound on the calibrated mechanism, to compare with ``true_epsilon``, the
    anchor being peers-2: CP with Bonferroni ~0.25, GDP ~0.80 at 10,000 per world), ``refuted_calibrated``
    (share of repetitions refuting the true claim: a valid statistic keeps it <= ``alpha``) and
    ``refuted_under`` (share refuting the claim for the under-noised one: a useful statistic reaches 1).
    """
    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_int("reps", reps, low=1, high=MAX_REPEATS)
    check_positive("under_noise", under_noise)
    sigma = gaussian_sigma(1.0, epsilon, delta)
    rng = np.random.default_rng(seed)
    rows = []
    for n in n_trials:
        n = check_int("n_trials", n, low=20, high=MAX_TRIALS)
        lows = {m: [] for m in methods}
        under = {m: 0 for m in methods}
        for _ in range(reps):
            a, b = rng.normal(1.0, sigma, n), rng.normal(0.0, sigma, n)
            ua, ub = rng.normal(1.0, sigma / under_noise, n), rng.normal(0.0, sigma / under_noise, n)
            for m in methods:
                lows[m].append(estimate(a, b, delta=delta, method=m, alpha=alpha).epsilon_lower)
                under[m] += estimate(ua, ub, delta=delta, method=m, alpha=alpha).epsilon_lower > epsilon
        for m in methods:
            v = np.asarray(lows[m])
            rows.append(dict(method=m, n_trials=n, reps=reps, true_epsilon=gaussian_epsilon(1.0, sigma, delta),
                             mean_lower=float(v.mean()), refuted_calibrated=float(np.mean(v > epsilon)),
                             refuted_under=under[m] / reps))
    return rows
