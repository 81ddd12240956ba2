"""Preprocessing that is public: maps whose constants come from the loader's documented feature range,
never from the training rows, so a forget request cannot move them (the certificates' neighbouring relation
covers them: the pipeline run on D minus the forget set applies the same map)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .datasets import Dataset


def unit_ball_map(dataset: Dataset, *, center: bool = False) -> tuple[float, float]:
    """The data-independent affine map ``x -> (x - c) / B`` of :func:`scale_to_unit_ball`, as ``(c, B)``.

    ``c`` is the midpoint of the dataset's public feature range ``info["feature_range"] = (lo, hi)`` (the
    range the loader's scaling puts every possible row in: ``(0, 1)`` for pixel images) when ``center`` is
    true, else 0; ``B = sqrt(D) * max(hi - c, c - lo)`` is the largest norm any row of ``D`` features in that
    range can have after centring. Neither reads a training row, so removing rows (a forget request) leaves
    the map unchanged: the certificates that assume ``||x|| <= 1`` cover the preprocessing too.
    A dataset already in the unit ball by construction (``info["max_norm"] <= 1`` and no range: the synthetic
    loader) maps with ``c = 0, B = 1``.

    Raises
    ------
    ValueError
        The dataset has no public feature range (e.g. CIFAR-10, standardised with its training statistics)
        or ``center`` is asked of a dataset without one.
    """
    info = dataset.info or {}
    rng = info.get("feature_range")
    if rng is None:
        if not center and float(info.get("max_norm", math.inf)) <= 1.0:
            return 0.0, 1.0
        raise ValueError(f"dataset {dataset.name!r} has no public feature range (info['feature_range'] is missing): "
                         "a data-independent unit-ball map needs one; expected a loader that records "
                         "feature_range=(lo, hi) (digits, mnist) or rows already in the unit ball (synthetic)")
    lo, hi = float(rng[0]), float(rng[1])
    c = 0.5 * (lo + hi) if center else 0.0
    dim = int(np.prod(dataset.input_shape))
    return c, math.sqrt(dim) * max(hi - c, c - lo)


def scale_to_unit_ball(dataset: Dataset, *, center: bool = False) -> Dataset:
    """Map every row into the unit ball with a *public* affine map, ``x -> (x - c) / B``
    (:func:`unit_ball_map`): the midpoint of the public feature range (with ``center=True``) and the largest
    norm a row in that range can have, never a statistic of the training rows.

    So the neighbouring relation of every certificate built on ``||x|| <= 1`` covers the preprocessing: the
    pipeline run on D minus a forget set applies the same map. Test rows get the same map, then a per-row
    clip to the unit ball (a no-op for rows inside the public range). ``info`` records ``max_norm = 1``,
    ``unit_ball_scale = B`` and ``unit_ball_center = c``.
    """
    c, scale = unit_ball_map(dataset, center=center)
    x_tr = (dataset.x_train - c) / scale
    x_te = (dataset.x_test - c) / scale
    norms = x_te.reshape(dataset.n_test, -1).norm(dim=1).clamp_min(1.0)
    x_te = x_te / norms.view(-1, *([1] * (x_te.dim() - 1)))
    n_tr = x_tr.reshape(dataset.n_train, -1).norm(dim=1)
    if dataset.n_train and float(n_tr.max()) > 1.0 + 1e-5:
        raise ValueError(f"dataset {dataset.name!r}: a training row has norm {float(n_tr.max()):.4g} after the public "
                         f"map (c={c:.4g}, B={scale:.4g}): its features leave info['feature_range']="
                         f"{dataset.info.get('feature_range')}, expected every row inside it")
    return replace(dataset, x_train=x_tr, x_test=x_te,
                   info={**dataset.info, "max_norm": 1.0, "unit_ball_scale": scale, "unit_ball_center": c,
                         "unit_ball_map": "public: (x - c) / B from the feature range, no training statistic"})
