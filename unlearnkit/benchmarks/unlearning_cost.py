"""Benchmark: unlearning cost against retraining, for every registered method, on one common task.

The common task is the centralized quick profile (:func:`unlearnkit.experiments.centralized_setup`: sklearn
digits, an MLP, forget one class). It is trained once and offered to every runner as ``setup``. A row is
labelled with the common task only when its result shows that it unlearned that very model and request
(its original model's test accuracy and its request equal the common setup's); every other runner (one that
has its own profile: the noisy fine-tuning methods forget a planted backdoor, D2D/R2D have their own
models, the decentralized methods build a network of clients) is labelled with its own task: its profile,
dataset and request, as its result reports them. Costs of rows with different tasks do not compare.

Costs are on the axes of :class:`unlearnkit.core.Cost`: per-sample gradient evaluations (hardware
independent) and wall-clock seconds (this machine; see the report's machine block).
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any, Optional

from . import register_bench


COMMON_TASK = "digits MLP (quick profile), forget class 3"


def _row(name: str, task: str, res: dict[str, Any], wall: float) -> dict[str, Any]:
    cost = res.get("cost", {}) or {}
    metrics = res.get("metrics", {}) or {}
    cert = res.get("certificate") or {}

    def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
        return None if a is None or not b else float(a) / float(b)

    # the contract: epsilon only when certified (sound, finite); what a paper-mode certificate states is "claimed"
    g = res.get("guarantee") or {}
    eps = g.get("epsilon") if g.get("certified") else None
    return {
        "method": name,
        "task": task,
        "dataset": res.get("dataset"),
        "grad_evals": cost.get("grad_evals"),
        "retrain_grad_evals": cost.get("retrain_grad_evals"),
        "grad_evals_vs_retrain": ratio(cost.get("grad_evals"), cost.get("retrain_grad_evals")),
        "seconds": cost.get("seconds"),
        "retrain_seconds": cost.get("retrain_seconds"),
        "seconds_vs_retrain": ratio(cost.get("seconds"), cost.get("retrain_seconds")),
        "messages": cost.get("messages"),
        "epsilon": None if eps is None or (isinstance(eps, float) and not math.isfinite(eps)) else eps,
        "claimed_epsilon": cert.get("epsilon"),
        "mode": cert.get("mode") if cert else "none",
        "test_acc": metrics.get("test_acc"),
        "retrain_test_acc": metrics.get("retrain_test_acc"),
        "pipeline_seconds": wall,
    }


def _common_signature(state, request) -> tuple[float, str]:
    """What identifies the common set-up in a result: the original model's test accuracy and the request."""
    from ..evaluate import accuracy  # deferred: imports torch

    ds = state.dataset
    return accuracy(state.flat, state.params, ds.x_test, ds.y_test), request.describe()


def _task_of(res: dict[str, Any], common: tuple[float, str], label: str) -> str:
    """``label`` when ``res`` unlearned the common set-up, else the result's own task."""
    orig = (res.get("metrics") or {}).get("original_test_acc")
    if orig is not None and abs(float(orig) - common[0]) < 1e-9 and res.get("request") == common[1]:
        return label
    return f"own profile {res.get('profile')!r}: {res.get('dataset')}, {res.get('request')}"


def unlearning_cost_rows(*, seeds: tuple[int, ...] = (0,), methods: Optional[list[str]] = None,
                         profile: Any = "quick", task: str = COMMON_TASK,
                         progress: bool = False) -> list[dict[str, Any]]:
    """One row per registered method (median over ``seeds``): its cost and retraining's on the same request.

    ``profile`` is the common task (a name in ``experiments.CENTRAL_PROFILES`` or a ``CentralProfile``;
    ``task`` is its label in the rows of methods that ran on it; the others' ``task`` names their own).
    """
    from ..experiments import available_methods, centralized_setup  # deferred: imports torch

    specs = available_methods()
    names = list(specs) if methods is None else methods
    setups = {s: centralized_setup(profile, seed=s, progress=progress) for s in seeds}
    common = {s: _common_signature(*setups[s]) for s in seeds}
    rows: list[dict[str, Any]] = []
    for name in names:
        spec = specs[name]
        per_seed: list[dict[str, Any]] = []
        error = None
        for s in seeds:
            t0 = time.perf_counter()
            try:
                try:
                    res = spec.run("quick", seed=s, progress=progress, setup=setups[s])
                except TypeError:  # the runner has its own pipeline (e.g. a network of clients)
                    res = spec.run("quick", seed=s, progress=progress)
                where = _task_of(res, common[s], task)  # a runner may accept setup= and still ignore it
            except Exception as exc:  # a broken method must not hide the others' numbers
                error = f"{type(exc).__name__}: {exc}"
                break
            per_seed.append(_row(name, where, res, time.perf_counter() - t0))
        if error is not None or not per_seed:
            rows.append({"method": name, "task": "-", "error": error or "no run"})
            continue
        row = dict(per_seed[0])
        for key in ("grad_evals", "retrain_grad_evals", "grad_evals_vs_retrain", "seconds", "retrain_seconds",
                    "seconds_vs_retrain", "test_acc", "retrain_test_acc", "pipeline_seconds"):
            vals = [r[key] for r in per_seed if r.get(key) is not None]
            row[key] = statistics.median(vals) if vals else None
        row["seeds"] = len(per_seed)
        rows.append(row)
    return rows


@register_bench("unlearning_cost", description="unlearning vs retraining cost (grad evals, seconds) per method")
def _bench(*, quick: bool) -> list[dict[str, Any]]:
    return unlearning_cost_rows(seeds=(0,) if quick else (0, 1, 2))
