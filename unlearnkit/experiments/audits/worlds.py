"""The audit worlds the registry-wide audit needed and no earlier module built.

Each function returns ``(world_a, world_b, claimed_epsilon, certificate)``: two per-trial mechanisms
``(n, generator) -> (n, d)`` for :func:`unlearnkit.audit.audit` with **fresh training randomness in every
trial** (the valid design of :mod:`unlearnkit.experiments.audits.methods`: the certificate compares two laws over all of the
randomness, so each trial draws both worlds afresh), the epsilon the world's certificate states (``None``
when it states none) and the certificate itself. A mode a world cannot audit raises
:class:`~unlearnkit.experiments.audits.methods.ModeNotSupported` with the reason.

- :func:`model_clipping_worlds`: model clipping (Koloskova et al. 2025, eq. 4) on :class:`~unlearnkit.experiments.audits.methods.ToyTask`;
  paper = Lemma A.2 as printed (``tight=False``), sound = the tight recursion; certifier: the same procedure
  on the retrained model (clipping makes it hold for every pair of starts).
- :func:`dp_sgd_worlds`: DP-SGD with group privacy over the forget set (Sec. 4.2) on the toy task; the
  observer sees the trained model (the deletion is free: the released model is a post-processing of it).
- :func:`dp_sgd_walk_worlds`: RR-DU's DP-SGD baseline on the walk task (:class:`~unlearnkit.experiments.rrdu.audit.WalkAuditTask`).
- :func:`pdudt_worlds`: PDUDT (Qiao et al. 2025) on a small synthetic gradient-gossip world; the observer
  sees the final released model (the average of the remaining clients' models).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from ... import data as D
from ..._validate import check_int, check_positive, check_range
from ...audit.mechanisms import per_trial
from .recipes import ModeNotSupported, ToyTask, toy_setup, unlearner_worlds
from ...core import MAX_DIM, MAX_SAMPLES, MAX_STEPS, Request
from ...decentral.gradient_gossip import GradientGossipConfig, run_gradient_gossip
from ...graphs import dynamic
from ...graphs.sparse import MAX_SPARSE_CLIENTS
from ...methods import noisy_finetune as nf
from ...methods.noisy_finetune import DPSGDConfig
from ...methods.noisy_finetune.bounds import dpsgd_group_targets
from ...methods.noisy_finetune.dpsgd import dp_sgd_train, dpsgd_noise_multiplier
from ...methods.pdudt import PDUDT, PDUDTConfig
from ...methods.pdudt.sound import GossipSmoothness
from ...methods.rrdu import DPSGDWalk, DPSGDWalkConfig
from ...models import FlatParams, make_model
from ...runtime import make_generator
from ..pdudt.frontier import PAPER_CONSTANTS
from ..rrdu.audit import WalkAuditTask, train_walk_model, walk_setup


def model_clipping_worlds(mode: str, epsilon: float, delta: float, task: ToyTask | None = None):
    """Model clipping at ``(epsilon, delta)`` on ``task``: ``C2 = 1``, ``sigma = 1``, ``gamma = 0.1``, the
    fewest steps that reach the target (``paper``: eq. (10) / Lemma A.2 as printed, ``sound``: the tight
    recursion). Both calibrations are proved (the package issues a sound certificate for either); the
    paper's needs more steps. The noise is isotropic and the clip holds for any start, so the certifier
    ``U(empty, A(D minus D_f))`` (the same procedure on the retrained model) is valid with fresh training."""

    if mode not in ("paper", "sound"):
        raise ModeNotSupported(f"mode={mode!r}: model clipping has a paper and a sound calibration only")
    task = task or ToyTask()
    cfg = nf.ModelClippingConfig(epsilon=epsilon, delta=delta, C2=1.0, sigma=1.0, gamma=0.1,
                                 lam=task.weight_decay, tight=mode == "sound", batch_size=task.batch_size,
                                 finetune=nf.CleanFinetuneConfig(steps=0))
    wa, wb, cert = unlearner_worlds(nf.ModelClipping().unlearn, cfg, task, certifier="unlearn_retrained")
    return wa, wb, float(cert.epsilon), cert


def dp_sgd_worlds(mode: str, epsilon: float, delta: float, task: ToyTask | None = None, *, steps: int = 20,
                  lr: float = 0.5, clip: float = 1.0, accountant: str = "rdp", noise_scale: float = 1.0,
                  sampling_rate: float | None = None):
    """DP-SGD whose group privacy covers the ``m`` forgotten points (``k = m``), on ``task``.

    World A trains with DP-SGD on D; world B trains with DP-SGD on D minus D_f (the certifier: the same
    training that never saw D_f). Both use the same Poisson rate ``q = batch / n`` (world B's batch is
    scaled to ``q (n - m)``, so a record is sampled with the same probability in both worlds) and the noise
    multiplier of world A's calibration (computed once; ``mode`` picks the sound or the paper code's
    per-record delta, :func:`~unlearnkit.methods.noisy_finetune.dpsgd_group_targets`). Caveat of the
    implementation audited: :func:`~unlearnkit.methods.noisy_finetune.dp_sgd_train` divides the noisy sum
    by the expected batch ``q n``, which differs between the worlds (``n`` vs ``n - m``) by the factor
    ``n / (n - m)``: the audit tests the code as it runs. ``accountant`` picks the calibration
    (``"pld"``: the PLD bracket's upper end, which refuses a per-record delta below 1e-8, so small forget sets
    only); ``noise_scale`` multiplies the calibrated noise multiplier (below 1: a claim the audit should refute;
    the certificate then says mode ``"none"`` while the returned epsilon stays the claim tested).
    ``sampling_rate`` makes ``q`` public and the same in both worlds, and both divide by the same expected
    batch ``task.batch_size`` (no ``n / (n - m)`` factor); ``1.0`` is full-batch DP-SGD, where only the noise
    is random and the audit has power at a few hundred trials.
    """

    if mode not in ("paper", "sound"):
        raise ModeNotSupported(f"mode={mode!r}: DP-SGD has a paper and a sound group-privacy calibration only")
    task = task or ToyTask()
    flat, ds, request, _, _ = toy_setup(task)
    full = np.arange(ds.n_train)
    retain = request.retain(full)
    k = int(request.m)
    n, b = len(full), task.batch_size
    q = min(b / n, 1.0) if sampling_rate is None else check_range("sampling_rate", sampling_rate, 0.0, 1.0,
                                                                   low_open=True)
    e1, d1 = dpsgd_group_targets(epsilon, delta, k, mode=mode)
    check_positive("noise_scale", noise_scale)
    z = noise_scale * dpsgd_noise_multiplier(e1, d1, q=q, steps=steps, accountant=accountant)
    cfg_a = DPSGDConfig(epsilon=epsilon, delta=delta, k=k, steps=steps, lr=lr, batch_size=b, clip=clip,
                        noise_multiplier=z, mode=mode, accountant=accountant, sampling_rate=sampling_rate)
    # same sampling rate in world B: batch_size / (n - m) = q needs an integer batch; otherwise the nearest
    b_b = max(1, int(round(q * len(retain))))
    cfg_b = cfg_a if sampling_rate is not None else replace(cfg_a, batch_size=b_b)
    init = flat.init().detach().clone()
    _, cert, _ = dp_sgd_train(flat, ds, full, cfg_a, generator=make_generator(0), init=init)

    def world_a(g: torch.Generator) -> torch.Tensor:
        return dp_sgd_train(flat, ds, full, cfg_a, generator=g, init=init)[0]

    def world_b(g: torch.Generator) -> torch.Tensor:
        return dp_sgd_train(flat, ds, retain, cfg_b, generator=g, init=init)[0]

    return per_trial(world_a), per_trial(world_b), float(cert.epsilon), cert


def dp_sgd_walk_worlds(mode: str, epsilon: float, delta: float, task: Any = None):
    """RR-DU's DP-SGD baseline (:class:`~unlearnkit.methods.rrdu.DPSGDWalk`) on the walk task.

    The baseline runs DP-SGD on D minus D_f from the noise-free original and issues **no certificate**
    (minibatches with replacement, not Poisson; and the original's dependence on D_f is never accounted).
    ``"paper"``: the claim the RR-DU paper's comparison implies, DP-SGD's target ``(epsilon, delta)``,
    tested against the certifier that runs the same walk on a model trained without D_f; the observer sees
    the final model. ``"sound"``: :class:`ModeNotSupported` (there is no sound certificate to test).
    """

    if mode != "paper":
        raise ModeNotSupported("DP-SGD on the walk issues no certificate: the original was trained without "
                               "noise, so its dependence on D_f is never accounted, and the walk's minibatches "
                               "are drawn with replacement (the accountant assumes Poisson sampling)")
    task = replace(task or WalkAuditTask(), epsilon=epsilon, delta=delta)
    flat, fed, request, init, token = walk_setup(task)
    retain_fed = fed.without(request)
    full_idx = np.sort(np.concatenate(fed.client_indices))
    cfg = DPSGDWalkConfig(token=token, hops=task.T_unlearn, local_steps=task.local_steps, epsilon=epsilon,
                          delta=delta, C=task.L)
    method = DPSGDWalk()

    def out(train_fed, g: torch.Generator) -> torch.Tensor:
        # world B: the same baseline run on a model that never saw D_f, with the request it would receive
        st = train_walk_model(task, flat, train_fed, init, token, g, noisy=False).replace(federation=fed,
                                                                                 train_indices=full_idx)
        return method.unlearn(st, request, cfg, generator=g).params

    return per_trial(lambda g: out(fed, g)), per_trial(lambda g: out(retain_fed, g)), float(epsilon), None


@dataclass(frozen=True, kw_only=True)
class PDUDTAuditTask:
    """A small gradient-gossip world for auditing PDUDT: ``n_clients`` clients on binary synthetic data
    (``||x|| <= 1``, softmax regression without bias, zero start), Erdos-Renyi graphs redrawn every round
    (a public schedule, the same in every trial), ``rounds`` rounds of one minibatch gradient each; the
    leaver's labels are flipped (it pulls the model as hard as points can)."""

    n_clients: int = 4
    n_per_client: int = 20
    dim: int = 2
    leaver: int = 0
    rounds: int = 20
    lr: float = 0.02  # inside Theorem 4.9's step-size condition (lr < 0.0289 here), so the paper mode runs
    batch_size: int = 5
    p_edge: float = 0.6
    data_seed: int = 0

    def __post_init__(self) -> None:
        check_int("n_clients", self.n_clients, low=3, high=MAX_SPARSE_CLIENTS)
        check_int("n_per_client", self.n_per_client, low=2, high=MAX_SAMPLES)
        check_int("dim", self.dim, low=1, high=MAX_DIM)
        check_int("leaver", self.leaver, low=0, high=self.n_clients - 1)
        check_int("rounds", self.rounds, low=1, high=MAX_STEPS)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1, high=MAX_SAMPLES)
        check_range("p_edge", self.p_edge, 0.0, 1.0, low_open=True)


