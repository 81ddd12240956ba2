"""The audit itself: pick the best threshold test on one part of the samples, count its errors on the other."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import numpy as np
import torch
from tqdm.auto import tqdm

from .._validate import check_choice, check_int, check_positive, check_probability, check_range
from ..core import Callback, emit
from .bounds import epsilon_from_rates, epsilon_lower_bound
from .mechanisms import GaussianMechanism, Mechanism, gaussian_epsilon
from .statistics import AUDIT_STATISTICS, best_threshold_test, estimate
from ..core import MAX_DIM, MAX_REPEATS, MAX_TRIALS


# --------------------------------------------------------------------------------------------------------
# The audit
# --------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class AuditConfig:
    """How to audit.

    Attributes
    ----------
    n_trials:
        Outputs drawn from *each* world. The largest epsilon an audit can show grows like ``log(n_trials)``.
    alpha:
        The lower bound holds with probability ``>= 1 - alpha``.
    select_fraction:
        Share of the samples used to choose the direction and the threshold; the rest only count errors.
    statistic:
        ``"projection"`` (on the mean difference estimated from the selection split) or ``"norm"`` (the
        distance to the world-B mean; useful when the shift direction is unknown and noise is isotropic).
    max_thresholds:
        Candidate thresholds tried on the selection split (quantiles of the pooled statistic).
    method:
        The audit statistic (:data:`unlearnkit.audit.AUDIT_STATISTICS`): ``"cp_split"`` (default, the
        held-out threshold test above), ``"cp_bonferroni"`` (no split for 1-D outputs) or ``"gdp"`` (assumes
        a Gaussian-shaped trade-off curve). With ``d > 1`` coordinates (or ``statistic="norm"``), the
        non-default statistics still use the selection split to fix the 1-D score, then every held-out sample.
    n_thresholds:
        Ranks per tail and orientation tried by ``"cp_bonferroni"`` and ``"gdp"`` (Bonferroni over them).
    """

    n_trials: int = 2000
    alpha: float = 0.05
    select_fraction: float = 0.5
    statistic: str = "projection"
    max_thresholds: int = 400
    method: str = "cp_split"
    n_thresholds: int = 32

    def __post_init__(self) -> None:
        check_int("n_trials", self.n_trials, low=20, high=MAX_TRIALS)
        check_probability("alpha", self.alpha, allow_zero=False, allow_one=False)
        check_range("select_fraction", self.select_fraction, 0.0, 1.0, low_open=True, high_open=True)
        check_choice("statistic", self.statistic, ("projection", "norm"))
        check_int("max_thresholds", self.max_thresholds, low=2, high=MAX_TRIALS)
        check_choice("method", self.method, AUDIT_STATISTICS)
        check_int("n_thresholds", self.n_thresholds, low=1, high=MAX_TRIALS)


@dataclass
class AuditResult:
    """What an audit found.

    ``epsilon_lower`` is the (1 - alpha)-confidence lower bound; ``epsilon_point`` the same test's plain
    estimate on the held-out split (no confidence); ``violation`` is True when ``epsilon_lower`` exceeds the
    certified epsilon. ``stat_a``/``stat_b`` keep the held-out statistics for plots.
    """

    epsilon_lower: float
    epsilon_point: float
    delta: float
    alpha: float
    certified_epsilon: Optional[float]
    violation: bool
    threshold: float
    event: str
    n_select: int
    n_eval: int
    rate_a: float
    rate_b: float
    stat_a: np.ndarray = field(repr=False)
    stat_b: np.ndarray = field(repr=False)
    label: str = ""
    mode: str = ""
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        if self.certified_epsilon is None:
            return "no certificate to check"
        return "VIOLATION: certificate refuted" if self.violation else "consistent (not refuted)"

    def to_dict(self) -> dict[str, Any]:
        keys = ("label", "mode", "epsilon_lower", "epsilon_point", "certified_epsilon", "delta", "alpha",
                "violation", "threshold", "event", "n_select", "n_eval", "rate_a", "rate_b")
        d = {k: getattr(self, k) for k in keys}
        d["verdict"] = self.verdict
        d.update({k: v for k, v in self.extras.items() if isinstance(v, (int, float, str, bool, type(None)))})
        return d

    def __str__(self) -> str:
        cert = "-" if self.certified_epsilon is None else f"{self.certified_epsilon:.4g}"
        head = f"Audit {self.label} [{self.mode}]" if self.mode else f"Audit {self.label}"
        conf = f"{100 * (1 - self.alpha):.4g}%"
        if "alpha_family" in self.extras:
            fam = 100 * (1 - self.extras["alpha_family"])
            conf += (f" (family-wise {fam:.4g}% over {self.extras['n_audits']} audits, "
                     f"{self.extras.get('correction', 'bonferroni')})")
        return (f"{head}: eps >= {self.epsilon_lower:.3f} with confidence {conf} "
                f"(point {self.epsilon_point:.3f}; certified {cert} at delta={self.delta:.3g}; "
                f"{self.n_eval} held-out trials per world) -> {self.verdict}")


def bonferroni(config: AuditConfig | None, n_audits: int) -> AuditConfig:
    """The per-audit config that makes ``n_audits`` audits reported together hold *jointly* at ``1 - alpha``.

    Each audit's lower bound fails with probability at most its ``alpha``; by the union bound, running each
    of ``n_audits`` audits at ``config.alpha / n_audits`` (Bonferroni) makes the chance that *any* of them
    overstates epsilon at most ``config.alpha``, whatever the dependence between them. So a reported list of
    verdicts is right as a whole with confidence ``1 - config.alpha`` (the family-wise confidence), and each
    single bound with ``1 - config.alpha / n_audits``. ``n_audits=1`` returns the config unchanged.
    """

    config = config or AuditConfig()
    check_int("n_audits", n_audits, low=1, high=MAX_REPEATS)
    return config if n_audits == 1 else replace(config, alpha=config.alpha / n_audits)


def _statistic(x_a: np.ndarray, x_b: np.ndarray, n_sel: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    if kind == "norm":
        ref = x_b[:n_sel].mean(axis=0)
        return np.linalg.norm(x_a - ref, axis=1), np.linalg.norm(x_b - ref, axis=1)
    direction = x_a[:n_sel].mean(axis=0) - x_b[:n_sel].mean(axis=0)
    norm = np.linalg.norm(direction)
    if not np.isfinite(norm) or norm == 0:
        direction = np.zeros(x_a.shape[1])
        direction[0] = 1.0
    else:
        direction = direction / norm
    return x_a @ direction, x_b @ direction


def audit_samples(x_a: Any, x_b: Any, *, delta: float, epsilon: Optional[float] = None,
                  config: AuditConfig | None = None, label: str = "", mode: str = "") -> AuditResult:
    """Audit from outputs already drawn: ``x_a`` (world A, e.g. unlearned) and ``x_b`` (world B, certifier).

    Parameters
    ----------
    x_a, x_b:
        ``(n, d)`` or ``(n,)`` arrays/tensors of independent outputs (at least 20 each).
    delta:
        The certificate's delta (it enters the inequality, so it must be the certified one).
    epsilon:
        The certified epsilon to check, or ``None`` to only measure.
    """
    config = config or AuditConfig()
    check_probability("delta", delta, allow_one=False)
    if epsilon is not None and not (epsilon >= 0):
        raise ValueError(f"epsilon={epsilon!r} is out of range: expected epsilon in [0, inf]")
    a = np.asarray(torch.as_tensor(x_a).detach().cpu().double())
    b = np.asarray(torch.as_tensor(x_b).detach().cpu().double())
    a = a.reshape(a.shape[0], -1)
    b = b.reshape(b.shape[0], -1)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"x_a has {a.shape[1]} coordinates but x_b has {b.shape[1]}: the worlds must match")
    n = min(a.shape[0], b.shape[0])
    if n < 20:
        raise ValueError(f"n_trials={n} is too small: expected at least 20 outputs per world")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("the mechanism produced NaN or infinite outputs; nothing can be audited")
    a, b = a[:n], b[:n]
    n_sel = max(10, min(n - 10, int(round(config.select_fraction * n))))
    if config.method != "cp_split":
        return _audit_menu(a, b, n_sel, delta=delta, epsilon=epsilon, config=config, label=label, mode=mode)
    s_a, s_b = _statistic(a, b, n_sel, config.statistic)
    _, t, event, orient = best_threshold_test(s_a[:n_sel], s_b[:n_sel], delta, config.alpha, config.max_thresholds)
    ea, eb = s_a[n_sel:], s_b[n_sel:]
    n_eval = ea.size
    in_a = int(np.sum(ea > t)) if event == ">" else int(np.sum(ea <= t))
    in_b = int(np.sum(eb > t)) if event == ">" else int(np.sum(eb <= t))
    k1, k2 = (in_a, in_b) if orient == "AB" else (in_b, in_a)
    eps_lb = epsilon_lower_bound(k1, n_eval, k2, n_eval, delta=delta, alpha=config.alpha)
    # a zero count would make the plain estimate infinite; count it as half an event instead
    eps_pt = float(epsilon_from_rates(np.array(k1 / n_eval), np.array(max(k2, 0.5) / n_eval), delta))
    violation = epsilon is not None and eps_lb > epsilon + 1e-12
    return AuditResult(
        epsilon_lower=eps_lb, epsilon_point=eps_pt, delta=float(delta), alpha=config.alpha,
        certified_epsilon=None if epsilon is None else float(epsilon), violation=bool(violation),
        threshold=float(t), event=f"stat {event} t ({'A over B' if orient == 'AB' else 'B over A'})",
        n_select=n_sel, n_eval=n_eval, rate_a=in_a / n_eval, rate_b=in_b / n_eval,
        stat_a=ea, stat_b=eb, label=label, mode=mode,
    )


def _audit_menu(a, b, n_sel, *, delta, epsilon, config, label, mode) -> AuditResult:
    """The non-default statistics: 1-D outputs are scored as they are (no split), others on the held-out part."""
    if a.shape[1] == 1 and config.statistic == "projection":
        s_a, s_b, n_sel = a[:, 0], b[:, 0], 0
    else:
        s_a, s_b = _statistic(a, b, n_sel, config.statistic)
        s_a, s_b = s_a[n_sel:], s_b[n_sel:]
    est = estimate(s_a, s_b, delta=delta, method=config.method, alpha=config.alpha,
                   n_thresholds=config.n_thresholds)
    violation = epsilon is not None and est.epsilon_lower > epsilon + 1e-12
    extras = {k: v for k, v in est.to_dict().items() if k.startswith(("method", "assumption", "auroc", "mu_",
                                                                      "tpr_", "n_tests"))}
    return AuditResult(
        epsilon_lower=est.epsilon_lower, epsilon_point=est.epsilon_point, delta=float(delta), alpha=config.alpha,
        certified_epsilon=None if epsilon is None else float(epsilon), violation=bool(violation),
        threshold=est.threshold, event=est.event, n_select=n_sel, n_eval=est.n_eval, rate_a=est.rate_a,
        rate_b=est.rate_b, stat_a=s_a, stat_b=s_b, label=label, mode=mode, extras=extras,
    )


def audit(world_a: Mechanism, world_b: Mechanism, *, delta: float, epsilon: Optional[float] = None,
          config: AuditConfig | None = None, generator: torch.Generator, label: str = "", mode: str = "",
          progress: bool = False, callback: Optional[Callback] = None, chunk: int = 0) -> AuditResult:
    """Draw ``config.n_trials`` outputs from each world (fresh randomness per trial) and audit them.

    ``chunk`` > 0 draws in chunks of that many trials, emitting an ``Event("audit", trials_done)`` and
    advancing a progress bar after each (useful for slow train-then-unlearn mechanisms).
    """
    config = config or AuditConfig()
    n = config.n_trials
    step = n if chunk <= 0 else check_int("chunk", chunk, low=1, high=MAX_TRIALS)
    xs_a, xs_b = [], []
    bar = None
    if progress:
        bar = tqdm(total=n, desc=f"audit {label}".strip(), leave=False)
    done = 0
    while done < n:
        k = min(step, n - done)
        xs_a.append(torch.as_tensor(world_a(k, generator)).reshape(k, -1).double().cpu())
        xs_b.append(torch.as_tensor(world_b(k, generator)).reshape(k, -1).double().cpu())
        done += k
        emit(callback, "audit", done, trials=done)
        if bar is not None:
            bar.update(k)
    if bar is not None:
        bar.close()
    return audit_samples(torch.cat(xs_a), torch.cat(xs_b), delta=delta, epsilon=epsilon, config=config,
                         label=label, mode=mode)


def audit_gaussian(*, sensitivity: float, sigma: float, epsilon: float, delta: float, dim: int = 1,
                   config: AuditConfig | None = None, generator: torch.Generator,
                   label: str = "Gaussian mechanism") -> AuditResult:
    """Audit the claim "``N(v, sigma^2 I)`` vs ``N(0, sigma^2 I)`` with ``||v|| = sensitivity`` is (eps, delta)".

    The exact epsilon of that pair (:func:`gaussian_epsilon`) is stored in ``result.extras["true_epsilon"]``:
    a sound audit stays below it, and an honest certificate is at or above it.
    """
    check_int("dim", dim, low=1, high=MAX_DIM)
    check_positive("sensitivity", sensitivity)
    shift = (float(sensitivity),) + (0.0,) * (dim - 1)
    res = audit(GaussianMechanism(center=shift, sigma=sigma), GaussianMechanism(center=(0.0,) * dim, sigma=sigma),
                delta=delta, epsilon=epsilon, config=config, generator=generator, label=label)
    res.extras["true_epsilon"] = gaussian_epsilon(sensitivity, sigma, delta) if delta > 0 else math.inf
    res.extras["sigma"] = float(sigma)
    res.extras["sensitivity"] = float(sensitivity)
    return res
