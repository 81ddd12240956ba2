"""RR-DU's privacy-forgetting frontier: backdoor success and clean accuracy against epsilon, at equal epsilon for
RR-DU, DDP, DP-SGD on the walk and fine-tuning, with retraining as the line to reach.

Two families of runs share one :class:`~unlearnkit.experiments.rrdu_lab.BackdoorWorld` (the quick profile by
default: digits, N = 10, m = 60 poisoned samples at u = 0):

- **Sound** (``mode="sound"``, the only ones whose epsilon is a guarantee; threat model in
  :mod:`unlearnkit.methods.rrdu.sound`). A certified unlearning of client u's data must cover the gap between the
  start models A(D) and A(D minus D_f) (digest P15); the package covers it by training the original with
  client-level Gaussian noise on every clipped local step (:class:`~unlearnkit.methods.rrdu.NoisyWalkTraining`).

  * ``"rrdu"``: noisy training that spends the share ``split`` of the RDP budget of ``(epsilon, delta)`` (the
    visit count at its ``(1 - delta/4)``-quantile, conversion at ``delta/2``, as accountant ``"S"``), then RR-DU
    (SGD, accountant ``"S"``) whose u-step noise spends the rest. The certificate is RR-DU's own (exact Gaussian
    composition of training and u-steps), never above ``epsilon``.
  * ``"ddp"``: the DDP baseline done right: noisy training at ``(epsilon, delta)``, then the same noisy walk
    continued on D minus D_f for ``T_unlearn`` hops (:class:`~unlearnkit.methods.rrdu.NoisyDDP`: post-processing).

- **Paper calibrations** on the noise-free original (``mode`` ``"paper"`` or ``"none"``, ``epsilon = inf`` in
  the result contract): RR-DU with the setup's accountant (A: Cor. 5.2 with ``C_A = 1``), DDP with Algorithm 3's
  one-shot formula and DP-SGD on the walk; fine-tuning (no noise, the same for every epsilon). These show what
  the paper measures; their epsilon is a label, not a guarantee (the audit refutes them,
  :mod:`unlearnkit.experiments.rrdu_audit`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional, Sequence

from .. import make_generator
from .._validate import check_positive, check_range
from ..decentral.token import TokenConfig
from ..methods.rrdu import RRDU, NoisyDDP, NoisyDDPConfig, NoisyWalkConfig, NoisyWalkTraining
from ..privacy import visit_count_bound
from ..privacy.linear_rdp import linear_rdp_slope
from .rrdu_lab import RRDU_PROFILES, BackdoorSetup, BackdoorWorld, build_world, run_method

__all__ = ["FRONTIER_EPSILONS", "SOUND_METHODS", "PAPER_METHODS", "split_train_sigma", "sound_run",
           "rrdu_frontier"]

FRONTIER_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
SOUND_METHODS = ("rrdu", "ddp")
PAPER_METHODS = ("rrdu", "ddp", "dp_sgd")


def split_train_sigma(*, epsilon: float, delta: float, L: float, hops: int, n_clients: int, local_steps: int,
                      split: float) -> float:
    """The training noise that spends the share ``split`` of the RDP slope of ``(epsilon, delta)``.

    Accountant ``"S"`` (:func:`unlearnkit.methods.rrdu.noisy_start.noisy_start_sigma`) calibrates RR-DU's u-step
    noise on the slope left after the training's: ``rho(epsilon) = slope of (epsilon, delta/2)`` under Prop. A.8,
    and the training's ``rho_train = steps (2 L)^2 / (2 sigma^2)`` with ``steps`` = ``local_steps`` times the
    ``(1 - delta/4)``-quantile of ``Bin(hops, 1/N)`` visits. Setting ``rho_train = split * rho(epsilon)`` gives
    ``sigma = sqrt(steps (2L)^2 / (2 split rho(epsilon)))``.
    """
    check_range("split", split, 0.0, 1.0, low_open=True, high_open=True)
    check_positive("epsilon", epsilon)
    steps = local_steps * visit_count_bound(hops, 1.0 / n_clients, delta / 4)
    slope = linear_rdp_slope(epsilon, delta / 2, method="mironov")
    return math.sqrt(steps * (2 * L) ** 2 / (2 * split * slope))


def _noisy_start(world: BackdoorWorld, sigma: float, *, L: float, lr: float, R: float, seed: int) -> Any:
    st = world.setup
    token = TokenConfig(lr=lr, batch_size=st.batch_size, local_batches=st.s, optimizer="sgd")
    cfg = NoisyWalkConfig(token=token, hops=st.T_train, local_steps=st.local_steps, delta=st.delta, L=L,
                          R=R, sigma=sigma, route_seed=seed + 1)
    return NoisyWalkTraining().train(world.flat, world.federation, cfg, generator=make_generator(seed + 1),
                                     init=(world.original.checkpoints or {}).get(0))


def sound_run(world: BackdoorWorld, method: str, epsilon: float, *, L: float = 1.0, lr: float = 0.2,
              split: float = 0.5, R: float = 10.0, seed: int = 0) -> dict:
    """One certified run at ``epsilon`` (module docstring): ``{"final", "start", "certificate", "sigma",
    "sigma_train"}``, metrics on the released model and on the noisily trained start."""
    st = world.setup
    n = world.federation.n_clients
    if method == "rrdu":
        sig_t = split_train_sigma(epsilon=epsilon, delta=st.delta, L=L, hops=st.T_train, n_clients=n,
                                  local_steps=st.local_steps, split=split)
    elif method == "ddp":
        sig_t = NoisyWalkConfig(token=TokenConfig(lr=lr, optimizer="sgd"), hops=st.T_train, epsilon=epsilon,
                                delta=st.delta, L=L, local_steps=st.local_steps).resolved_sigma(n)
    else:
        raise ValueError(f"method={method!r} is out of range: expected one of {SOUND_METHODS}")
    start = _noisy_start(world, sig_t, L=L, lr=lr, R=R, seed=seed)
    gen = make_generator(1000 + seed)
    if method == "rrdu":
        cfg = st.rrdu_config(accountant="S", optimizer="sgd", lr=lr, clip_L=L, epsilon=epsilon, eval_every=0)
        res = RRDU().unlearn(start, world.request, cfg, generator=gen)
        sigma = res.extras["sigma"]
    else:
        cfg = NoisyDDPConfig(continue_hops=st.T_unlearn)
        res = NoisyDDP().unlearn(start, world.request, cfg, generator=gen)
        sigma = sig_t
    return {"final": world.metrics(res.params), "start": world.metrics(start.params),
            "certificate": res.certificate.to_dict(), "sigma": sigma, "sigma_train": sig_t}


def rrdu_frontier(epsilons: Sequence[float] = FRONTIER_EPSILONS, *, setup: Optional[BackdoorSetup] = None,
                  world: Optional[BackdoorWorld] = None, seed: int = 0, L: float = 1.0, lr: float = 0.2,
                  split: float = 0.5, R: float = 10.0, paper: bool = True) -> dict:
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
                           "settings": {"L": L, "lr": lr, "split": split, "R": R, "seed": seed}}
    for eps in epsilons:
        for m in SOUND_METHODS:
            r = sound_run(world, m, eps, L=L, lr=lr, split=split, R=R, seed=seed)
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
