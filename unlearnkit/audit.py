"""Empirical audit of an (epsilon, delta) certificate: a statistical *lower bound* on epsilon.

A certificate says that two random outputs are (epsilon, delta)-indistinguishable: the unlearned model
``U(A(D))`` ("world A") and the certifier's model ``C(D minus D_f)`` ("world B"), e.g. retraining plus the
same noise. That is a statement about *every* event E::

    P_A(E) <= e^eps P_B(E) + delta      and      P_B(E) <= e^eps P_A(E) + delta.

So any event we can observe turns into a lower bound, ``eps >= log((P_A(E) - delta) / P_B(E))``
(and the same with A and B swapped). The audit here (Jagielski et al. 2020, "Auditing Differentially Private
Machine Learning", NeurIPS; Nasr et al. 2021, "Adversary Instantiation", S&P):

1. samples both worlds many times with fresh randomness (a *mechanism* is any callable
   ``(n, generator) -> (n, d) tensor``: a plain Gaussian mechanism, or train-then-unlearn of a method);
2. reduces each output to one number, by default its projection on the direction in which world A's mean
   differs from world B's (the direction the forget set pushes; for a Gaussian mechanism this is the
   likelihood-ratio test, so a threshold on it is the best possible test);
3. splits the samples: on the first part it picks the best threshold test (event E = {stat > t} or
   {stat <= t}, and which world plays A), on the held-out part it counts that test's errors;
4. turns the held-out counts into a Clopper-Pearson bound at confidence ``1 - alpha`` (a lower bound on
   P_A(E) and an upper bound on P_B(E), each at ``alpha / 2``), hence a lower bound on epsilon that holds
   with probability at least ``1 - alpha``. The threshold never sees the held-out samples, so the bound is
   valid (choosing it on the same samples would overstate epsilon).

A **violation** is an audit lower bound above the certified epsilon: the certificate is refuted at
confidence ``1 - alpha``. No violation does *not* prove a certificate: the audit only sees one statistic of
one problem, and with ``n`` samples it cannot certify more than about ``log(n)``.

This module is the statistics only (it knows no unlearning method); the worlds of each method's certificate
on a tiny convex task, and the audit of every method, are in :mod:`unlearnkit.experiments.audit_methods`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np
import torch

from ._validate import check_choice, check_int, check_positive, check_probability, check_range
from .core import Callback, emit
from .privacy import analytic_gaussian_epsilon, analytic_gaussian_sigma
from .privacy.noise import gaussian_noise

__all__ = [
    "AuditConfig",
    "AuditResult",
    "Mechanism",
    "GaussianMechanism",
    "per_trial",
    "clopper_pearson",
    "epsilon_lower_bound",
    "gaussian_epsilon",
    "gaussian_sigma",
    "audit_samples",
    "audit",
    "audit_gaussian",
]

Mechanism = Callable[[int, torch.Generator], torch.Tensor]
"""A world to audit: ``sample(n, generator) -> (n, d)`` outputs, each drawn with fresh randomness."""


# --------------------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------------------

def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds ``(lower, upper)`` on a binomial proportion, each at level ``alpha``.

    ``lower`` is the ``alpha`` quantile of Beta(k, n - k + 1) and ``upper`` the ``1 - alpha`` quantile of
    Beta(k + 1, n - k) (Clopper & Pearson 1934); they are exact (conservative), unlike normal approximations,
    which matters for the near-zero error rates that drive large epsilons.
    """
    from scipy.stats import beta

    k, n = int(k), int(n)
    if not 0 <= k <= n or n <= 0:
        raise ValueError(f"k={k}, n={n} are out of range: expected 0 <= k <= n and n >= 1")
    check_probability("alpha", alpha, allow_zero=False, allow_one=False)
    lo = 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha, k + 1, n - k))
    return lo, hi


def _eps_from_rates(p_a: np.ndarray, p_b: np.ndarray, delta: float) -> np.ndarray:
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
    return float(_eps_from_rates(np.array(lo_a), np.array(hi_b), delta))


def _cp_lower_vec(k: np.ndarray, n: int, a: float) -> np.ndarray:
    from scipy.stats import beta

    k = np.asarray(k)
    return np.where(k > 0, beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0)


def _cp_upper_vec(k: np.ndarray, n: int, a: float) -> np.ndarray:
    from scipy.stats import beta

    k = np.asarray(k)
    return np.where(k < n, beta.ppf(1 - a, k + 1, np.maximum(n - k, 1)), 1.0)


# --------------------------------------------------------------------------------------------------------
# Gaussian mechanism (the audit's own oracle)
# --------------------------------------------------------------------------------------------------------

