"""Every centralized method on one task under one (epsilon, delta): the capstone's table and frontier.

One convex task (binary logistic regression on ``synthetic`` data with ``||x|| <= 1``, so the certificates'
constants are analytic), trained **once**; retraining without the forget set is run once as the reference;
then every method unlearns the same trained model for each target epsilon, and is evaluated with
:func:`unlearnkit.evaluate.report` against that one retrained model. Costs come from each method's
:class:`~unlearnkit.core.Cost`, so unlearning and retraining compare on the same axes.

The decentralized methods (RR-DU, Newton/Fisher, PDUDT) certify a network of clients (views, the average
model) and are compared through ``python -m unlearnkit reproduce``; they are not points of this frontier.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from .. import data as D
from .._validate import check_choice, check_int, check_positive, check_probability
from ..core import MAX_DIM, MAX_SAMPLES, MAX_STEPS, Request
from ..runtime import make_generator


CERTIFIED = ("d2d", "r2d", "noisy_finetune_gc", "output_perturbation")
BASELINES = ("retrain", "finetune", "gradient_ascent")


@dataclass(frozen=True, kw_only=True)
class CapstoneTask:
    """The common task: sizes of the synthetic data, the forget set and the (projected) SGD training."""

    n_train: int = 400
    n_test: int = 400
    dim: int = 10
    m: int = 20
    weight_decay: float = 0.05
    steps: int = 150
    lr: float = 0.5
    batch_size: int = 32
    radius: float = 10.0
    data_seed: int = 0

    def __post_init__(self) -> None:
        check_int("n_train", self.n_train, low=10, high=MAX_SAMPLES)
        check_int("n_test", self.n_test, low=10, high=MAX_SAMPLES)
        check_int("dim", self.dim, low=1, high=MAX_DIM)
        check_int("m", self.m, low=1, high=self.n_train // 2)
        check_positive("weight_decay", self.weight_decay)
        check_int("steps", self.steps, low=2, high=MAX_STEPS)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1, high=MAX_SAMPLES)
        check_positive("radius", self.radius)


def _setup(task: CapstoneTask, seed: int, progress: bool):
    from ..constants import logistic_constants  # deferred: imports torch
    from ..models import FlatParams, make_model  # deferred: imports torch
    from ..train import SGDConfig, train_sgd  # deferred: imports torch

    ds = D.load("synthetic", device="cpu", seed=task.data_seed, n_train=task.n_train, n_test=task.n_test,
                dim=task.dim)
    gen = make_generator(seed)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, generator=gen), loss="logistic")
    sgd = SGDConfig(steps=task.steps, lr=task.lr, batch_size=task.batch_size, weight_decay=task.weight_decay,
                    radius=task.radius, checkpoint_every=1)
    state = train_sgd(flat, ds, None, sgd, generator=gen, progress=progress)
    rng = np.random.default_rng(seed)
    request = Request("samples", rng.choice(ds.n_train, size=task.m, replace=False))
    consts = logistic_constants(lam=task.weight_decay, radius=task.radius, bias=True)
    return state, request, consts


def _point(name: str, res: Any, state: Any, request: Any, retrained: Any, *, requested: Optional[float],
           mode: str) -> dict[str, Any]:
    from ..evaluate import report  # deferred: imports torch

    metrics = report(state.flat, res.params, state.dataset, request, retrained=retrained.params,
                     original=state.params, train_indices=state.train_indices)
    cert = res.certificate
    eps = None
    if cert is not None and cert.mode != "none" and math.isfinite(cert.epsilon):
        eps = float(cert.epsilon)
    return {"method": name, "epsilon": eps, "requested_epsilon": requested, "mode": mode if cert else "none",
            "delta": None if cert is None else float(cert.delta),
            "sigma": None if cert is None or cert.sigma is None else float(cert.sigma),
            **{k: metrics.get(k) for k in ("test_acc", "forget_acc", "mia_auc", "dist_to_retrain")},
            "grad_evals": int(res.cost.grad_evals), "seconds": float(res.cost.seconds),
            "retrain_grad_evals": int(retrained.cost.grad_evals), "retrain_seconds": float(retrained.cost.seconds)}


def capstone_points(*, epsilons: Sequence[float] = (0.5, 1.0, 2.0, 5.0), delta: float = 1e-5, mode: str = "sound",
                    methods: Optional[Sequence[str]] = None, task: CapstoneTask | None = None, seed: int = 0,
                    progress: bool = False) -> dict[str, Any]:
    """Run every method at every target epsilon on the common task.

    Returns ``{"points": [...], "retrain": {metric: value}, "skipped": {method: reason}, "task": ...}``;
    a point is ``{"method", "epsilon" (certified; None for heuristics), "requested_epsilon", "mode",
    "test_acc", "forget_acc", "mia_auc", "dist_to_retrain", "grad_evals", "retrain_grad_evals", "seconds",
    "retrain_seconds", "sigma", "delta"}``. Baselines run once (they take no epsilon); retraining is the
    exact reference (epsilon = 0, drawn at the left end of the frontier as a line).
    """
    from ..experiments.audits.recipes import METHOD_RECIPES, ModeNotSupported  # deferred: imports torch
    from ..methods.baselines import (Finetune, FinetuneConfig, GradientAscent, GradientAscentConfig, Retrain,
                                     RetrainConfig)  # deferred: imports torch

    task = task or CapstoneTask()
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_choice("mode", mode, ("paper", "sound"))
    if not epsilons:
        raise ValueError("epsilons is empty: give at least one target epsilon")
    for e in epsilons:
        check_positive("epsilon", e)
    names = tuple(methods) if methods is not None else BASELINES + CERTIFIED
    for n in names:
        check_choice("method", n, BASELINES + CERTIFIED)
    state, request, consts = _setup(task, seed, progress)
    retrained = Retrain().unlearn(state, request, RetrainConfig(), generator=make_generator(seed + 1))
    points: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    baselines = {"retrain": (Retrain(), RetrainConfig()),
                 "finetune": (Finetune(), FinetuneConfig(steps=max(task.steps // 4, 1), lr=task.lr)),
                 "gradient_ascent": (GradientAscent(), GradientAscentConfig())}
    for name in names:
        if name in baselines:
            obj, cfg = baselines[name]
            res = retrained if name == "retrain" else obj.unlearn(state, request, cfg, generator=make_generator(seed + 2))
            pt = _point(name, res, state, request, retrained, requested=None, mode="exact" if name == "retrain" else "none")
            if name == "retrain":
                pt["epsilon"] = 0.0
            points.append(pt)
            continue
        for i, eps in enumerate(epsilons):
            try:
                fn, cfg, _ = METHOD_RECIPES[name](mode, float(eps), delta, task, consts)
                res = fn(state, request, cfg, generator=make_generator(seed + 10 + i))
            except ValueError as exc:  # only a mode the method cannot run is skipped; other errors raise
                if not (isinstance(exc, ModeNotSupported) or str(exc).startswith("mode=")):
                    raise
                skipped[name] = f"{type(exc).__name__}: {exc}"
                break
            points.append(_point(name, res, state, request, retrained, requested=float(eps), mode=mode))
    ref = _point("retrain", retrained, state, request, retrained, requested=None, mode="exact")
    return {"points": points, "retrain": {k: ref[k] for k in ("test_acc", "forget_acc", "mia_auc", "dist_to_retrain")},
            "skipped": skipped, "task": task, "mode": mode, "delta": delta, "request": request.describe()}


def capstone_seed_points(run: dict[str, Any], seeds: Sequence[int], *, seed: int, epsilons: Sequence[float],
                         methods: Optional[Sequence[str]] = None, progress: bool = False) -> list[dict[str, Any]]:
    """The points of ``run`` and of the same runs on the other ``seeds``, each tagged with its seed.

    ``run`` is :func:`capstone_points`' result on seed ``seed``; every seed of ``seeds`` other than ``seed`` runs
    :func:`capstone_points` again with the run's task, mode and delta and the given ``epsilons`` and ``methods``
    (which must be the run's own). The frontier draws their range over the seeds as a band.

    Returns
    -------
    list of dict
        ``run``'s points, then each other seed's in the order of ``seeds``; every point carries ``seed``.
    """
    points = [dict(p, seed=seed) for p in run["points"]]
    for s in seeds:
        if s != seed:
            other = capstone_points(epsilons=epsilons, delta=run["delta"], mode=run["mode"], methods=methods,
                                    task=run["task"], seed=s, progress=progress)
            points += [dict(p, seed=s) for p in other["points"]]
    return points
