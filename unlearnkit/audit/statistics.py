"""A menu of audit statistics: from two samples of a 1-D score to a lower bound on epsilon.

Every statistic answers the same question, "which epsilon can these two samples *refute* at ``delta``?",
with a different trade-off between validity assumptions and power (``method=``):

``"cp_split"``
    (the audit's default, Jagielski et al. 2020, Sec. 4) the best threshold test is chosen on the first
    ``select_fraction`` of the samples and its errors are counted on the rest; Clopper-Pearson bounds on the
    two held-out rates. Valid with no assumption on the outputs; wastes the selection half.
``"cp_bonferroni"``
    no split: every sample counts. A fixed family of ``4 * n_thresholds`` tests is tried (a threshold at
    a fixed *rank* of one world's sorted sample, an upper or a lower tail, either world playing A), each at
    ``alpha / (4 n_thresholds)`` (Bonferroni), and the best bound is reported. Valid with no assumption:
    a threshold at the rank-``k`` order statistic of world R has ``P_R(S > t) ~ Beta(k + 1, n - k)``
    exactly (the Clopper-Pearson upper bound's own law, David & Nagaraja 2003, Sec. 2.2) and the other
    world's count is binomial given ``t`` (the worlds are independent); the union bound covers the maximum.
``"gdp"``
    the same family of tests, read through a Gaussian trade-off curve (Dong, Roth & Su 2022, "Gaussian
    Differential Privacy", Def. 2.7): a mu-GDP pair has, for every test, ``FNR >= Phi(Phi^-1(1 - FPR) - mu)``,
    so each test's (upper-bounded) FPR and FNR give ``mu >= Phi^-1(1 - FPR) - Phi^-1(FNR)`` (Nasr et al. 2023,
    "Tight Auditing of Differentially Private Machine Learning", Sec. 4). The largest such lower confidence
    bound on mu is converted to epsilon at ``delta`` by the exact GDP relation (Dong et al. Cor. 2.13;
    Balle & Wang 2018, Thm 8) ``delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``.
    **Assumption**: the trade-off curve of the two worlds *is* Gaussian-shaped (true for output
    perturbation, any composition of non-subsampled Gaussians, and the Gaussian mechanism itself). The mu
    bound is valid without it; the epsilon is not, since (epsilon, delta) for one delta does not fix mu.

Two descriptive numbers come with every estimate (no confidence, no assumption): the AUROC (Mann-Whitney) and
the TPR at low FPRs (0.1 %, 1 %, 10 %; ``nan`` when the sample has fewer than one world-B point beyond it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import SCALE_MAX, SCALE_MIN, check_choice, check_int, check_probability, check_range
from .bounds import cp_lower_many, cp_upper_many, epsilon_from_rates, epsilon_lower_bound
from ..core import MAX_TRIALS


AUDIT_STATISTICS = ("cp_split", "cp_bonferroni", "gdp")
"""The statistics :func:`estimate` knows, in the order of the module docstring; ``"cp_split"`` is the default."""

STATISTIC_ASSUMPTIONS = {
    "cp_split": "none (independent trials; threshold chosen on a split, counted on held-out samples)",
    "cp_bonferroni": "none (independent trials; Bonferroni over a fixed family of rank thresholds)",
    "gdp": "the two worlds' trade-off curve is Gaussian-shaped (mu-GDP); the mu bound itself needs no assumption",
}
"""What each statistic assumes, besides independent trials, for its epsilon bound to hold at ``1 - alpha``."""

FPR_LEVELS = (1e-3, 1e-2, 1e-1)


def gdp_epsilon(mu: float, delta: float) -> float:
    """Epsilon at ``delta`` of a mu-GDP pair: the smallest eps with ``delta(eps) <= delta``.

    ``delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` (Dong, Roth & Su 2022, Cor. 2.13), the
    same curve as the Gaussian mechanism with ``sensitivity / sigma = mu`` (Balle & Wang 2018, Thm 8), so it
    is solved by :func:`unlearnkit.privacy.analytic_gaussian_epsilon`. ``mu <= 0`` gives 0, ``mu = inf`` inf.
    """
    from ..privacy import analytic_gaussian_epsilon  # deferred: imports scipy.optimize

    check_probability("delta", delta, allow_zero=False, allow_one=False)
    if not mu > 0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    if mu < SCALE_MIN:  # below the solver's range; 0 is the valid lower bound the audit needs
        return 0.0
    # beyond the solver's range the epsilon of mu = SCALE_MAX is still a valid lower bound
    return float(analytic_gaussian_epsilon(1.0, delta, min(float(mu), SCALE_MAX)))


@dataclass(frozen=True)
class Estimate:
    """One statistic's answer. ``epsilon_lower`` holds with probability ``>= 1 - alpha`` under ``assumption``.

    ``epsilon_point`` is the chosen test's plain estimate (for ``"gdp"``: epsilon of the mu that the AUROC
    implies, ``mu = sqrt(2) Phi^-1(AUROC)``, the AUROC of a mu-GDP curve being ``Phi(mu / sqrt 2)``).
    ``rate_a``/``rate_b`` are the chosen event's observed frequencies in the samples it was counted on.
    """

    method: str
    epsilon_lower: float
    epsilon_point: float
    delta: float
    alpha: float
    assumption: str
    threshold: float
    event: str
    n_select: int
    n_eval: int
    rate_a: float
    rate_b: float
    n_tests: int
    auroc: float
    tpr_at_fpr: dict[float, float] = field(default_factory=dict)
    mu_lower: float | None = None
    mu_point: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in ("method", "epsilon_lower", "epsilon_point", "delta", "alpha",
                                            "assumption", "threshold", "event", "n_select", "n_eval", "rate_a",
                                            "rate_b", "n_tests", "auroc", "mu_lower", "mu_point")}
        d.update({f"tpr_at_fpr_{f:g}": v for f, v in self.tpr_at_fpr.items()})
        return d

    def __str__(self) -> str:
        mu = "" if self.mu_lower is None else f", mu >= {self.mu_lower:.3f}"
        return (f"{self.method}: eps >= {self.epsilon_lower:.3f} at {100 * (1 - self.alpha):.4g}% "
                f"(point {self.epsilon_point:.3f}{mu}; AUROC {self.auroc:.3f}; assumes {self.assumption})")


def _descriptive(a: np.ndarray, b: np.ndarray) -> tuple[float, dict[float, float]]:
    """AUROC of "A scores higher" (Mann-Whitney U / (n_a n_b), ties counted half) and TPR at fixed FPRs."""
    from scipy.stats import rankdata  # deferred: imports scipy.stats

    ranks = rankdata(np.concatenate([a, b]))
    auc = float((ranks[: a.size].sum() - a.size * (a.size + 1) / 2) / (a.size * b.size))
    sa, sb = (a, b) if auc >= 0.5 else (-a, -b)  # orient so that world A is the "positive" side
    sb_desc = np.sort(sb)[::-1]
    tpr = {}
    for f in FPR_LEVELS:
        k = int(math.floor(f * sb.size))  # at most k world-B points strictly above the threshold
        tpr[f] = float(np.mean(sa > sb_desc[k])) if k >= 1 else math.nan
    return auc, tpr


def best_threshold_test(s_a: np.ndarray, s_b: np.ndarray, delta: float, alpha: float, max_thresholds: int):
    """Pick (threshold, event, orientation) maximising the CP lower bound on the selection split."""
    n_a, n_b = s_a.size, s_b.size
    pooled = np.concatenate([s_a, s_b])
    qs = np.linspace(0.0, 1.0, max_thresholds)
    thresholds = np.unique(np.quantile(pooled, qs))
    sa, sb = np.sort(s_a), np.sort(s_b)
    gt_a = n_a - np.searchsorted(sa, thresholds, side="right")  # counts of stat > t
    gt_b = n_b - np.searchsorted(sb, thresholds, side="right")
    best = (-1.0, 0.0, ">", "AB")
    for event, k_a, k_b in ((">", gt_a, gt_b), ("<=", n_a - gt_a, n_b - gt_b)):
        for orient, (ka, na, kb, nb) in (("AB", (k_a, n_a, k_b, n_b)), ("BA", (k_b, n_b, k_a, n_a))):
            eps = epsilon_from_rates(cp_lower_many(ka, na, alpha / 2), cp_upper_many(kb, nb, alpha / 2), delta)
            i = int(np.argmax(eps))
            if eps[i] > best[0]:
                best = (float(eps[i]), float(thresholds[i]), event, orient)
    return best


def _cp_split(a, b, delta, alpha, select_fraction, max_thresholds):
    n = min(a.size, b.size)
    n_sel = max(10, min(n - 10, int(round(select_fraction * n))))
    _, t, event, orient = best_threshold_test(a[:n_sel], b[:n_sel], delta, alpha, max_thresholds)
    ea, eb = a[n_sel:n], b[n_sel:n]
    n_eval = ea.size
    in_a = int(np.sum(ea > t)) if event == ">" else int(np.sum(ea <= t))
    in_b = int(np.sum(eb > t)) if event == ">" else int(np.sum(eb <= t))
    k1, k2 = (in_a, in_b) if orient == "AB" else (in_b, in_a)
    lb = epsilon_lower_bound(k1, n_eval, k2, n_eval, delta=delta, alpha=alpha)
    pt = float(epsilon_from_rates(np.array(k1 / n_eval), np.array(max(k2, 0.5) / n_eval), delta))
    ev = f"stat {event} t ({'A over B' if orient == 'AB' else 'B over A'})"
    return dict(epsilon_lower=lb, epsilon_point=pt, threshold=float(t), event=ev, n_select=n_sel, n_eval=n_eval,
                rate_a=in_a / n_eval, rate_b=in_b / n_eval, n_tests=1)


def average_ranks(n: int, n_thresholds: int) -> np.ndarray:
    """Fixed ranks ``k`` (points of the reference world above the threshold): geometric from 0 to n - 1."""
    return np.unique(np.floor(np.geomspace(1, n, n_thresholds)).astype(int)) - 1


def _rank_tests(a, b, alpha_test, n_thresholds):
    """The fixed test family: for each sign, orientation and rank k, (CP lower on P_other, exact upper on P_ref).

    The threshold is world R's order statistic with exactly ``k`` of R's points above it, so ``P_R(S > t)``
    is ``Beta(k + 1, n_R - k)``-distributed (continuous scores; with ties it is stochastically smaller): its
    ``1 - alpha_test/2`` quantile is a valid upper bound. The other world is counted at that threshold.
    """
    out = []
    for sign, tail in ((1.0, ">"), (-1.0, "<")):
        for orient, (o, r) in (("A over B", (a, b)), ("B over A", (b, a))):
            so, sr = np.sort(sign * o), np.sort(sign * r)
            n_o, n_r = so.size, sr.size
            ks = average_ranks(n_r, n_thresholds)
            t = sr[n_r - ks - 1]
            c = n_o - np.searchsorted(so, t, side="right")
            lo = cp_lower_many(c, n_o, alpha_test / 2)
            hi = cp_upper_many(ks, n_r, alpha_test / 2)
            out.append((sign, tail, orient, t, c, ks, n_o, n_r, lo, hi))
    return out


def _fixed_family(a, b, delta, alpha, n_thresholds, gdp: bool):
    from scipy.stats import norm  # deferred: imports scipy.stats

    n_tests = 2 * (average_ranks(a.size, n_thresholds).size + average_ranks(b.size, n_thresholds).size)

    best = None
    for sign, tail, orient, t, c, ks, n_o, n_r, lo, hi in _rank_tests(a, b, alpha / n_tests, n_thresholds):
        if gdp:
            with np.errstate(divide="ignore"):
                score = norm.ppf(1.0 - hi) + norm.ppf(lo)  # mu >= Phi^-1(1 - FPR) - Phi^-1(FNR)
        else:
            score = epsilon_from_rates(lo, hi, delta)
        i = int(np.argmax(score))
        if best is None or score[i] > best[0]:
            pt = float(epsilon_from_rates(np.array(c[i] / n_o), np.array(max(ks[i], 0.5) / n_r), delta))
            rate_o, rate_r = c[i] / n_o, ks[i] / n_r
            ra, rb = (rate_o, rate_r) if orient == "A over B" else (rate_r, rate_o)
            best = (float(score[i]), pt, dict(threshold=float(sign * t[i]), event=f"stat {tail} t ({orient})",
                                               rate_a=float(ra), rate_b=float(rb)))
    score, pt, info = best
    return score, pt, dict(n_select=0, n_eval=int(min(a.size, b.size)), n_tests=n_tests, **info)


def estimate(samples_a: Any, samples_b: Any, *, delta: float, method: str = "cp_split", alpha: float = 0.05,
             n_thresholds: int = 32, select_fraction: float = 0.5, max_thresholds: int = 400) -> Estimate:
    """Lower bound on epsilon at ``delta`` from two samples of a 1-D score (world A, world B).

    Parameters
    ----------
    samples_a, samples_b:
        1-D arrays of independent scores (at least 20 each), e.g. the projection of each output on the
        direction the forget set pushes. The score must not depend on these samples (choose it beforehand or
        on other samples); for ``"cp_split"`` the first ``select_fraction`` of each sample chooses the test.
    delta:
        The certificate's delta.
    method:
        One of :data:`AUDIT_STATISTICS` (see the module docstring); :data:`STATISTIC_ASSUMPTIONS` says what
        each assumes.
    alpha:
        The bound holds with probability ``>= 1 - alpha``.
    n_thresholds:
        Ranks per tail and orientation in the fixed family of ``"cp_bonferroni"``/``"gdp"`` (geometrically
        spaced, so small error rates are well covered); each test runs at ``alpha / (4 n_thresholds)``.
    select_fraction, max_thresholds:
        ``"cp_split"`` only: the share of samples choosing the test, and the candidate thresholds it tries.
    """
    check_choice("method", method, AUDIT_STATISTICS)
    check_probability("delta", delta, allow_one=False)
    check_probability("alpha", alpha, allow_zero=False, allow_one=False)
    check_int("n_thresholds", n_thresholds, low=1, high=MAX_TRIALS)
    check_range("select_fraction", select_fraction, 0.0, 1.0, low_open=True, high_open=True)
    check_int("max_thresholds", max_thresholds, low=2, high=MAX_TRIALS)
    a = np.asarray(samples_a, dtype=float).reshape(-1)
    b = np.asarray(samples_b, dtype=float).reshape(-1)
    for name, s in (("samples_a", a), ("samples_b", b)):
        if s.size < 20:
            raise ValueError(f"{name} has {s.size} scores: expected at least 20")
        if not np.isfinite(s).all():
            raise ValueError(f"{name} contains NaN or infinite scores; nothing can be audited")
    auc, tpr = _descriptive(a, b)
    mu_lower = mu_point = None
    if method == "cp_split":
        info = _cp_split(a, b, delta, alpha, select_fraction, max_thresholds)
    elif method == "cp_bonferroni":
        lb, pt, info = _fixed_family(a, b, delta, alpha, n_thresholds, gdp=False)
        info.update(epsilon_lower=max(lb, 0.0), epsilon_point=pt)
    else:
        from scipy.stats import norm  # deferred: imports scipy.stats

        mu_lower, _, info = _fixed_family(a, b, delta, alpha, n_thresholds, gdp=True)
        mu_lower = max(mu_lower, 0.0)
        mu_point = float(math.sqrt(2.0) * norm.ppf(min(max(auc, 1.0 - auc), 1.0 - 1e-16)))
        eps_fn = (lambda m: gdp_epsilon(m, delta)) if delta > 0 else (lambda m: math.inf if m > 0 else 0.0)
        info.update(epsilon_lower=eps_fn(mu_lower), epsilon_point=eps_fn(mu_point))
    return Estimate(method=method, delta=float(delta), alpha=float(alpha),
                    assumption=STATISTIC_ASSUMPTIONS[method], auroc=auc, tpr_at_fpr=tpr, mu_lower=mu_lower,
                    mu_point=mu_point, **info)
