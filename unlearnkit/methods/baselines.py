"""Baselines every certified method is measured against.

- :class:`Retrain`: retrain from scratch on the retain data, the gold standard of *exact* unlearning (its
  output distribution is, by definition, the one unlearning should imitate), and the most expensive.
- :class:`Finetune`: keep training on the retain data only, hoping the forget set fades. Cheap, uncertified:
  "catastrophic forgetting" is slow for what the model memorised well.
- :class:`GradientAscent`: climb the loss on the forget set until a stopping rule fires. Cheap, uncertified,
  and easy to overshoot (the model is damaged on the retain data too).

Each returns a :class:`~unlearnkit.core.Result` whose ``cost`` counts per-sample gradient evaluations,
so the three compare with certified methods on the same axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch

from .._validate import check_instance, check_int, check_positive, check_range
from ..evaluate import accuracy
from ..models import init_from_generator, project_l2_ball
from ..privacy import Certificate
from ..train import SGDConfig, run_sgd
from ..core import Callback, Cost, Plan, Request, Result, Stopwatch, TrainedState, emit
from ..core import checked_unlearn

#: the plan of a heuristic: nothing is certified (epsilon = infinity)
_NO_CERTIFICATE = Certificate.none("a heuristic: no certificate (epsilon = infinity)")


def _retain_xy(state: TrainedState, request: Request):
    retain = request.retain(state.train_indices)
    if retain.size == 0:
        raise ValueError("the request removes every training sample: nothing is left to retrain on")
    return state.dataset.train_subset(retain)


@dataclass(frozen=True, kw_only=True)
class RetrainConfig:
    """Retrain with the original training config (``train=None``) or another one.

    ``same_init=True`` starts from the original initialisation (so distances to the original model measure
    the effect of the data alone); ``False`` draws a fresh initialisation from the generator.
    """

    train: Optional[SGDConfig] = None
    same_init: bool = True

    def __post_init__(self) -> None:
        check_instance("train", self.train, SGDConfig, optional=True)


class Retrain:
    """Exact unlearning: train again from scratch without the forget set.

    Requests: samples or a class (centralized: no clients); exact for any forget set.
    """

    name = "retrain"
    request_kinds = ("samples", "class")

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: RetrainConfig = RetrainConfig(), *,
                generator: torch.Generator, callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Run the training config (``config.train``, else ``state.config``) on the retain set from the
        original initialisation (``config.same_init``) or a fresh one drawn from ``generator``.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : RetrainConfig, optional
            The run's settings (default ``RetrainConfig()``).
        generator : torch.Generator
            Source of the run's randomness (noise, minibatches, routes).
        callback : Callback, optional
            Receives the run's events.
        progress : bool, default False
            Show a progress bar.

        Returns
        -------
        Result
            The retrained parameters, the exact certificate of :meth:`certify`, the history and the cost.

        References
        ----------
        .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
           ICML 2025, Definition 2.1 (retraining on the retained data is the reference distribution) and Section 5.1
           (the retraining baseline).
        """
        cfg = config.train or state.config
        if cfg is None:
            raise ValueError("Retrain needs a training config: the state has none and config.train is None")
        x, y = _retain_xy(state, request)
        if config.same_init and "init" in state.extras:
            init = state.extras["init"]
        else:
            init_from_generator(state.flat.module, generator)
            init = state.flat.init().to(x.device)
        theta, cost, history = run_sgd(state.flat, init, x, y, cfg, generator=generator, callback=callback,
                                       progress=progress, desc="retraining")
        return Result(theta, self.certify(state, request, config).certificate, history, cost)

    def certify(self, state: TrainedState, request: Request, config: RetrainConfig = RetrainConfig()) -> Plan:
        """Exact unlearning by definition: epsilon = delta = 0, no noise.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : RetrainConfig, optional
            The run's settings (default ``RetrainConfig()``).

        Returns
        -------
        Plan
            An exact certificate (``epsilon = delta = 0``) and no noise point.

        References
        ----------
        .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
           ICML 2025, Definition 2.1: the output of retraining is its own reference, so (0, 0)-unlearning.
        """
        return Plan(Certificate.exact())


