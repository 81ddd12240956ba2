"""Per-example forgetting scores (the NeurIPS 2023 competition's metric) of R2D on the toy task, vectorised.

Many unlearned models (train on D, unlearn with the method: the batched world A of
:mod:`unlearnkit.experiments.audits.vectorised`) and many retrained models (retrain on D minus D_f, no noise), at least 256 of each;
each forgotten example's margin under every model; :func:`unlearnkit.audit.forgetting.forgetting_score`
gives the score with a bootstrap interval, next to the method's certified epsilon. Rows:

- ``r2d_full_rewind``: R2D with K = T is exact retraining (the control: the score's ceiling at this many
  models, below 1 only because the best of many thresholds overstates epsilon on finite samples);
- ``r2d`` in sound and paper mode: certified (eps, 1e-5);
- ``r2d_no_noise``: the same rewind and replay without the output noise (no certificate).

The competition compares with *plain* retraining; a noise certificate promises closeness to retraining
*plus the same noise*, so every row also scores the unlearned models against the certifier's output
(``score_vs_certifier``). The two disagree exactly when the noise is large against the margins.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import torch

from ..._validate import check_int
from ...audit.forgetting import forgetting_score, score_interval
from .recipes import ToyTask, toy_setup
from .vectorised import vectorised_worlds
from ...core import MAX_REPEATS, MAX_TRIALS
from ...runtime import make_generator


FORGETTING_RUNS = (("r2d_full_rewind", "sound", 1.0), ("r2d", "sound", 1.0), ("r2d", "paper", 1.0),
                   ("r2d_no_noise", "sound", 0.0))
"""``(label, mode, noise_scale)`` of each row: ``noise_scale`` multiplies the method's sigma (0: no noise)."""


def _margins(flat, params: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """``(n_models, m)`` label-signed logits of the forgotten examples under each model."""
    sign = (2.0 * y.double() - 1.0).reshape(1, -1)
    with torch.no_grad():
        logits = torch.vmap(lambda t: flat.forward(t, x).reshape(-1))(params.to(x.dtype))
    return (logits.double() * sign).numpy()


def forgetting_scores(*, n_models: int = 256, n_repeats: int = 8, epsilon: float = 1.0, delta: float = 1e-5,
                      seed: int = 0, task: ToyTask | None = None) -> list[dict[str, Any]]:
    """One row per :data:`FORGETTING_RUNS` entry: ``method``, ``mode``, ``certified_epsilon`` (inf when not
    certified), ``score`` (mean over ``n_repeats`` independent repetitions, each with ``n_models`` fresh
    unlearned and ``n_models`` fresh retrained models), ``ci_low``/``ci_high`` (95 % Student-t),
    ``mean_example_epsilon``, ``n_models``, ``seconds``, and ``score_vs_certifier`` (with its interval): the same
    score with the certifier's output (retraining plus the method's noise) in place of plain retraining."""


    n_models = check_int("n_models", n_models, low=16, high=MAX_TRIALS)
    n_repeats = check_int("n_repeats", n_repeats, low=2, high=MAX_REPEATS)
    task = task or ToyTask()
    flat, ds, request, _, _ = toy_setup(task)
    x_f, y_f = ds.train_subset(request.indices)
    g = make_generator(seed)
    _, retrain_b, _ = vectorised_worlds("retrain", task=task)
    rows = []
    for label, mode, scale in FORGETTING_RUNS:
        method = "r2d" if label == "r2d_no_noise" else label
        t0 = time.perf_counter()
        world_a, world_b, cert = vectorised_worlds(method, mode, epsilon=epsilon, delta=delta, task=task,
                                                   noise_scale=scale)
        scores, eps, vs_cert = [], [], []
        for _ in range(n_repeats):
            retrained = _margins(flat, retrain_b(n_models, g).float(), x_f, y_f)
            unlearned = _margins(flat, world_a(n_models, g).float(), x_f, y_f)
            fs = forgetting_score(unlearned, retrained)
            scores.append(fs["score"])
            eps.append(fs["example_epsilons"])
            # the same score against the certifier's own output (retraining plus the same noise): what the
            # certificate actually promises to be close to
            vs_cert.append(forgetting_score(unlearned, _margins(flat, world_b(n_models, g).float(), x_f, y_f))["score"])
        mean, lo, hi = score_interval(scores)
        mc, lc, hc = score_interval(vs_cert)
        certified = (cert is not None and scale == 1.0 and cert.mode != "none" and math.isfinite(cert.epsilon))
        rows.append(dict(kind="forgetting", method=label, mode=mode, n_models=n_models, n_repeats=n_repeats,
                         certified_epsilon=float(cert.epsilon) if certified else math.inf,
                         certificate_mode=cert.mode if certified else "none", score=mean, ci_low=lo, ci_high=hi,
                         mean_example_epsilon=float(np.mean(eps)), score_vs_certifier=mc,
                         ci_low_vs_certifier=lc, ci_high_vs_certifier=hc, seconds=time.perf_counter() - t0))
    return rows


def forgetting_bench_rows(*, quick: bool = False) -> list[dict[str, Any]]:
    """:func:`forgetting_scores` with 256 models per side and 8 repetitions (quick: 64 models, 3 repetitions)."""
    return forgetting_scores(n_models=64 if quick else 256, n_repeats=3 if quick else 8)
