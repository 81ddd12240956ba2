"""The audit ceiling: the highest lower bound on epsilon that a budget of trials could *ever* report.

An audit turns counted events into a lower bound. Even a perfect attacker (the two worlds' scores perfectly
separated: every world-A trial above every world-B trial) only ever sees finitely many trials, so the
confidence bounds on the two error rates stay away from 0 and 1, and the lower bound stays below a ceiling
that grows like ``log(n_trials)``. A certificate whose epsilon is above that ceiling *cannot* be refuted by
that audit, whatever the method does: "not refuted" then carries no information about it.

The ceiling of each statistic of :mod:`.statistics` (and of the one-run audit of :mod:`.one_run`), computed
in closed form for perfect separation (the tests check it against :func:`.estimate` on perfectly separated
samples):

``"cp_split"``
    ``n_eval = n - n_select`` held-out trials; every one counted right: ``P_A >= (alpha/2)^(1/n_eval)`` and
    ``P_B <= 1 - (alpha/2)^(1/n_eval)`` (Clopper-Pearson with ``k = n`` and ``k = 0``), eps from
    ``log((P_A - delta) / P_B)``.
``"cp_bonferroni"``
    all ``n`` trials count, but every test runs at ``alpha / n_tests`` (``n_tests = 4 |ranks|``).
``"gdp"``
    the same counts read through the Gaussian trade-off curve: ``mu = Phi^-1(1 - FPR_up) + Phi^-1(TPR_low)``,
    then the epsilon of ``mu``-GDP at ``delta`` (valid only under the GDP-shape assumption).
``"one_run"``
    one training run with ``n`` canaries, every one guessed, every guess right (Steinke, Nasr & Jagielski
    2023): :func:`.one_run_epsilon_lower_bound` with ``n_guesses = n_correct = m = n``.

Everything here is a calculator (no training): milliseconds per point, so a widget can redraw it live.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .._validate import check_choice, check_int, check_probability
from .bounds import cp_lower_many, cp_upper_many, epsilon_from_rates
from .statistics import AUDIT_STATISTICS, average_ranks, gdp_epsilon
from ..core import MAX_TRIALS
from .one_run import one_run_epsilon_lower_bound


CEILING_STATISTICS = AUDIT_STATISTICS + ("one_run",)
"""The statistics whose ceiling :func:`audit_ceiling` knows: the menu of :mod:`.statistics` and the one-run audit."""

_ONE_RUN_MAX = 100_000  # the one-run bound sums binomial terms over n guesses: beyond this it is slow


def audit_ceiling(n_trials: int, statistic: str = "cp_split", *, delta: float = 1e-5, alpha: float = 0.05,
                  n_thresholds: int = 32, select_fraction: float = 0.5) -> float:
    """The largest ``epsilon_lower`` that ``statistic`` can report with ``n_trials`` trials per world.

    Parameters
    ----------
    n_trials:
        Trials per world (for ``"one_run"``: canaries in the one run), at least 20.
    statistic:
        One of :data:`CEILING_STATISTICS`.
    delta, alpha:
        The certificate's delta and the audit's confidence level ``1 - alpha``.
    n_thresholds, select_fraction:
        As in :func:`unlearnkit.audit.estimate` (the Bonferroni family size and the selection split).
    """
    n = check_int("n_trials", n_trials, low=20, high=MAX_TRIALS)
    check_choice("statistic", statistic, CEILING_STATISTICS)
    check_probability("delta", delta, allow_one=False)
    check_probability("alpha", alpha, allow_zero=False, allow_one=False)
    if statistic == "one_run":
        if n > _ONE_RUN_MAX:
            raise ValueError(f"n_trials={n} is out of range for statistic='one_run': expected at most "
                             f"{_ONE_RUN_MAX} canaries (the bound's binomial sums grow with n)")
        return float(one_run_epsilon_lower_bound(n, n, n, delta, alpha))
    if statistic == "cp_split":
        n_sel = max(10, min(n - 10, int(round(select_fraction * n))))
        n_eval, a = n - n_sel, alpha / 2
    else:
        n_eval = n
        n_tests = 4 * average_ranks(n, check_int("n_thresholds", n_thresholds, low=1, high=MAX_TRIALS)).size
        a = alpha / n_tests / 2
    lo = float(cp_lower_many(np.array(n_eval), n_eval, a))  # P_A(E): every world-A trial in E
    hi = float(cp_upper_many(np.array(0), n_eval, a))  # P_B(E): no world-B trial in E
    if statistic == "gdp":
        from scipy.stats import norm  # deferred: imports scipy.stats

        mu = float(norm.ppf(1.0 - hi) + norm.ppf(lo))
        if delta == 0:
            return math.inf if mu > 0 else 0.0
        return gdp_epsilon(max(mu, 0.0), delta)
    return float(epsilon_from_rates(np.array(lo), np.array(hi), delta))


def ceiling_curve(n_values: Sequence[int], statistic: str = "cp_split", **kwargs) -> np.ndarray:
    """:func:`audit_ceiling` at each of ``n_values`` (``nan`` where ``"one_run"`` is out of its range)."""
    out = []
    for n in n_values:
        if statistic == "one_run" and int(n) > _ONE_RUN_MAX:
            out.append(math.nan)
        else:
            out.append(audit_ceiling(int(n), statistic, **kwargs))
    return np.asarray(out, dtype=float)
