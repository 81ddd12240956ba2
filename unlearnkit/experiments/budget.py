"""Equal-budget retraining: each registered method against retraining that spends the same gradient evaluations.

Full retraining is the exact reference; a method that is cheaper than it must also be compared with what the
same cost buys by retraining. For each method of :data:`unlearnkit.experiments.registry.METHODS` (its
``"quick"`` profile) and each seed, :func:`measure_seed` runs the method, reads the gradient evaluations its
unlearning spent (``cost["grad_evals"]``, per-sample gradients, :data:`~.contract.COST_UNIT`) and retrains on
the retained data (D minus D_f) with that many gradient evaluations, noise-free, from a data-independent start
drawn like the method's own:

- **centralized** methods (``retrain``, ``finetune``, ``gradient_ascent``, ``d2d``, ``r2d``, the clipping
  methods, ``output_perturbation``, ``dp_sgd``): a fresh initialisation of the released model's family
  (Kaiming-uniform from its own generator) and the profile's own training config (learning rate, weight decay,
  projection radius, sampling), for ``grad_evals / batch_size`` SGD steps, or ``grad_evals / n_retain`` steps
  when the profile trains full-batch;
- **token walks** (``rrdu``, ``ddp``, ``dp_sgd_walk``): the lab's retraining walk
  (:class:`~unlearnkit.methods.rrdu.baselines.RetrainWalk`, the training's initialisation, a fresh route) for
  the hops that spend the budget;
- **gossip** (``newton``: D-PSGD by :class:`~unlearnkit.methods.newton.training.GossipRetrain`; ``pdudt``:
  gradient gossip without the leaver from the zero start): the lab's retraining for the rounds that spend it.

The step count is ``round(full_steps * grad_evals / retrain_grad_evals)`` (at least one) for the walks and the
gossip, whose full retraining runs the same procedure at a constant cost per step; the equal-budget run's own
gradient evaluations are recorded beside the method's. Each measurement keeps the released test accuracy,
the equal-budget retraining's, their difference ``advantage``, full retraining's test accuracy, ``cost_saved``
(:func:`~.contract.cost_saved` against full retraining) and, for the clipping methods, the lab's
"from scratch" ablation (the same method started from zeros instead of the trained model:
``diagnostics["noise_only_reinit_model"]``).

:func:`summarize` turns the per-seed rows into one row per method with a 95 % t-interval over seeds
(:func:`t_interval`) and a :func:`label`; :func:`write_budget` writes ``data/budget_quick.json``, which
:func:`load_budget` and the capstone table read.
"""

from __future__ import annotations

import copy
import json
import math
import platform
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .._io import atomic_write_text, json_text
from .._validate import check_choice, check_int, check_range
from .contract import RELEASED_KEY, cost_saved, json_safe
from .registry import METHODS, get_method
from ..core import MAX_SEED, MAX_STEPS
from ..runtime import make_generator


_DATA = Path(__file__).resolve().parent / "data"
#: the committed per-seed measurements of every quick profile (regenerate with :func:`write_budget`)
BUDGET_PATH = _DATA / "budget_quick.json"
#: the seeds :func:`write_budget` measures by default
BUDGET_SEEDS = (0, 1, 2, 3, 4)

#: how each registered method's equal-budget retraining is run (the module docstring)
FAMILY: dict[str, str] = {
    "retrain": "central", "finetune": "central", "gradient_ascent": "central",
    "d2d": "descend_rewind", "r2d": "descend_rewind",
    "gradient_clipping": "noisy_finetune", "model_clipping": "noisy_finetune",
    "output_perturbation": "noisy_finetune", "dp_sgd": "noisy_finetune",
    "rrdu": "walk", "ddp": "walk", "dp_sgd_walk": "walk",
    "newton": "newton", "pdudt": "pdudt",
}

