"""RR-DU (Lamri & Maniatakos): the backdoor experiment behind ``python -m unlearnkit run rrdu | ddp | dp_sgd_walk``.

Digest 000 sections 4-5: Figure 1 (every method from the same backdoored model), Table 3 (the p-sweep without
noise and projection), Tables 14 and 16 (sweeps over rho and epsilon). The methods are the classes of
:mod:`unlearnkit.methods.rrdu`; this module builds the world (data, poison, original and retrained models),
runs them, sweeps and writes the CLI's result dictionary.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from ... import data as D
from ...runtime import make_generator
from ..._validate import check_choice, check_int, check_probability
from ...core import Callback, Request, Result, TrainedState
from ...data import DatasetUnavailableError
from ...decentral.token import TokenConfig
from ...evaluate import accuracy, backdoor_success, report
from ...methods.rrdu import (DDPWalk, DDPWalkConfig, DPSGDWalk, DPSGDWalkConfig, FinetuneWalk, RRDU, RetrainWalk,
                             RRDUConfig, WalkConfig)
from ...methods.rrdu.baselines import NetworkSGD
from ...methods.rrdu.certify import rrdu_sigma
from ...models import FlatParams, make_model
from ..contract import Released, finish_result, json_safe
from ..memo import memoized_on
from ...core import MAX_SAMPLES, MAX_STEPS
from ...graphs.sparse import MAX_SPARSE_CLIENTS


# ----------------------------------------------------------------------------------------------------------
# The backdoor experiment (digest 000 sections 4-5; Figure 1, Table 3, Tables 14-16)
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class BackdoorSetup:
    """Settings of the backdoor experiment: BadNets poison at client ``u``, forget set = the poison.

    ``quick``: digits 8x8 (135 samples per client, 60 of u's poisoned with a 3x3 patch), an MLP, Adam as in
    the paper, 60 + 60 hops of 3 local steps: seconds on a CPU. ``paper_mnist`` / ``paper_cifar10``: the digest's
    appendix (N = 10, T = T_unlearn = 100, p = 0.1, s = 4, Adam lr 0.005, batch 64, m = 1000, eps = 1,
    delta = 1e-5, rho 10.82 / 56.30, L 0.5 / 0.2, DDP R = 10 and L = 1, DP-SGD C = 5), with one local epoch
    per hop (digest P2: 100 single steps cannot train these models) and our GroupNorm CNN in place of
    FLNet/ResNet-18 (BatchNorm remembers the forget set, digest P10).
    """

    dataset: str = "digits"
    n_clients: int = 10
    u: int = 0
    m: int = 60
    target: int = 0
    patch: int = 3
    model: str = "mlp"
    hidden: tuple[int, ...] = (64,)
    T_train: int = 60
    T_unlearn: int = 60
    local_steps: int = 3
    lr: float = 0.01
    optimizer: str = "adam"
    batch_size: int = 16
    s: int = 1
    p: float = 0.1
    epsilon: float = 1.0
    delta: float = 1e-5
    accountant: str = "A"
    clip_L: float = 0.5
    rho: float = 10.0
    variant: str = "lightweight"
    ddp_R: float = 10.0
    ddp_L: float = 1.0
    ddp_calibration: str = "alg3"
    dpsgd_C: float = 5.0
    eval_every: int = 10

    def __post_init__(self) -> None:
        check_int("n_clients", self.n_clients, low=2, high=MAX_SPARSE_CLIENTS)
        check_int("u", self.u, low=0, high=self.n_clients - 1)
        check_int("m", self.m, low=1, high=MAX_SAMPLES)
        for name in ("T_train", "T_unlearn", "local_steps", "batch_size", "s"):
            check_int(name, getattr(self, name), low=1, high=MAX_STEPS)
        check_probability("p", self.p)
        check_choice("ddp_calibration", self.ddp_calibration, ("alg3", "netdp_group_m", "netdp_rdp", "group_sound"))

    def walk_config(self, hops: int, route_seed: int) -> WalkConfig:
        """The token walk of this setup (Adam/SGD, ``s`` minibatches, ``local_steps`` per hop) for ``hops``."""
        token = TokenConfig(lr=self.lr, batch_size=self.batch_size, local_batches=self.s, optimizer=self.optimizer)
        return WalkConfig(token=token, hops=hops, local_steps=self.local_steps, eval_every=self.eval_every,
                          route_seed=route_seed)

    def rrdu_config(self, **changes: Any) -> RRDUConfig:
        """The :class:`RRDUConfig` of this setup, with ``changes`` applied."""
        base = dict(T_unlearn=self.T_unlearn, p=self.p, s=self.s, batch_size=self.batch_size,
                    lr=self.lr, epsilon=self.epsilon, delta=self.delta, accountant=self.accountant,
                    clip_L=self.clip_L, rho=self.rho, variant=self.variant, optimizer=self.optimizer,
                    local_steps=self.local_steps, eval_every=self.eval_every)
        base.update(changes)
        return RRDUConfig(**base)


RRDU_PROFILES: dict[str, BackdoorSetup] = {
    "quick": BackdoorSetup(),
    "paper_mnist": BackdoorSetup(dataset="mnist", m=1000, model="cnn", hidden=(), T_train=100, T_unlearn=100,
                                 local_steps=94, lr=0.005, optimizer="adam", batch_size=64, s=4, rho=10.82,
                                 clip_L=0.5, eval_every=5),
    "paper_cifar10": BackdoorSetup(dataset="cifar10", m=1000, model="cnn", hidden=(), patch=4, T_train=100,
                                   T_unlearn=100, local_steps=78, lr=0.005, optimizer="adam", batch_size=64, s=4,
                                   rho=56.30, clip_L=0.2, eval_every=5),
}

BACKDOOR_METHODS = ("rrdu", "finetune", "ddp", "dp_sgd", "retrain")


@dataclass
class BackdoorWorld:
    """Everything the backdoor experiment shares between methods: data, poison, model, original, retrained."""

    setup: BackdoorSetup
    flat: Any
    backdoor: Any
    federation: Any
    request: Request
    original: TrainedState
    retrained: Optional[Result]
    x_trig_all: Tensor
    seed: int

    @property
    def dataset(self) -> Any:
        return self.backdoor.dataset

    def metrics(self, theta: Tensor) -> dict[str, float]:
        """Clean accuracy, ASR on triggered non-target images, ASR on all triggered images (digest P17)."""
        ds = self.dataset
        with torch.no_grad():
            asr_all = float((self.flat.predict(theta, self.x_trig_all) == self.backdoor.target).float().mean())
        return {"clean_acc": accuracy(self.flat, theta, ds.x_test, ds.y_test),
                "asr": backdoor_success(self.flat, theta, self.backdoor), "asr_all": asr_all}


def build_world(setup: BackdoorSetup, *, seed: int = 0, retrain: bool = True, progress: bool = False,
                device: Any = None, root: Any = None, without_forgotten: bool = False) -> BackdoorWorld:
    """Load data, plant the backdoor at ``u``, train the original model by token SGD and (optionally) the
    retrained reference on D minus D_f from the same initialisation.

    ``without_forgotten=True`` is the certifier's world: the poisoned rows are removed from the raw data
    before anything is trained (every other row stays at its client) and ``request`` is ``None``.
    """
    ds = D.load(setup.dataset, device=device, seed=seed, root=root)
    fed = D.partition(ds, setup.n_clients, seed=seed)
    own = np.asarray(fed.client_indices[setup.u])
    if setup.m >= own.size:
        raise ValueError(f"m={setup.m} is out of range: client u={setup.u} holds {own.size} samples")
    rng = np.random.default_rng(seed)
    poison = rng.choice(own, size=setup.m, replace=False)
    bd = D.federated.add_backdoor(ds, poison, target=setup.target, patch=setup.patch)
    fed_p = D.Federation(bd.dataset, fed.client_indices, fed.scheme)
    request = bd.request(client=setup.u)
    if without_forgotten:
        bd = dataclasses.replace(bd, dataset=D.federated.without_rows(bd.dataset, poison), indices=np.zeros(0, dtype=np.int64))
        fed_p = D.Federation(bd.dataset, D.federated.renumbered(fed.client_indices, poison, ds.n_train), fed.scheme)
        request, retrain = None, False
    gen = make_generator(seed)
    kwargs = {"hidden": setup.hidden} if setup.model == "mlp" else {}
    module = make_model(setup.model, ds.input_shape, ds.n_classes, generator=gen, **kwargs).to(ds.x_train.device)
    flat = FlatParams(module)
    init = flat.init()
    x_trig_all = D.federated.stamp_trigger(ds.x_test, setup.patch, bd.value)
    world = BackdoorWorld(setup, flat, bd, fed_p, request, None, None, x_trig_all, seed)  # type: ignore[arg-type]
    world.original = NetworkSGD().train(flat, fed_p, setup.walk_config(setup.T_train, seed + 1),
                                        generator=make_generator(seed + 1), init=init, monitor=world.metrics,
                                        progress=progress)
    if retrain:
        world.retrained = RetrainWalk(monitor=world.metrics).unlearn(
            world.original.replace(federation=fed_p), request, setup.walk_config(setup.T_train, seed + 2),
            generator=make_generator(seed + 2), progress=progress)
    return world


def history_curve(history: list[dict], offset: int = 0) -> dict[str, list[float]]:
    """The monitored rows of a walk's ``history`` as ``{hop, clean_acc, asr, asr_all}`` (hops shifted by
    ``offset``, e.g. ``T_train`` for an unlearning run that continues the training walk)."""
    rows = [r for r in history if "clean_acc" in r]
    return {"hop": [offset + int(r["hop"]) for r in rows], "clean_acc": [r["clean_acc"] for r in rows],
            "asr": [r["asr"] for r in rows], "asr_all": [r["asr_all"] for r in rows]}


def run_method(world: BackdoorWorld, method: str, *, seed: int = 0, callback: Optional[Callback] = None,
               **changes: Any) -> dict[str, Any]:
    """Run one unlearning method of the backdoor experiment from the original model.

    ``method`` in :data:`BACKDOOR_METHODS`, each an unlearner class with ``unlearn(state, request, config,
    *, generator, callback)``: :class:`RRDU`, :class:`FinetuneWalk`, :class:`DDPWalk`, :class:`DPSGDWalk`;
    ``"retrain"`` reports the world's retrained model (:class:`RetrainWalk`, run by :func:`build_world`).
    ``changes`` override :class:`RRDUConfig` fields for ``"rrdu"`` (``p``, ``epsilon``, ``rho``, ``variant``,
    ``noise``, ``project``, ...). Returns ``{"method", "final": metrics, "curve": {hop, clean_acc, asr,
    asr_all}, "certificate", "sigma", "cost"}``.
    """
    check_choice("method", method, BACKDOOR_METHODS)
    if callback is None:  # the same run on the same world (a frontier's, then an explorer's): computed once
        return memoized_on(world_parts(world), "rrdu_run_method", (world.setup, world.seed, method, seed, changes),
                           lambda: _run_method(world, method, seed=seed, callback=None, **changes))
    return _run_method(world, method, seed=seed, callback=callback, **changes)


def world_parts(world: BackdoorWorld) -> tuple:
    """The objects a run reads from ``world`` (compared by identity by the memo; ``setup`` goes by value)."""
    return (world.flat, world.backdoor, world.federation, world.request, world.original, world.retrained,
            world.x_trig_all)


def _run_method(world: BackdoorWorld, method: str, *, seed: int, callback: Optional[Callback],
                **changes: Any) -> dict[str, Any]:
    st = world.setup
    extras: dict[str, Any] = {}
    if method == "retrain":
        res = world.retrained
        if res is None:
            raise ValueError("the world was built with retrain=False; no retrained model to report")
    else:
        gen = make_generator(1000 + seed)
        state = world.original.replace(federation=world.federation)
        walk = st.walk_config(st.T_unlearn, 1000 + seed)
        if method == "rrdu":
            unlearner, cfg = RRDU(monitor=world.metrics), st.rrdu_config(**changes)
        elif method == "finetune":
            unlearner, cfg = FinetuneWalk(monitor=world.metrics), walk
        elif method == "ddp":
            unlearner = DDPWalk(monitor=world.metrics)
            cfg = DDPWalkConfig(**_fields(walk), epsilon=st.epsilon, delta=st.delta, L=st.ddp_L, R=st.ddp_R,
                                calibration=st.ddp_calibration, m=st.m)
        else:
            unlearner = DPSGDWalk(monitor=world.metrics)
            cfg = DPSGDWalkConfig(**_fields(walk), epsilon=st.epsilon, delta=st.delta, C=st.dpsgd_C)
        res = unlearner.unlearn(state, world.request, cfg, generator=gen, callback=callback)
        if method == "rrdu":
            extras = {"path": res.extras["path"], "u": res.extras["u"]}
    cert = res.certificate
    offset = 0 if method == "retrain" else st.T_train
    return {"method": method, "final": world.metrics(res.params), "curve": history_curve(res.history, offset),
            "params": res.params, "certificate": None if cert is None else cert.to_dict(),
            "sigma": res.extras.get("sigma"), "cost": res.cost.to_dict(),
            "config": None if method == "retrain" else json_safe(cfg), **extras}


def _fields(cfg: WalkConfig) -> dict[str, Any]:
    return {f.name: getattr(cfg, f.name) for f in dataclasses.fields(WalkConfig)}


def sweep(world: BackdoorWorld, param: str, values: Sequence[Any], *, seed: int = 0, **fixed: Any) -> list[dict]:
    """RR-DU over one knob (the paper's Table 3 for ``param="p"`` with ``noise=False, project=False``;
    Tables 14 and 16 for ``"rho"`` and ``"epsilon"``): one row ``{param, clean_acc, asr, asr_all, sigma}`` per value."""
    rows = []
    for v in values:
        r = run_method(world, "rrdu", seed=seed, **{**fixed, param: v})
        rows.append({param: v, **r["final"], "sigma": r["sigma"]})
    return rows


def backdoor_experiment(profile: str = "quick", *, seed: int = 0, methods: Sequence[str] = BACKDOOR_METHODS,
                        progress: bool = False, setup: Optional[BackdoorSetup] = None, **changes: Any) -> dict:
    """The paper's Figure 1 on one profile: every method from the same original model; returns
    ``{"setup", "original": {final, curve}, "methods": {name: run}}`` (parameters dropped)."""
    if setup is None:
        check_choice("profile", profile, tuple(RRDU_PROFILES))
        setup = RRDU_PROFILES[profile]
    world = build_world(setup, seed=seed, retrain="retrain" in methods, progress=progress)
    out = {"setup": {k: getattr(setup, k) for k in setup.__dataclass_fields__},
           "original": {"final": world.metrics(world.original.params),
                        "curve": history_curve(world.original.history)},
           "methods": {}}
    for name in methods:
        run = run_method(world, name, seed=seed, **(changes if name == "rrdu" else {}))
        run.pop("params")
        out["methods"][name] = run
    return out


# ----------------------------------------------------------------------------------------------------------
# CLI runners: python -m unlearnkit run rrdu | ddp | dp_sgd_walk
# ----------------------------------------------------------------------------------------------------------

def _profile_setup(profile: str, dataset: Optional[str]) -> BackdoorSetup:
    if profile == "quick":
        return RRDU_PROFILES["quick"]
    name = f"paper_{dataset or 'mnist'}"
    check_choice("dataset", name[6:], ("mnist", "cifar10"))
    return RRDU_PROFILES[name]


def _cli_result(method: str, profile: str, seed: int, progress: bool, dataset: Optional[str],
                overrides: Optional[dict] = None) -> dict:
    setup = _profile_setup(profile, dataset)
    if overrides:  # e.g. a tiny world for tests: BackdoorSetup fields
        setup = dataclasses.replace(setup, **overrides)
    try:
        world = build_world(setup, seed=seed, progress=progress)
    except DatasetUnavailableError as exc:
        raise DatasetUnavailableError(
            f"profile {profile!r} needs {setup.dataset} (the paper's data), which is not on this machine: {exc}. "
            "The 'quick' profile runs on the bundled digits instead.") from exc
    run = run_method(world, {"rrdu": "rrdu", "ddp": "ddp", "dp_sgd_walk": "dp_sgd"}[method], seed=seed)
    metrics = report(world.flat, run["params"], world.dataset, world.request, retrained=world.retrained.params,
                     original=world.original.params, backdoor=world.backdoor)
    metrics.update({"asr_all": run["final"]["asr_all"], "retrain_asr_all": world.metrics(world.retrained.params)["asr_all"],
                    "original_asr_all": world.metrics(world.original.params)["asr_all"]})
    out = {"method": method, "profile": profile, "dataset": setup.dataset, "request": world.request.describe(),
           "metrics": metrics, "certificate": run["certificate"], "sigma": run["sigma"],
           "cost": {"grad_evals": run["cost"]["grad_evals"], "seconds": run["cost"]["seconds"],
                    "retrain_grad_evals": world.retrained.cost.grad_evals,
                    "retrain_seconds": world.retrained.cost.seconds},
           "curve": run["curve"], "original_curve": history_curve(world.original.history),
           "retrain_curve": history_curve(world.retrained.history),
           "setup": {k: getattr(setup, k) for k in setup.__dataclass_fields__}}
    return finish_result(out, Released(run["params"], world.flat, world.dataset, world.request, world.backdoor),
                         config=run["config"])


def run_rrdu(*, profile: str, seed: int = 0, progress: bool = False, dataset: Optional[str] = None,
             **overrides: Any) -> dict:
    """The registry's runner; ``overrides`` replace :class:`BackdoorSetup` fields of the profile."""
    return _cli_result("rrdu", profile, seed, progress, dataset, overrides)


