"""Descend or Rewind? (Mu & Klabjan 2025): the privacy-utility frontier of R2D and D2D against epsilon.

For one trained model of a :func:`~unlearnkit.experiments.descend_rewind.lab.central_profile`, the released
R2D and D2D models at each epsilon, in the paper's calibration and in the sound one, next to retraining,
fine-tuning and the original model. :func:`frontier_points` turns the rows into the points of
:func:`unlearnkit.viz.capstone.frontier_figure`; :func:`frontier_summary_rows` is the table beside it.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from ...runtime import make_generator
from ..._validate import check_choice
from ..seed_pool import check_seeds, pool_rows


#: the epsilon grid of the frontier (delta fixed)
FRONTIER_EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
#: the metrics of a frontier row that vary with the seed (pooled over seeds)
FRONTIER_METRICS = ("test_acc", "forget_acc", "backdoor_asr", "test_gap", "forget_gap", "asr_gap")


def _metrics(state, request, theta, backdoor) -> dict[str, float]:
    from ...evaluate import accuracy, backdoor_success  # deferred: imports torch

    ds = state.dataset
    xf, yf = ds.train_subset(request.indices)
    out = {"test_acc": accuracy(state.flat, theta, ds.x_test, ds.y_test),
           "forget_acc": accuracy(state.flat, theta, xf, yf)}
    if backdoor is not None:
        out["backdoor_asr"] = backdoor_success(state.flat, theta, backdoor)
    return out


def descend_rewind_frontier(profile: str = "quick", *, epsilons: Sequence[float] = FRONTIER_EPSILONS,
                            modes: Sequence[str] = ("paper", "sound"), K: Optional[int] = None,
                            delta: float = 1e-5, seed: int = 0, setup: Any = None,
                            seeds: Optional[Sequence[int]] = None) -> list[dict[str, Any]]:
    """Released test accuracy and forget-metric gap of R2D and D2D for each epsilon and mode.

    Trains once on ``profile`` (or takes ``setup=(state, request)``), retrains once, and runs R2D and D2D
    once each **without noise** (K unlearning steps; K defaults to the profile's). Their noise-free iterate
    does not depend on epsilon: the K steps draw their batches before the noise, so a run at any epsilon is
    this iterate plus ``N(0, sigma^2 I)`` with the sigma that :func:`~unlearnkit.methods.descend_rewind.
    r2d_certificate` / :func:`~unlearnkit.methods.descend_rewind.d2d_certificate` calibrate; here the noise of
    each row is drawn from its own seeded generator.

    Returns rows with ``method`` (``"R2D"``, ``"D2D"``, and the references ``"retrain"``, ``"finetune"``
    (K steps on the retain set, no certificate), ``"original"``), ``mode``, ``epsilon`` (``None`` for the
    references), ``sigma``, ``certified``, ``test_acc``, ``forget_acc``, ``backdoor_asr`` (backdoor requests),
    ``forget_gap`` (forget accuracy minus retraining's), ``asr_gap`` and ``test_gap`` (minus retraining's).
    D2D rows are left out when the profile's loss is not strongly convex (D2D has no certificate there).

    ``seeds``: the whole pipeline once per seed (``setup``, when given, serves the first), pooled by
    :func:`unlearnkit.experiments.seed_pool.pool_rows`: each metric is then the mean over the seeds, with the
    per-seed values in ``<metric>_seeds``.
    """
    if seeds is not None:
        seeds = check_seeds(seeds)
        runs = [descend_rewind_frontier(profile, epsilons=epsilons, modes=modes, K=K, delta=delta, seed=sd,
                                        setup=setup if i == 0 else None) for i, sd in enumerate(seeds)]
        return pool_rows(runs, seeds, by=("method", "calibration", "epsilon"), metrics=FRONTIER_METRICS)
    from ...methods.baselines import Finetune, FinetuneConfig, Retrain, RetrainConfig  # deferred: imports torch
    from ...methods.descend_rewind import D2D, R2D, D2DConfig, R2DConfig  # deferred: imports torch
    from ...methods.descend_rewind.r2d import add_output_noise, initial_norm, r2d_certificate  # deferred: imports torch
    from ...methods.descend_rewind.d2d import d2d_certificate  # deferred: imports torch
    from ..centralized import centralized_setup  # deferred: imports torch
    from .lab import PROFILE_K, central_profile, profile_constants  # deferred: imports torch

    for mode in modes:
        check_choice("mode", mode, ("paper", "sound"))
    K = PROFILE_K[profile] if K is None else int(K)
    state, request = setup if setup is not None else centralized_setup(central_profile(profile), seed=seed)
    c = profile_constants(profile, state, generator=make_generator(seed + 7))
    backdoor = state.extras.get("backdoor")
    cfg = state.config
    retain = request.retain(state.train_indices)
    n, m, r0 = len(state.train_indices), len(state.train_indices) - len(retain), initial_norm(state)
    retrained = Retrain().unlearn(state, request, RetrainConfig(), generator=make_generator(seed + 2)).params
    ref = _metrics(state, request, retrained, backdoor)

    def row(method: str, theta, **kw) -> dict[str, Any]:
        r = {"method": method, "mode": "none", "epsilon": None, "sigma": 0.0, "certified": False, "K": K, **kw,
             **_metrics(state, request, theta, backdoor)}
        r["test_gap"] = r["test_acc"] - ref["test_acc"]
        r["forget_gap"] = r["forget_acc"] - ref["forget_acc"]
        if backdoor is not None:
            r["asr_gap"] = r["backdoor_asr"] - ref["backdoor_asr"]
        return r

    ft = Finetune().unlearn(state, request, FinetuneConfig(steps=max(K, 1), lr=cfg.lr, weight_decay=cfg.weight_decay),
                            generator=make_generator(seed + 1)).params
    rows = [row("retrain", retrained, mode="sound", certified=True), row("finetune", ft),
            row("original", state.params)]
    methods = [("R2D", R2D(), R2DConfig(K=K, epsilon=None))]
    if c.regime == "strongly_convex":
        methods.append(("D2D", D2D(), D2DConfig(K=K, epsilon=None)))
    for i, (name, method, conf) in enumerate(methods):
        u = method.unlearn(state, request, conf, generator=make_generator(seed + 1)).params
        for mode in modes:
            for j, eps in enumerate(epsilons):
                if name == "R2D":
                    sigma, cert = r2d_certificate(R2DConfig(K=K, epsilon=eps, delta=delta, constants=c, mode=mode),
                                                  cfg, m=m, n=n, init_norm=r0)
                else:
                    sigma, cert = d2d_certificate(D2DConfig(K=K, epsilon=eps, delta=delta, constants=c, mode=mode),
                                                  cfg, m=m, n=n, d=state.params.numel(), init_norm=r0)
                theta = add_output_noise(u, sigma, make_generator(seed + 1000 * (i + 1) + j))
                rows.append(row(name, theta, mode=cert.mode, epsilon=float(eps), sigma=float(sigma),
                                certified=bool(cert.certified), calibration=mode))
    return rows


def smallest_working_epsilon(rows: Sequence[dict[str, Any]], *, method: str, calibration: str = "sound",
                             tolerance: float = 0.05) -> float:
    """The smallest epsilon of ``rows`` whose ``method`` row (``calibration`` mode, certified when sound) has
    test accuracy within ``tolerance`` of retraining's (``inf`` when none has)."""
    ok = [r["epsilon"] for r in rows if r["method"] == method and r.get("calibration") == calibration
          and (r["certified"] or calibration != "sound") and r["test_gap"] >= -tolerance]
    return min(ok) if ok else math.inf


def frontier_reference(rows: Sequence[dict[str, Any]], method: str) -> dict[str, Any]:
    """The row of the reference ``method`` (``"retrain"`` or ``"original"``) in a frontier's ``rows``."""
    found = [r for r in rows if r["method"] == method]
    if not found:
        raise ValueError(f"method={method!r} has no row: expected one of {sorted({r['method'] for r in rows})}")
    return found[0]


def frontier_points(rows: Sequence[dict[str, Any]], metric: str) -> list[dict[str, Any]]:
    """A frontier's rows as the points of :func:`unlearnkit.viz.capstone.frontier_figure` for ``metric``.

    R2D and D2D rows become ``{"method": "<method> (<calibration>)", "epsilon", metric}``; fine-tuning rows
    (no certificate) ``{"method": "finetune", "epsilon": None, metric}``, drawn as a reference line. A frontier
    pooled over seeds also gives each R2D/D2D point its ``<metric>_seeds`` (drawn as a band).
    """
    pts = [{"method": f"{r['method']} ({r['calibration']})", "epsilon": r["epsilon"], metric: r[metric],
            **({f"{metric}_seeds": r[f"{metric}_seeds"]} if f"{metric}_seeds" in r else {})}  # the band
           for r in rows if r["method"] in ("R2D", "D2D")]
    return pts + [{"method": "finetune", "epsilon": None, metric: r[metric]} for r in rows if r["method"] == "finetune"]


def frontier_summary_rows(rows: Sequence[dict[str, Any]], *, methods: Sequence[str] = ("R2D", "D2D"),
                          tolerance: float = 0.05) -> list[dict[str, Any]]:
    """The frontier in a few rows: the original and the retrained model, then each method's smallest epsilon.

    Returns
    -------
    list of dict
        ``model``, ``test_acc`` and ``forget_acc`` for ``original`` and ``retrain``; then per method of
        ``methods``, ``model`` and ``smallest sound epsilon`` (:func:`smallest_working_epsilon` within
        ``tolerance`` of retraining's test accuracy; ``inf`` when no epsilon of the grid is).
    """
    refs = [{"model": m, "test_acc": frontier_reference(rows, m)["test_acc"],
             "forget_acc": frontier_reference(rows, m)["forget_acc"]} for m in ("original", "retrain")]
    return refs + [{"model": m, "smallest sound epsilon": smallest_working_epsilon(rows, method=m, tolerance=tolerance)}
                   for m in methods]
