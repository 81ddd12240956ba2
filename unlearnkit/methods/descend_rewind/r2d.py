"""Rewind-to-Delete (R2D): rewind to the checkpoint at step T-K, replay K steps on the retain set, add noise.

Mu & Klabjan, "Descend or Rewind? Stochastic Gradient Descent Unlearning" (arXiv 2511.15983, digest 003) and
the full-batch predecessor (Mu & Klabjan, NeurIPS 2025). Training (Algorithm 1) saves the private checkpoint
``w_{T-K}``; unlearning (Algorithm 2a) runs ``K`` (projected) SGD steps on ``D' = D \\ U`` from it and outputs
``u_T + N(0, sigma^2 I)``. With ``K = T`` it *is* retraining (sigma 0); with ``K = 0`` it is output
perturbation of ``w_T``. Cost is K steps, always <= T.

The certificate picks one of the bounds of :mod:`.bounds` (PSGD-R2D Theorem 4.5, the SGD-R2D Theorem 4.9
substitute, or deterministic GD-R2D) and turns it into sigma with Lemma 4.4 (``mode="paper"``: classic
Gaussian, delta/2 split; ``mode="sound"``: analytic Gaussian and the diameter cap).

Sampling *without replacement* breaks the coupling (App. C): the method still runs but returns
``mode="none"`` ("not certified"). Constants estimated from data do the same, and so does a training the
bound does not describe (:mod:`.coverage`): a weight decay other than the constants' lambda, a start
outside the ball or outside where ``F0`` holds, the unprojected SGD-R2D bound on projected training.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Optional, Sequence

import torch

from ..._validate import check_choice, check_epsilon, check_instance, check_int, check_positive, check_probability
from ...constants import NOT_CERTIFIED_NOTE, Constants
from ...core import Callback, Certificate, Cost, NoisePoint, Plan, Request, Result, Stopwatch, TrainedState, emit
from ...core import MAX_STEPS, checked_unlearn
from ...privacy.trace import noisy_release
from ...train import run_sgd
from .bounds import DESCEND_REWIND_PAPER, R2D_PROVENANCE, descend_rewind_epsilon, descend_rewind_sigma, diameter_cap_sigma, \
    r2d_sensitivity
from .coverage import classic_range_note, coverage_problems


@dataclass(frozen=True, kw_only=True)
class DescendRewindConfig:
    """The fields and checks R2D's and D2D's configs share: ``K`` unlearning steps, the target, the loss
    constants, the theorem, the mode and an optional fixed ``sigma``.

    A subclass names its theorems (``THEOREMS``, besides ``"auto"``), its method (``METHOD``, for messages) and
    whether a fixed ``sigma`` replaces the constants (``SIGMA_REPLACES_CONSTANTS``).
    """

    THEOREMS: ClassVar[tuple[str, ...]] = ()
    METHOD: ClassVar[str] = ""
    SIGMA_REPLACES_CONSTANTS: ClassVar[bool] = False

    K: int
    epsilon: Optional[float] = 1.0
    delta: float = 1e-5
    constants: Optional[Constants] = None
    theorem: str = "auto"
    mode: str = "sound"
    sigma: Optional[float] = None

    def __post_init__(self) -> None:
        check_int("K", self.K, low=0, high=MAX_STEPS)
        check_instance("constants", self.constants, Constants, optional=True)
        if self.epsilon is not None:
            check_epsilon("epsilon", self.epsilon)
        check_probability("delta", self.delta, allow_zero=False, allow_one=False)
        check_choice("theorem", self.theorem, ("auto",) + self.THEOREMS)
        check_choice("mode", self.mode, ("paper", "sound"))
        if self.sigma is not None:
            check_positive("sigma", self.sigma, allow_zero=True)
        if self.epsilon is not None and self.constants is None and not (self.SIGMA_REPLACES_CONSTANTS
                                                                         and self.sigma is not None):
            raise ValueError(f"constants=None: a certified {self.METHOD} run needs the loss constants "
                             "(unlearnkit.constants)")


@dataclass(frozen=True, kw_only=True)
class R2DConfig(DescendRewindConfig):
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

    THEOREMS: ClassVar[tuple[str, ...]] = ("psgd", "sgd_derived", "gd")
    METHOD: ClassVar[str] = "R2D"
    SIGMA_REPLACES_CONSTANTS: ClassVar[bool] = True


def add_output_noise(params: torch.Tensor, sigma: float, generator: torch.Generator, *,
                     sensitivity: Optional[float] = None) -> torch.Tensor:
    """``params + N(0, sigma^2 I)``, drawn from ``generator`` (fresh on every call): R2D's and D2D's output noise,
    the mechanism ``"output noise"`` of :mod:`unlearnkit.privacy.trace` with the declared ``sensitivity``.

    ``sigma == 0`` (retraining, or a noise-free run) returns a copy without drawing, so the generator's later
    draws are those of a run without noise.

    Parameters
    ----------
    params : torch.Tensor
        The noise-free model.
    sigma : float
        Noise std, ``>= 0``.
    generator : torch.Generator
        Source of the noise.
    sensitivity : float, optional
        The sensitivity the release declares to the trace (see :func:`declared_sensitivity`).

    Returns
    -------
    torch.Tensor
        A new tensor, ``params`` plus the noise (a copy when ``sigma == 0``).

    References
    ----------
    .. [1] S. Mu, D. Klabjan, "Descend or Rewind? Stochastic Gradient Descent Unlearning", arXiv 2511.15983, 2025,
       Algorithms 2a and 2b (the final output perturbation) and Lemma 4.4 (its standard deviation for a sensitivity).
    """
    if sigma == 0:
        return params.clone()
    return noisy_release(params, sigma, generator, name="output noise", sensitivity=sensitivity)


def declared_sensitivity(cert: Optional[Certificate], radius: float = math.inf) -> Optional[float]:
    """The largest distance between the noise-free output and retraining's that ``cert`` allows.

    ``Delta`` itself for a deterministic bound; for a moment bound, the Markov radius of Lemma 4.4 at the
    tail share ``delta / 2`` that :func:`.bounds.descend_rewind_sigma` uses (``Delta_1 / (delta/2)`` or
    ``Delta_2 / sqrt(delta/2)``); never more than the diameter ``2R`` of the projection ball. ``None`` when
    the certificate declares no ``Delta``.

    Parameters
    ----------
    cert : Certificate or None
        The certificate; its ``constants["Delta"]`` and ``constants["moment"]`` are read.
    radius : float, default inf
        Radius of the projection ball.

    Returns
    -------
    float or None
        The declared distance, or ``None``.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Lemma 4.4.
    """
    if cert is None or "Delta" not in cert.constants:
        return None
    d, kind = float(cert.constants["Delta"]), cert.constants.get("moment", "deterministic")
    tail = 0.5 * cert.delta
    r = d / tail if kind == "first" else d / math.sqrt(tail) if kind == "second" else d
    return min(r, 2 * radius) if math.isfinite(radius) else r


def _resolve_theorem(theorem: str, train_cfg: Any) -> str:
    if theorem != "auto":
        return theorem
    if train_cfg.sampling == "full":
        return "gd"
    return "psgd" if math.isfinite(train_cfg.radius) else "sgd_derived"


def r2d_certificate(config: R2DConfig, train_cfg: Any, *, m: int, n: int, sigma: Optional[float] = None,
                    init_norm: Optional[float] = None) -> tuple[float, Optional[Certificate]]:
    """sigma and the :class:`Certificate` of an R2D run on training config ``train_cfg``.

    Checks that the training is covered (:func:`.coverage.coverage_problems`): with-replacement (or full)
    batches; a radius no larger than the one the constants hold on; ``weight_decay`` equal to the L2 weight
    the constants assume; the start ``||w0|| = init_norm`` inside the ball (projected bounds) or where ``F0``
    holds (the unprojected SGD-R2D bound); the derived SGD-R2D bound only for unprojected training. A
    failed check gives ``mode="none"``, ``epsilon=inf`` and a note that says why. ``init_norm=None``
    (unknown start) fails the start checks.

    Parameters
    ----------
    config : R2DConfig
        The unlearning run (K, target, constants, theorem, mode, sigma).
    train_cfg : object
        The training config (``steps``, ``sampling``, ``radius``, step size, batch size, ``weight_decay``).
    m : int
        Number of deleted samples (group size), ``>= 1``.
    n : int
        Training-set size.
    sigma : float, optional
        A given noise std (its epsilon is then computed); ``None`` calibrates sigma to ``config.epsilon``.
    init_norm : float, optional
        ``||w0||`` of the training's initialisation.

    Returns
    -------
    tuple of (float, Certificate or None)
        The output-noise std and the certificate; ``(0.0, None)`` when neither ``config.epsilon`` nor
        ``config.sigma`` is set.

    Raises
    ------
    ValueError
        When ``K > T``, or the theorem does not match the training's sampling, radius or gradient bound.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Theorems 4.5 and 4.9 and Lemma 4.4.
    """
    if config.epsilon is None and config.sigma is None:
        return 0.0, None
    c = config.constants
    theorem = _resolve_theorem(config.theorem, train_cfg)
    T, eta, b = train_cfg.steps, train_cfg.lr, train_cfg.batch_size
    if config.K > T:
        raise ValueError(f"K={config.K!r} is out of range: the rewind depth must satisfy 0 <= K <= T={T}")
    if c is None:
        return float(config.sigma), Certificate(epsilon=math.inf, delta=config.delta, sigma=float(config.sigma),
                                                mechanism="Gaussian output noise", source=DESCEND_REWIND_PAPER, mode="none",
                                                note="no loss constants given: not certified")
    if theorem in ("psgd", "gd") and train_cfg.radius > c.radius:
        raise ValueError(f"radius={train_cfg.radius!r}: training projected on a larger ball than the constants "
                         f"hold on (constants.radius={c.radius!r})")
    if theorem == "gd" and train_cfg.sampling != "full":
        raise ValueError(f"theorem='gd' needs sampling='full' training, got sampling={train_cfg.sampling!r}")
    if theorem == "psgd" and not math.isfinite(c.G):
        raise ValueError("theorem='psgd' needs a finite gradient bound G (train with a finite radius)")
    problems = coverage_problems(c, train_cfg, init_norm=init_norm, uses_F0=theorem == "sgd_derived",
                                 needs_ball=theorem != "sgd_derived" and math.isfinite(train_cfg.radius))
    if theorem == "sgd_derived" and math.isfinite(train_cfg.radius):
        problems.append(f"the derived SGD-R2D bound (Thm 4.9 substitute) is for unprojected SGD, but training "
                        f"projected on radius={train_cfg.radius:g} (use theorem='psgd', Thm 4.5)")
    if not c.certified:
        problems.insert(0, NOT_CERTIFIED_NOTE)
    if train_cfg.sampling == "without_replacement":
        problems.insert(0, "batches without replacement break the coupling (App. C): not certified")
    d1, kind = r2d_sensitivity(theorem, c.regime, c, eta=eta, T=T, K=config.K, m=m, n=n, b=b)
    source, provenance = R2D_PROVENANCE[theorem]
    eps = config.epsilon
    if sigma is None:
        sigma = descend_rewind_sigma(d1, eps, config.delta, kind=kind, mode=config.mode, radius=train_cfg.radius)
    else:
        eps = descend_rewind_epsilon(sigma, d1, config.delta, kind=kind, mode=config.mode,
                                     radius=train_cfg.radius)
    capped = (config.mode == "sound" and math.isfinite(train_cfg.radius) and d1 > 0
              and sigma >= diameter_cap_sigma(train_cfg.radius, min(eps, 1e4), config.delta) * (1 - 1e-12))
    consts = {**c.as_dict(), "eta": eta, "T": T, "K": config.K, "m": m, "n": n, "b": b,
              "regime": c.regime, "Delta": d1, "moment": kind, "provenance": provenance,
              "train_weight_decay": train_cfg.weight_decay, "init_norm_used": init_norm}
    if problems:
        consts["nominal_epsilon"] = eps
        return float(sigma), Certificate(epsilon=math.inf, delta=config.delta, sigma=float(sigma),
                                         mechanism="Gaussian output noise, relaxed (Lemma 4.4)", source=source,
                                         mode="none", constants=consts, note="not certified: " + "; ".join(problems))
    note = f"{provenance} bound; " + ("diameter cap 2R is the binding sensitivity" if capped else
                                     f"{kind}-moment sensitivity {d1:.3g}")
    extra = classic_range_note(config.mode, eps)
    note += f"; {extra}" if extra else ""
    return float(sigma), Certificate(epsilon=float(eps), delta=config.delta, sigma=float(sigma),
                                     mechanism="Gaussian output noise, relaxed Gaussian (Lemma 4.4)"
                                     if kind != "deterministic" else "Gaussian output noise",
                                     source=source, mode=config.mode, constants=consts, note=note)


def initial_norm(state: TrainedState) -> Optional[float]:
    """Norm of the initialisation training started from (``extras["init"]``, else checkpoint 0; ``None``).

    Parameters
    ----------
    state : TrainedState
        The trained model.

    Returns
    -------
    float or None
        ``||w0||``, or ``None`` when neither is stored.
    """
    w0 = state.extras.get("init") if state.extras else None
    if w0 is None:
        w0 = state.checkpoints.get(0)
    return None if w0 is None else float(w0.norm())


def r2d_plan(state: TrainedState, request: Request, config: R2DConfig) -> Plan:
    """R2D's certificate for ``request`` and its one noise point, ``"output noise"`` (before any work).

    Parameters
    ----------
    state : TrainedState
        The trained model; ``state.config`` must be its training config.
    request : Request
        What to forget.
    config : R2DConfig
        The unlearning run.

    Returns
    -------
    Plan
        The certificate of :func:`r2d_certificate` and one :class:`NoisePoint` ``"output noise"``.

    References
    ----------
    .. [1] S. Mu, D. Klabjan, "Descend or Rewind? Stochastic Gradient Descent Unlearning", arXiv 2511.15983, 2025,
       Theorems 4.5 (PSGD-R2D) and 4.9 (SGD-R2D) and Lemma 4.4 (the Gaussian noise for an expected sensitivity).
    """
    cfg = state.config
    if cfg is None:
        raise ValueError("state.config is None: R2D needs the training config to replay steps")
    n = len(state.train_indices)
    m = n - len(request.retain(state.train_indices))
    sigma, cert = r2d_certificate(config, cfg, m=max(m, 1), n=n, sigma=config.sigma, init_norm=initial_norm(state))
    return Plan(cert, (NoisePoint("output noise", declared_sensitivity(cert, cfg.radius), float(sigma)),))


def _unlearn(state: TrainedState, request: Request, config: R2DConfig, *, generator: torch.Generator,
             callback: Optional[Callback] = None, progress: bool = False, batches=None) -> Result:
    """SGD/PSGD/GD-R2D (Algorithm 2a): load checkpoint ``T-K``, run K steps on the retain set, add noise.

    The replay uses the training config (step size, batch size, sampling, radius, weight decay), with fresh
    batches drawn from ``generator``, or ``batches`` (positions into the retain set) for a coupled simulation
    (:func:`unlearnkit.experiments.descend_rewind.coupled.coupled_retrain_batches`). ``result.extras["noiseless"]`` holds ``u_T``.
    """

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
    plan = r2d_plan(state, request, config)
    sigma, cert = plan.sigma or 0.0, plan.certificate
    with Stopwatch() as sw:
        x, y = state.dataset.train_subset(retain)
        if K > 0:
            u, cost, hist = run_sgd(state.flat, start, x, y, replace(cfg, checkpoint_every=0), generator=generator,
                                    steps=K, start_step=T - K, callback=callback, progress=progress, desc="R2D",
                                    batches=batches)
        else:
            u, cost, hist = start.clone(), Cost(), []
        out = add_output_noise(u, sigma, generator, sensitivity=plan.point("output noise").sensitivity)
    emit(callback, "noise", T, sigma=sigma, noise_norm=float((out - u).norm()))
    return Result(params=out, certificate=cert, history=hist,
                  cost=Cost(grad_evals=cost.grad_evals, seconds=sw.seconds), extras={"noiseless": u, "sigma": sigma})


class R2D:
    """Rewind-to-Delete: ``R2D().unlearn(state, request, R2DConfig(...), generator=g)``.

    Parameters
    ----------
    batches:
        For a coupled simulation (digest 003 Algorithm 6): the K minibatches to replay, positions into the
        retain set (the last K of :func:`unlearnkit.experiments.descend_rewind.coupled.coupled_retrain_batches`), instead of batches drawn
        from ``generator``. ``None`` (default) draws them, as a real unlearning run does.

    Requests: samples or a class (centralized); the certificate covers any forget set of m samples (group size m).
    """

    name = "r2d"
    request_kinds = ("samples", "class")

    def __init__(self, *, batches: Optional[Sequence[Any]] = None) -> None:
        self.batches = batches

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: R2DConfig, *, generator: torch.Generator,
                callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Unlearn ``request`` from ``state`` (Algorithm 2a); ``extras["noiseless"]`` holds ``u_T``.

        Parameters
        ----------
        state : TrainedState
            The trained model, with its checkpoints and training config.
        request : Request
            What to forget (samples or a class).
        config : R2DConfig
            The unlearning run.
        generator : torch.Generator
            Source of minibatches and noise.
        callback : Callback, optional
            Called during the replayed steps.
        progress : bool, default False
            Show a progress bar.

        Returns
        -------
        Result
            The noisy unlearned model, its certificate (:func:`r2d_certificate`) and extras.

        References
        ----------
        Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Algorithm 2a.
        """
        return _unlearn(state, request, config, generator=generator, callback=callback, progress=progress,
                        batches=self.batches)

    def certify(self, state: TrainedState, request: Request, config: R2DConfig) -> Plan:
        """The certificate and noise point of :meth:`unlearn` (:func:`r2d_plan`), without replaying a step.

        Parameters
        ----------
        state : TrainedState
            The trained model, with its training config.
        request : Request
            What to forget.
        config : R2DConfig
            The unlearning run.

        Returns
        -------
        Plan
            As :func:`r2d_plan`.

        References
        ----------
        .. [1] S. Mu, D. Klabjan, "Descend or Rewind? Stochastic Gradient Descent Unlearning", arXiv 2511.15983, 2025,
           Algorithm 2a (SGD-R2D), Theorems 4.5 and 4.9 and Lemma 4.4.
        """
        return r2d_plan(state, request, config)
