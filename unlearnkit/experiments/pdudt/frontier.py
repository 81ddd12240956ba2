"""PDUDT under a sound certificate: the world where it works, its privacy-forgetting frontier, the CLI runner.

Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies", ICML 2025 (digest 002).
Theorem 4.9's premises fail for every model we train (step size, expected-value bound), so the sound noise
comes from the worst-case gradient-gossip sensitivity of :mod:`unlearnkit.methods.pdudt.sound`. That bound
has a drift term growing like ``eta^2 L C t1^2`` against a model growing like ``eta C t1``, so the certified
world trains with a small *total* step ``eta t1`` (many rounds, small steps), where the ``"sum"`` correction
removes the leaver's direct contribution exactly and what is left is tiny:

- softmax regression without bias (bias terms learn minibatch class-frequency noise at small steps) on the
  digits, each image shifted by a fixed public constant and scaled to unit norm (so ``||x|| <= 1`` for *any*
  data: ``C = sqrt(2)``, ``L = 1/2``), zero start;
- the leaver holds an IID share, ``backdoor_fraction`` of it stamped with a ``patch``-pixel trigger and
  relabelled ``target`` (the forget task with a signal: the original follows the trigger, retraining does not);
- Erdos-Renyi graphs redrawn every round, one minibatch gradient per round, coupled retraining.

- :class:`CertifiedPDUDT`, :func:`certified_world`, :func:`release`: one world and one certified release;
- :func:`pdudt_frontier`: released accuracy, attack success and distance to retraining against epsilon, for
  the sound calibration with each correction scale and the paper's printed calibration;
- :data:`CERTIFIED_PROFILES`, :func:`run_pdudt`: ``python -m unlearnkit run pdudt`` (``quick`` is the certified run;
  ``demo`` and ``paper`` are the paper's pipeline of :mod:`unlearnkit.experiments.pdudt.lab`, noise by hand).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

import numpy as np
import torch

from . import lab as pdudt_lab
from ..._validate import check_choice, check_epsilon, check_int, check_positive, check_range
from ...core import Request
from ...data import Federation, load, partition
from ...data.federated import add_backdoor, renumbered, without_rows
from ...decentral.gradient_gossip import GradientGossipConfig, run_gradient_gossip
from ...evaluate import accuracy, backdoor_success, report
from ...graphs import dynamic
from ...methods.pdudt import PDUDT, PDUDTConfig
from ...decentral.correction import CORRECTION_SCALES, RETRAIN_RULES
from ...methods.pdudt.certify import GapConstants
from ...methods.pdudt.sound import GossipSmoothness
from ...models import FlatParams, make_model
from ..contract import Released, finish_result
from ...core import MAX_SAMPLES, MAX_STEPS, MAX_TRIALS
from ...runtime import make_generator
from ..memo import memoized
from ..seed_pool import check_seeds, pool_rows


@dataclass(frozen=True, kw_only=True)
class CertifiedPDUDT:
    """The certified PDUDT world (module docstring) and its release settings.

    Attributes
    ----------
    n_clients, leaver, p_edge:
        Clients, the one that leaves, the Erdos-Renyi edge probability (redrawn every round, connected).
    t1, lr, batch_size:
        Rounds before the request, step size, minibatch per client and round (one gradient per round).
    backdoor_fraction, patch, target:
        Share of the leaver's samples stamped with a ``patch x patch`` white trigger and relabelled ``target``.
    center:
        The public constant subtracted from every pixel before the unit-norm scaling.
    retrain_rule, correction_scale:
        PDUDT's choices (:mod:`unlearnkit.decentral.correction`); ``"sum"`` is the one that works.
    epsilon, delta, mode, scope:
        The certificate's target; ``mode`` one of :data:`CALIBRATIONS`: ``"sound"`` (the sensitivity of
        :mod:`unlearnkit.methods.pdudt.sound`), ``"sound_d1"`` or ``"paper"`` (Theorem 4.9 with
        :data:`PAPER_CONSTANTS`: not a guarantee here).
    local_steps:
        Local SGD steps per round: ``1`` for the certificate (any other value leaves it uncertified, A1).
    """

    n_clients: int = 10
    leaver: int = 9
    p_edge: float = 0.4
    t1: int = 200
    lr: float = 5e-4
    batch_size: int = 64
    backdoor_fraction: float = 0.3
    patch: int = 5
    target: int = 0
    center: float = 0.3
    retrain_rule: str = "recompute"
    correction_scale: str = "sum"
    epsilon: float = 16.0
    delta: float = 1e-5
    mode: str = "sound"
    scope: str = "clients"
    local_steps: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("n_clients", self.n_clients, low=3, high=200)
        check_int("leaver", self.leaver, low=0, high=self.n_clients - 1)
        check_range("p_edge", self.p_edge, 0.0, 1.0, low_open=True)
        check_int("t1", self.t1, low=1, high=MAX_STEPS)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1, high=MAX_SAMPLES)
        check_range("backdoor_fraction", self.backdoor_fraction, 0.0, 1.0, low_open=True)
        check_int("patch", self.patch, low=1, high=8)
        check_int("target", self.target, low=0, high=9)
        check_range("center", self.center, 0.0, 1.0, high_open=True)
        check_choice("retrain_rule", self.retrain_rule, RETRAIN_RULES)
        check_choice("correction_scale", self.correction_scale, CORRECTION_SCALES)
        check_epsilon("epsilon", self.epsilon)
        check_range("delta", self.delta, 0.0, 1.0, low_open=True, high_open=True)
        check_choice("mode", self.mode, ("sound", "sound_d1", "paper"))
        check_choice("scope", self.scope, ("clients", "average"))
        check_int("local_steps", self.local_steps, low=1, high=MAX_STEPS)


#: Theorem 4.9's constants for the paper's calibration (``mode="paper"``) on our task: the unit-norm softmax
#: regression has ``L = 1/2``; the variances are bounded by ``C^2 = 2``; ``Delta f <= f(0) = ln 10``; rho just
#: below 1 (the rounds' graphs are connected, but removing the leaver can disconnect one: then the measured
#: rho2 is 1, Assumption 4.8 fails and the certificate says so). The theorem's step-size condition holds at the
#: certified profile's ``lr`` and ``t1``; outside it :func:`release` reports the theorem's error.
PAPER_CONSTANTS = GapConstants(L=0.5, sgd_var=2.0, het_var=2.0, delta_f=math.log(10), delta_f_tilde=math.log(10),
                               rho1=0.999, rho2=0.999)


def _unit_rows(x: torch.Tensor, center: float) -> torch.Tensor:
    # a fixed per-sample map (no statistic of the data): ||x|| <= 1 holds for any image, A2's public bound
    f = x.flatten(1) - center
    return (f / f.norm(dim=1, keepdim=True).clamp_min(1e-12)).reshape(x.shape)


def certified_world(exp: CertifiedPDUDT, *, dataset: Any = None) -> dict:
    """Train the world of ``exp`` (with a history cache) and its coupled retraining without the leaver.

    Returns a dict with ``flat``, ``dataset`` (preprocessed, poisoned), ``backdoor`` (triggered test set
    preprocessed), ``federation``, ``state`` (training), ``retrain`` (retraining), ``request`` and ``smooth``.
    Without a ``dataset``, a second call with an equal ``exp`` returns a copy of the first call's world
    (:mod:`.memo`: the notebook's certified run and its frontier train the same world).
    """
    if dataset is None:
        return memoized("pdudt_certified_world", exp, lambda: _certified_world(exp, None))
    return _certified_world(exp, dataset)


def _certified_world(exp: CertifiedPDUDT, dataset: Any, *, without_leaver: bool = False, retrain: bool = True) -> dict:
    """The world of :func:`certified_world`; ``without_leaver=True`` is the certifier's world: the leaver's
    rows removed from the raw (stamped) data before the per-row map, every other row at its client, and only
    the retraining run (``state`` is ``None``); ``retrain=False`` skips the reference retraining
    (``retrain`` is ``None``)."""

    raw = dataset if dataset is not None else load("digits", device="cpu", seed=exp.seed)
    n, k = exp.n_clients, exp.leaver
    fed0 = partition(raw, n, "iid", seed=exp.seed)
    idx_k = np.asarray(fed0.client_indices[k])
    m = max(1, int(round(exp.backdoor_fraction * idx_k.size)))
    bd = add_backdoor(raw, idx_k[:m], target=exp.target, patch=exp.patch)
    stamped, clients = bd.dataset, fed0.client_indices
    if without_leaver:
        clients = renumbered(fed0.client_indices, idx_k, stamped.n_train)  # the leaver's client is now empty
        stamped = without_rows(stamped, idx_k)
    ds = replace(stamped, x_train=_unit_rows(stamped.x_train, exp.center),
                 x_test=_unit_rows(stamped.x_test, exp.center))
    bd = replace(bd, dataset=ds, x_test_triggered=_unit_rows(bd.x_test_triggered, exp.center))
    fed = Federation(ds, clients, scheme=f"iid, {m} backdoored samples on client {k}")
    flat = FlatParams(make_model("logreg", ds.input_shape, ds.n_classes, generator=make_generator(exp.seed),
                                 bias=False))
    theta0 = torch.zeros(n, flat.d, dtype=flat.init().dtype, device=ds.x_train.device)  # data-independent start (A1)
    sched = dynamic.make_schedule("erdos_renyi", n, seed=exp.seed, p_edge=exp.p_edge, base="erdos_renyi",
                                  ensure_connected=True)
    cfg = GradientGossipConfig(rounds=exp.t1, lr=exp.lr, batch_size=exp.batch_size, local_steps=exp.local_steps,
                               cache="history", retrain_rule=exp.retrain_rule)
    with _one_thread():
        state = None if without_leaver else run_gradient_gossip(flat, fed, sched, cfg,
                                                                generator=make_generator(exp.seed), init=theta0)
        retrain = None if not retrain else run_gradient_gossip(flat, fed, sched, replace(cfg, cache="none"),
                                                               generator=make_generator(exp.seed), init=theta0,
                                                               exclude=k)
    return {"exp": exp, "flat": flat, "dataset": ds, "backdoor": bd, "federation": fed, "schedule": sched,
            "state": state, "retrain": retrain, "theta0": theta0,
            "request": Request("client", idx_k, client=k),
            "smooth": GossipSmoothness.softmax_regression(1.0, bias=False)}


class _one_thread:
    """One CPU thread for tiny models (a second OpenMP thread only spins on a shared 2-core box)."""

    def __enter__(self) -> None:
        self.saved = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *exc: Any) -> None:
        torch.set_num_threads(self.saved)


#: the calibrations a frontier row can use: ``"sound"`` (the worst-case gossip sensitivity), ``"sound_d1"``
#: (Markov tail on Theorem 4.9's expected ``d1``: sound only if the theorem is) and ``"paper"`` (the printed one)
CALIBRATIONS = ("sound", "sound_d1", "paper")


def _config(exp: CertifiedPDUDT, epsilon: float, mode: str, scale: str, es_rounds: Optional[int] = None) -> PDUDTConfig:
    check_choice("mode", mode, CALIBRATIONS)
    gossip = mode == "sound"
    return PDUDTConfig(retrain_rule=exp.retrain_rule, correction_scale=scale, noise="certified", epsilon=epsilon,
                       delta=exp.delta, mode="paper" if mode == "paper" else "sound", scope=exp.scope,
                       es_rounds=es_rounds,
                       smoothness=GossipSmoothness.softmax_regression(1.0, bias=False) if gossip else None,
                       constants=None if gossip else PAPER_CONSTANTS)


def release(world: dict, *, epsilon: Optional[float] = None, mode: Optional[str] = None,
            correction_scale: Optional[str] = None, seed: int = 1) -> dict:
    """One certified PDUDT release on ``world``: the result, its metrics and the references'.

    The paper's calibration (``mode="paper"``) needs Theorem 4.9's step-size condition, which our training
    breaks; its row then carries ``sigma = nan`` and the reason (the theorem says nothing here).
    """

    exp = world["exp"]
    eps = exp.epsilon if epsilon is None else float(epsilon)
    mode = exp.mode if mode is None else mode
    scale = exp.correction_scale if correction_scale is None else correction_scale
    flat, ds, bd = world["flat"], world["dataset"], world["backdoor"]
    keep = [i for i in range(exp.n_clients) if i != exp.leaver]
    theta_rt = world["retrain"].params[keep]
    try:
        res = PDUDT().unlearn(world["state"], world["request"], _config(exp, eps, mode, scale),
                              generator=make_generator(seed))
    except ValueError as err:  # the paper's theorem is silent outside its step-size condition
        return {"epsilon": eps, "mode": mode, "correction_scale": scale, "sigma": float("nan"),
                "test_acc": float("nan"), "backdoor_asr": float("nan"), "dist_to_retrain": float("nan"),
                "certified": False, "note": str(err), "result": None}
    p = res.params
    return {"epsilon": eps, "mode": mode, "correction_scale": scale, "sigma": float(res.certificate.sigma),
            "test_acc": accuracy(flat, p, ds.x_test, ds.y_test), "backdoor_asr": backdoor_success(flat, p, bd),
            "dist_to_retrain": float((p.mean(0) - theta_rt.mean(0)).norm()),
            "dist_before_noise": float((res.extras["corrected"].mean(0) - theta_rt.mean(0)).norm()),
            "certified": bool(res.certificate.certified), "note": res.certificate.note, "result": res}


def reference_models(world: dict) -> dict[str, dict[str, float]]:
    """Original and retrained models' clean accuracy, attack success and distance to retraining."""
    exp, flat, ds, bd = world["exp"], world["flat"], world["dataset"], world["backdoor"]
    keep = [i for i in range(exp.n_clients) if i != exp.leaver]
    rt = world["retrain"].params[keep]
    out = {}
    for name, th in (("original", world["state"].params[keep]), ("retrain", rt)):
        out[name] = {"test_acc": accuracy(flat, th, ds.x_test, ds.y_test), "backdoor_asr": backdoor_success(flat, th, bd),
                     "dist_to_retrain": float((th.mean(0) - rt.mean(0)).norm())}
    return out


def pdudt_frontier(world: dict, epsilons: Sequence[float] = (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64), *,
                   rows: Sequence[tuple[str, str]] = (("sound", "sum"), ("sound", "paper"), ("paper", "paper")),
                   draws: int = 3, seeds: Optional[Sequence[int]] = None) -> dict[str, Any]:
    """Released accuracy, attack success and distance to retraining against epsilon, per (mode, scale) row.

    Each point averages ``draws`` noise draws (seeds ``1..draws``). ``references`` holds the original and the
    retrained model (the line to reach). The sound sigma falls as ``1/epsilon`` (analytic Gaussian), so the
    sound rows' distance to retraining falls with epsilon (up to the noise draws).

    ``seeds``: the same frontier on the world of each seed (``world`` serves its own seed, the others are
    trained with :func:`certified_world`), pooled by :func:`unlearnkit.experiments.seed_pool.pool_rows`: each
    metric the mean over the seeds, the per-seed values in ``<metric>_seeds``; ``"seeds"`` lists them.
    """
    if seeds is not None:
        seeds = check_seeds(seeds)
        fronts = [pdudt_frontier(world if world["exp"].seed == sd else
                                 certified_world(replace(world["exp"], seed=sd)),
                                 epsilons, rows=rows, draws=draws) for sd in seeds]
        keys = ("test_acc", "backdoor_asr", "dist_to_retrain")
        return {"epsilons": fronts[0]["epsilons"], "seeds": list(seeds),
                "rows": {r: pool_rows([f["rows"][r] for f in fronts], seeds, by=("epsilon",), metrics=keys)
                         for r in fronts[0]["rows"]},
                "references": {k: pool_rows([[f["references"][k]] for f in fronts], seeds, by=(), metrics=keys)[0]
                               for k in fronts[0]["references"]}}
    eps = [check_positive("epsilon", e) for e in epsilons]
    check_int("draws", draws, low=1, high=MAX_TRIALS)
    table: dict[str, list[dict]] = {}
    for mode, scale in rows:
        pts = []
        for e in eps:
            rs = [release(world, epsilon=e, mode=mode, correction_scale=scale, seed=s) for s in range(1, draws + 1)]
            pts.append({"epsilon": e, "sigma": rs[0]["sigma"], "certified": rs[0]["certified"],
                        **{key: float(np.mean([r[key] for r in rs])) for key in ("test_acc", "backdoor_asr",
                                                                                 "dist_to_retrain")}})
        table[f"{mode} / {scale}"] = pts
    return {"epsilons": eps, "rows": table, "references": reference_models(world)}


def smallest_epsilon(frontier: dict, row: str = "sound / sum", *, acc_points: float = 0.05,
                     asr_points: float = 0.15) -> Optional[float]:
    """The smallest epsilon of a frontier row whose released accuracy is within ``acc_points`` of retraining's
    and whose attack success is within ``asr_points`` of retraining's (``None`` when no epsilon does)."""
    ref = frontier["references"]["retrain"]
    for p in frontier["rows"][row]:
        if p["test_acc"] >= ref["test_acc"] - acc_points and p["backdoor_asr"] <= ref["backdoor_asr"] + asr_points:
            return p["epsilon"]
    return None


#: ``quick``: the certified world (seconds on 2 CPU cores); ``demo`` and ``paper``: the paper's pipeline with
#: a hand-set sigma (:mod:`unlearnkit.experiments.pdudt.lab`), not certified.
CERTIFIED_PROFILES: dict[str, dict[str, Any]] = {
    "quick": {},
    "timing": dict(t1=1000, lr=1e-4),
}


def run_pdudt(*, profile: str = "quick", seed: int = 0, progress: bool = False, **overrides: Any) -> dict:
    """The registry's runner for ``python -m unlearnkit run pdudt``.

    ``quick`` (and ``timing``, 1000 rounds for the time ratio): the certified world, PDUDT with the sound
    certificate and the ``"sum"`` correction released. ``demo``/``paper``: :func:`~unlearnkit.experiments.pdudt.lab.run_profile`.
    """

    check_choice("profile", profile, ("quick", "timing", "demo", "paper"))
    if profile in ("demo", "paper"):
        out = pdudt_lab.run_profile(profile="quick" if profile == "demo" else "paper", seed=seed,
                                    progress=progress, **overrides)
        out["profile"] = profile  # the lab's "quick" is the CLI's "demo"
        return out
    exp = CertifiedPDUDT(**{**CERTIFIED_PROFILES[profile], "seed": seed, **overrides})
    world = certified_world(exp)
    rel = release(world)
    res = rel["result"]
    refs = reference_models(world)
    keep = res.extras["clients"]
    flat, ds, bd = world["flat"], world["dataset"], world["backdoor"]
    metrics = report(flat, res.params, ds, world["request"], retrained=world["retrain"].params[keep],
                     original=world["state"].params[keep], backdoor=bd)
    # seconds: the best of three unlearning calls against the retraining's one run (the box is shared)
    cfg = _config(exp, rel["epsilon"], rel["mode"], rel["correction_scale"])
    secs = min([res.cost.seconds] + [PDUDT().unlearn(world["state"], world["request"], cfg,
                                                     generator=make_generator(9)).cost.seconds for _ in range(2)])
    diag: dict[str, Any] = {
        "timing": {"time_ratio_retrain_over_pdudt": world["retrain"].cost.seconds / max(secs, 1e-9),
                   "rounds": exp.t1},
        "pdudt_before_noise_model": {"dist_to_retrain": rel["dist_before_noise"]},
    }
    for scale in ("paper", "none"):  # the paper's convex weights and the control, same epsilon, not released
        r = release(world, correction_scale=scale)
        diag[f"pdudt_{scale}_scale_model"] = {k: r[k] for k in ("test_acc", "backdoor_asr", "dist_to_retrain", "sigma")}
    p = release(world, mode="paper", correction_scale="paper")
    diag["paper_calibration_model"] = {"sigma": p["sigma"], "test_acc": p["test_acc"], "note": p["note"][:300]}
    out = {
        "method": "pdudt", "profile": profile, "dataset": "digits", "request": world["request"].describe(),
        "metrics": metrics, "certificate": res.certificate.to_dict(),
        "cost": {"grad_evals": int(res.cost.grad_evals), "seconds": secs,
                 "retrain_grad_evals": int(world["retrain"].cost.grad_evals),
                 "retrain_seconds": world["retrain"].cost.seconds, "memory_bytes": int(res.cost.memory_bytes)},
        "references": refs,
        "settings": {k: getattr(exp, k) for k in ("n_clients", "leaver", "t1", "lr", "batch_size",
                                                   "backdoor_fraction", "patch", "epsilon", "correction_scale")},
    }
    released = Released(res.params, flat, ds, world["request"], backdoor=bd)
    return finish_result(out, released, diagnostics=diag, config=cfg)


def smallest_epsilon_rows(front: dict, **tolerances: float) -> list[dict[str, Any]]:
    """Per frontier row, the smallest epsilon whose release is close to retraining's (``None``: no epsilon is).

    Parameters
    ----------
    front : dict
        A :func:`pdudt_frontier` result.
    **tolerances : float
        ``acc_points``, ``asr_points`` of :func:`smallest_epsilon`.

    Returns
    -------
    list of dict
        ``{"row", "smallest epsilon"}`` in the frontier's row order.
    """
    return [{"row": r, "smallest epsilon": smallest_epsilon(front, r, **tolerances)} for r in front["rows"]]
