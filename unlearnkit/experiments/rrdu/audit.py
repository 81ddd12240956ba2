"""Audit worlds for RR-DU and the DDP baseline on a small synthetic walk.

The task (:class:`WalkAuditTask`) is the issue's: ``N = 4`` clients of 50 points, 45 of u's 50 points
label-flipped and forgotten, logistic regression, fresh training in every trial. World A trains on D and
unlearns; world B (the certifier ``U(empty, A(D minus D_f))``) trains on D minus D_f and runs the same
procedure, which for RR-DU's exact variant, DDP and the noisy DDP never reads D_f. The audit statistics are
:func:`unlearnkit.audit.audit`; a lower bound above the certified epsilon refutes the certificate.

- :func:`rrdu_worlds`: RR-DU (exact variant) from a noise-free start (accountant C's old claim) or, with
  ``noisy_start=True``, from :class:`~unlearnkit.methods.rrdu.NoisyWalkTraining` with accountant ``"S"``, or
  (``accountant="M"``) as RR-DU's certified quick profile runs (:func:`~unlearnkit.experiments.rrdu.frontier.sound_run`): the training
  route drawn from its own seed, fixed in both worlds and every trial (it is independent of the data, so the
  guarantee conditional on it is the one certified), the training noise calibrated on its realised visits to u
  under the exact Gaussian composition, and accountant ``"M"``'s certificate as the claim (kind
  ``"rrdu_mixture"``). The output is the observer's *first received model* after the request (the start
  itself when the token goes to the observer first).
- :func:`ddp_worlds`: the DDP baseline (``DDPWalk`` from a noise-free original, ``group_sound``) or, with
  ``noisy=True``, the sound DDP baseline (noisy training, deletion = nothing).
- :func:`walk_audit_benchmark`: all of them at full trial counts (the integrator's benchmark).

``certifier_free=True`` checks ``(2 eps, (1 + e^eps) delta)`` between the two worlds: any valid certifier would
force it, so a refutation then rescues no certificate by another choice of certifier.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch

from ... import data as D
from ..._validate import check_choice, check_int, check_positive
from ...audit import AuditConfig, AuditResult, audit
from ...audit.mechanisms import per_trial
from ...core import Request, TrainedState
from ...core import MAX_SAMPLES, MAX_STEPS
from ...decentral.token import TokenConfig
from ...graphs.sparse import MAX_SPARSE_CLIENTS
from ...graphs.walks import rrdu_route, uniform_route
from ...methods.rrdu import RRDU, DDPWalk, DDPWalkConfig, RRDUConfig, WalkConfig
from ...methods.rrdu.baselines import NetworkSGD
from ...methods.rrdu.noisy import NoisyDDP, NoisyDDPConfig, NoisyWalkConfig, NoisyWalkTraining
from ...models import FlatParams, make_model
from ...privacy import analytic_gaussian_sigma
from ...runtime import make_generator


@dataclass(frozen=True, kw_only=True)
class WalkAuditTask:
    """The issue's small walk: ``n_clients`` clients of ``n_per_client`` points, ``m`` of u's flipped and forgotten."""

    n_clients: int = 4
    n_per_client: int = 50
    m: int = 45
    dim: int = 2
    u: int = 0
    observer: int = 1
    train_hops: int = 20
    local_steps: int = 2
    lr: float = 0.5
    batch_size: int = 10
    T_unlearn: int = 20
    L: float = 1.0
    R: float = 1.0
    epsilon: float = 1.0
    delta: float = 1e-5
    data_seed: int = 0

    def __post_init__(self) -> None:
        check_int("n_clients", self.n_clients, low=2, high=MAX_SPARSE_CLIENTS)
        check_int("n_per_client", self.n_per_client, low=2, high=MAX_SAMPLES)
        check_int("m", self.m, low=1, high=self.n_per_client - 1)
        check_int("u", self.u, low=0, high=self.n_clients - 1)
        check_int("observer", self.observer, low=0, high=self.n_clients - 1)
        if self.observer == self.u:
            raise ValueError(f"observer={self.observer} must differ from u={self.u}")
        for name in ("train_hops", "local_steps", "batch_size", "T_unlearn"):
            check_int(name, getattr(self, name), low=1, high=MAX_STEPS)
        for name in ("lr", "L", "R", "epsilon"):
            check_positive(name, getattr(self, name))


def walk_setup(task: WalkAuditTask):
    """``(flat, federation, request, init, token)``: data, the flipped forget set at ``u``, a fixed init."""

    n = task.n_clients * task.n_per_client
    ds = D.load("synthetic", device="cpu", seed=task.data_seed, n_train=n, n_test=50, dim=task.dim)
    fed = D.partition(ds, task.n_clients, seed=task.data_seed)
    forget = np.sort(np.asarray(fed.client_indices[task.u])[: task.m])
    y = ds.y_train.clone()
    y[torch.as_tensor(forget, device=y.device)] = 1 - y[torch.as_tensor(forget, device=y.device)]
    fed = type(fed)(ds.with_train(ds.x_train, y), fed.client_indices, fed.scheme)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, generator=make_generator(task.data_seed)),
                      loss="logistic")
    token = TokenConfig(lr=task.lr, batch_size=task.batch_size)
    return flat, fed, Request("samples", forget, client=task.u), flat.init().detach().clone(), token


def train_walk_model(task: WalkAuditTask, flat, fed, init, token, g: torch.Generator, *, noisy: bool,
           sigma: Optional[float] = None, route_seed: Optional[int] = None) -> TrainedState:
    if noisy:
        cfg = NoisyWalkConfig(token=token, hops=task.train_hops, local_steps=task.local_steps, epsilon=task.epsilon,
                              delta=task.delta, L=task.L, R=task.R, sigma=sigma, route_seed=route_seed)
        return NoisyWalkTraining().train(flat, fed, cfg, generator=g, init=init)
    cfg = WalkConfig(token=token, hops=task.train_hops, local_steps=task.local_steps)
    return NetworkSGD().train(flat, fed, cfg, generator=g, init=init)


def _realised_route_training(task: WalkAuditTask) -> dict:
    """Accountant ``"M"``'s training as the certified profile runs it: the route drawn first from its own seed
    (``data_seed + 1``, the same in both worlds), the noise ``2 L sqrt(steps at u) / mu(epsilon, delta)`` with
    ``mu = 1 / analytic_gaussian_sigma`` (the exact variant's u-steps read no D_f: the training takes the whole
    budget; :func:`~unlearnkit.experiments.rrdu.frontier.split_train_sigma` with ``split = 1``)."""

    seed = task.data_seed + 1
    route = uniform_route(task.n_clients, task.train_hops, rng=np.random.default_rng(seed))
    steps = max(1, int(np.sum(route == task.u))) * task.local_steps
    return {"sigma": 2 * task.L * math.sqrt(steps) * analytic_gaussian_sigma(task.epsilon, task.delta),
            "route_seed": seed}


def rrdu_worlds(task: WalkAuditTask, *, noisy_start: bool = False, sigma: Optional[float] = None,
                accountant: str = "S"):
    """``(world_a, world_b, claimed_epsilon, certificate)`` of RR-DU (exact variant, ``p = 1/N``).

    Noise-free start: accountant C at ``task.epsilon`` (the old claim, ``claimed_epsilon`` its diagnostic
    epsilon). ``noisy_start``: the original trained by the noisy walk at ``task.epsilon`` and accountant
    ``"S"`` (its a-priori target: the realised certificate varies with the route), or ``accountant="M"``: the
    certified profile's pipeline (module docstring), whose claim is its certificate's epsilon."""

    check_choice("accountant", accountant, ("S", "M"))
    if accountant == "M" and not noisy_start:
        raise ValueError("accountant='M' needs noisy_start=True: it certifies nothing from a noise-free start")
    train_kw = _realised_route_training(task) if accountant == "M" else {}
    flat, fed, request, init, token = walk_setup(task)
    retain_fed = fed.without(request)
    full_idx = np.sort(np.concatenate(fed.client_indices))
    cfg = RRDUConfig(T_unlearn=task.T_unlearn, variant="exact", clip_L=task.L, rho=task.R, lr=task.lr,
                     batch_size=task.batch_size, s=1, epsilon=task.epsilon, delta=task.delta,
                     accountant=accountant if noisy_start else "C", sigma=sigma)
    p = 1.0 / task.n_clients

    def view(train_fed, g: torch.Generator) -> torch.Tensor:
        st = train_walk_model(task, flat, train_fed, init, token, g, noisy=noisy_start, **train_kw)
        # the partition and index set before the deletion (u holds D_f; the walk drops it): in world B the
        # certifier runs the same procedure on a model that never saw D_f, with the request it would receive
        st = st.replace(federation=fed, train_indices=full_idx)
        seed = int(torch.randint(2**62, (), generator=g, device=g.device).item())
        route = rrdu_route(task.n_clients, task.u, p, task.T_unlearn, rng=np.random.default_rng(seed))
        hits = np.flatnonzero(route == task.observer)
        if hits.size == 0:
            return torch.full_like(st.params, 1e3)  # the observer saw nothing (same sentinel in both worlds)
        k = int(hits[0])
        if k == 0:
            return st.params
        return RRDU(route=route[:k]).unlearn(st, request, cfg, generator=g).params

    probe_state = train_walk_model(task, flat, fed, init, token, torch.Generator().manual_seed(0), noisy=noisy_start,
                         **train_kw)
    cert = RRDU().unlearn(probe_state.replace(federation=fed), request, cfg,
                          generator=torch.Generator().manual_seed(1)).certificate
    if accountant == "M":  # the fixed training route makes the certificate the same in every trial
        claimed = float(cert.epsilon)
    else:
        claimed = task.epsilon if noisy_start else float(cert.constants["epsilon_diagnostic"])
    # a fixed post-processing of the view (it keeps every DP guarantee, so the audit stays valid): views far
    # from the noise-free starts (a noisy u-step happened first) collapse to one point, so the test looks at
    # the noise-free views, where the start-model gap shows
    ref_b = train_walk_model(task, flat, retain_fed, init, token, torch.Generator().manual_seed(2), noisy=False).params
    centre, radius = (probe_state.params + ref_b) / 2, 3 * float((probe_state.params - ref_b).norm()) + 1e-6

    def squash(v: torch.Tensor) -> torch.Tensor:
        return v if float((v - centre).norm()) <= radius else centre + 2 * radius

    return (per_trial(lambda g: squash(view(fed, g))), per_trial(lambda g: squash(view(retain_fed, g))), claimed,
            cert)


def ddp_worlds(task: WalkAuditTask, *, noisy: bool = False, calibration: str = "group_sound"):
    """``(world_a, world_b, claimed_epsilon, certificate)`` of the DDP baseline: ``DDPWalk`` (``calibration``)
    from a noise-free original, or (``noisy``) :class:`~unlearnkit.methods.rrdu.NoisyDDP` after noisy training."""

    flat, fed, request, init, token = walk_setup(task)
    retain_fed = fed.without(request)
    full_idx = np.sort(np.concatenate(fed.client_indices))
    if noisy:
        method, cfg = NoisyDDP(), NoisyDDPConfig()
    else:
        method = DDPWalk()
        cfg = DDPWalkConfig(token=token, hops=task.T_unlearn, local_steps=task.local_steps, epsilon=task.epsilon,
                            delta=task.delta, L=task.L, R=task.R, calibration=calibration)

    def out(train_fed, g: torch.Generator) -> torch.Tensor:
        # world B: the same deletion run on a model that never saw D_f, presented with the partition and index
        # set it would receive (the request validator then sees indices the index set holds)
        st = train_walk_model(task, flat, train_fed, init, token, g, noisy=noisy).replace(federation=fed, train_indices=full_idx)
        return method.unlearn(st, request, cfg, generator=g).params

    probe = train_walk_model(task, flat, fed, init, token, torch.Generator().manual_seed(0), noisy=noisy).replace(federation=fed)
    cert = method.unlearn(probe, request, cfg, generator=torch.Generator().manual_seed(1)).certificate
    claimed = float(cert.constants.get("epsilon_diagnostic", task.epsilon)) if not noisy else task.epsilon
    return per_trial(lambda g: out(fed, g)), per_trial(lambda g: out(retain_fed, g)), claimed, cert


def audit_walk(kind: str, *, task: Optional[WalkAuditTask] = None, n_trials: int = 200, alpha: float = 0.05,
               seed: int = 0, certifier_free: bool = False, progress: bool = False, **options: Any) -> AuditResult:
    """Audit one world pair: ``kind`` in ``"rrdu"``, ``"rrdu_noisy"``, ``"rrdu_mixture"`` (accountant ``"M"``),
    ``"ddp"``, ``"ddp_noisy"``.

    The claim checked is the world's ``claimed_epsilon`` at ``task.delta`` (or, ``certifier_free``,
    ``(2 eps, (1 + e^eps) delta)``); ``extras`` keep the certificate's mode and ``certified`` flag."""

    task = task or WalkAuditTask()
    makers = {"rrdu": lambda: rrdu_worlds(task, **options), "rrdu_noisy": lambda: rrdu_worlds(task, noisy_start=True,
                                                                                              **options),
             "rrdu_mixture": lambda: rrdu_worlds(task, noisy_start=True, accountant="M", **options),
              "ddp": lambda: ddp_worlds(task, **options), "ddp_noisy": lambda: ddp_worlds(task, noisy=True, **options)}
    if kind not in makers:
        raise ValueError(f"kind={kind!r} is not valid: expected one of {tuple(makers)}")
    world_a, world_b, claimed, cert = makers[kind]()
    eps, delta = claimed, task.delta
    if certifier_free:
        eps, delta = 2 * claimed, (1 + math.exp(claimed)) * task.delta
    res = audit(world_a, world_b, delta=delta, epsilon=eps, config=AuditConfig(n_trials=n_trials, alpha=alpha),
                generator=make_generator(seed), label=kind, mode=cert.mode, progress=progress, chunk=25)
    res.extras.update(claimed_epsilon=claimed, certificate_mode=cert.mode, certified=cert.certified,
                      certificate_epsilon=float(cert.epsilon), certifier_free=certifier_free, sigma=cert.sigma)
    return res


def walk_audit_benchmark(*, n_trials: int = 2000, task: Optional[WalkAuditTask] = None, seed: int = 0,
                         progress: bool = False) -> list[AuditResult]:
    """The full audits of findings 1-2 (old claims, certifier-free versions, the sound replacements)."""
    runs = [("rrdu", False), ("rrdu", True), ("ddp", False), ("ddp", True), ("rrdu_noisy", False),
            ("ddp_noisy", False), ("rrdu_mixture", False)]
    return [audit_walk(k, task=task, n_trials=n_trials, seed=seed, certifier_free=cf, progress=progress)
            for k, cf in runs]