#: the reading of an advantage interval: above zero, containing zero, below zero
LABELS = {"better": "better than retraining with the same budget on this task",
          "same": "no better than retraining with the same budget on this task",
          "worse": "worse than retraining with the same budget on this task"}


def equal_steps(grad_evals: float, retrain_grad_evals: float, full_steps: int) -> int:
    """Steps of a procedure whose ``full_steps`` cost ``retrain_grad_evals`` that spend ``grad_evals``
    (rounded to the nearest step, at least one)."""
    check_int("full_steps", full_steps, low=1, high=MAX_STEPS)
    if not retrain_grad_evals or retrain_grad_evals <= 0:
        raise ValueError(f"retrain_grad_evals={retrain_grad_evals!r} is out of range: expected > 0")
    check_range("grad_evals", float(grad_evals), 0.0, math.inf)
    return max(1, int(round(full_steps * float(grad_evals) / float(retrain_grad_evals))))


def _train_config(name: str, profile: str = "quick"):
    """The SGD config of a centralized method's profile (what its full retraining runs)."""
    from .centralized import CENTRAL_PROFILES  # deferred: imports torch
    from .descend_rewind.lab import central_profile  # deferred: imports torch
    from .noisy_finetune.lab import nf_profile  # deferred: imports torch

    fam = FAMILY[name]
    if fam == "central":
        return CENTRAL_PROFILES[profile].train
    if fam == "descend_rewind":
        return central_profile(profile).train
    return nf_profile(profile).train


def _central_budget(name: str, released: Any, grad_evals: int, seed: int, profile: str = "quick") -> dict[str, Any]:
    """SGD from a fresh initialisation on the retained rows of the released run's dataset."""

    from ..evaluate import accuracy  # deferred: imports torch
    from ..models import init_from_generator  # deferred: imports torch
    from ..train import run_sgd  # deferred: imports torch

    ds, request = released.dataset, released.request
    x, y = ds.train_subset(request.retain(np.arange(ds.n_train)))
    cfg = _train_config(name, profile)
    per_step = x.shape[0] if cfg.sampling == "full" else cfg.batch_size
    steps = max(1, int(round(grad_evals / per_step)))
    flat = copy.deepcopy(released.flat)  # a fresh draw of the same family; the run's own flat stays as it is
    gen = make_generator(seed + 3)
    init_from_generator(flat.module, gen)
    init = flat.init().to(x.device)
    theta, cost, _ = run_sgd(flat, init, x, y, replace(cfg, steps=steps, checkpoint_every=0), generator=gen)
    return {"procedure": f"SGD from a fresh init ({'full batch' if cfg.sampling == 'full' else f'batch {per_step}'}"
                         f", lr {cfg.lr:g}, weight decay {cfg.weight_decay:g})",
            "steps": steps, "full_steps": cfg.steps, "grad_evals": int(cost.grad_evals),
            "test_acc": accuracy(flat, theta, ds.x_test, ds.y_test)}


def _walk_budget(grad_evals: int, retrain_grad_evals: int, seed: int) -> dict[str, Any]:
    from ..methods.rrdu.baselines import RetrainWalk  # deferred: imports torch
    from .rrdu.lab import RRDU_PROFILES, build_world  # deferred: imports torch

    setup = RRDU_PROFILES["quick"]
    world = build_world(setup, seed=seed, retrain=False)
    hops = equal_steps(grad_evals, retrain_grad_evals, setup.T_train)
    res = RetrainWalk().unlearn(world.original.replace(federation=world.federation), world.request,
                                setup.walk_config(hops, seed + 3), generator=make_generator(seed + 3))
    return {"procedure": f"token-walk retraining ({setup.optimizer}, lr {setup.lr:g}, the training's init)",
            "steps": hops, "full_steps": setup.T_train, "grad_evals": int(res.cost.grad_evals),
            "test_acc": world.metrics(res.params)["clean_acc"]}