@dataclass(frozen=True, kw_only=True)
class FinetuneConfig:
    """Fine-tune on the retain data: ``steps`` of SGD with this learning rate and batch size."""

    steps: int = 100
    lr: float = 0.1
    batch_size: int = 32
    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        SGDConfig(steps=self.steps, lr=self.lr, batch_size=self.batch_size, weight_decay=self.weight_decay)


class Finetune:
    """Continue training on the retain data only (no certificate).

    Requests: samples or a class (centralized: no clients).
    """

    name = "finetune"
    request_kinds = ("samples", "class")

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: FinetuneConfig = FinetuneConfig(), *,
                generator: torch.Generator, callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """``config.steps`` of SGD on the retain set from the trained model, projected on the training's ball.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : FinetuneConfig, optional
            The run's settings (default ``FinetuneConfig()``).
        generator : torch.Generator
            Source of the run's randomness (noise, minibatches, routes).
        callback : Callback, optional
            Receives the run's events.
        progress : bool, default False
            Show a progress bar.

        Returns
        -------
        Result
            The fine-tuned parameters, no certificate (``None``), the history and the cost.

        References
        ----------
        .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
           ICML 2025, Section 3, eq. (2) (fine-tuning on the retained data, not certified on its own).
        """
        x, y = _retain_xy(state, request)
        sgd = SGDConfig(steps=config.steps, lr=config.lr, batch_size=config.batch_size,
                        weight_decay=config.weight_decay, sampling="without_replacement",
                        radius=getattr(state.config, "radius", float("inf")))
        theta, cost, history = run_sgd(state.flat, state.params, x, y, sgd, generator=generator, callback=callback,
                                       progress=progress, desc="fine-tuning")
        return Result(theta, None, history, cost)

    def certify(self, state: TrainedState, request: Request, config: FinetuneConfig = FinetuneConfig()) -> Plan:
        """A heuristic: no certificate (epsilon = infinity); ``unlearn`` reports none.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : FinetuneConfig, optional
            The run's settings (default ``FinetuneConfig()``).

        Returns
        -------
        Plan
            No certificate (``mode="none"``) and no noise point.

        References
        ----------
        .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
           ICML 2025, Section 3: the fine-tuning of eq. (2) gives no formal (epsilon, delta)-unlearning.
        """
        return Plan(_NO_CERTIFICATE)


@dataclass(frozen=True, kw_only=True)
class GradientAscentConfig:
    """Gradient ascent on the forget set with a stopping rule.

    Attributes
    ----------
    max_steps:
        Hard cap on ascent steps.
    lr:
        Ascent step size.
    batch_size:
        Forget-set minibatch size (the whole forget set if it is smaller).
    stop_forget_acc:
        Stop once the forget accuracy is at most this. ``None`` (default) uses the rule "the forget set
        should look unseen": stop once the forget accuracy is at most the model's test accuracy minus
        ``margin`` for a sample request, or at most ``1 / n_classes`` for a class request (chance level).
    margin:
        See ``stop_forget_acc``.
    max_grad_norm:
        Gradients are clipped to this norm (ascent on cross-entropy is unbounded; clipping keeps one
        confident sample from blowing the model up).
    check_every:
        Evaluate the stopping rule every k steps (a forward pass over the forget set, not counted as
        gradient evaluations).
    """

    max_steps: int = 200
    lr: float = 0.05
    batch_size: int = 32
    stop_forget_acc: Optional[float] = None
    margin: float = 0.0
    max_grad_norm: float = 5.0
    check_every: int = 1

    def __post_init__(self) -> None:
        check_int("max_steps", self.max_steps, low=1)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1)
        if self.stop_forget_acc is not None:  # check_range: a list or a string gets a message, not a TypeError
            check_range("stop_forget_acc", self.stop_forget_acc, 0.0, 1.0)
        check_positive("margin", self.margin, allow_zero=True)
        check_positive("max_grad_norm", self.max_grad_norm)
        check_int("check_every", self.check_every, low=1)


