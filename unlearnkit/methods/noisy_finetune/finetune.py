"""The loops shared by the noisy fine-tuning methods (Koloskova et al., ICML 2025; digest 004 section 2).

Every certified variant is "a noisy phase on the retain set, then clean fine-tuning on the retain set":

- :func:`noisy_loop`: ``T`` steps of ``x <- step(x, g) + N(0, sigma^2 I)`` with ``g`` the mean gradient of a
  retain minibatch (eq. 3 and eq. 4 differ only in ``step``), fresh noise every step;
- :func:`clean_finetune`: noise-free SGD on the retain set from the noisy model. It never touches the forget
  set, so it is post-processing and keeps the certificate of the noisy phase (digest 004 section 2.6);
- :class:`NoisyFinetuneMethod`: the shape every method shares: ``certify`` plans the noisy phase, ``unlearn``
  runs it (:meth:`~NoisyFinetuneMethod.noisy_phase`, the one part a method writes) and the clean phase.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

import torch

from ..._validate import check_int, check_positive
from ...core import MAX_STEPS, Certificate, Cost, Plan, Request, Result, Stopwatch, TrainedState, checked_unlearn, emit
from ...privacy.trace import noisy_release
from ...train import SGDConfig, run_sgd


@dataclass(frozen=True, kw_only=True)
class CleanFinetuneConfig:
    """Noise-free fine-tuning on the retain set after the noisy phase (free post-processing, digest 004 2.6).

    Plain SGD (a fresh optimizer: no momentum state survives the noisy phase), constant step ``lr``, L2 weight
    ``weight_decay`` in the loss, batches with replacement. ``steps=0`` skips it.
    """

    steps: int = 0
    lr: float = 0.1
    batch_size: int = 32
    weight_decay: float = 5e-4
    eval_every: int = 0

    def __post_init__(self) -> None:
        check_int("steps", self.steps, low=0, high=MAX_STEPS)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1)
        check_positive("weight_decay", self.weight_decay, allow_zero=True)
        check_int("eval_every", self.eval_every, low=0)


def clip_to_ball(v: torch.Tensor, C: float) -> torch.Tensor:
    """``v`` scaled onto the L2 ball of radius ``C`` when it lies outside (a new tensor only then).

    Parameters
    ----------
    v : torch.Tensor
        A vector (a model or a gradient).
    C : float
        The ball's radius.

    Returns
    -------
    torch.Tensor
        ``v`` itself when ``||v|| <= C``, else ``v * C / ||v||``.

    References
    ----------
    .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks", ICML
       2025, Section 3: the projection Pi_C onto the L2 ball of radius C used in eqs. (1), (3) and (4).
    """
    n = float(v.norm())
    return v if n <= C else v * (C / n)


def start_point(state: TrainedState, init: str) -> torch.Tensor:
    """The noisy phase's start: zeros (``init="zeros"``) or a copy of the trained model.

    Parameters
    ----------
    state : TrainedState
        The trained model.
    init : str
        ``"zeros"`` or ``"model"``.

    Returns
    -------
    torch.Tensor
        A new tensor shaped like ``state.params``.
    """
    return torch.zeros_like(state.params) if init == "zeros" else state.params.detach().clone()


def noisy_loop(state: TrainedState, request: Request, x0: torch.Tensor, T: int, step: Callable, batch_size: int,
                sigma: float, *, generator: torch.Generator, callback, eval_fn, tag: str,
                sensitivity: Optional[Callable[[int], float]] = None):
    """T noisy steps ``x <- step(x, g) + N(0, sigma^2 I)`` on retain minibatches, each the mechanism
    ``"noisy step"`` of :mod:`unlearnkit.privacy.trace`; ``sensitivity(t)`` is the distance step ``t``'s
    noise-free value may have from the same run started elsewhere (same batches, same noise).

    Parameters
    ----------
    state : TrainedState
        The trained model (its data and network).
    request : Request
        What to forget: the minibatches come from the rest.
    x0 : torch.Tensor
        The start.
    T : int
        Number of noisy steps.
    step : callable
        ``step(x, g) -> x'``, the noise-free update from the minibatch gradient ``g``.
    batch_size : int
        Minibatch size (drawn with replacement).
    sigma : float
        Noise std of every step.
    generator : torch.Generator
        Source of the minibatches and the noise.
    callback : Callback, optional
        Receives a ``"noise"`` event per step.
    eval_fn : callable, optional
        ``eval_fn(x) -> dict`` of metrics added to every history row.
    tag : str
        The phase's short name.
    sensitivity : callable, optional
        ``sensitivity(t)``, the declared sensitivity of step ``t`` (replay check).

    Returns
    -------
    tuple
        ``(x_T, history rows, gradient evaluations)``.

    References
    ----------
    .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks", ICML
       2025, Section 3, eqs. (3) (gradient clipping) and (4) (model clipping).
    """
    retain = request.retain(state.train_indices)
    xr, yr = state.dataset.train_subset(retain)
    n = xr.shape[0]
    x = x0
    hist: list[dict[str, float]] = []
    for t in range(T):
        idx = torch.randint(0, n, (batch_size,), generator=generator, device=generator.device).to(xr.device)
        g = state.flat.grad(x, xr[idx], yr[idx])
        mean = step(x, g)
        x = noisy_release(mean, sigma, generator, name="noisy step",
                          sensitivity=None if sensitivity is None else sensitivity(t))
        z = x - mean
        rec = {"step": t + 1, "phase": 0.0, "noise_norm": float(z.norm()), "param_norm": float(x.norm())}
        if eval_fn is not None:
            rec.update(eval_fn(x))
        hist.append(rec)
        emit(callback, "noise", t + 1, **{k: v for k, v in rec.items() if k != "step"})
    return x, hist, T * batch_size


def clean_finetune(state: TrainedState, request: Request, x: torch.Tensor, config: CleanFinetuneConfig, *,
                   generator: torch.Generator, callback=None, start_step: int = 0, progress: bool = False):
    """Noise-free SGD on the retain set from ``x``.

    Parameters
    ----------
    state : TrainedState
        The trained model (its dataset, train indices and flat model).
    request : Request
        What was forgotten; fine-tuning reads its retain set only.
    x : torch.Tensor
        Flat parameters to start from (the noisy phase's output).
    config : CleanFinetuneConfig
        Steps, step size, batch size, weight decay, evaluation interval.
    generator : torch.Generator
        Source of the minibatches.
    callback : callable, optional
        Passed to :func:`unlearnkit.train.run_sgd`.
    start_step : int, default 0
        Step number of the first fine-tuning step (for the history and callback).
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    (x, cost, history)
        The fine-tuned parameters, the :class:`~unlearnkit.core.Cost` and the per-step history of
        :func:`unlearnkit.train.run_sgd` (empty when ``config.steps == 0``).

    References
    ----------
    .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks", ICML
       2025, Section 3, eq. (2) (regularised fine-tuning on the retained data).
    .. [2] C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", Found. Trends Theor. Comput. Sci.
       2014, Proposition 2.1 (post-processing keeps the certificate).
    """

    if config.steps == 0:
        return x, Cost(), []
    retain = request.retain(state.train_indices)
    xr, yr = state.dataset.train_subset(retain)
    cfg = SGDConfig(steps=config.steps, lr=config.lr, batch_size=config.batch_size,
                    weight_decay=config.weight_decay, eval_every=config.eval_every)
    return run_sgd(state.flat, x, xr, yr, cfg, generator=generator, start_step=start_step, callback=callback,
                   progress=progress, desc="fine-tune")


DELTA_RTOL = 1e-9
"""Relative tolerance of :func:`at_requested_delta` (round-off in a delta recursion, not a budget)."""


def at_requested_delta(cert: Certificate, requested: float) -> Certificate:
    """``cert`` if its delta is at most the ``requested`` delta (the config's), else the same numbers with
    ``mode="none"`` and a note naming both deltas.

    A certificate states what the mechanism gives; one whose delta exceeds what was asked for (model clipping
    with a fixed ``T`` too short for the target) is not a certificate of the requested guarantee.

    Parameters
    ----------
    cert : Certificate
        What the mechanism gives; only a ``mode="sound"`` one is checked.
    requested : float
        The requested delta; a delta above it by a relative round-off of :data:`DELTA_RTOL` or less passes.

    Returns
    -------
    Certificate
        ``cert`` itself when it passes (or is not sound), else a copy with ``mode="none"`` and the note.
    """
    if cert.mode != "sound" or cert.delta <= requested * (1 + DELTA_RTOL):
        return cert
    return replace(cert, mode="none", note=(f"not certified: the mechanism gives delta={cert.delta:.3g}, above the "
                                            f"requested delta={requested:g} (config.delta); {cert.note}"))


def _finish(state, request, x_noisy, hist, noisy_evals, cfg, cert, generator, callback, sw_seconds, progress):
    cert = at_requested_delta(cert, cfg.delta)
    with Stopwatch() as sw:
        x, cost, fhist = clean_finetune(state, request, x_noisy, cfg.finetune, generator=generator,
                                        callback=callback, start_step=len(hist), progress=progress)
    history = hist + [{**h, "phase": 1.0} for h in fhist]
    return Result(params=x, certificate=cert, history=history,
                  cost=Cost(grad_evals=noisy_evals + cost.grad_evals, seconds=sw_seconds + sw.seconds),
                  extras={"noisy": x_noisy, "noisy_grad_evals": noisy_evals})


class NoisyFinetuneMethod:
    """A noisy phase on the retain set, then clean fine-tuning: the shape of every noisy fine-tuning method.

    A method names itself, plans its noisy phase in ``certify(state, request, config) -> Plan`` and runs it in
    :meth:`noisy_phase`; :meth:`unlearn` is the same for all. ``eval_fn(x) -> dict`` adds metrics to every
    noisy step's history row.
    """

    name = ""
    request_kinds = ("samples", "class")

    def __init__(self, *, eval_fn: Optional[Callable[[torch.Tensor], dict]] = None) -> None:
        self.eval_fn = eval_fn

    def certify(self, state: TrainedState, request: Request, config: Any) -> Plan:  # pragma: no cover - abstract
        """The method's plan: its certificate and the noise points of its noisy phase, before any work.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : Any
            The method's own config.

        Returns
        -------
        Plan
            The certificate and the noise points.

        References
        ----------
        .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
           ICML 2025, Theorems 4.1 and 4.2 (the certificates of eqs. (3) and (4)).
        """
        raise NotImplementedError

    def noisy_phase(self, state: TrainedState, request: Request, config: Any, plan: Plan, *,
                    generator: torch.Generator, callback=None) -> tuple[torch.Tensor, list[dict], int]:
        """The method's noisy phase under ``plan``: ``(x_noisy, history rows, gradient evaluations)``."""
        raise NotImplementedError  # pragma: no cover - abstract

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: Any, *,
                generator: torch.Generator, callback=None, progress: bool = False) -> Result:
        """The noisy phase that ``certify`` plans, then :func:`clean_finetune` with ``config.finetune``.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : GradientClippingConfig, ModelClippingConfig or OutputPerturbationConfig
            The run's settings (the method's own config).
        generator : torch.Generator
            Source of the run's randomness (noise, minibatches).
        callback : Callback, optional
            Receives the run's events.
        progress : bool, default False
            Show a progress bar.

        Returns
        -------
        Result
            The model after the noisy phase and clean fine-tuning, its certificate, the history and the cost.

        References
        ----------
        .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
           ICML 2025, Section 3: the noisy iterations of eqs. (3) or (4), then noise-free fine-tuning (eq. (2)) as
           post-processing.
        """
        plan = self.certify(state, request, config)
        with Stopwatch() as sw:
            x, hist, evals = self.noisy_phase(state, request, config, plan, generator=generator, callback=callback)
        return _finish(state, request, x, hist, evals, config, plan.certificate, generator, callback, sw.seconds,
                       progress)
