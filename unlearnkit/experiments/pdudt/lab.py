"""PDUDT (Qiao et al., ICML 2025): the paper's pipeline, its profiles and sweeps, and the CLI runner.

The experiment of the paper's Section 5 (digest 002, section 4), scaled by a profile: train a gradient-gossip
network with caches over a dynamic topology (:func:`unlearnkit.decentral.run_gradient_gossip`); client ``k``
leaves at round ``t1``; unlearn with PDUDT, PDUDT(ES) and a control (no correction, same noise) through
:class:`unlearnkit.methods.pdudt.PDUDT`; retrain without ``k`` (and perturb it); run ``T`` rounds of
subsequent learning (Eq. 10); report times (Table 2), membership-inference precision (Table 3) and accuracy.

- :class:`PDUDTExperiment`, :func:`run_pdudt_experiment`: one run of that pipeline;
- :func:`sigma_sweep` (Figure 1 in miniature) and :func:`rule_scale_sweep` (our retrain rules x correction
  scales) on an experiment report;
- :data:`PDUDT_PROFILES`, :func:`run_profile`: the ``demo`` and ``paper`` profiles of ``run pdudt``
  (:func:`unlearnkit.experiments.pdudt.frontier.run_pdudt`);
- :data:`PAPER_TABLE2`, :data:`PAPER_TABLE3`: the paper's numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch
from torch import Tensor

from ... import runtime as rt
from ..._validate import check_choice, check_int, check_positive, check_range
from ...core import Request
from ...data import DatasetUnavailableError, Federation, load, partition
from ...decentral.gradient_gossip import GradientGossipConfig, paper_storage_bytes, run_gradient_gossip
from ...evaluate import accuracy, mia_precision, mia_precision_interval, report
from ...graphs import dynamic
from ...graphs.topology import erdos_renyi
from ...methods.pdudt import PDUDT, PDUDTConfig
from ...decentral.correction import CORRECTION_SCALES, RETRAIN_RULES
from ...methods.pdudt.algorithm import client_noise
from ...methods.pdudt.certify import lemma_coverage
from ...models import FlatParams, make_model
from ..contract import Released, finish_result
from ...core import MAX_DIM, MAX_REPEATS, MAX_SAMPLES, MAX_STEPS


# ----------------------------------------------------------------------------------------------------------
# The experiment: train with caches -> client k leaves at t1 -> PDUDT, PDUDT(ES), control, (perturbed)
# retraining -> T rounds of subsequent learning; times, membership inference, accuracy curves
# ----------------------------------------------------------------------------------------------------------

SCHEDULES = ("erdos_renyi", "edge_churn", "static", "one_peer_exponential", "random_k_out")


@dataclass(frozen=True, kw_only=True)
class PDUDTExperiment:
    """One run of the paper's pipeline (digest 4, scaled by the profile).

    The leaver owns class ``leaver_class`` exclusively (paper Sec. 5: "data from class 9 is exclusively owned
    by the client who requests unlearning"); the other classes are split IID among the other clients
    (our choice, digest 4). ``leaver_class=None`` gives an IID split of everything.
    """

    dataset: str = "digits"
    n_clients: int = 10
    leaver: int = 9
    leaver_class: Optional[int] = 9
    model: str = "mlp"
    hidden: int = 32
    schedule: str = "erdos_renyi"
    p_edge: float = 0.4
    churn: float = 1.0
    ensure_connected: bool = True
    t1: int = 60
    es_rounds: Optional[int] = 48
    T: int = 40
    lr: float = 0.1
    local_steps: int = 1
    batch_size: int = 32
    retrain_rule: str = "recompute"
    correction_scale: str = "paper"
    sigma: float = 0.01
    cache: str = "history"
    eval_every: int = 5
    mia_repeats: int = 100
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("n_clients", self.n_clients, low=3, high=200)
        check_int("leaver", self.leaver, low=0, high=self.n_clients - 1)
        if self.leaver_class is not None:
            check_int("leaver_class", self.leaver_class, low=0)
        check_choice("model", self.model, ("logreg", "mlp", "cnn"))
        check_int("hidden", self.hidden, low=1, high=MAX_DIM)
        check_choice("schedule", self.schedule, SCHEDULES)
        check_range("p_edge", self.p_edge, 0.0, 1.0, low_open=True)
        check_range("churn", self.churn, 0.0, 1.0)
        check_int("t1", self.t1, low=1, high=MAX_STEPS)
        if self.es_rounds is not None:
            check_int("es_rounds", self.es_rounds, low=1, high=self.t1)
        check_int("T", self.T, low=0, high=MAX_STEPS)
        check_positive("lr", self.lr)
        check_int("local_steps", self.local_steps, low=1, high=MAX_STEPS)
        check_int("batch_size", self.batch_size, low=1, high=MAX_SAMPLES)
        check_choice("retrain_rule", self.retrain_rule, RETRAIN_RULES)
        check_choice("correction_scale", self.correction_scale, CORRECTION_SCALES)
        check_positive("sigma", self.sigma, allow_zero=True)
        check_choice("cache", self.cache, ("history", "running"))
        check_int("eval_every", self.eval_every, low=1, high=MAX_STEPS)
        check_int("mia_repeats", self.mia_repeats, low=1, high=MAX_REPEATS)


def make_schedule_for(exp: PDUDTExperiment) -> Any:
    """The dynamic topology of ``exp`` from the substrate (:mod:`unlearnkit.graphs.dynamic`)."""
    if exp.schedule == "edge_churn":
        G = erdos_renyi(exp.n_clients, exp.p_edge, seed=exp.seed)
        return dynamic.EdgeChurnSchedule(G, exp.churn, keep_connected=exp.ensure_connected, seed=exp.seed)
    return dynamic.make_schedule(exp.schedule, exp.n_clients, seed=exp.seed, p_edge=exp.p_edge,
                                 base="erdos_renyi", ensure_connected=exp.ensure_connected)


def leaver_owns_class(dataset: Any, n_clients: int, leaver: int, label: Optional[int], seed: int) -> Any:
    """A :class:`~unlearnkit.data.Federation` where ``leaver`` holds every training sample of ``label``."""
    if label is None:
        return partition(dataset, n_clients, "iid", seed=seed)
    if label >= dataset.n_classes:
        raise ValueError(f"leaver_class={label} is out of range: expected a class in [0, {dataset.n_classes - 1}]")
    y = dataset.y_train.cpu().numpy()
    rng = np.random.default_rng([int(seed), 7])
    own = np.flatnonzero(y == label)
    rest = rng.permutation(np.flatnonzero(y != label))
    others = [i for i in range(n_clients) if i != leaver]
    parts = np.array_split(rest, len(others))
    idx: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * n_clients
    for i, part in zip(others, parts):
        idx[i] = np.sort(part)
    idx[leaver] = np.sort(own)
    return Federation(dataset, tuple(idx), scheme=f"class {label} on client {leaver}, rest iid")


class _single_thread:
    """Run small CPU models on one thread: with several processes sharing two cores, a second OpenMP thread
    spins and makes each tiny backward pass 20 to 50 times slower (measured here). Restored on exit."""

    def __init__(self, active: bool) -> None:
        self.active = active

    def __enter__(self) -> None:
        self.saved = torch.get_num_threads()
        if self.active:
            torch.set_num_threads(1)

    def __exit__(self, *exc: Any) -> None:
        torch.set_num_threads(self.saved)


def run_pdudt_experiment(exp: PDUDTExperiment, *, progress: bool = False, callback: Any = None,
                         dataset: Any = None) -> dict:
    """Run the whole pipeline (see :func:`_run`) on one CPU thread for small models."""

    with _single_thread(rt.device().type == "cpu" and exp.model != "cnn"):
        return _run(exp, progress=progress, callback=callback, dataset=dataset)


def _run(exp: PDUDTExperiment, *, progress: bool = False, callback: Any = None, dataset: Any = None) -> dict:
    dev = rt.device()
    ds = dataset if dataset is not None else load(exp.dataset, device=dev, seed=exp.seed)
    fed = leaver_owns_class(ds, exp.n_clients, exp.leaver, exp.leaver_class, exp.seed)
    n, k, t1, T = exp.n_clients, exp.leaver, exp.t1, exp.T
    keep = [i for i in range(n) if i != k]
    kw = {"hidden": (exp.hidden,)} if exp.model == "mlp" else {}
    flat = FlatParams(make_model(exp.model, ds.input_shape, ds.n_classes, generator=rt.make_generator(exp.seed),
                                 **kw).to(dev))
    d = flat.d
    sched = make_schedule_for(exp)
    W_np = sched.mixings(t1 + T)
    W_all = torch.as_tensor(W_np, device="cpu")  # the host-side schedule (counts and plots)
    label = exp.leaver_class
    test_mask = (ds.y_test == label) if label is not None else torch.ones_like(ds.y_test, dtype=torch.bool)
    x_f, y_f = ds.x_test[test_mask], ds.y_test[test_mask]
    x_mem, y_mem = fed.client_data(k)

    def eval_fn(theta: Tensor) -> dict:
        return {"test_acc": accuracy(flat, theta, ds.x_test, ds.y_test),
                "forget_class_acc": accuracy(flat, theta, x_f, y_f)}

    def mia(theta: Tensor) -> tuple[float, float, tuple[float, float]]:  # mean, std, one attack's 95 % CP interval
        p, sd = mia_precision(flat, theta, x_mem, y_mem, x_non=x_f, y_non=y_f, repeats=exp.mia_repeats, seed=exp.seed)
        return p, sd, mia_precision_interval(p, min(len(x_mem), len(x_f)))

    def gg_config(rounds: int, cache: str = "none", eval_every: Optional[int] = None) -> Any:
        return GradientGossipConfig(rounds=rounds, lr=exp.lr, batch_size=exp.batch_size, local_steps=exp.local_steps,
                                    eval_every=exp.eval_every if eval_every is None else eval_every, cache=cache,
                                    retrain_rule=exp.retrain_rule, leavers=(k,))

    def curve(state: Any, offset: int = 0) -> list[dict]:
        return [{"round": r["round"] + offset, "test_acc": r["accuracy"]} for r in state.history if "accuracy" in r]

    # 1. training with caches (Alg. 2, lines 2-8); the generator seeds the minibatches, shared by retraining
    state = run_gradient_gossip(flat, fed, sched, gg_config(t1, exp.cache), generator=rt.make_generator(exp.seed, dev),
                                callback=callback, progress=progress)
    if exp.cache == "running":
        state.extras["cache"] = state.extras["running"]
    theta_t1 = state.params
    request = Request("client", np.asarray(fed.client_indices[k]), client=k)
    gen = rt.make_generator(exp.seed + 1, dev)

    # 2. PDUDT, PDUDT(ES) and the control (no correction, same noise level): Alg. 2, lines 9-16
    method = PDUDT()
    cfgs = {"pdudt": PDUDTConfig(retrain_rule=exp.retrain_rule, correction_scale=exp.correction_scale,
                                 sigma=exp.sigma)}
    if exp.es_rounds is not None and exp.cache == "history":
        cfgs["pdudt_es"] = PDUDTConfig(retrain_rule=exp.retrain_rule, correction_scale=exp.correction_scale,
                                       sigma=exp.sigma, es_rounds=exp.es_rounds)
    cfgs["control"] = PDUDTConfig(retrain_rule=exp.retrain_rule, correction_scale="none", sigma=exp.sigma)
    runs = {name: method.unlearn(state, request, cfg, generator=gen) for name, cfg in cfgs.items()}
    # timings: the best of three calls (a shared machine adds noise to sub-second timings, never removes it)
    best = {name: min([runs[name].cost.seconds] + [method.unlearn(state, request, cfg, generator=gen).cost.seconds
                                                  for _ in range(2)]) for name, cfg in cfgs.items()}

    # 3. retraining from scratch without k on the same minibatches (Alg. 1), then with its noise
    # (no evaluation inside the timed loop: its seconds are the retraining's alone)
    retrain = run_gradient_gossip(flat, fed, sched, gg_config(t1, eval_every=0), generator=rt.make_generator(exp.seed, dev),
                                  exclude=k, progress=progress)
    theta_rt = retrain.params[keep]
    z_rt = client_noise(n - 1, d, exp.sigma, generator=gen, dtype=theta_rt.dtype, device=theta_rt.device)
    at_t1 = {"origin": theta_t1, "retrain": theta_rt, "perturbed_retrain": theta_rt + z_rt,
             **{name: r.params for name, r in runs.items()}}
    seconds = {"retrain": retrain.cost.seconds, "perturbed_retrain": retrain.cost.seconds,
               **best}

    # 4. subsequent learning, Eq. (10): T rounds on the graphs without k, the same minibatches for every method
    final: dict[str, Tensor] = {}
    curves: dict[str, list[dict]] = {"origin": curve(state), "retrain": curve(retrain)}
    if T > 0:
        future = list(W_np[t1:])
        for name in ("retrain", "perturbed_retrain", *runs):
            init = theta_t1.clone()
            init[keep] = at_t1[name]
            sub = run_gradient_gossip(flat, fed, future, gg_config(T), generator=rt.make_generator(exp.seed + 2, dev),
                                      init=init, exclude=k, progress=progress)
            final[name] = sub.params[keep]
            before = curves["retrain"] if name in ("retrain", "perturbed_retrain") else curves["origin"]
            curves[name] = [r for r in before if r["round"] < t1] + \
                [{"round": t1, "test_acc": eval_fn(at_t1[name])["test_acc"]}] + curve(sub, t1)

    # 5. metrics
    def dist(a: Tensor, b: Tensor) -> float:
        return float((a.mean(0) - b.mean(0)).norm())

    methods: dict[str, dict] = {}
    for name, th in at_t1.items():
        p_mean, p_std, (ci_lo, ci_hi) = mia(th)
        row = {**eval_fn(th), "mia_precision": p_mean, "mia_std": p_std, "mia_ci_low": ci_lo, "mia_ci_high": ci_hi,
               "dist_to_retrain": dist(th[keep] if name == "origin" else th, theta_rt),
               "seconds": seconds.get(name, float("nan"))}
        if name in final:
            p2, s2, (lo2, hi2) = mia(final[name])
            row.update({f"after_T_{key}": v for key, v in eval_fn(final[name]).items()})
            row.update(after_T_mia_precision=p2, after_T_mia_std=s2, after_T_mia_ci_low=lo2, after_T_mia_ci_high=hi2)
        methods[name] = row
    for name, r in runs.items():
        methods[name]["correction_norm"] = float(r.extras["correction"].norm())
        methods[name]["dist_to_retrain_before_noise"] = dist(r.extras["corrected"], theta_rt)
    n_max = int(((W_all[:t1] > 0).sum(-1) - 1).max())
    return {
        "experiment": exp, "flat": flat, "dataset": ds, "federation": fed, "schedule": sched, "W": W_all,
        "methods": methods, "curves": curves, "request": request, "state": state, "runs": runs, "configs": cfgs,
        "delta_norms": runs["pdudt"].extras.get("delta_norms"), "p": runs["pdudt"].extras.get("p"),
        "certificate": runs["pdudt"].certificate,
        "theta": {"t1": at_t1, "final": final},
        "memory_bytes": {"simulator_cache": int(state.extras["cache" if exp.cache == "running" else "history"].memory_bytes),
                         "paper_per_client": paper_storage_bytes(t1, n_max, d),
                         "paper_per_client_es": paper_storage_bytes(exp.es_rounds or t1, n_max, d),
                         "running_sums_per_client": int(8 * (2 * d + 1))},
        "train_seconds": state.cost.seconds,
        "time_ratio": retrain.cost.seconds / max(best["pdudt"], 1e-9),
        "d": d,
    }


def sigma_sweep(rep: dict, sigmas: Any, *, seed: int = 0) -> dict[str, list[float]]:
    """The paper's Figure 1 in miniature: accuracy of the average model against sigma, right after unlearning.

    For perturbed retraining, PDUDT, PDUDT(ES) and the control, the models before noise are taken from an
    experiment report (:func:`run_pdudt_experiment`) and the same noise draw is added to each at every sigma
    (common random numbers, so the curves differ only by what the methods did).
    """
    sigmas = [check_positive("sigma", s, allow_zero=True) for s in sigmas]
    ds, flat = rep["dataset"], rep["flat"]
    bases = {"perturbed_retrain": rep["theta"]["t1"]["retrain"],
             **{name: r.extras["corrected"] for name, r in rep["runs"].items()}}
    out: dict[str, list[float]] = {name: [] for name in bases}
    m, d = next(iter(bases.values())).shape
    for i, sigma in enumerate(sigmas):
        gen = torch.Generator(device=next(iter(bases.values())).device).manual_seed(int(seed) * 100003 + i)
        z = client_noise(m, d, sigma, generator=gen, dtype=next(iter(bases.values())).dtype)
        for name, base in bases.items():
            out[name].append(accuracy(flat, base + z, ds.x_test, ds.y_test))
    return out


def rule_scale_sweep(rep: dict, *, sigma: float = 0.0, seed: int = 0) -> dict[str, dict[str, Any]]:
    """Our choices where the paper is silent, side by side: every retrain rule x correction scale.

    Unlearns the leaver of an experiment report (:func:`run_pdudt_experiment`, full-history cache) once per
    pair (digest 2.1 options A and B; digest P2), each with a fresh generator seeded ``seed``, and returns,
    keyed ``"rule / scale"``, the size of the correction, the distance of the average unlearned model to
    the average retrained one (before its noise), and whether a certified-noise run of that row would be
    covered by the paper's statement (``paper_mode``: ``"paper"`` or ``"none"``, not certified) and by our
    sound mode (``sound_mode``), from :func:`unlearnkit.methods.pdudt.lemma_coverage`. Printable with
    :func:`unlearnkit.evaluate.format_report`; measured in :mod:`unlearnkit.experiments.pdudt.gap`.
    """

    retrained = rep["theta"]["t1"]["retrain"].mean(0)
    out: dict[str, dict[str, Any]] = {}
    for rule in RETRAIN_RULES:
        for scale in CORRECTION_SCALES:
            r = PDUDT().unlearn(rep["state"], rep["request"],
                                PDUDTConfig(retrain_rule=rule, correction_scale=scale, sigma=sigma),
                                generator=rt.make_generator(seed))
            out[f"{rule} / {scale}"] = {"correction_norm": float(r.extras["correction"].norm()),
                                        "dist_to_retrain": float((r.params.mean(0) - retrained).norm()),
                                        **{f"{m}_mode": m if lemma_coverage(scale, m)[0] else "none"
                                           for m in ("paper", "sound")}}
    return out


# ----------------------------------------------------------------------------------------------------------
# CLI: python -m unlearnkit run pdudt --profile quick|paper
# ----------------------------------------------------------------------------------------------------------

#: The paper's Table 2 (unlearning seconds) and Table 3 (MIA precision %, mean and std), digest 002 section 5.
PAPER_TABLE2 = {"MNIST": {"Retrain": 1322.2, "PDUDT": 3.0, "PDUDT (ES)": 2.3},
                "Fashion-MNIST": {"Retrain": 1299.8, "PDUDT": 3.3, "PDUDT (ES)": 2.6},
                "CIFAR-10": {"Retrain": 1696.2, "PDUDT": 9.6, "PDUDT (ES)": 7.5},
                "SVHN": {"Retrain": 2747.8, "PDUDT": 9.8, "PDUDT (ES)": 7.8}}
PAPER_TABLE3 = {"MNIST": {"Origin": (65.3, 0.9), "Retrain": (49.4, 1.3), "PDUDT": (49.9, 0.6), "PDUDT (ES)": (50.8, 0.6)},
                "Fashion-MNIST": {"Origin": (67.1, 1.9), "Retrain": (49.2, 2.2), "PDUDT": (49.0, 1.3),
                                  "PDUDT (ES)": (50.2, 0.9)},
                "CIFAR-10": {"Origin": (65.3, 0.7), "Retrain": (51.0, 0.6), "PDUDT": (50.1, 1.6),
                             "PDUDT (ES)": (51.1, 1.3)},
                "SVHN": {"Origin": (68.1, 0.5), "Retrain": (49.5, 0.7), "PDUDT": (51.3, 0.3), "PDUDT (ES)": (51.5, 1.4)}}

#: Profiles. ``quick``: digits, seconds on 2 CPU cores; the leaver holds an IID share (with class-exclusive
#: data, gradient gossip never teaches the other clients class 9, so there is nothing to forget: notebook 08).
#: ``paper``: digest 002 section 4 (MNIST, CNN, t1 = 100, ES 80, T = 200, batch 256, lr 0.001, one local
#: epoch per round, the leaver owns class 9); needs the MNIST files.
PDUDT_PROFILES: dict[str, dict[str, Any]] = {
    "quick": dict(dataset="digits", n_clients=10, leaver=9, leaver_class=None, model="mlp", hidden=64,
                  schedule="erdos_renyi", p_edge=0.4, t1=40, es_rounds=32, T=20, lr=0.3, local_steps=5,
                  batch_size=32, sigma=0.01, eval_every=10, mia_repeats=100),
    "paper": dict(dataset="mnist", n_clients=10, leaver=9, leaver_class=9, model="cnn", schedule="erdos_renyi",
                  p_edge=0.4, t1=100, es_rounds=80, T=200, lr=0.001, local_steps=24, batch_size=256, sigma=0.01,
                  eval_every=10, mia_repeats=100),
}


def run_profile(*, profile: str = "quick", seed: int = 0, progress: bool = False, **overrides: Any) -> dict:
    """Run a profile (``overrides`` replace :class:`PDUDTExperiment` fields) and build the result JSON."""
    check_choice("profile", profile, tuple(PDUDT_PROFILES))
    exp = PDUDTExperiment(**{**PDUDT_PROFILES[profile], "seed": seed, **overrides})
    try:
        rep = run_pdudt_experiment(exp, progress=progress)
    except DatasetUnavailableError as exc:
        raise DatasetUnavailableError(
            f"the '{profile}' profile of pdudt needs the {exp.dataset} files, which are not on disk: {exc} "
            f"(run the 'quick' profile on the bundled digits instead)") from exc
    m = rep["methods"]
    keep = rep["runs"]["pdudt"].extras["clients"]
    metrics = report(rep["flat"], rep["theta"]["t1"]["pdudt"], rep["dataset"], rep["request"],
                     retrained=rep["theta"]["t1"]["retrain"], original=rep["theta"]["t1"]["origin"][keep])
    metrics.update(mia_precision=m["pdudt"]["mia_precision"], mia_precision_std=m["pdudt"]["mia_std"],
                   retrain_mia_precision=m["retrain"]["mia_precision"], original_mia_precision=m["origin"]["mia_precision"])
    # everything but the released PDUDT model at t1 (which the certificate covers) is a diagnostic
    diag: dict[str, Any] = {"pdudt_before_noise_model": {"dist_to_retrain": m["pdudt"]["dist_to_retrain_before_noise"]},
                            "timing": {"time_ratio_retrain_over_pdudt": rep["time_ratio"]}}
    for name in ("control", "pdudt_es"):  # the control (no correction, same noise) and PDUDT(ES): not released
        if name in m:
            diag[f"{name}_model"] = {k: m[name][k] for k in ("test_acc", "mia_precision", "seconds",
                                                             "dist_to_retrain_before_noise") if k in m[name]}
    for name in ("pdudt", "pdudt_es", "control", "retrain", "perturbed_retrain"):  # after T rounds of Eq. (10)
        if "after_T_test_acc" in m.get(name, {}):
            diag[f"{name}_after_T_model"] = {"test_acc": m[name]["after_T_test_acc"]}
    cert = rep["certificate"]
    out = {
        "method": "pdudt", "profile": profile, "dataset": exp.dataset, "request": rep["request"].describe(),
        "metrics": metrics,
        "certificate": cert.to_dict() if cert is not None else None,
        "cost": {"grad_evals": int(rep["runs"]["pdudt"].cost.grad_evals), "seconds": m["pdudt"]["seconds"],
                 "es_seconds": m.get("pdudt_es", {}).get("seconds"),
                 "retrain_grad_evals": int(rep["state"].cost.grad_evals * (exp.n_clients - 1) / exp.n_clients),
                 "retrain_seconds": m["retrain"]["seconds"], "memory_bytes": rep["memory_bytes"]},
        "methods": m,
        "paper": {"table2_seconds": PAPER_TABLE2, "table3_mia_precision": PAPER_TABLE3},
        "settings": {k: getattr(exp, k) for k in PDUDT_PROFILES["quick"]},
    }
    return finish_result(out, Released(rep["theta"]["t1"]["pdudt"], rep["flat"], rep["dataset"], rep["request"]),
                         diagnostics=diag, config=rep["configs"]["pdudt"])