def run_ddp(*, profile: str, seed: int = 0, progress: bool = False, dataset: Optional[str] = None,
            **overrides: Any) -> dict:
    """The registry's runner; ``overrides`` replace :class:`BackdoorSetup` fields of the profile."""
    return _cli_result("ddp", profile, seed, progress, dataset, overrides)


def run_dp_sgd_walk(*, profile: str, seed: int = 0, progress: bool = False, dataset: Optional[str] = None,
                    **overrides: Any) -> dict:
    """The registry's runner; ``overrides`` replace :class:`BackdoorSetup` fields of the profile."""
    return _cli_result("dp_sgd_walk", profile, seed, progress, dataset, overrides)


def accountant_sigma_rows(*, epsilon: float, delta: float, n_clients: int, p: float, T_unlearn: int, L: float,
                          accountants: Sequence[str] = "ABCD") -> list[dict[str, Any]]:
    """The gradient noise each accountant asks for at one ``(epsilon, delta)``, one row per accountant.

    ``sigma`` is :func:`~unlearnkit.methods.rrdu.certify.rrdu_sigma` with the other arguments (none of the four
    is a certificate for RR-DU: see that module). Returns ``[{"accountant", "sigma"}, ...]`` in the order of
    ``accountants``.
    """
    return [{"accountant": a, "sigma": rrdu_sigma(a, epsilon=epsilon, delta=delta, n_clients=n_clients, p=p,
                                                  T_unlearn=T_unlearn, L=L)} for a in accountants]