def pdudt_worlds(mode: str, epsilon: float, delta: float, task: PDUDTAuditTask | None = None):
    """PDUDT with the certified noise (``sound``: the ``"sum"`` correction and the worst-case gradient-gossip
    sensitivity of :mod:`unlearnkit.methods.pdudt.sound`; ``paper``: Algorithm 2's correction (Eq. 9's convex
    weights) and Theorem 4.9's calibration with :data:`~unlearnkit.experiments.pdudt.frontier.PAPER_CONSTANTS`). The observer sees the final released model: the average of
    the ``n - 1`` remaining clients' models (covered by both scopes). World B is the certifier: gradient
    gossip retrained without the leaver (fresh minibatches), its average plus ``N(0, sigma^2 I)`` with the
    sigma of world A's certificate (the average of the clients' noises). A calibration that refuses the
    world (Theorem 4.9's step-size condition) raises :class:`ModeNotSupported` with the theorem's reason.
    """

    if mode not in ("paper", "sound"):
        raise ModeNotSupported(f"mode={mode!r}: PDUDT has a paper and a sound calibration only")
    task = task or PDUDTAuditTask()
    n, k = task.n_clients, task.leaver
    ds = D.load("synthetic", device="cpu", seed=task.data_seed, n_train=n * task.n_per_client, n_test=50,
                dim=task.dim)
    fed = D.partition(ds, n, "iid", seed=task.data_seed)
    idx_k = np.asarray(fed.client_indices[k])
    y = ds.y_train.clone()
    y[torch.as_tensor(idx_k, device=y.device)] = 1 - y[torch.as_tensor(idx_k, device=y.device)]
    fed = type(fed)(ds.with_train(ds.x_train, y), fed.client_indices, fed.scheme)
    flat = FlatParams(make_model("logreg", ds.input_shape, 2, generator=make_generator(task.data_seed), bias=False))
    theta0 = torch.zeros(n, flat.d, dtype=flat.init().dtype, device=ds.x_train.device)
    sched = dynamic.make_schedule("erdos_renyi", n, seed=task.data_seed, p_edge=task.p_edge, ensure_connected=True)
    gcfg = GradientGossipConfig(rounds=task.rounds, lr=task.lr, batch_size=task.batch_size, cache="history")
    request = Request("client", idx_k, client=k)
    sound = mode == "sound"
    # paper: Algorithm 2 as printed (Eq. 9's convex weights: the only correction Theorem 4.9 speaks of);
    # sound: the "sum" correction that removes the leaver's contribution, with the worst-case sensitivity
    cfg = PDUDTConfig(correction_scale="sum" if sound else "paper", noise="certified", epsilon=epsilon, delta=delta,
                      mode=mode, smoothness=GossipSmoothness.softmax_regression(1.0, bias=False) if sound else None,
                      constants=None if sound else PAPER_CONSTANTS)
    keep = [i for i in range(n) if i != k]

    def run(g: torch.Generator):
        state = run_gradient_gossip(flat, fed, sched, gcfg, generator=g, init=theta0)
        return PDUDT().unlearn(state, request, cfg, generator=g)

    try:
        cert = run(make_generator(0)).certificate
    except ValueError as exc:  # the paper's theorem is silent outside its premises: name why
        raise ModeNotSupported(f"PDUDT mode={mode!r} cannot calibrate this world: {exc}") from exc
    sigma = float(cert.sigma or 0.0)
    if not math.isfinite(sigma):
        raise ModeNotSupported(f"PDUDT mode={mode!r}: the calibration gives sigma={sigma!r} here ({cert.note})")

    def world_a(g: torch.Generator) -> torch.Tensor:
        return run(g).params.mean(0)

    def world_b(g: torch.Generator) -> torch.Tensor:
        rt = run_gradient_gossip(flat, fed, sched, replace(gcfg, cache="none"), generator=g, init=theta0,
                                 exclude=k).params[keep].mean(0)
        return rt + sigma * torch.randn(rt.shape, generator=g, dtype=rt.dtype, device=g.device).to(rt.device)

    return per_trial(world_a), per_trial(world_b), float(cert.epsilon), cert
