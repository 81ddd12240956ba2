"""Forgetting baselines run in chunks, with the metrics after every chunk (notebook 01's dashboard).

:func:`run_baseline_in_chunks` runs retraining, fine-tuning or gradient ascent on a forget request as
``chunks`` consecutive calls of the method class, each continuing from the previous chunk's model, and
records forget accuracy, test accuracy and membership-inference AUC (:func:`unlearnkit.evaluate.report`)
against the gradient evaluations spent so far. :func:`retrain_reference` is the target the curves are read
against: the model retrained without the forget set. The live figures are in
:class:`unlearnkit.viz.dashboard.ForgettingDashboard`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

import torch
from torch import Tensor

from ..._validate import DivergenceError, check_choice, check_finite_params, check_int, check_positive
from ...core import Request, Result, TrainedState
from ...evaluate import report
from ...methods.baselines import (Finetune, FinetuneConfig, GradientAscent, GradientAscentConfig, Retrain,
                                 RetrainConfig)
from ...train import SGDConfig
from ...core import MAX_SAMPLES, MAX_STEPS


BASELINE_NAMES = ("retrain", "finetune", "gradient_ascent")


def retrain_reference(state: TrainedState, request: Request, *, generator: torch.Generator) -> Tensor:
    """The parameters of the model retrained from scratch without ``request`` (the exact-unlearning target)."""
    return Retrain().unlearn(state, request, RetrainConfig(), generator=generator).params


def baseline_chunk(state: TrainedState, name: str, current: Tensor, request: Request, steps: int, lr: float, *,
                   generator: torch.Generator) -> Result:
    """``steps`` steps of the baseline ``name``, continuing from the parameters ``current``.

    Retraining continues its own run from ``current`` with the original training settings (learning rate,
    batch size, weight decay); fine-tuning and gradient ascent start from ``current`` with learning rate
    ``lr`` (gradient ascent without its early stop, so every chunk spends its steps).
    """
    check_choice("method", name, BASELINE_NAMES)
    if name == "retrain":
        train = SGDConfig(steps=steps, lr=state.config.lr, batch_size=state.config.batch_size,
                          weight_decay=state.config.weight_decay)
        st = state.replace(extras={**state.extras, "init": current})
        return Retrain().unlearn(st, request, RetrainConfig(train=train), generator=generator)
    st = state.replace(params=current)
    if name == "finetune":
        return Finetune().unlearn(st, request, FinetuneConfig(steps=steps, lr=lr), generator=generator)
    return GradientAscent().unlearn(st, request, GradientAscentConfig(max_steps=steps, lr=lr, stop_forget_acc=0.0),
                                    generator=generator)


def run_baseline_in_chunks(state: TrainedState, request: Request, name: str, *, steps: int, chunks: int,
                           lr: float, generator: torch.Generator,
                           on_chunk: Optional[Callable[[list[dict[str, float]]], Any]] = None) -> dict[str, Any]:
    """Run the baseline ``name`` for ``steps`` steps in ``chunks`` chunks, measuring after each.

    Retraining starts from the original initialisation (``state.extras["init"]``), the other baselines from
    the trained model. Every chunk draws from the same ``generator``, in order. ``on_chunk(history)`` is
    called with the history so far after the first measurement and after every chunk (for live plots).

    Returns
    -------
    dict
        ``history``: one row per measurement, ``{"grad_evals", "forget_acc", "test_acc", "mia_auc", ...}``
        (``chunks + 1`` rows, the first before any step); ``params``: the final model; ``grad_evals``: the
        gradient evaluations spent.

    Raises
    ------
    DivergenceError
        When a chunk's parameters become non-finite (e.g. ``lr = 1e30``): the message names the chunk, the
        learning rate and the method's own message; no metric is ever computed on non-finite parameters.
    """
    check_choice("method", name, BASELINE_NAMES)
    check_int("chunks", chunks, low=1, high=MAX_SAMPLES)
    check_int("steps", steps, low=1, high=MAX_STEPS)
    check_positive("lr", lr)
    ds, flat = state.dataset, state.flat
    current = state.extras["init"] if name == "retrain" else state.params
    per_chunk = max(1, steps // chunks)
    grad_evals = 0
    history = [{"grad_evals": 0, **report(flat, current, ds, request)}]
    if on_chunk is not None:
        on_chunk(history)
    for k in range(chunks):
        where = f"{name}, chunk {k + 1} of {chunks} (lr={lr!r}, after {grad_evals} gradient evaluations)"
        try:
            res = baseline_chunk(state, name, current, request, per_chunk, lr, generator=generator)
        except DivergenceError as exc:
            raise DivergenceError(f"{where}: {exc}") from exc
        current = check_finite_params(res.params, where=where)
        grad_evals += res.cost.grad_evals
        history.append({"grad_evals": grad_evals, **report(flat, current, ds, request)})
        if on_chunk is not None:
            on_chunk(history)
    return {"history": history, "params": current, "grad_evals": grad_evals}


def baseline_reports(state: TrainedState, request: Request, *, steps: int, generator: torch.Generator,
                     backdoor: Any = None) -> dict[str, Mapping[str, float]]:
    """The original model and each baseline run once to completion on ``request``, measured by :func:`report`.

    Retraining (its default configuration), fine-tuning for ``steps`` steps and gradient ascent (its default
    configuration, with its early stop) run in this order on the one ``generator``. With a ``backdoor`` (its
    trigger and target), the metrics include its success rate ``backdoor_asr``.

    Returns
    -------
    dict
        ``{"original", "retrain", "finetune", "gradient_ascent"}`` -> that model's metrics.
    """
    check_int("steps", steps, low=1, high=MAX_STEPS)
    runs = {
        "original": state.params,
        "retrain": Retrain().unlearn(state, request, generator=generator).params,
        "finetune": Finetune().unlearn(state, request, FinetuneConfig(steps=steps), generator=generator).params,
        "gradient_ascent": GradientAscent().unlearn(state, request, GradientAscentConfig(),
                                                    generator=generator).params,
    }
    return {k: report(state.flat, p, state.dataset, request, backdoor=backdoor) for k, p in runs.items()}
