"""Replay recipes for the decentralized certified methods: both worlds of :func:`unlearnkit.experiments.replay.replay`.

Each recipe is ``recipe(profile, seed, hooks) -> (trace_a, trace_b, certificate)``: world A runs the shipped
profile's pipeline from raw data and unlearns the request; world B runs the same pipeline with the forgotten
rows removed before training and then releases what the certificate's counterfactual releases:

- **Newton** (``newton`` quick): the certificate compares the released average ``x_s + step + noise`` with the
  exact minimiser on D minus D_f plus the same noise (Wu et al. 2026, Lemma 3; digest 001 section 3.7). World B
  trains and polishes on D minus D_f (the same client assignment of the remaining rows, the same public map
  and seeds) and releases its minimiser with world A's noise scale and the same standard-normal draw.

The client assignment of the remaining rows is part of the relation: in a federation a row lives at its
client, so forgetting it leaves every other row where it was.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from ...core import Certificate
from ...privacy.noise import gaussian_noise
from ...privacy.trace import record_release, recording, replaying
from ...runtime import make_generator


def newton_recipe(profile: str, seed: int, hooks: dict) -> tuple[Any, Any, Any]:
    """Both worlds of ``newton`` on ``profile`` (``"quick"``: the sound setting of notebook 07)."""
    from ...methods.newton import Newton, NewtonConfig  # deferred: imports networkx
    from ..newton.frontier import NEWTON_SOUND_SETTING, frontier_world  # deferred: imports networkx

    s = dataclasses.replace(NEWTON_SOUND_SETTING, seed=seed)
    fit = hooks.get("fit_world", frontier_world)
    cfg = NewtonConfig(mode="sound", epsilon=1.0, delta=1e-5, curvature="cg_hessian", scope="global",
                       center_gradient=True, release="average", grad_tol=s.grad_tol, cg_tol=1e-10)
    with recording() as trace_a:
        w = fit(s)
        plan = Newton().certify(w["state"], w["request"], cfg)
        res = Newton().unlearn(w["state"], w["request"], cfg, generator=make_generator(seed + 1))
    released = trace_a.mechanisms[-1] if trace_a.mechanisms else None
    with recording() as trace_b:
        wb = fit(s, without_forgotten=True)
        x_b = wb["original"]
        if released is not None:
            gen = hooks.get("generator", lambda state: make_generator(seed + 1))(wb["state"])
            z = gaussian_noise(torch.empty(0, device=x_b.device), 1.0, gen, shape=(x_b.numel(),)).to(x_b.dtype)
            record_release(released.name, x_b, released.sigma, z, sensitivity=released.sensitivity)
    return trace_a, trace_b, res.certificate, plan


def pdudt_recipe(profile: str, seed: int, hooks: dict) -> tuple[Any, Any, Any]:
    """Both worlds of ``pdudt`` on ``profile``: world B is perturbed retraining without the leaver (the same
    schedule, retrain rule and coupled minibatch draws) with the same noise on its ``n - 1`` models."""
    from ...methods.pdudt import PDUDT  # deferred: imports networkx
    from ...methods.pdudt.algorithm import client_noise  # deferred: imports networkx
    from ..pdudt import frontier as PF  # deferred: imports networkx

    exp = PF.CertifiedPDUDT(**{**PF.CERTIFIED_PROFILES[profile], "seed": seed})
    fit = hooks.get("fit_world", PF._certified_world)
    cfg = PF._config(exp, exp.epsilon, exp.mode, exp.correction_scale)
    with recording() as trace_a:
        w = fit(exp, None, retrain=False)  # the reference retraining is not part of world A's pipeline
        plan = PDUDT().certify(w["state"], w["request"], cfg)
        res = PDUDT().unlearn(w["state"], w["request"], cfg, generator=make_generator(1))
    released = trace_a.mechanisms[-1] if trace_a.mechanisms else None
    with recording() as trace_b:
        wb = fit(exp, None, without_leaver=True)
        keep = [i for i in range(exp.n_clients) if i != exp.leaver]
        theta = wb["retrain"].params[keep]
        if released is not None:
            gen = hooks.get("generator", lambda state: make_generator(1))(wb["retrain"])
            n1, d = theta.shape
            z = client_noise(n1, d, res.certificate.sigma or 0.0, generator=gen, dtype=theta.dtype, device=theta.device)
            record_release(released.name, theta, released.sigma, z / released.sigma if released.sigma > 0 else z,
                           sensitivity=released.sensitivity)
    return trace_a, trace_b, res.certificate, plan


def rrdu_recipe(profile: str, seed: int, hooks: dict) -> tuple[Any, Any, Any]:
    """Both worlds of ``rrdu`` on ``profile`` (``"quick"``: the exact variant from the noisily trained start at
    epsilon 1, accountant ``"M"``). World B is replayed under world A's transcript (:func:`~unlearnkit.privacy.
    trace.replaying`): each noisy training step and each u-step is computed at the model world A released
    before it, the relation of the composition the accountant uses (the walk's route is public and shared)."""
    from ..rrdu.frontier import QUICK_CERTIFIED, sound_run  # deferred: imports networkx
    from ..rrdu.lab import RRDU_PROFILES, build_world  # deferred: imports networkx

    setup = RRDU_PROFILES[profile]
    build = hooks.get("fit_world", build_world)
    with recording() as trace_a:
        w = build(setup, seed=seed, retrain=False)
        run = sound_run(w, QUICK_CERTIFIED["method"], QUICK_CERTIFIED["epsilon"], seed=seed)
    with replaying(trace_a) as trace_b:
        wb = build(setup, seed=seed, retrain=False, without_forgotten=True)
        sound_run(wb, QUICK_CERTIFIED["method"], QUICK_CERTIFIED["epsilon"], seed=seed)
    return trace_a, trace_b, Certificate(**{k: v for k, v in run["certificate"].items()
                                            if k in Certificate.__dataclass_fields__})