def _newton_budget(grad_evals: int, retrain_grad_evals: int, seed: int) -> dict[str, Any]:
    from ..evaluate import accuracy, consensus  # deferred: imports torch
    from ..methods.newton.training import GossipRetrain, GossipRetrainConfig  # deferred: imports torch
    from .newton.frontier import frontier_world  # deferred: imports torch
    from .newton.lab import NEWTON_PROFILES  # deferred: imports torch

    prof = NEWTON_PROFILES["quick"]
    s = replace(prof.sound_setting, n_clients=prof.n_clients, seed=seed)
    w = frontier_world(s)
    rounds = equal_steps(grad_evals, retrain_grad_evals, s.rounds)
    res = GossipRetrain().unlearn(w["state"], w["request"], GossipRetrainConfig(rounds=rounds),
                                  generator=make_generator(seed + 3))
    ds = w["dataset"]
    return {"procedure": f"D-PSGD retraining (lr {s.lr:g}, weight decay {s.weight_decay:g}, the training's init)",
            "steps": rounds, "full_steps": s.rounds, "grad_evals": int(res.cost.grad_evals),
            "test_acc": accuracy(w["flat"], consensus(res.params), ds.x_test, ds.y_test)}


def _pdudt_budget(grad_evals: int, retrain_grad_evals: int, seed: int, profile: str = "quick",
                  overrides: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    from ..decentral.gradient_gossip import GradientGossipConfig, run_gradient_gossip  # deferred: imports torch
    from ..evaluate import accuracy  # deferred: imports torch
    from .pdudt.frontier import CERTIFIED_PROFILES, CertifiedPDUDT, certified_world  # deferred: imports torch

    exp = CertifiedPDUDT(**{**CERTIFIED_PROFILES[profile], "seed": seed, **dict(overrides or {})})
    w = certified_world(exp)
    rounds = equal_steps(grad_evals, retrain_grad_evals, exp.t1)
    cfg = GradientGossipConfig(rounds=rounds, lr=exp.lr, batch_size=exp.batch_size, local_steps=exp.local_steps,
                               cache="none", retrain_rule=exp.retrain_rule)
    st = run_gradient_gossip(w["flat"], w["federation"], w["schedule"], cfg, generator=make_generator(seed + 3),
                             init=w["theta0"], exclude=exp.leaver)
    keep = [i for i in range(exp.n_clients) if i != exp.leaver]
    ds = w["dataset"]
    return {"procedure": f"gradient-gossip retraining without the leaver (lr {exp.lr:g}, zero start)",
            "steps": rounds, "full_steps": exp.t1, "grad_evals": int(st.cost.grad_evals),
            "test_acc": accuracy(w["flat"], st.params[keep].mean(0), ds.x_test, ds.y_test)}


def budget_retrain(name: str, seed: int, result: Mapping[str, Any], *, profile: str = "quick",
                   overrides: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """The equal-budget retraining of one run ``result`` of method ``name`` (run with ``return_released=True``
    on ``profile``; ``overrides``: the settings PDUDT's run changed): ``{"procedure", "steps", "full_steps",
    "grad_evals", "test_acc"}``. The walks and Newton use their quick profile."""
    check_choice("name", name, tuple(FAMILY))
    cost = result["cost"]
    ge, rge = int(cost["grad_evals"]), int(cost["retrain_grad_evals"])
    fam = FAMILY[name]
    if fam in ("central", "descend_rewind", "noisy_finetune"):
        return _central_budget(name, result[RELEASED_KEY], ge, seed, profile)
    if fam == "walk":
        return _walk_budget(ge, rge, seed)
    if fam == "newton":
        return _newton_budget(ge, rge, seed)
    return _pdudt_budget(ge, rge, seed, profile, overrides)


def measure_seed(name: str, seed: int, *, profile: str = "quick", **overrides: Any) -> dict[str, Any]:
    """One method on one seed: the released model against its equal-budget retraining (module docstring).
    ``profile`` and ``overrides`` (keyword settings of PDUDT's runner) choose another regime."""
    check_choice("name", name, tuple(FAMILY))
    check_int("seed", seed, low=0, high=MAX_SEED)
    if overrides and FAMILY[name] != "pdudt":
        raise ValueError(f"overrides={sorted(overrides)!r}: only PDUDT's runner takes settings here")
    if profile != "quick" and FAMILY[name] in ("walk", "newton"):
        raise ValueError(f"profile={profile!r}: the walks' and Newton's equal-budget retraining runs 'quick'")
    t0 = time.perf_counter()
    res = get_method(name).run(profile, seed=seed, progress=False, return_released=True, **overrides)
    run_seconds = time.perf_counter() - t0
    ref = budget_retrain(name, seed, res, profile=profile, overrides=overrides)
    m, cost = res["metrics"], res["cost"]
    row = {"method": name, "seed": seed, "test_acc": float(m["test_acc"]),
           "retrain_test_acc": float(m["retrain_test_acc"]), "budget_test_acc": float(ref["test_acc"]),
           "advantage": float(m["test_acc"]) - float(ref["test_acc"]),
           "grad_evals": int(cost["grad_evals"]), "retrain_grad_evals": int(cost["retrain_grad_evals"]),
           "budget_grad_evals": ref["grad_evals"], "budget_steps": ref["steps"], "full_steps": ref["full_steps"],
           "procedure": ref["procedure"],
           "cost_saved": cost_saved(cost["grad_evals"], cost["retrain_grad_evals"]),
           "certified": bool(res["guarantee"]["certified"]),
           "backdoor_asr": m.get("backdoor_asr"), "retrain_backdoor_asr": m.get("retrain_backdoor_asr"),
           "original_backdoor_asr": m.get("original_backdoor_asr"),
           "run_seconds": run_seconds, "budget_seconds": time.perf_counter() - t0 - run_seconds}
    scratch = (res.get("diagnostics") or {}).get("noise_only_reinit_model")
    if scratch:  # the lab's ablation: the same method from zeros instead of the trained model
        row["from_scratch_test_acc"] = float(scratch["test_acc"])
    return json_safe(row)


def measure_budget(methods: Optional[Sequence[str]] = None, *, seeds: Sequence[int] = BUDGET_SEEDS
                   ) -> dict[str, Any]:
    """Every method (default: all registered) on every seed: ``{"meta", "per_seed": {name: [row, ...]}}``."""
    names = tuple(s.name for s in METHODS) if methods is None else tuple(methods)
    for n in names:
        check_choice("methods", n, tuple(FAMILY))
    seeds = tuple(check_int("seeds", s, low=0, high=MAX_SEED) for s in seeds)
    t0 = time.perf_counter()
    per_seed = {n: [measure_seed(n, s) for s in seeds] for n in names}
    try:
        load = Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3]
    except OSError:
        load = None
    meta = {"profile": "quick", "seeds": list(seeds), "seconds": time.perf_counter() - t0,
            "machine": f"{platform.machine()}, {platform.processor() or platform.system()}",
            "loadavg": load, "measured_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    return {"meta": meta, "per_seed": per_seed}


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the Student-t interval for the mean of ``values`` (at least two)."""
    from scipy import stats  # deferred: imports scipy.stats

    vals = [float(v) for v in values]
    if len(vals) < 2:
        raise ValueError(f"values has {len(vals)} entries: a t-interval needs at least 2")
    check_range("level", level, 0.0, 1.0)
    n = len(vals)
    mean = sum(vals) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def label(low: float, high: float) -> str:
    """``"better"`` (interval above zero), ``"worse"`` (below) or ``"same"`` (contains zero): keys of
    :data:`LABELS`."""
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    return "same"


def summarize(per_seed: Mapping[str, Sequence[Mapping[str, Any]]], *, level: float = 0.95) -> list[dict[str, Any]]:
    """One row per method (registry order): means and t-intervals over seeds of the released, equal-budget and
    full retraining test accuracy and of ``advantage``, its ``label`` and ``reading``, ``cost_saved``."""
    order = [s.name for s in METHODS]
    rows = []
    for name in sorted(per_seed, key=lambda n: order.index(n) if n in order else len(order)):
        runs = list(per_seed[name])
        out: dict[str, Any] = {"method": name, "n_seeds": len(runs), "seeds": [r["seed"] for r in runs]}
        for key in ("test_acc", "budget_test_acc", "retrain_test_acc", "advantage", "from_scratch_test_acc"):
            vals = [r[key] for r in runs if r.get(key) is not None]
            if len(vals) >= 2:
                mean, lo, hi = t_interval(vals, level)
                out[key] = {"mean": mean, "low": lo, "high": hi}
        adv = out["advantage"]
        out["label"] = label(adv["low"], adv["high"])
        out["reading"] = LABELS[out["label"]]
        saved = [r["cost_saved"] for r in runs if r.get("cost_saved") is not None]
        out["cost_saved"] = sum(saved) / len(saved) if saved else None
        out["budget_steps"] = sorted({r["budget_steps"] for r in runs})
        out["full_steps"] = runs[0]["full_steps"]
        out["procedure"] = runs[0]["procedure"]
        out["certified"] = all(r["certified"] for r in runs)
        rows.append(out)
    return rows


def write_budget(path: str | Path = BUDGET_PATH, *, seeds: Sequence[int] = BUDGET_SEEDS, note: str = "") -> Path:
    """Measure every registered method on ``seeds`` and write the committed JSON (per-seed rows and summary)."""
    data = measure_budget(seeds=seeds)
    data["meta"]["note"] = note or "measured by unlearnkit.experiments.budget.write_budget"
    data["summary"] = summarize(data["per_seed"])
    return atomic_write_text(path, json_text(data, indent=1, ensure_ascii=False) + "\n")


def load_budget(path: str | Path = BUDGET_PATH) -> dict[str, Any]:
    """The committed measurements (``{"meta", "per_seed", "summary"}``); ``FileNotFoundError`` names the way out."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"path={str(p)!r}: no equal-budget measurements; run "
                                "unlearnkit.experiments.budget.write_budget()")
    return json.loads(p.read_text(encoding="utf-8"))


def budget_rows(data: Optional[Mapping[str, Any]] = None) -> dict[str, dict[str, Any]]:
    """The summary rows by method, recomputed from the per-seed rows of ``data`` (default: the committed file)."""
    data = load_budget() if data is None else data
    return {r["method"]: r for r in summarize(data["per_seed"])}


def markdown_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """``summarize`` rows as the Markdown table of ``docs/frontiers/budget.md``: method, released test accuracy,
    equal-budget retraining's, full retraining's (means [95 % CI]), advantage [CI], label, cost saved, steps."""
    def ci(r: Mapping[str, Any], key: str) -> str:
        v = r.get(key)
        return "-" if not v else f"{v['mean']:.3f} [{v['low']:.3f}, {v['high']:.3f}]"

    lines = ["| method | released test acc | equal-budget retraining | full retraining | advantage [95 % CI] | "
             "label | cost saved | steps: budget / full |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        adv = r["advantage"]
        steps = "/".join(str(s) for s in r["budget_steps"])
        saved = "-" if r.get("cost_saved") is None else f"{r['cost_saved']:.3f}"
        lines.append(f"| {r['method']} | {ci(r, 'test_acc')} | {ci(r, 'budget_test_acc')} | "
                     f"{ci(r, 'retrain_test_acc')} | {adv['mean']:+.3f} [{adv['low']:+.3f}, {adv['high']:+.3f}] | "
                     f"{r['reading']} | {saved} | {steps} / {r['full_steps']} |")
    return "\n".join(lines) + "\n"
