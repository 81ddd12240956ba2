"""Auditing Newton/Fisher's certificates on a tiny decentralized convex task.

A certificate of :class:`~unlearnkit.methods.newton.Newton` compares the released model with the certifier
``x' + N(0, sigma^2 I)``, ``x'`` the exact minimiser of the retained objective (a function of the retained
data only, so a valid certifier). :func:`newton_worlds` builds both worlds as per-trial mechanisms for
:func:`unlearnkit.audit.audit`, with **fresh training randomness in every trial** (D-PSGD from the same
initialisation on new minibatches), and observes one of:

- ``"average"``: the average of the released models (what a sound certificate covers);
- ``"difference"``: ``x_0 - x_1``, a post-processing of the released tuple (any adversary may compute it);
  the certifier releases copies of one model, so its difference is 0. With ``release="local"`` this
  separates the worlds: the tuple is not covered, only its average is.

:func:`newton_audit` runs one audit; :func:`newton_audits` is the benchmark (``n_trials=2000`` per world).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
import torch

from ... import data as D
from ..._validate import check_choice, check_int, check_positive
from ...audit import AuditConfig, AuditResult, audit
from ...audit.mechanisms import per_trial
from ...core import Request
from ...decentral.gossip import GossipConfig
from ...methods.newton import Newton, NewtonConfig
from ...methods.newton.training import exact_minimizer, train_dpsgd
from ...methods.newton.certify import newton_certificate
from ...core import MAX_DIM, MAX_SAMPLES, MAX_STEPS
from ...graphs.sparse import MAX_SPARSE_CLIENTS
from ...graphs.topology import make_graph
from ...methods.newton.steps import newton_model_constants
from ...models import FlatParams, logreg

EXACT_SETTING = dict(scope="global", center_gradient=True)  # the exact global Newton step (Wu et al. 2026, Lemma 3)


@dataclass(frozen=True, kw_only=True)
class NewtonAuditTask:
    """Binary logistic regression (``||x|| <= 1``, float64) on ``n_clients`` in a ring, trained by D-PSGD.

    Client 0 holds ``m`` label-flipped points (they pull the model as hard as points can) and forgets them
    (``kind="samples"``) or leaves the network (``kind="client"``).
    Every trial starts from the public initialisation ``init_value * (1, ..., 1)``; ``rounds`` is small on
    purpose: training stops short of the optimum (``||grad f(x_bar)|| > 0``), which a certificate must
    account for.
    """

    n_clients: int = 4
    n_train: int = 80
    dim: int = 2
    m: int = 6
    weight_decay: float = 1.0
    rounds: int = 6
    lr: float = 0.3
    batch_size: int = 5
    init_value: float = 1.0
    kind: str = "samples"
    data_seed: int = 0

    def __post_init__(self) -> None:
        check_int("n_clients", self.n_clients, low=3, high=MAX_SPARSE_CLIENTS)
        check_int("n_train", self.n_train, low=4 * self.n_clients, high=MAX_SAMPLES)
        check_int("dim", self.dim, low=1, high=MAX_DIM)
        check_int("m", self.m, low=1, high=self.n_train // self.n_clients - 2)
        check_positive("weight_decay", self.weight_decay)
        check_int("rounds", self.rounds, low=1, high=MAX_STEPS)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1, high=MAX_SAMPLES)
        check_choice("kind", self.kind, ("samples", "client"))


def _setup(task: NewtonAuditTask):
    ds = D.load("synthetic", n_train=task.n_train, n_test=50, dim=task.dim, seed=task.data_seed)
    fed = D.partition(ds, task.n_clients, "iid", seed=task.data_seed)
    forget = np.sort(fed.client_indices[0][: task.m])
    y = ds.y_train.clone()
    y[torch.as_tensor(forget, device=y.device)] = 1 - y[torch.as_tensor(forget, device=y.device)]
    ds = ds.with_train(ds.x_train.double(), y)
    fed = D.partition(ds, task.n_clients, "iid", seed=task.data_seed)  # same split, the flipped labels
    flat = FlatParams(logreg(ds.input_shape, 1), loss="logistic")
    flat.module.double()
    G = make_graph("ring", task.n_clients)
    cfg = GossipConfig(rounds=task.rounds, lr=task.lr, batch_size=task.batch_size, weight_decay=task.weight_decay)
    if task.kind == "client":
        request = D.forget_client(fed, 0)
        parts = [fed.client_data(i) for i in range(1, task.n_clients)]
    else:
        request = Request("samples", forget, client=0)
        after = fed.without(request)
        parts = [after.client_data(i) for i in range(task.n_clients)]
    x_ret = exact_minimizer(flat, parts, weight_decay=task.weight_decay)
    init = torch.full((flat.d,), task.init_value, dtype=torch.float64, device=x_ret.device)
    return flat, fed, G, cfg, request, x_ret, init


def newton_worlds(config: NewtonConfig, task: NewtonAuditTask, *, observe: str = "average",
                  model_sigma: Optional[float] = None):
    """``(world_a, world_b, certificate)`` for :func:`unlearnkit.audit.audit` (see the module docstring).

    World A trains afresh in every trial and runs ``Newton().unlearn`` with ``config``; world B is the
    certifier ``x' + N(0, model_sigma^2 I)``, released as copies at every client. ``model_sigma`` defaults to
    the noise the certificate of a probe run says each model carries (sound: ``certificate.sigma``).
    """
    check_choice("observe", observe, ("average", "difference"))
    flat, fed, G, cfg, request, x_ret, init = _setup(task)

    def run(g: torch.Generator):
        state = train_dpsgd(flat, fed, G, cfg, generator=g, init=init)
        return Newton().unlearn(state, request, config, generator=g)

    probe = run(torch.Generator().manual_seed(0))
    cert = probe.certificate
    if model_sigma is None:
        model_sigma = float(cert.sigma) if cert.mode == "sound" else probe.extras["weight"] * float(cert.sigma)

    def world_a(g: torch.Generator) -> torch.Tensor:
        P = run(g).params
        return P.mean(0) if observe == "average" else P[0] - P[1]

    def world_b(g: torch.Generator) -> torch.Tensor:
        if observe == "difference":
            return torch.zeros_like(x_ret)
        z = torch.randn(x_ret.shape, generator=g, dtype=torch.float64, device=g.device).to(x_ret.device)
        return x_ret + model_sigma * z

    return per_trial(world_a), per_trial(world_b), cert, model_sigma


def newton_audit(config: NewtonConfig, *, task: Optional[NewtonAuditTask] = None, observe: str = "average",
                 model_sigma: Optional[float] = None, epsilon: Optional[float] = None, n_trials: int = 2000,
                 alpha: float = 0.05, seed: int = 0, label: str = "") -> AuditResult:
    """Audit one Newton configuration; ``epsilon`` (default: the certificate's) is the claim tested.

    The benchmark (the full audit) is ``n_trials=2000``; the CI tests use a few hundred.
    """
    task = task or NewtonAuditTask()
    world_a, world_b, cert, sig = newton_worlds(config, task, observe=observe, model_sigma=model_sigma)
    eps = float(cert.epsilon) if epsilon is None else float(epsilon)
    res = audit(world_a, world_b, delta=float(cert.delta) if cert.delta < 1 else config.delta,
                epsilon=eps if math.isfinite(eps) else None, config=AuditConfig(n_trials=n_trials, alpha=alpha),
                generator=torch.Generator().manual_seed(seed), label=label, mode=cert.mode, chunk=25)
    res.extras.update(model_sigma=sig, observe=observe, certificate=cert.to_dict(), fresh_training=True,
                      claimed_epsilon=eps)
    return res


def newton_audits(*, n_trials: int = 2000, alpha: float = 0.05, epsilon: float = 1.0, grad_tol: float = 0.5,
                  task: Optional[NewtonAuditTask] = None, seed: int = 0) -> list[AuditResult]:
    """The benchmark-size audits, fresh training in every trial:

    1. the sound sigma with ``tau = 0`` (what the lab reported before) on a D-PSGD start: refuted;
    2. the sound certificate at the stated ``grad_tol``, the average model: not refuted;
    3. the released tuple with ``release="local"`` (read through ``x_0 - x_1``): refuted (not covered);
    4. the same with ``release="average"``: not refuted;
    5. client-wise removal of client 0, sound, the average the remaining clients release: not refuted.
    """
    task = task or NewtonAuditTask()
    out = []
    msg, model = tau_zero_sigma(NewtonConfig(mode="none", epsilon=epsilon, **EXACT_SETTING), task)
    out.append(newton_audit(NewtonConfig(mode="none", sigma=msg, epsilon=epsilon, **EXACT_SETTING), task=task,
                            model_sigma=model, epsilon=epsilon, n_trials=n_trials, alpha=alpha, seed=seed,
                            label="sound sigma at tau = 0 (before)"))
    snd = NewtonConfig(mode="sound", grad_tol=grad_tol, epsilon=epsilon, **EXACT_SETTING)
    out.append(newton_audit(snd, task=task, n_trials=n_trials, alpha=alpha, seed=seed,
                            label=f"sound, grad_tol={grad_tol}, average model"))
    out.append(newton_audit(snd, task=task, observe="difference", n_trials=n_trials, alpha=alpha, seed=seed,
                            label="sound, release='local', local tuple (not covered)"))
    avg = NewtonConfig(mode="sound", grad_tol=grad_tol, epsilon=epsilon, release="average", **EXACT_SETTING)
    out.append(newton_audit(avg, task=task, observe="difference", n_trials=n_trials, alpha=alpha, seed=seed,
                            label="sound, release='average', tuple"))
    out.append(newton_audit(snd, task=replace(task, kind="client"), n_trials=n_trials,
                            alpha=alpha, seed=seed, label="sound, client-wise, average of the remaining clients"))
    return out


def tau_zero_sigma(config: NewtonConfig, task: Optional[NewtonAuditTask] = None) -> tuple[float, float]:
    """``(message sigma, model sigma)`` of the sound calibration with ``tau = 0`` (an exact optimum assumed):
    the noise for an exact optimum, applied to a D-PSGD start that is not one."""
    task = task or NewtonAuditTask()
    flat, fed, G, cfg, request, x_ret, init = _setup(task)

    consts = newton_model_constants(flat, weight_decay=task.weight_decay)
    n0 = fed.client_indices[0].size
    N = fed.n_clients
    client = task.kind == "client"
    sig, cert = newton_certificate(epsilon=config.epsilon, delta=config.delta, mode="sound", kind=task.kind,
                                   fractions={0: (n0, n0) if client else (task.m, n0)}, n_clients=N,
                                   constants=consts, weight=1.0 if client else 1.0 / N,
                                   tau=0.0, scope=config.scope, center_gradient=config.center_gradient,
                                   curvature=config.curvature)
    return sig[0], float(cert.sigma)