def gaussian_epsilon(sensitivity: float, sigma: float, delta: float) -> float:
    """Exact epsilon of the Gaussian mechanism at ``delta`` (Balle & Wang 2018, Thm 8).

    With ``mu = sensitivity / sigma`` the mechanism is (eps, delta)-DP iff
    ``Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) <= delta``; solved here by bisection in log space.
    The audit's oracle is the privacy package's accountant,
    :func:`unlearnkit.privacy.analytic_gaussian_epsilon` (solved in log space to machine precision).
    """
    check_positive("sensitivity", sensitivity)
    check_positive("sigma", sigma)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    return float(analytic_gaussian_epsilon(sigma, delta, sensitivity))


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest sigma making the Gaussian mechanism (epsilon, delta)-DP (analytic calibration, Balle & Wang).

    This is :func:`unlearnkit.privacy.analytic_gaussian_sigma`, with the audit's argument order.
    """
    check_positive("sensitivity", sensitivity)
    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    return float(analytic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=sensitivity))


@dataclass(frozen=True, kw_only=True)
class GaussianMechanism:
    """``center + N(0, sigma^2 I_d)``: the simplest thing a certificate can be about.

    Two of these with centres ``sensitivity`` apart are exactly the pair every output-perturbation
    certificate (D2D, R2D, Newton, PDUDT) reasons about: the unlearned model and the retrained one, each
    plus the same noise.
    """

    center: tuple[float, ...]
    sigma: float

    def __post_init__(self) -> None:
        check_positive("sigma", self.sigma)
        if len(self.center) == 0:
            raise ValueError("center=() is empty: give at least one coordinate")

    def __call__(self, n: int, generator: torch.Generator) -> torch.Tensor:
        c = torch.tensor(self.center, dtype=torch.float64, device=generator.device)
        return c + gaussian_noise(c, self.sigma, generator, shape=(n, c.numel()))


def per_trial(fn: Callable[[torch.Generator], torch.Tensor]) -> Mechanism:
    """Wrap a one-output mechanism ``fn(generator) -> (d,)`` (e.g. train, then unlearn) as a batched one.

    Each trial gets its own generator, seeded from the caller's generator, so trials are independent and
    the whole audit is reproducible from one seed.
    """

    def sample(n: int, generator: torch.Generator) -> torch.Tensor:
        seeds = torch.randint(0, 2**62, (n,), generator=generator, device=generator.device).tolist()
        outs = []
        for s in seeds:
            g = torch.Generator(device=generator.device)
            g.manual_seed(int(s))
            outs.append(torch.as_tensor(fn(g)).detach().reshape(-1).to("cpu", torch.float64))
        return torch.stack(outs)

    sample.__name__ = getattr(fn, "__name__", "per_trial")
    return sample


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
    """

    n_trials: int = 2000
    alpha: float = 0.05
    select_fraction: float = 0.5
    statistic: str = "projection"
    max_thresholds: int = 400

    def __post_init__(self) -> None:
        check_int("n_trials", self.n_trials, low=20)
        check_probability("alpha", self.alpha, allow_zero=False, allow_one=False)
        check_range("select_fraction", self.select_fraction, 0.0, 1.0, low_open=True, high_open=True)
        check_choice("statistic", self.statistic, ("projection", "norm"))
        check_int("max_thresholds", self.max_thresholds, low=2)


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
        return (f"{head}: eps >= {self.epsilon_lower:.3f} with confidence {1 - self.alpha:.0%} "
                f"(point {self.epsilon_point:.3f}; certified {cert} at delta={self.delta:.3g}; "
                f"{self.n_eval} held-out trials per world) -> {self.verdict}")


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


def _best_test(s_a: np.ndarray, s_b: np.ndarray, delta: float, alpha: float, max_thresholds: int):
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
            eps = _eps_from_rates(_cp_lower_vec(ka, na, alpha / 2), _cp_upper_vec(kb, nb, alpha / 2), delta)
            i = int(np.argmax(eps))
            if eps[i] > best[0]:
                best = (float(eps[i]), float(thresholds[i]), event, orient)
    return best


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
    s_a, s_b = _statistic(a, b, n_sel, config.statistic)
    _, t, event, orient = _best_test(s_a[:n_sel], s_b[:n_sel], delta, config.alpha, config.max_thresholds)
    ea, eb = s_a[n_sel:], s_b[n_sel:]
    n_eval = ea.size
    in_a = int(np.sum(ea > t)) if event == ">" else int(np.sum(ea <= t))
    in_b = int(np.sum(eb > t)) if event == ">" else int(np.sum(eb <= t))
    k1, k2 = (in_a, in_b) if orient == "AB" else (in_b, in_a)
    eps_lb = epsilon_lower_bound(k1, n_eval, k2, n_eval, delta=delta, alpha=config.alpha)
    # a zero count would make the plain estimate infinite; count it as half an event instead
    eps_pt = float(_eps_from_rates(np.array(k1 / n_eval), np.array(max(k2, 0.5) / n_eval), delta))
    violation = epsilon is not None and eps_lb > epsilon + 1e-12
    return AuditResult(
        epsilon_lower=eps_lb, epsilon_point=eps_pt, delta=float(delta), alpha=config.alpha,
        certified_epsilon=None if epsilon is None else float(epsilon), violation=bool(violation),
        threshold=float(t), event=f"stat {event} t ({'A over B' if orient == 'AB' else 'B over A'})",
        n_select=n_sel, n_eval=n_eval, rate_a=in_a / n_eval, rate_b=in_b / n_eval,
        stat_a=ea, stat_b=eb, label=label, mode=mode,
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
    step = n if chunk <= 0 else check_int("chunk", chunk, low=1)
    xs_a, xs_b = [], []
    bar = None
    if progress:
        from tqdm.auto import tqdm

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
    check_int("dim", dim, low=1)
    check_positive("sensitivity", sensitivity)
    shift = (float(sensitivity),) + (0.0,) * (dim - 1)
    res = audit(GaussianMechanism(center=shift, sigma=sigma), GaussianMechanism(center=(0.0,) * dim, sigma=sigma),
                delta=delta, epsilon=epsilon, config=config, generator=generator, label=label)
    res.extras["true_epsilon"] = gaussian_epsilon(sensitivity, sigma, delta) if delta > 0 else math.inf
    res.extras["sigma"] = float(sigma)
    res.extras["sensitivity"] = float(sensitivity)
    return res