class GradientAscent:
    """Ascend the loss on the forget set until the stopping rule fires (no certificate).

    Requests: samples or a class (centralized: no clients).
    """

    name = "gradient_ascent"
    request_kinds = ("samples", "class")

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: GradientAscentConfig = GradientAscentConfig(), *,
                generator: torch.Generator, callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Ascend the clipped forget-set gradient until the forget accuracy reaches the target.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : GradientAscentConfig, optional
            The run's settings (default ``GradientAscentConfig()``).
        generator : torch.Generator
            Source of the run's randomness (noise, minibatches, routes).
        callback : Callback, optional
            Receives the run's events.
        progress : bool, default False
            Show a progress bar.

        Returns
        -------
        Result
            The parameters, no certificate (``None``), the history and the cost; ``extras["stopped_at"]``
            (``None`` when the target was not reached) and ``extras["target_forget_acc"]``.

        References
        ----------
        .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
           ICML 2025, Section 1 (gradient ascent on the forget data as an uncertified heuristic, citing [2]).
        .. [2] E. Triantafillou, P. Kairouz, F. Pedregosa, J. Hayes, M. Kurmanji, K. Zhao, V. Dumoulin, et al., "Are We
           Making Progress in Unlearning? Findings from the First NeurIPS Unlearning Competition", arXiv 2406.09073,
           2024.
        """
        flat, ds = state.flat, state.dataset
        xf, yf = ds.train_subset(request.indices)
        if config.stop_forget_acc is not None:
            target = config.stop_forget_acc
        elif request.kind == "class":
            target = 1.0 / ds.n_classes
        else:
            target = accuracy(flat, state.params, ds.x_test, ds.y_test) - config.margin
        theta = state.params.detach().clone()
        radius = getattr(state.config, "radius", float("inf"))
        history: list[dict[str, float]] = []
        grad_evals, stopped_at = 0, None
        b = min(config.batch_size, xf.shape[0])
        with Stopwatch() as sw:
            for step in range(1, config.max_steps + 1):
                idx = torch.randint(0, xf.shape[0], (b,), generator=generator, device=generator.device).to(xf.device)
                g = flat.grad(theta, xf[idx], yf[idx])
                norm = float(g.norm())
                if norm > config.max_grad_norm:
                    g = g * (config.max_grad_norm / norm)
                theta = project_l2_ball(theta + config.lr * g, radius=radius)
                grad_evals += b
                if step % config.check_every == 0:
                    f_acc = accuracy(flat, theta, xf, yf)
                    history.append({"step": step, "forget_acc": f_acc})
                    emit(callback, "step", step, forget_acc=f_acc)
                    if f_acc <= target:
                        stopped_at = step
                        break
        return Result(theta, None, history, Cost(grad_evals=grad_evals, seconds=sw.seconds),
                      extras={"stopped_at": stopped_at, "target_forget_acc": target})

    def certify(self, state: TrainedState, request: Request,
                config: GradientAscentConfig = GradientAscentConfig()) -> Plan:
        """A heuristic: no certificate (epsilon = infinity); ``unlearn`` reports none.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : GradientAscentConfig, optional
            The run's settings (default ``GradientAscentConfig()``).

        Returns
        -------
        Plan
            No certificate (``mode="none"``) and no noise point.

        References
        ----------
        .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
           ICML 2025, Section 1 (gradient ascent on the forget data as an uncertified heuristic, citing [2]).
        .. [2] E. Triantafillou, P. Kairouz, F. Pedregosa, J. Hayes, M. Kurmanji, K. Zhao, V. Dumoulin, et al., "Are We
           Making Progress in Unlearning? Findings from the First NeurIPS Unlearning Competition", arXiv 2406.09073,
           2024.
        """
        return Plan(_NO_CERTIFICATE)
