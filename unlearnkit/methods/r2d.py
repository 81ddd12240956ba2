"""Rewind-to-Delete (R2D): rewind to the checkpoint at step T-K, replay K steps on the retain set, add noise.

Mu & Klabjan, "Descend or Rewind? Stochastic Gradient Descent Unlearning" (arXiv 2511.15983, digest 003) and
the full-batch predecessor (Mu & Klabjan, NeurIPS 2025). Training (Algorithm 1) saves the private checkpoint
``w_{T-K}``; unlearning (Algorithm 2a) runs ``K`` (projected) SGD steps on ``D' = D \\ U`` from it and outputs
``u_T + N(0, sigma^2 I)``. With ``K = T`` it *is* retraining (sigma 0); with ``K = 0`` it is output
perturbation of ``w_T``. Cost is K steps, always <= T.

Certificates (digest 003 section 3; the seed lost its formulas, so each carries its provenance):

- **PSGD-R2D, Theorem 4.5 / A.14** [reconstructed]: ``E||u_T - w'_T|| <= rho^K (2 eta G m / n) S_{T-K}(rho)``
  with ``rho = 1 - eta mu`` (strongly convex), 1 (convex) or ``1 + eta L`` (nonconvex) and
  ``S_j(rho) = (rho^j - 1)/(rho - 1)`` (``j`` when ``rho = 1``); batches *with replacement*.
- **SGD-R2D without projection, Theorem 4.9** [derived substitute]: the paper gives only O~(.); we use the
  explicit sound bound of digest 003 section 3.3 (``sqrt(m/n)`` scaling, no bounded gradients).
- **GD-R2D (full batch)** [derived]: the same recursion holds *deterministically*, so no Markov step.
- **Lemma 4.4** (relaxed Gaussian, :func:`unlearnkit.privacy.gaussian.relaxed_gaussian_sigma`) turns the
  first-moment bound into sigma: ``mode="paper"`` uses the paper's classic mechanism with the delta/2 split
  (valid for epsilon < 1 only); ``mode="sound"`` uses the analytic Gaussian mechanism (any epsilon) and the
  deterministic **diameter cap**: on the ball of radius R, ``||u_T - w'_T|| <= 2R`` always, so
  ``sigma = min(sigma, analytic_sigma(2R))`` is valid too.

Sampling *without replacement* breaks the coupling (App. C): the method still runs but returns
``mode="none"`` ("not certified"). Constants estimated from data do the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Optional

import numpy as np
import torch

from .._validate import check_choice, check_int, check_positive, check_probability
from ..constants import NOT_CERTIFIED_NOTE, Constants
from ..core import Certificate
from ..privacy.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma, relaxed_gaussian_sigma
from ..core import Callback, Cost, Request, Result, Stopwatch, TrainedState, emit

__all__ = [
    "REGIMES", "contraction_factor", "geometric_sum", "psgd_r2d_sensitivity", "sgd_r2d_sensitivity_derived",
    "gd_r2d_sensitivity", "calibrate_sigma", "diameter_cap_sigma", "r2d_sigma_curve", "k_for_sigma_sc",
    "k_infinity", "certified_epsilon", "R2DConfig", "unlearn", "noise",
]

REGIMES = ("strongly_convex", "convex", "nonconvex")
PAPER = "Mu & Klabjan 2025 (Descend or Rewind?)"


# ----------------------------------------------------------------------------------------------------------
# Sensitivity bounds
# ----------------------------------------------------------------------------------------------------------


def contraction_factor(regime: str, *, eta: float, L: float, mu: float = 0.0, strict: bool = True) -> float:
    """Lipschitz factor of the gradient map ``w -> w - eta grad f(w; z)`` (digest 003, Lemma A.11).

    strongly convex: ``1 - eta mu`` for ``eta <= 2/(L + mu)``; convex: 1 for ``eta <= 2/L``; nonconvex:
    ``1 + eta L`` for any eta. ``strict`` raises ``ValueError`` naming ``eta`` when the step-size condition of
    the regime fails (the theorem does not apply).
    """
    check_choice("regime", regime, REGIMES)
    check_positive("eta", eta)
    check_positive("L", L)
    check_positive("mu", mu, allow_zero=True)
    if regime == "strongly_convex":
        if mu <= 0:
            raise ValueError(f"mu={mu!r} must be > 0 for regime='strongly_convex'")
        if strict and eta > 2.0 / (L + mu):
            raise ValueError(f"eta={eta!r} is out of range: the strongly convex bound needs eta in (0, 2/(L+mu)] = "
                             f"(0, {2.0 / (L + mu):.6g}]")
        return 1.0 - eta * mu
    if regime == "convex":
        if strict and eta > 2.0 / L:
            raise ValueError(f"eta={eta!r} is out of range: the convex bound needs eta in (0, 2/L] = (0, {2.0 / L:.6g}]")
        return 1.0
    return 1.0 + eta * L


def geometric_sum(rho: float, j: int) -> float:
    """``S_j(rho) = sum_{s<j} rho^s`` = ``(rho^j - 1)/(rho - 1)``, or ``j`` when ``rho = 1``."""
    if j <= 0:
        return 0.0
    if abs(rho - 1.0) < 1e-15:
        return float(j)
    return math.expm1(j * math.log(rho)) / (rho - 1.0) if rho > 0 else (1 - rho**j) / (1 - rho)


def _check_TKmn(T: int, K: int, m: int, n: int) -> None:
    check_int("T", T, low=1)
    check_int("K", K, low=0)
    if K > T:
        raise ValueError(f"K={K!r} is out of range: the rewind depth must satisfy 0 <= K <= T={T}")
    check_int("n", n, low=2)
    check_int("m", m, low=1)
    if m >= n:
        raise ValueError(f"m={m!r} is out of range: expected 1 <= m < n={n}")


def psgd_r2d_sensitivity(regime: str, *, G: float, L: float, mu: float = 0.0, eta: float, T: int, K: int,
                         m: int, n: int) -> float:
    """``Delta_1 >= E||u_T - w'_T||`` for PSGD-R2D (Theorem 4.5 via Theorem A.14) [reconstructed].

    ``Delta_1 = rho^K * (2 eta G m / n) * S_{T-K}(rho)``: the coupled training/retraining runs drift apart by
    at most ``2 eta G / b`` per batch slot that hits the forget set (expected ``b m / n`` slots, so b cancels),
    that gap is amplified by ``rho`` per step, and the K shared-batch unlearning steps contract (or expand) it
    by ``rho^K`` (Lemma A.12). Strongly convex: ``(2 G m / (mu n)) [(1-eta mu)^K - (1-eta mu)^T]``.
    """
    _check_TKmn(T, K, m, n)
    check_positive("G", G)
    rho = contraction_factor(regime, eta=eta, L=L, mu=mu)
    if K == T:
        return 0.0
    return float(rho**K * (2.0 * eta * G * m / n) * geometric_sum(rho, T - K))


def gd_r2d_sensitivity(regime: str, *, G: float, L: float, mu: float = 0.0, eta: float, T: int, K: int,
                       m: int, n: int) -> float:
    """Deterministic ``||u_T - w'_T||`` bound for full-batch (projected) GD-R2D [derived].

    ``||grad f_D - grad f_D'|| = (m/n) ||grad f_U - grad f_D'|| <= 2 G m / n`` at every point, so the PSGD
    recursion holds pathwise and the bound has the same value as :func:`psgd_r2d_sensitivity`, but it is a
    worst-case sensitivity: the plain Gaussian mechanism applies, no Markov step, no 1/delta.
    """
    return psgd_r2d_sensitivity(regime, G=G, L=L, mu=mu, eta=eta, T=T, K=K, m=m, n=n)


def sgd_r2d_sensitivity_derived(regime: str, *, L: float, mu: float = 0.0, F0: float, eta: float, b: int, T: int,
                                K: int, m: int, n: int) -> float:
    """``Delta_1`` for SGD-R2D without projection (Theorem 4.9 substitute, digest 003 section 3.3) [derived].

    Not the paper's constants (its statement is only O~). Needs per-sample L-smooth nonnegative losses with
    ``f(w0; z) <= F0``, with-replacement batches and ``eta <= 2/L`` (C, NC) or ``2/(L + mu)`` (SC)::

        Delta_1 = eta c_m sqrt(2 L F0) sum_{t < T-K} rho^{T-1-t} (1 + L^2 eta^2 / b)^{t/2}
                <= eta c_m sqrt(2 L F0) exp(L^2 eta^2 (T-K) / (2b)) rho^K S_{T-K}(rho),
        c_m = sqrt(m/n) + m / sqrt(n (n - m)).

    The sum (first line) is returned.
    """
    _check_TKmn(T, K, m, n)
    check_positive("F0", F0, allow_zero=True)
    check_int("b", b, low=1)
    if regime == "nonconvex" and eta > 2.0 / L:
        raise ValueError(f"eta={eta!r} is out of range: the derived SGD-R2D bound needs eta in (0, 2/L] = "
                         f"(0, {2.0 / L:.6g}]")
    rho = contraction_factor(regime, eta=eta, L=L, mu=mu)
    if K == T:
        return 0.0
    c_m = math.sqrt(m / n) + m / math.sqrt(n * (n - m))
    t = np.arange(T - K, dtype=float)
    # the sum form (tighter than the closed form with exp(L^2 eta^2 (T-K)/(2b)); digest 003 3.8 pins it)
    log_terms = (T - 1 - t) * math.log(rho) + 0.5 * t * math.log1p(L * L * eta * eta / b)
    return float(eta * c_m * math.sqrt(2.0 * L * F0) * np.exp(log_terms).sum())


# ----------------------------------------------------------------------------------------------------------
# From sensitivity to sigma (Lemma 4.4) and back
# ----------------------------------------------------------------------------------------------------------


def diameter_cap_sigma(radius: float, epsilon: float, delta: float, *, mode: str = "sound") -> float:
    """sigma for the worst-case sensitivity ``2R`` of any two points of the ball (derived; digest 003 3.1)."""
    check_positive("radius", radius)
    if not math.isfinite(radius):
        return math.inf
    if mode == "paper":
        return classic_gaussian_sigma(epsilon, delta, 2.0 * radius, warn=False)
    return analytic_gaussian_sigma(epsilon, delta, 2.0 * radius)


def calibrate_sigma(sensitivity: float, epsilon: float, delta: float, *, kind: str = "first", mode: str = "sound",
                    radius: float = math.inf, tail_fraction: float = 0.5) -> float:
    """sigma for a sensitivity bound of ``kind`` ``"first"`` (moment), ``"second"`` or ``"deterministic"``.

    ``mode="paper"``: Lemma 4.4 as reconstructed, classic Gaussian with the delta/2 split:
    ``sigma = (2 Delta_1 / delta) sqrt(2 ln(2.5/delta)) / epsilon`` (first moment) and
    ``(2 Delta_2 / epsilon) sqrt(ln(2.5/delta)/delta)`` (second). ``mode="sound"``: the analytic Gaussian
    mechanism in the same Markov argument, and ``min`` with :func:`diameter_cap_sigma` when ``radius`` is finite.
    """
    check_choice("mode", mode, ("paper", "sound"))
    check_choice("kind", kind, ("first", "second", "deterministic"))
    check_positive("sensitivity", sensitivity, allow_zero=True)
    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    if sensitivity == 0:
        return 0.0
    mech = "classic" if mode == "paper" else "analytic"
    if not math.isfinite(sensitivity):
        sigma = math.inf
    elif kind == "deterministic":
        sigma = (classic_gaussian_sigma(epsilon, delta, sensitivity, warn=False) if mode == "paper"
                 else analytic_gaussian_sigma(epsilon, delta, sensitivity))
    else:
        kw = {"first_moment": sensitivity} if kind == "first" else {"second_moment": sensitivity}
        sigma = relaxed_gaussian_sigma(epsilon, delta, mechanism=mech, tail_fraction=tail_fraction, **kw).sigma
    if mode == "sound" and math.isfinite(radius):
        sigma = min(sigma, diameter_cap_sigma(radius, epsilon, delta))
    return float(sigma)


def certified_epsilon(sigma: float, sensitivity: float, delta: float, *, kind: str = "first", mode: str = "sound",
                      radius: float = math.inf, eps_max: float = 1e4) -> float:
    """The smallest epsilon that noise ``sigma`` certifies (inverts :func:`calibrate_sigma`; inf if none)."""
    check_positive("sigma", sigma, allow_zero=True)
    if sensitivity == 0:
        return 0.0
    if sigma == 0:
        return math.inf
    from scipy.optimize import brentq

    def f(log_eps: float) -> float:
        return calibrate_sigma(sensitivity, math.exp(log_eps), delta, kind=kind, mode=mode, radius=radius) - sigma

    lo, hi = math.log(1e-8), math.log(eps_max)
    if f(hi) > 0:
        return math.inf
    if f(lo) <= 0:
        return 1e-8
    return math.exp(brentq(f, lo, hi, xtol=1e-10))


def r2d_sigma_curve(regime: str, Ks: np.ndarray | list[int], *, constants: Constants, eta: float, T: int, m: int,
                    n: int, epsilon: float, delta: float, mode: str = "sound", theorem: str = "psgd",
                    b: int = 1) -> np.ndarray:
    """sigma for each rewind depth K (Theorem 4.5's noise-vs-K trade-off; digest 003 section 8.3)."""
    out = []
    for K in Ks:
        d1, kind = _sensitivity(theorem, regime, constants, eta=eta, T=T, K=int(K), m=m, n=n, b=b)
        out.append(calibrate_sigma(d1, epsilon, delta, kind=kind, mode=mode, radius=constants.radius))
    return np.asarray(out, dtype=float)


def k_for_sigma_sc(sigma: float, *, G: float, mu: float, eta: float, T: int, m: int, n: int, epsilon: float,
                   delta: float) -> float:
    """Corollary 4.6 [reconstructed]: the unlearning steps K that strongly convex PSGD-R2D needs at fixed sigma.

    With ``c = sigma mu n eps delta / (4 G m sqrt(2 ln(2.5/delta)))`` (paper-mode Lemma 4.4):
    ``K = ln(1/(c + (1-eta mu)^T)) / ln(1/(1-eta mu))`` if ``c + (1-eta mu)^T < 1``, else 0 (noise alone
    suffices). Returned unrounded (digest 003 3.7 pins these values); round up for an actual run.
    """
    check_positive("sigma", sigma)
    check_positive("mu", mu)
    check_int("T", T, low=1)
    q = contraction_factor("strongly_convex", eta=eta, L=mu, mu=mu, strict=False)
    lam = math.sqrt(2.0 * math.log(2.5 / delta))
    c = sigma * mu * n * epsilon * delta / (4.0 * G * m * lam)
    v = c + q**T
    if v >= 1:
        return 0.0
    return math.log(1.0 / v) / math.log(1.0 / q)


def k_infinity(sigma: float, *, G: float, mu: float, eta: float, m: int, n: int, epsilon: float, delta: float) -> float:
    """``lim_{T -> inf} K(T) = ln(1/c) / ln(1/(1-eta mu))`` (Corollary 4.6, eq. 6): K saturates in T."""
    return k_for_sigma_sc(sigma, G=G, mu=mu, eta=eta, T=10**9, m=m, n=n, epsilon=epsilon, delta=delta)


def _sensitivity(theorem: str, regime: str, c: Constants, *, eta: float, T: int, K: int, m: int, n: int,
                 b: int) -> tuple[float, str]:
    if theorem == "psgd":
        return psgd_r2d_sensitivity(regime, G=c.G, L=c.L, mu=c.mu, eta=eta, T=T, K=K, m=m, n=n), "first"
    if theorem == "gd":
        return gd_r2d_sensitivity(regime, G=c.G, L=c.L, mu=c.mu, eta=eta, T=T, K=K, m=m, n=n), "deterministic"
    return sgd_r2d_sensitivity_derived(regime, L=c.L, mu=c.mu, F0=c.F0, eta=eta, b=b, T=T, K=K, m=m, n=n), "first"


_PROVENANCE = {
    "psgd": ("Mu & Klabjan 2025, Thm 4.5 (Thm A.14) + Lemma 4.4", "reconstructed"),
    "sgd_derived": ("Mu & Klabjan 2025, Thm 4.9 (derived substitute, digest 003 3.3) + Lemma 4.4", "derived"),
    "gd": ("full-batch GD-R2D, deterministic sensitivity (derived, digest 003 Alg. 4)", "derived"),
}


# ----------------------------------------------------------------------------------------------------------
# The algorithm
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class R2DConfig:
    """How to unlearn with R2D.

    Attributes
    ----------
    K:
        Rewind depth = number of unlearning steps (0 <= K <= T; the checkpoint ``T - K`` must exist).
    epsilon, delta:
        Target guarantee. ``epsilon=None`` runs without noise (no certificate).
    constants:
        :class:`~unlearnkit.constants.Constants` of the loss; its ``regime`` picks the bound.
    theorem:
        ``"auto"`` (``"gd"`` for full-batch training, ``"psgd"`` when the training projected onto a ball,
        else ``"sgd_derived"``), or one of ``"psgd"``, ``"sgd_derived"``, ``"gd"``.
    mode:
        ``"paper"`` (classic Gaussian, delta/2 split) or ``"sound"`` (analytic Gaussian + diameter cap).
    sigma:
        Use this noise instead of calibrating; the certificate then reports the epsilon it certifies.
    """

    K: int
    epsilon: Optional[float] = 1.0
    delta: float = 1e-5
    constants: Optional[Constants] = None
    theorem: str = "auto"
    mode: str = "sound"
    sigma: Optional[float] = None

    def __post_init__(self) -> None:
        check_int("K", self.K, low=0)
        if self.epsilon is not None:
            check_positive("epsilon", self.epsilon)
        check_probability("delta", self.delta, allow_zero=False, allow_one=False)
        check_choice("theorem", self.theorem, ("auto", "psgd", "sgd_derived", "gd"))
        check_choice("mode", self.mode, ("paper", "sound"))
        if self.sigma is not None:
            check_positive("sigma", self.sigma, allow_zero=True)
        if self.epsilon is not None and self.constants is None and self.sigma is None:
            raise ValueError("constants=None: a certified R2D run needs the loss constants (unlearnkit.constants)")


def noise(params: torch.Tensor, sigma: float, generator: torch.Generator) -> torch.Tensor:
    """``params + N(0, sigma^2 I)``, drawn from ``generator`` (fresh on every call)."""
    if sigma == 0:
        return params.clone()
    z = torch.randn(params.shape, generator=generator, device=generator.device, dtype=params.dtype)
    return params + sigma * z.to(params.device)


def _resolve_theorem(theorem: str, train_cfg: Any) -> str:
    if theorem != "auto":
        return theorem
    if train_cfg.sampling == "full":
        return "gd"
    return "psgd" if math.isfinite(train_cfg.radius) else "sgd_derived"


def r2d_certificate(config: R2DConfig, train_cfg: Any, *, m: int, n: int, sigma: Optional[float] = None
                    ) -> tuple[float, Optional[Certificate]]:
    """sigma and the :class:`Certificate` of an R2D run on training config ``train_cfg``.

    Checks that the training is covered: with-replacement (or full) batches, a radius no larger than the one
    the constants hold on, and ``weight_decay`` equal to ``constants.mu`` in the strongly convex regime.
    """
    if config.epsilon is None and config.sigma is None:
        return 0.0, None
    c = config.constants
    theorem = _resolve_theorem(config.theorem, train_cfg)
    T, eta, b = train_cfg.steps, train_cfg.lr, train_cfg.batch_size
    if config.K > T:
        raise ValueError(f"K={config.K!r} is out of range: the rewind depth must satisfy 0 <= K <= T={T}")
    certified, note = True, ""
    if c is None:
        return float(config.sigma), Certificate(epsilon=math.inf, delta=config.delta, sigma=float(config.sigma),
                                                mechanism="Gaussian output noise", source=PAPER, mode="none",
                                                note="no loss constants given: not certified")
    if theorem == "psgd" and train_cfg.radius > c.radius:
        raise ValueError(f"radius={train_cfg.radius!r}: training projected on a larger ball than the constants "
                         f"hold on (constants.radius={c.radius!r})")
    if not c.certified:
        certified, note = False, NOT_CERTIFIED_NOTE
    if train_cfg.sampling == "without_replacement":
        certified, note = False, "batches without replacement break the coupling (App. C): not certified"
    if theorem == "gd" and train_cfg.sampling != "full":
        raise ValueError(f"theorem='gd' needs sampling='full' training, got sampling={train_cfg.sampling!r}")
    if theorem == "psgd" and not math.isfinite(c.G):
        raise ValueError("theorem='psgd' needs a finite gradient bound G (train with a finite radius)")
    d1, kind = _sensitivity(theorem, c.regime, c, eta=eta, T=T, K=config.K, m=m, n=n, b=b)
    source, provenance = _PROVENANCE[theorem]
    eps = config.epsilon
    if sigma is None:
        sigma = calibrate_sigma(d1, eps, config.delta, kind=kind, mode=config.mode, radius=train_cfg.radius)
    else:
        eps = certified_epsilon(sigma, d1, config.delta, kind=kind, mode=config.mode, radius=train_cfg.radius)
    capped = (config.mode == "sound" and math.isfinite(train_cfg.radius) and d1 > 0
              and sigma >= diameter_cap_sigma(train_cfg.radius, min(eps, 1e4), config.delta) * (1 - 1e-12))
    consts = {**c.as_dict(), "eta": eta, "T": T, "K": config.K, "m": m, "n": n, "b": b,
              "regime": c.regime, "Delta": d1, "moment": kind, "provenance": provenance}
    if not certified:
        consts["nominal_epsilon"] = eps
        return float(sigma), Certificate(epsilon=math.inf, delta=config.delta, sigma=float(sigma),
                                         mechanism="Gaussian output noise, relaxed (Lemma 4.4)", source=source,
                                         mode="none", constants=consts, note=note)
    if not note:
        note = f"{provenance} bound; " + ("diameter cap 2R is the binding sensitivity" if capped else
                                         f"{kind}-moment sensitivity {d1:.3g}")
    return float(sigma), Certificate(epsilon=float(eps), delta=config.delta, sigma=float(sigma),
                                     mechanism="Gaussian output noise, relaxed Gaussian (Lemma 4.4)"
                                     if kind != "deterministic" else "Gaussian output noise",
                                     source=source, mode=config.mode, constants=consts, note=note)


def unlearn(state: TrainedState, request: Request, config: R2DConfig, *, generator: torch.Generator,
            callback: Optional[Callback] = None, progress: bool = False, batches=None) -> Result:
    """SGD/PSGD/GD-R2D (Algorithm 2a): load checkpoint ``T-K``, run K steps on the retain set, add noise.

    The replay uses the training config (step size, batch size, sampling, radius, weight decay), with fresh
    batches drawn from ``generator``, or ``batches`` (positions into the retain set) for a coupled simulation
    (:func:`unlearnkit.coupled.coupled_retrain_batches`). ``result.extras["noiseless"]`` holds ``u_T``.
    """
    from ..train import run_sgd

    cfg = state.config
    if cfg is None:
        raise ValueError("state.config is None: R2D needs the training config to replay steps")
    T, K = cfg.steps, config.K
    if K > T:
        raise ValueError(f"K={K!r} is out of range: the rewind depth must satisfy 0 <= K <= T={T}")
    if (T - K) not in state.checkpoints:
        if K == T and state.extras.get("init") is not None:
            start = state.extras["init"]
        else:
            raise ValueError(f"K={K!r}: no checkpoint at step T-K={T - K} (saved: {sorted(state.checkpoints)[:8]}...); "
                             "train with checkpoint_every dividing T-K")
    else:
        start = state.checkpoints[T - K]
    retain = request.retain(state.train_indices)
    n, m = len(state.train_indices), len(state.train_indices) - len(retain)
    sigma, cert = r2d_certificate(config, cfg, m=max(m, 1), n=n, sigma=config.sigma)
    with Stopwatch() as sw:
        x, y = state.dataset.train_subset(retain)
        if K > 0:
            u, cost, hist = run_sgd(state.flat, start, x, y, replace(cfg, checkpoint_every=0), generator=generator,
                                    steps=K, start_step=T - K, callback=callback, progress=progress, desc="R2D",
                                    batches=batches)
        else:
            u, cost, hist = start.clone(), Cost(), []
        out = noise(u, sigma, generator)
    emit(callback, "noise", T, sigma=sigma, noise_norm=float((out - u).norm()))
    return Result(params=out, certificate=cert, history=hist,
                  cost=Cost(grad_evals=cost.grad_evals, seconds=sw.seconds), extras={"noiseless": u, "sigma": sigma})


# ----------------------------------------------------------------------------------------------------------
# Method object and CLI experiment
# ----------------------------------------------------------------------------------------------------------


class R2D:
    """The shared calling shape: ``R2D().unlearn(state, request, R2DConfig(...), generator=g)``."""

    name = "r2d"

    def unlearn(self, state: TrainedState, request: Request, config: R2DConfig, *, generator: torch.Generator,
                callback: Optional[Callback] = None, progress: bool = False) -> Result:
        return unlearn(state, request, config, generator=generator, callback=callback, progress=progress)


LAM = 0.01
RADIUS = 10.0


def central_profile(name: str):
    """Experiment profiles shared by the R2D and D2D runners.

    ``"quick"``: digits, softmax regression on unit-ball features (+ bias), L2 weight 0.01, projection radius
    10, 200 PSGD steps with replacement at step 0.4: analytic constants, so certificates are real.
    ``"synthetic"``: binary logistic regression on the unit-ball synthetic data. ``"mlp"``: digits MLP; its
    constants can only be estimated, so its certificates are ``mode="none"``.
    """
    from ..experiments import CentralProfile
    from ..train import SGDConfig

    check_choice("profile", name, ("quick", "synthetic", "mlp"))
    train = SGDConfig(steps=200, lr=0.4, batch_size=32, weight_decay=LAM, radius=RADIUS, checkpoint_every=20)
    if name == "synthetic":
        return CentralProfile(dataset="synthetic", dataset_kwargs={"n_train": 1000, "n_test": 500, "dim": 20},
                              model="logreg", model_kwargs={}, loss="logistic", train=train, request="samples",
                              m=50, unit_ball=True)
    if name == "mlp":
        return CentralProfile(model="mlp", model_kwargs={"hidden": (32,)}, train=train, request="samples", m=60,
                              unit_ball=True)
    return CentralProfile(model="logreg", model_kwargs={}, train=train, request="samples", m=60, unit_ball=True)


def profile_constants(name: str, state: TrainedState, *, generator: torch.Generator) -> Constants:
    """Analytic constants for the convex profiles, estimated ("not certified") ones for the MLP."""
    from ..constants import estimate_constants, logistic_constants, softmax_constants

    if name == "synthetic":
        return logistic_constants(lam=LAM, radius=RADIUS, bias=True)
    if name == "quick":
        return softmax_constants(n_classes=state.dataset.n_classes, lam=LAM, radius=RADIUS, bias=True)
    x, y = state.dataset.train_subset(state.train_indices[:128])
    return estimate_constants(state.flat, x, y, radius=RADIUS, weight_decay=LAM, n_points=4, n_samples=128,
                              generator=generator)
