"""RR-DU's privacy-forgetting frontier: backdoor success and clean accuracy against epsilon, at equal epsilon for
RR-DU, DDP, DP-SGD on the walk and fine-tuning, with retraining as the line to reach.

Two families of runs share one :class:`~unlearnkit.experiments.rrdu.lab.BackdoorWorld` (the quick profile by
default: digits, N = 10, m = 60 poisoned samples at u = 0):

- **Sound** (``mode="sound"``, the only ones whose epsilon is a guarantee; threat model in
  :mod:`unlearnkit.methods.rrdu.sound`). A certified unlearning of client u's data must cover the gap between the
  start models A(D) and A(D minus D_f) (digest P15); the package covers it by training the original with
  client-level Gaussian noise on every clipped local step (:class:`~unlearnkit.methods.rrdu.NoisyWalkTraining`).

  * ``"rrdu_exact"``, ``"rrdu_light"`` (:data:`SOUND_METHODS`): noisy training that spends the share ``split``
    of the budget ``(epsilon, delta)`` (:func:`split_train_sigma`; all of it for the exact variant, whose u-steps
    read no D_f), then RR-DU (SGD) whose u-step noise spends the rest under the sound accountant
    ``"M"`` (default: exact Gaussian composition averaged over the random visit count; threat model in
    :mod:`unlearnkit.methods.rrdu.mixture`: the route is drawn independently of the data) or ``"S"`` (visit count
    capped at its quantile, exact GDP; ``composition="rdp"`` keeps the former RDP calibration). The certificate is RR-DU's own, never above ``epsilon``.
  * ``"ddp"``: the DDP baseline done right: noisy training at ``(epsilon, delta)``, then the same noisy walk
    continued on D minus D_f for ``T_unlearn`` hops (:class:`~unlearnkit.methods.rrdu.NoisyDDP`: post-processing).

- **Paper calibrations** on the noise-free original (``mode`` ``"paper"`` or ``"none"``, ``epsilon = inf`` in
  the result contract): RR-DU with the setup's accountant (A: Cor. 5.2 with ``C_A = 1``), DDP with Algorithm 3's
  one-shot formula and DP-SGD on the walk; fine-tuning (no noise, the same for every epsilon). These show what
  the paper measures; their epsilon is a label, not a guarantee (the audit refutes them,
  :mod:`unlearnkit.experiments.rrdu.audit`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any, Optional, Sequence

from ...runtime import make_generator
from ..._validate import check_choice, check_int, check_positive, check_range
import numpy as np
import torch

from ...decentral.token import TokenConfig
from ...graphs.walks import uniform_route
from ...methods.rrdu import RRDU, NoisyDDP, NoisyDDPConfig
from ...methods.rrdu.noisy import NoisyWalkConfig, NoisyWalkTraining
from ...privacy import analytic_gaussian_sigma
from ...privacy.amplification import visit_count_bound
from ...privacy.linear_rdp import linear_rdp_slope
from ...evaluate import report
from ...methods.rrdu.algorithm import walk_unlearn
from ...methods.rrdu.noisy_start import mixture_start_sigma, noisy_start_sigma
from ...methods.rrdu.walk import WalkData
from ..contract import Released, finish_result
from ..memo import memoized_on
from ..seed_pool import check_seeds, pool_rows
from .lab import RRDU_PROFILES, BackdoorSetup, BackdoorWorld, build_world, run_method, run_rrdu, world_parts


RRDU_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
SOUND_METHODS = ("rrdu_exact", "rrdu_light", "ddp")
"""The certified runs of the frontier: RR-DU's exact variant (its u-step reads no D_f: noise-free, the whole budget
goes to the training), RR-DU's lightweight variant (the paper's experiments: noisy ascent on D_f at u, p = 0.05),
and the sound DDP baseline."""
PAPER_METHODS = ("rrdu", "ddp", "dp_sgd")


def split_train_sigma(*, epsilon: float, delta: float, L: float, hops: int, n_clients: int, local_steps: int,
                      split: float, accountant: str = "M", u_visits: Optional[int] = None,
                      composition: str = "gaussian") -> float:
    """The training noise that spends the share ``split`` of the budget ``(epsilon, delta)``.

    ``"M"`` (exact Gaussian composition, :mod:`unlearnkit.methods.rrdu.mixture`): the budget is
    ``mu(epsilon, delta) = 1 / analytic_gaussian_sigma(epsilon, delta)`` (Balle & Wang 2018) and the training
    takes ``mu_train^2 = split mu^2`` with ``mu_train = 2 L sqrt(steps) / sigma``, ``steps`` = ``local_steps``
    times the ``(1 - delta/4)``-quantile of ``Bin(hops, 1/N)`` visits; the u-steps' noise is then calibrated on the
    realised training by :func:`~unlearnkit.methods.rrdu.noisy_start.mixture_start_sigma` (which raises if a
    rare long training walk left no budget). ``"S"``
    (:func:`unlearnkit.methods.rrdu.noisy_start.noisy_start_sigma`) calibrates RR-DU's u-step
    noise on the slope left after the training's: ``rho(epsilon) = slope of (epsilon, delta/2)`` under Prop. A.8,
    and the training's ``rho_train = steps (2 L)^2 / (2 sigma^2)`` with ``steps`` = ``local_steps`` times the
    ``(1 - delta/4)``-quantile of ``Bin(hops, 1/N)`` visits. Setting ``rho_train = split * rho(epsilon)`` gives
    ``sigma = sqrt(steps (2L)^2 / (2 split rho(epsilon)))`` with ``composition="rdp"`` (the former calibration);
    the default ``composition="gaussian"`` reads the same plain Gaussians exactly (GDP): the training takes
    ``mu_train^2 = split mu(epsilon, delta/2)^2``, i.e. ``sigma = 2 L sqrt(steps) analytic_gaussian_sigma(epsilon,
    delta/2) / sqrt(split)``.

    ``u_visits``: the visits to u of the training route when it is drawn *before* training from a seed
    independent of the data (as :func:`sound_run` does). The guarantee conditional on a data-independent route
    is exact (the route is the same in both worlds), and a bound that holds for every route holds for the mixture
    over routes, so the realised count may replace the quantile: at 60 hops and N = 10 it is about 6 against a
    ``(1 - delta/4)``-quantile of 21, a factor of about 3.5 in the training's share of mu^2.
    """
    check_range("split", split, 0.0, 1.0, low_open=True)
    check_positive("epsilon", epsilon)
    check_choice("accountant", accountant, ("S", "M"))
    check_choice("composition", composition, ("gaussian", "rdp"))
    visits = visit_count_bound(hops, 1.0 / n_clients, delta / 4) if u_visits is None else check_int(
        "u_visits", u_visits, low=1, high=hops)
    steps = local_steps * visits
    if accountant == "M":
        return 2 * L * math.sqrt(steps) * analytic_gaussian_sigma(epsilon, delta) / math.sqrt(split)
    if composition == "gaussian":
        return 2 * L * math.sqrt(steps) * analytic_gaussian_sigma(epsilon, delta / 2) / math.sqrt(split)
    slope = linear_rdp_slope(epsilon, delta / 2, method="mironov")
    return math.sqrt(steps * (2 * L) ** 2 / (2 * split * slope))


def _noisy_start(world: BackdoorWorld, sigma: float, *, L: float, lr: float, R: float, seed: int) -> Any:
    # RR-DU's exact variant (split = 1) and DDP on the realised route calibrate the same training sigma, so a
    # frontier trains each noisy start once; the key holds the setup fields the training reads
    st = world.setup
    used = (st.batch_size, st.s, st.T_train, st.local_steps, st.delta, float(sigma), L, lr, R, seed, world.seed)
    return memoized_on(world_parts(world), "rrdu_noisy_start", used,
                       lambda: _train_noisy_start(world, sigma, L=L, lr=lr, R=R, seed=seed))


def _train_noisy_start(world: BackdoorWorld, sigma: float, *, L: float, lr: float, R: float, seed: int) -> Any:
    st = world.setup
    token = TokenConfig(lr=lr, batch_size=st.batch_size, local_batches=st.s, optimizer="sgd")
    cfg = NoisyWalkConfig(token=token, hops=st.T_train, local_steps=st.local_steps, delta=st.delta, L=L,
                          R=R, sigma=sigma, route_seed=seed + 1)
    return NoisyWalkTraining().train(world.flat, world.federation, cfg, generator=make_generator(seed + 1),
                                     init=(world.original.checkpoints or {}).get(0))


def sound_run(world: BackdoorWorld, method: str, epsilon: float, *, L: float = 1.0, lr: float = 0.2,
              split: float = 0.5, R: float = 10.0, accountant: str = "M", realised_route: bool = True,
              seed: int = 0, composition: str = "gaussian", **changes: Any) -> dict:
    """One certified run at ``epsilon`` (module docstring): ``{"final", "start", "certificate", "sigma",
    "sigma_train", "params", "cost", "observer_epsilons"}``: metrics on the released model and on the noisily
    trained start, and RR-DU's sound per-observer ledger (:class:`~unlearnkit.methods.rrdu.SoundObserverLedger`).

    ``method``: ``"rrdu"`` (the setup's variant and ``p``, or ``changes``), ``"rrdu_exact"``, ``"rrdu_light"``
    (lightweight at ``p = 0.05``) or ``"ddp"``. The exact variant's u-steps need no budget, so its training takes
    all of it (``split = 1``). ``composition`` (accountant ``"S"`` only): ``"gaussian"`` (exact) or ``"rdp"``.
    """
    settings = (world.setup, world.seed, method, epsilon, L, lr, split, R, accountant, realised_route, seed,
                composition, changes)
    return memoized_on(world_parts(world), "rrdu_sound_run", settings,
                       lambda: _sound_run(world, method, epsilon, L=L, lr=lr, split=split, R=R, accountant=accountant,
                                          realised_route=realised_route, seed=seed, composition=composition,
                                          **changes))


def _sound_run(world: BackdoorWorld, method: str, epsilon: float, *, L: float, lr: float, split: float, R: float,
               accountant: str, realised_route: bool, seed: int, composition: str = "gaussian",
               **changes: Any) -> dict:
    presets = {"rrdu_exact": {"variant": "exact"}, "rrdu_light": {"variant": "lightweight", "p": 0.05}}
    if method in presets:
        changes = {**presets[method], **changes}
        method = "rrdu"
    st = dataclasses.replace(world.setup, **changes)
    if method == "rrdu" and st.variant == "exact":
        split = 1.0
    n = world.federation.n_clients
    # the training route, drawn before training from its own seed (independent of the data): NoisyWalkTraining
    # draws the same route from route_seed = seed + 1
    route = uniform_route(n, st.T_train, rng=np.random.default_rng(seed + 1))
    visits = max(1, int(np.sum(route == st.u)))
    if method == "rrdu":
        sig_t = split_train_sigma(epsilon=epsilon, delta=st.delta, L=L, hops=st.T_train, n_clients=n,
                                  local_steps=st.local_steps, split=split, accountant=accountant,
                                  u_visits=visits if realised_route else None, composition=composition)
    elif method == "ddp" and realised_route:  # the whole budget to the training, exact Gaussian composition
        sig_t = 2 * L * math.sqrt(visits * st.local_steps) * analytic_gaussian_sigma(epsilon, st.delta)
    elif method == "ddp":
        sig_t = NoisyWalkConfig(token=TokenConfig(lr=lr, optimizer="sgd"), hops=st.T_train, epsilon=epsilon,
                                delta=st.delta, L=L, local_steps=st.local_steps).resolved_sigma(n)
    else:
        raise ValueError(f"method={method!r} is out of range: expected 'rrdu' or one of {SOUND_METHODS}")
    start = _noisy_start(dataclasses.replace(world, setup=st), sig_t, L=L, lr=lr, R=R, seed=seed)
    if int(start.extras["noisy_training"]["u_steps"][st.u]) != int(np.sum(route == st.u)) * st.local_steps:
        raise RuntimeError("the training walk did not follow the pre-drawn route: the calibration would not hold")
    gen = make_generator(1000 + seed)
    if method == "rrdu":
        cfg = st.rrdu_config(accountant=accountant, optimizer="sgd", lr=lr, clip_L=L, epsilon=epsilon, eval_every=0,
                             composition=composition)
        if world.request is None:  # the certifier's world (build_world(without_forgotten=True)): forget nothing
            return _certifier_walk(start, st, cfg, gen)
        res = RRDU().unlearn(start, world.request, cfg, generator=gen)
        sigma = res.extras["sigma"]
        observers = res.extras.get("observer_epsilons")
    else:
        cfg = NoisyDDPConfig(continue_hops=st.T_unlearn)
        res = NoisyDDP().unlearn(start, world.request, cfg, generator=gen)
        sigma, observers = sig_t, None
    return {"final": world.metrics(res.params), "start": world.metrics(start.params),
            "certificate": res.certificate.to_dict(), "sigma": sigma, "sigma_train": sig_t, "params": res.params,
            "cost": res.cost.to_dict(), "config": cfg, "observer_epsilons": observers}


def _certifier_walk(start: Any, st: BackdoorSetup, cfg: Any, gen: Any) -> dict:
    """RR-DU's unlearning walk on the certifier's world: the same calibration and walk, nothing to forget."""

    data = WalkData.nothing_to_forget(start, st.u)
    p = cfg.routing_p(data.n_clients)
    sigma = (noisy_start_sigma if cfg.accountant == "S" else mixture_start_sigma)(start, data, cfg, p)
    theta, _, _, path = walk_unlearn(start.flat, start.params, data, cfg, sigma=sigma, generator=gen,
                                     federation=start.federation, network=start.network)
    return {"params": theta, "sigma": sigma, "path": path}


def rrdu_frontier(epsilons: Sequence[float] = RRDU_EPSILONS, *, setup: Optional[BackdoorSetup] = None,
                  world: Optional[BackdoorWorld] = None, seed: int = 0, L: float = 1.0, lr: float = 0.2,
                  split: float = 0.5, R: float = 10.0, accountant: str = "M", realised_route: bool = True,
                  paper: bool = True) -> dict:
    """Backdoor success and clean accuracy against ``epsilon`` for every method (module docstring).

    Returns ``{"epsilons", "retrain": metrics, "original": metrics, "finetune": metrics, "sound": {method:
    [row per epsilon]}, "paper": {method: [row per epsilon]}}``; a row is ``{"epsilon", "clean_acc", "asr",
    "asr_all", "certified_epsilon", "mode", "sigma", ...}`` (sound rows add the start's metrics as
    ``start_clean_acc``, ``start_asr``). ``L`` (clipping), ``lr`` (SGD step), ``split`` (the training's share
    of the budget) and ``R`` (the noisy training's projection radius around the initialisation: it bounds how far
    the noise can push the start, which the clean hops of the unlearning walk then repair) set the sound
    pipeline.
    """
    if world is None:
        world = build_world(setup or RRDU_PROFILES["quick"], seed=seed)
    out: dict[str, Any] = {"epsilons": [float(e) for e in epsilons],
                           "retrain": world.metrics(world.retrained.params),
                           "original": world.metrics(world.original.params),
                           "finetune": run_method(world, "finetune", seed=seed)["final"],
                           "sound": {m: [] for m in SOUND_METHODS}, "paper": {m: [] for m in PAPER_METHODS},
                           "settings": {"L": L, "lr": lr, "split": split, "R": R, "accountant": accountant,
                                        "realised_route": realised_route,
                                        "seed": seed}}
    for eps in epsilons:
        for m in SOUND_METHODS:
            r = sound_run(world, m, eps, L=L, lr=lr, split=split, R=R, accountant=accountant,
                          realised_route=realised_route, seed=seed)
            cert = r["certificate"]
            out["sound"][m].append({"epsilon": float(eps), **r["final"], "certified_epsilon": cert["epsilon"],
                                    "mode": cert["mode"], "sigma": r["sigma"], "sigma_train": r["sigma_train"],
                                    "start_clean_acc": r["start"]["clean_acc"], "start_asr": r["start"]["asr"]})
        if not paper:
            continue
        eworld = dataclasses.replace(world, setup=dataclasses.replace(world.setup, epsilon=float(eps)))
        for m in PAPER_METHODS:
            r = run_method(eworld, m, seed=seed)
            cert = r["certificate"] or {"epsilon": math.inf, "mode": "none"}
            out["paper"][m].append({"epsilon": float(eps), **r["final"], "certified_epsilon": cert["epsilon"],
                                    "mode": cert["mode"], "sigma": r["sigma"]})
    return out


# ----------------------------------------------------------------------------------------------------------
# CLI: python -m unlearnkit run rrdu --profile quick is the certified run that forgets
# ----------------------------------------------------------------------------------------------------------

QUICK_CERTIFIED = {"method": "rrdu_exact", "epsilon": 1.0}
"""The quick profile's certified run: RR-DU's exact variant at epsilon = 1 (the paper's headline budget) under the
sound accountant ``"M"``; measured (seed 0): certified epsilon 1.0, clean 0.913 (retraining 0.929), backdoor 0.000
(docs/frontiers/rrdu.md)."""


def run_rrdu_certified(*, profile: str, seed: int = 0, progress: bool = False, dataset: Optional[str] = None,
                       **overrides: Any) -> dict:
    """The registry's ``rrdu`` runner. ``profile="quick"``: the certified run of :data:`QUICK_CERTIFIED`
    (``overrides`` replace :class:`BackdoorSetup` fields; ``epsilon`` is the budget); the paper profiles run the
    paper's calibration on the noise-free Adam original (:func:`unlearnkit.experiments.rrdu.lab.run_rrdu`,
    labelled, not certified)."""
    if profile != "quick":
        return run_rrdu(profile=profile, seed=seed, progress=progress, dataset=dataset, **overrides)
    eps = float(overrides.pop("epsilon", QUICK_CERTIFIED["epsilon"]))
    setup = dataclasses.replace(RRDU_PROFILES["quick"], **overrides)
    world = build_world(setup, seed=seed, progress=progress)
    run = sound_run(world, QUICK_CERTIFIED["method"], eps, seed=seed)
    metrics = report(world.flat, run["params"], world.dataset, world.request, retrained=world.retrained.params,
                     original=world.original.params, backdoor=world.backdoor)
    out = {"method": "rrdu", "profile": profile, "dataset": setup.dataset, "request": world.request.describe(),
           "metrics": metrics, "certificate": run["certificate"], "sigma": run["sigma"],
           "cost": {"grad_evals": run["cost"]["grad_evals"], "seconds": run["cost"]["seconds"],
                    "retrain_grad_evals": world.retrained.cost.grad_evals,
                    "retrain_seconds": world.retrained.cost.seconds},
           "setup": {k: getattr(setup, k) for k in setup.__dataclass_fields__},
           "diagnostics": {"noisy_start_model": {**run["start"], "sigma_train": run["sigma_train"]},
                           "plain_original_model": world.metrics(world.original.params)}}
    return finish_result(out, Released(run["params"], world.flat, world.dataset, world.request, world.backdoor),
                         config=run["config"])


# ----------------------------------------------------------------------------------------------------------
# Notebook 06 draws the full frontier from a committed JSON file and re-runs it live on request
# ----------------------------------------------------------------------------------------------------------

PRECOMPUTED_FRONTIER = "rrdu_frontier_full.json"
"""``unlearnkit/experiments/data/rrdu_frontier_full.json``: :func:`rrdu_frontier` over :data:`RRDU_EPSILONS` on the
quick world (``BackdoorSetup()``, seed 0, default settings), computed on a CPU with :func:`write_precomputed_frontier`.
Every number comes from the same code a live run executes; ``tests/methods/rrdu/test_precomputed_frontier.py``
recomputes a budget and compares."""


PRECOMPUTED_SEEDS = "rrdu_frontier_seeds.json"
"""``unlearnkit/experiments/data/rrdu_frontier_seeds.json``: the same frontier as :data:`PRECOMPUTED_FRONTIER` on
seeds 1 to 4 (each seed its own world: data split, training and noise), written by
:func:`write_precomputed_seeds`; notebook 06 draws the band over seeds from it."""


def _frontier_path(name: str = PRECOMPUTED_FRONTIER) -> Any:
    return Path(__file__).resolve().parents[1] / "data" / name


def load_precomputed_frontier(seeds: Optional[Sequence[int]] = None) -> dict:
    """The committed full-grid frontier (:data:`PRECOMPUTED_FRONTIER`), read with :mod:`json` (plain data, no code).

    Returns the dict :func:`rrdu_frontier` returns, plus ``"precomputed": {"seed", "setup", "epsilons", ...}``
    saying what it was computed with. ``seeds`` (each 0 to 4): the same frontier on those seeds, pooled
    (:func:`pool_frontiers`; seed 0 from :data:`PRECOMPUTED_FRONTIER`, the others from
    :data:`PRECOMPUTED_SEEDS`): each metric the mean over the seeds, the per-seed values in
    ``<metric>_seeds``."""

    with open(_frontier_path(), encoding="utf-8") as fh:
        base = json.load(fh)
    if seeds is None:
        return base

    seeds = check_seeds(seeds)
    with open(_frontier_path(PRECOMPUTED_SEEDS), encoding="utf-8") as fh:
        others = json.load(fh)
    by_seed = {0: base, **{int(k): v for k, v in others["frontiers"].items()}}
    missing = [sd for sd in seeds if sd not in by_seed]
    if missing:
        raise ValueError(f"seeds={seeds!r}: seeds {missing} are not precomputed (stored: {sorted(by_seed)})")
    out = pool_frontiers([by_seed[sd] for sd in seeds], seeds)
    out["precomputed"] = {**base["precomputed"], "seed": seeds[0], "seeds": list(seeds),
                          "draws": f"seeds {', '.join(str(sd) for sd in seeds)}, one draw per seed and epsilon"}
    return out


#: the metrics of a frontier row or reference that vary with the seed
RRDU_METRICS = ("clean_acc", "asr", "asr_all", "start_clean_acc", "start_asr")


def pool_frontiers(frontiers: Sequence[dict], seeds: Sequence[int]) -> dict:
    """One frontier dict from :func:`rrdu_frontier` dicts of the same grid on ``seeds`` (in that order): every
    row and reference keeps the first seed's fields, each metric of :data:`RRDU_METRICS` becomes the mean over
    the seeds with the per-seed values in ``<metric>_seeds`` (:func:`unlearnkit.experiments.seed_pool.pool_rows`)."""

    first = frontiers[0]
    out = {k: v for k, v in first.items() if k not in ("sound", "paper", "retrain", "original", "finetune")}
    for fam in ("sound", "paper"):
        out[fam] = {m: pool_rows([fr[fam][m] for fr in frontiers], seeds, by=("epsilon",), metrics=RRDU_METRICS)
                    for m in first[fam]}
    for ref in ("retrain", "original", "finetune"):
        out[ref] = pool_rows([[fr[ref]] for fr in frontiers], seeds, by=(), metrics=RRDU_METRICS)[0]
    out["seeds"] = list(seeds)
    return out


def write_precomputed_frontier(path: Optional[str] = None, *, seed: int = 0) -> dict:
    """Recompute :data:`PRECOMPUTED_FRONTIER` (about 20 CPU seconds) and write it to ``path`` (default: the
    package's data file). Run ``python -c "from unlearnkit.experiments.rrdu.frontier import
    write_precomputed_frontier as w; w()"`` after a change to RR-DU's code."""


    setup = RRDU_PROFILES["quick"]
    fr = rrdu_frontier(RRDU_EPSILONS, setup=setup, seed=seed)
    fr["precomputed"] = {"seed": seed, "setup": repr(setup), "epsilons": list(RRDU_EPSILONS),
                         "torch": torch.__version__, "numpy": np.__version__, "device": "cpu",
                         "draws": f"seed {seed}, single draw per epsilon (a diagnostic frontier)"}
    target = _frontier_path() if path is None else path
    with open(target, "w", encoding="utf-8") as fh:
        json.dump(fr, fh, indent=1)
        fh.write("\n")
    return fr


def write_precomputed_seeds(path: Optional[str] = None, *, seeds: Sequence[int] = (1, 2, 3, 4),
                            frontiers: Optional[dict] = None) -> dict:
    """Recompute :data:`PRECOMPUTED_SEEDS` (about 20 CPU seconds a seed) and write it to ``path`` (default: the
    package's data file). ``frontiers`` (``{seed: rrdu_frontier(...)}``) writes runs made elsewhere with the
    same call instead."""


    setup = RRDU_PROFILES["quick"]
    frs = frontiers or {sd: rrdu_frontier(RRDU_EPSILONS, setup=setup, seed=sd) for sd in seeds}
    out = {"precomputed": {"seeds": sorted(int(k) for k in frs), "setup": repr(setup), "epsilons": list(RRDU_EPSILONS),
                           "torch": torch.__version__, "numpy": np.__version__, "device": "cpu",
                           "draws": "one draw per seed and epsilon"},
           "frontiers": {str(k): v for k, v in frs.items()}}
    target = _frontier_path(PRECOMPUTED_SEEDS) if path is None else path
    with open(target, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    return out
