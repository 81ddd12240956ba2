"""Clopper-Pearson intervals and the lower bound on epsilon they give (Jagielski et al. 2020, Section 4)."""

from __future__ import annotations


import numpy as np

from .._validate import check_int, check_probability


# --------------------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------------------

def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds ``(lower, upper)`` on a binomial proportion, each at level ``alpha``.

    ``lower`` is the ``alpha`` quantile of Beta(k, n - k + 1) and ``upper`` the ``1 - alpha`` quantile of
    Beta(k + 1, n - k) (Clopper & Pearson 1934); they are exact (conservative), unlike normal approximations,
    which matters for the near-zero error rates that drive large epsilons.
    """
    from scipy.stats import beta  # deferred: imports scipy.stats

    k, n = check_int("k", k), check_int("n", n)
    if not 0 <= k <= n or n <= 0:
        raise ValueError(f"k={k}, n={n} are out of range: expected 0 <= k <= n and n >= 1")
    check_probability("alpha", alpha, allow_zero=False, allow_one=False)
    lo = 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha, k + 1, n - k))
    return lo, hi


def epsilon_from_rates(p_a: np.ndarray, p_b: np.ndarray, delta: float) -> np.ndarray:
    """``log((p_a - delta) / p_b)`` clipped at 0 (the (eps, delta) inequality solved for eps)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        num = np.asarray(p_a, dtype=float) - delta
        out = np.where((num > 0) & (p_b > 0), np.log(np.maximum(num, 1e-300) / np.maximum(p_b, 1e-300)), 0.0)
        out = np.where((num > 0) & (p_b <= 0), np.inf, out)
    return np.maximum(out, 0.0)


def epsilon_lower_bound(k_a: int, n_a: int, k_b: int, n_b: int, *, delta: float, alpha: float = 0.05) -> float:
    """Lower bound on epsilon from one event observed ``k_a`` of ``n_a`` times in world A, ``k_b``/``n_b`` in B.

    ``eps >= log((P_A(E) - delta) / P_B(E))`` with P_A(E) replaced by its Clopper-Pearson lower bound and
    P_B(E) by its upper bound, each at level ``alpha / 2``: the result holds with probability ``>= 1 - alpha``.
    """
    check_probability("delta", delta, allow_one=False)
    lo_a, _ = clopper_pearson(k_a, n_a, alpha / 2)
    _, hi_b = clopper_pearson(k_b, n_b, alpha / 2)
    return float(epsilon_from_rates(np.array(lo_a), np.array(hi_b), delta))


def cp_lower_many(k: np.ndarray, n: int, a: float) -> np.ndarray:
    from scipy.stats import beta  # deferred: imports scipy.stats

    k = np.asarray(k)
    return np.where(k > 0, beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0)


def cp_upper_many(k: np.ndarray, n: int, a: float) -> np.ndarray:
    from scipy.stats import beta  # deferred: imports scipy.stats

    k = np.asarray(k)
    return np.where(k < n, beta.ppf(1 - a, k + 1, np.maximum(n - k, 1)), 1.0)
