"""Centralized minibatch (projected) SGD with checkpoints, progress bars and live events.

This is the training loop the centralized papers analyse:

    theta_{t+1} = Proj_{B(center, radius)}( theta_t - lr * ( grad f_{B_t}(theta_t) + weight_decay * theta_t ) )

with minibatches ``B_t`` drawn *with replacement* (each batch is b i.i.d. uniform indices: the sampling
that D2D/R2D's analysis assumes, digest 003 section 2), *without replacement* (shuffled epochs, the usual
practice; not covered by those certificates), or the full batch. ``checkpoint_every=k`` stores theta every
k steps, which R2D rewinds to.

Batches can be drawn up front with :func:`draw_batches` and passed in, so training, retraining and
unlearning can run on *coupled* randomness (digest 003, algorithm 6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import torch
from torch import Tensor
from tqdm.auto import tqdm

from ._validate import check_choice, check_finite_params, check_generator, check_int, check_number, check_positive
from .core import MAX_STEPS, Callback, Cost, Stopwatch, TrainedState, emit
from .models import FlatParams, project_l2_ball
from .privacy.trace import flow


SAMPLING = ("with_replacement", "without_replacement", "full")


@dataclass(frozen=True, kw_only=True)
class SGDConfig:
    """Hyperparameters of (projected) minibatch SGD.

    Attributes
    ----------
    steps:
        Number of SGD steps T (>= 1).
    lr:
        Step size (> 0).
    batch_size:
        Minibatch size b (ignored by ``sampling="full"``).
    weight_decay:
        L2 coefficient lambda: the loss is ``mean loss + lambda/2 ||theta||^2``, lambda-strongly convex for
        convex losses.
    sampling:
        ``"with_replacement"`` (certified), ``"without_replacement"`` or ``"full"``.
    radius:
        Project onto the L2 ball of this radius around the origin after every step (``inf``: no projection).
    checkpoint_every:
        Save theta every k steps (0: never; the final parameters are always returned).
    eval_every:
        Record the training loss on the current batch in ``history`` every k steps (0: never).
    """

    steps: int
    lr: float
    batch_size: int = 32
    weight_decay: float = 0.0
    sampling: str = "with_replacement"
    radius: float = math.inf
    checkpoint_every: int = 0
    eval_every: int = 0

    def __post_init__(self) -> None:
        check_int("steps", self.steps, low=1, high=MAX_STEPS)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1)
        check_positive("weight_decay", self.weight_decay, allow_zero=True)
        check_choice("sampling", self.sampling, SAMPLING)
        check_number("radius", self.radius)  # a list, a string or None fails here, naming the parameter
        if not (self.radius > 0):
            raise ValueError(f"radius={self.radius!r} is out of range: expected radius in (0, inf]")
        check_int("checkpoint_every", self.checkpoint_every, low=0)
        check_int("eval_every", self.eval_every, low=0)

    @classmethod
    def from_epochs(cls, epochs: float, n: int, **kwargs) -> "SGDConfig":
        """Steps for ``epochs`` passes over ``n`` samples at the given batch size."""
        b = kwargs.get("batch_size", 32)
        return cls(steps=max(1, int(math.ceil(epochs * n / b))), **kwargs)


def draw_batches(n: int, config: SGDConfig, generator: torch.Generator, *, steps: Optional[int] = None) -> list[Tensor]:
    """Positions ``0..n-1`` of each step's minibatch, drawn from ``generator`` (on CPU).

    With replacement: each batch is ``batch_size`` i.i.d. uniform draws. Without replacement: consecutive
    slices of fresh random permutations (one per epoch). Full: ``arange(n)`` every step. ``generator`` is
    required (never torch's global RNG): ``unlearnkit.make_generator(seed)``.
    """
    check_generator(generator, where="draw_batches")
    steps = config.steps if steps is None else check_int("steps", steps, low=0)
    n = check_int("n", n, low=1)
    if config.sampling == "full":
        full = torch.arange(n, device=generator.device)
        return [full] * steps
    b = min(config.batch_size, n) if config.sampling == "without_replacement" else config.batch_size
    if config.sampling == "with_replacement":
        return list(torch.randint(0, n, (steps, b), generator=generator, device=generator.device).unbind(0))
    out: list[Tensor] = []
    perm = torch.randperm(n, generator=generator, device=generator.device)
    pos = 0
    for _ in range(steps):
        if pos + b > n:
            perm = torch.randperm(n, generator=generator, device=generator.device)
            pos = 0
        out.append(perm[pos:pos + b])
        pos += b
    return out


def run_sgd(flat: FlatParams, theta: Tensor, x: Tensor, y: Tensor, config: SGDConfig, *, generator: torch.Generator,
            batches: Optional[Sequence[Tensor]] = None, steps: Optional[int] = None, start_step: int = 0,
            callback: Optional[Callback] = None, progress: bool = False, desc: str = "SGD",
            checkpoints: Optional[dict[int, Tensor]] = None) -> tuple[Tensor, Cost, list[dict[str, float]]]:
    """Run SGD steps from ``theta`` on the samples ``(x, y)`` and return ``(theta, cost, history)``.

    The low-level loop shared by training, retraining, fine-tuning and R2D's rewind-and-replay. ``batches``
    (positions into ``x``) override the sampling; ``start_step`` numbers the steps (checkpoints and events
    use absolute step numbers).
    """
    n = x.shape[0]
    if n == 0:
        raise ValueError("run_sgd: no training samples (the retain set is empty)")
    steps = config.steps if steps is None else steps
    flow(f"{desc}.steps", steps)  # a loop count the certificates assume public (the replay check compares it)
    if batches is None:
        batches = draw_batches(n, config, generator, steps=steps)
    elif len(batches) < steps:
        raise ValueError(f"batches has {len(batches)} entries but steps={steps}")
    history: list[dict[str, float]] = []
    grad_evals = 0
    bar = None
    if progress:
        bar = tqdm(total=steps, desc=desc, leave=False)
    theta = theta.detach().clone()
    with Stopwatch() as sw:
        for i in range(steps):
            step = start_step + i
            if checkpoints is not None and config.checkpoint_every and step % config.checkpoint_every == 0:
                checkpoints[step] = theta.clone()
            idx = batches[i].to(x.device)
            xb, yb = x[idx], y[idx]
            loss, g = flat.value_and_grad(theta, xb, yb, weight_decay=config.weight_decay)
            theta = project_l2_ball(theta - config.lr * g, radius=config.radius)
            grad_evals += int(idx.numel())
            if (config.eval_every and (step + 1) % config.eval_every == 0) or callback is not None:
                check_finite_params(float(loss), where=desc, setting=config, step=step + 1, what="loss")
            if config.eval_every and (step + 1) % config.eval_every == 0:
                history.append({"step": step + 1, "loss": float(loss)})
            if callback is not None:
                emit(callback, "step", step + 1, loss=float(loss))
            if bar is not None:
                bar.update(1)
        final = start_step + steps
        check_finite_params(theta, where=desc, setting=config, step=final)
        if checkpoints is not None and config.checkpoint_every and final % config.checkpoint_every == 0:
            checkpoints[final] = theta.clone()
    if bar is not None:
        bar.close()
    return theta, Cost(grad_evals=grad_evals, seconds=sw.seconds), history


def train_sgd(flat: FlatParams, dataset, indices: Optional[Sequence[int] | np.ndarray], config: SGDConfig, *,
              generator: torch.Generator, init: Optional[Tensor] = None, batches: Optional[Sequence[Tensor]] = None,
              callback: Optional[Callback] = None, progress: bool = False, desc: str = "training") -> TrainedState:
    """Train on ``dataset``'s training samples ``indices`` (all when ``None``) and return a :class:`TrainedState`.

    ``init`` defaults to the module's current parameters (``flat.init()``). Checkpoints are stored in
    ``state.checkpoints`` (step 0 is the initialisation when ``checkpoint_every > 0``); the state keeps
    the drawn batches in ``state.extras["batches"]`` so a coupled run can replay them.
    """
    idx = np.arange(dataset.n_train) if indices is None else np.asarray(indices, dtype=np.int64).reshape(-1)
    if idx.size == 0 or idx.min() < 0 or idx.max() >= dataset.n_train:
        bad = "empty" if idx.size == 0 else f"min {int(idx.min())}, max {int(idx.max())}"
        raise ValueError(f"train_sgd: indices ({bad}) is out of range: expected at least one training index in "
                         f"[0, {dataset.n_train - 1}]")
    check_generator(generator, where="train_sgd")
    x, y = dataset.train_subset(idx)
    theta0 = (flat.init() if init is None else init).to(x.device)
    if batches is None:
        batches = draw_batches(len(idx), config, generator)
    checkpoints: dict[int, Tensor] = {}
    theta, cost, history = run_sgd(flat, theta0, x, y, config, generator=generator, batches=batches,
                                   callback=callback, progress=progress, desc=desc, checkpoints=checkpoints)
    mem = sum(t.numel() * t.element_size() for t in checkpoints.values())
    return TrainedState(flat=flat, params=theta, dataset=dataset, train_indices=idx, config=config,
                        checkpoints=checkpoints, cost=Cost(cost.grad_evals, 0, cost.seconds, mem), history=history,
                        extras={"batches": list(batches), "init": theta0})
