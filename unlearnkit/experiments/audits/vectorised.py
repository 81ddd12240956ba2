"""Vectorised audit trials: the two worlds of a certificate on :class:`~unlearnkit.experiments.audits.methods.ToyTask`, many at once.

:func:`~unlearnkit.experiments.audits.methods.unlearner_worlds` runs one trial at a time (train, unlearn, retrain: about 20 ms per
trial and world on one CPU core), so 10,000 trials per world take minutes. Here the *randomness* is drawn
exactly as the sequential loop draws it (one generator per trial, seeded from the caller's generator the way
:func:`unlearnkit.audit.per_trial` does, and the same draws in the same order: training batches, then the
method's replay batches, then its output noise), and the *arithmetic* runs on a batch of parameter vectors:
one ``torch.func.vmap`` gradient per SGD step for all trials (:meth:`FlatParams.batched_grad`). So the
batched worlds give the same samples as the sequential ones for the same seeds; the only difference is the
order of floating-point reductions inside the batched kernels, which can move a float32 result by a few
units in the last place (the tests compare with ``atol=1e-5`` and check the noise-only draws bit for bit).

Supported methods (``VECTORISED_METHODS``): ``"retrain"`` (exact retraining: both worlds retrain),
``"r2d"`` (R2D with ``K = T // 2``), ``"r2d_full_rewind"`` (R2D with ``K = T``, exact retraining plus noise
zero), each against the certifier "retrain plus the same noise" with fresh training in every trial (the
valid design of :mod:`unlearnkit.experiments.audits.methods`), and ``"output_perturbation"`` (clip the trained model to the ball of
radius ``C0``, add the certified noise; no fine-tuning, as in its recipe) against "the same on the retrained
model" (certifier ``"unlearn_retrained"``), also with fresh training. The method's sigma and certificate come from the method itself (one
probe run of ``R2D().unlearn``), so the vectorised worlds audit the method's own calibration; the replay is
re-implemented here for a batch, and the equality test against the real method guards it.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any, Optional

import numpy as np
import torch

from ..._validate import check_choice, check_int
from ...audit import AuditConfig, AuditResult, audit
from ...audit.run import audit_samples
from ...models import project_l2_ball
from .recipes import METHOD_RECIPES, ToyTask, toy_setup, unlearner_worlds
from ...core import MAX_TRIALS
from ...runtime import make_generator
from ...train import train_sgd


VECTORISED_METHODS = ("retrain", "r2d", "r2d_full_rewind", "output_perturbation")


def _trial_generators(n: int, generator: torch.Generator) -> list[torch.Generator]:
    # exactly the seeding of unlearnkit.audit.per_trial: one 62-bit seed per trial from the caller's generator
    seeds = torch.randint(0, 2**62, (n,), generator=generator, device=generator.device).tolist()
    out = []
    for s in seeds:
        g = torch.Generator(device=generator.device)
        g.manual_seed(int(s))
        out.append(g)
    return out


def _batched_sgd(flat, x, y, thetas, batches, sgd, *, stop_at: Optional[int] = None):
    """Projected SGD for a batch of parameter vectors, each with its own batches ``(N, steps, b)``.

    Returns the final parameters and, when ``stop_at`` is given, the iterate after ``stop_at`` steps (R2D's
    checkpoint ``T - K``).
    """
    mid = thetas.clone() if stop_at == 0 else None
    for i in range(batches.shape[1]):
        idx = batches[:, i]
        g = flat.batched_grad(thetas, x[idx], y[idx], weight_decay=sgd.weight_decay)
        thetas = project_l2_ball(thetas - sgd.lr * g, radius=sgd.radius)
        if stop_at is not None and i + 1 == stop_at:
            mid = thetas.clone()
    return thetas, mid


def _op_world(flat, x, y, n_data, start, sgd, cfg, sigma, dev):
    """Output perturbation after fresh training on ``(x, y)``, batched: ``clip(theta, C0) + sigma z``.

    Per trial, the draws of the sequential loop in its order: training batches, then the noise (the recipe's
    clean fine-tuning has 0 steps and draws nothing). World A trains on D, world B (the certifier
    ``"unlearn_retrained"``) on D minus D_f; both then run the same output perturbation.
    """
    if cfg.init != "model" or cfg.finetune.steps != 0:
        raise ValueError("the vectorised output perturbation covers init='model' without fine-tuning (its audit "
                         f"recipe); got init={cfg.init!r}, finetune.steps={cfg.finetune.steps}")
    T, b = sgd.steps, sgd.batch_size

    def world(n: int, generator: torch.Generator) -> torch.Tensor:
        gens = _trial_generators(n, generator)
        bt = torch.stack([torch.randint(0, n_data, (T, b), generator=g, device=g.device) for g in gens])
        out, _ = _batched_sgd(flat, x, y, start(n), bt.to(dev), sgd)
        # the method's clip, row by row: v * (C0 / ||v||) above the ball, in the model's dtype
        norms = out.norm(dim=1, keepdim=True)
        out = torch.where(norms > cfg.C0, out * (cfg.C0 / norms), out)
        z = torch.stack([torch.randn((out.shape[1],), generator=g, device=g.device, dtype=out.dtype) for g in gens])
        return (out + sigma * z.to(dev)).double().cpu()

    return world


def vectorised_worlds(method: str, mode: str = "sound", *, epsilon: float = 1.0, delta: float = 1e-5,
                      task: ToyTask | None = None, device: str | torch.device = "cpu", noise_scale: float = 1.0):
    """``(world_a, world_b, certificate)`` for ``method`` on ``task``: batched mechanisms ``(n, generator) ->
    (n, d)`` float64 tensors on the CPU, sample for sample those of :func:`~unlearnkit.experiments.audits.methods.unlearner_worlds`
    with the same method recipe (see the module docstring). ``device`` runs the SGD arithmetic there (a GPU);
    the randomness is always drawn on the generators' device, as in the sequential loop. ``noise_scale``
    multiplies the method's sigma in both worlds (a deliberately broken variant: 0 removes the noise; the
    returned certificate is still the method's own, which then does not cover the output).
    """

    check_choice("method", method, VECTORISED_METHODS)
    task = task or ToyTask()
    flat, ds, request, sgd, consts = toy_setup(task)
    fn, cfg, certifier = METHOD_RECIPES[method](mode, epsilon, delta, task, consts)
    full = np.arange(ds.n_train)
    retain = request.retain(full)
    probe = fn(train_sgd(flat, ds, full, sgd, generator=torch.Generator().manual_seed(0)), request, cfg,
               generator=torch.Generator().manual_seed(1))
    cert = probe.certificate
    sigma = float(getattr(cert, "sigma", None) or 0.0) if cert is not None else 0.0
    if not noise_scale >= 0:
        raise ValueError(f"noise_scale={noise_scale!r} is out of range: expected noise_scale >= 0")
    sigma *= float(noise_scale)
    T, b = sgd.steps, sgd.batch_size
    K = None if method in ("retrain", "output_perturbation") else cfg.K
    dev = torch.device(device)
    x_full, y_full = (t.to(dev) for t in ds.train_subset(full))
    x_ret, y_ret = (t.to(dev) for t in ds.train_subset(retain))
    theta0 = flat.init().to(dev)
    d = theta0.numel()

    def start(n: int) -> torch.Tensor:
        return theta0.reshape(1, -1).expand(n, d).clone()

    if method == "output_perturbation":
        return (_op_world(flat, x_full, y_full, len(full), start, sgd, cfg, sigma, dev),
                _op_world(flat, x_ret, y_ret, len(retain), start, sgd, cfg, sigma, dev), cert)

    def world_a(n: int, generator: torch.Generator) -> torch.Tensor:
        gens = _trial_generators(n, generator)
        if K is None:  # retraining: world A is the retrained model itself
            # the sequential loop first trains on D (its batches are drawn, then unused), then retrains
            bt = torch.stack([torch.cat([torch.randint(0, len(full), (T, b), generator=g, device=g.device),
                                         torch.randint(0, len(retain), (T, b), generator=g, device=g.device)])[T:]
                              for g in gens])
            out, _ = _batched_sgd(flat, x_ret, y_ret, start(n), bt.to(dev), sgd)
            return out.double().cpu()
        bt = torch.stack([torch.randint(0, len(full), (T, b), generator=g, device=g.device) for g in gens])
        _, mid = _batched_sgd(flat, x_full, y_full, start(n), bt.to(dev), sgd, stop_at=T - K)
        if K > 0:
            br = torch.stack([torch.randint(0, len(retain), (K, b), generator=g, device=g.device) for g in gens])
            mid, _ = _batched_sgd(flat, x_ret, y_ret, mid, br.to(dev), sgd)
        if sigma > 0:  # R2D's output noise, drawn after the replay batches from each trial's generator
            z = torch.stack([torch.randn((d,), generator=g, device=g.device, dtype=mid.dtype) for g in gens])
            mid = mid + sigma * z.to(dev)
        return mid.double().cpu()

    def world_b(n: int, generator: torch.Generator) -> torch.Tensor:
        gens = _trial_generators(n, generator)
        bt = torch.stack([torch.randint(0, len(retain), (T, b), generator=g, device=g.device) for g in gens])
        out, _ = _batched_sgd(flat, x_ret, y_ret, start(n), bt.to(dev), sgd)
        if sigma > 0 and certifier != "retrain":
            z = torch.stack([torch.randn((d,), generator=g, device=g.device, dtype=out.dtype) for g in gens])
            out = out + sigma * z.to(dev)
        return out.double().cpu()

    return world_a, world_b, cert


def audit_vectorised(method: str, mode: str = "sound", *, n_trials: int = 10_000, epsilon: float = 1.0,
                     delta: float = 1e-5, task: ToyTask | None = None, config: AuditConfig | None = None,
                     generator: torch.Generator, device: str | torch.device = "cpu",
                     noise_scale: float = 1.0) -> AuditResult:
    """Audit ``method`` with ``n_trials`` batched trials per world (fresh training in both worlds).

    ``config`` chooses the statistic (``AuditConfig(method="gdp")`` etc.); its ``n_trials`` is replaced by
    ``n_trials``. ``result.extras`` records the wall time and the trials per second (both worlds counted).
    ``noise_scale < 1`` audits a deliberately under-noised variant against the method's unchanged claim (a
    power check: the audit should refute it).
    """

    check_int("n_trials", n_trials, low=20, high=MAX_TRIALS)
    cfg = replace(config or AuditConfig(), n_trials=n_trials)
    wa, wb, cert = vectorised_worlds(method, mode, epsilon=epsilon, delta=delta, task=task, device=device,
                                     noise_scale=noise_scale)
    t0 = time.perf_counter()
    xa = wa(n_trials, generator)
    xb = wb(n_trials, generator)
    seconds = time.perf_counter() - t0
    eps = None
    if cert is not None and cert.mode != "none" and math.isfinite(cert.epsilon):
        eps = float(cert.epsilon)
    res = audit_samples(xa, xb, delta=delta, epsilon=eps, config=cfg, label=method,
                        mode="none" if cert is None else cert.mode)
    res.extras.update(seconds=seconds, trials_per_second=2 * n_trials / max(seconds, 1e-9), device=str(device),
                      vectorised=True, noise_scale=float(noise_scale),
                      sigma=None if cert is None else cert.sigma * noise_scale)
    return res


def audit_recipe_vectorised(method: str, mode: str, *, epsilon: float, delta: float, task: ToyTask,
                            config_audit: AuditConfig, generator: torch.Generator, label: str = "",
                            progress: bool = False) -> AuditResult:
    """:func:`~unlearnkit.experiments.audits.methods.audit_unlearner` of a recipe with fresh training, its trials batched.

    The same :func:`unlearnkit.audit.audit` call (same chunks of 25, so the same per-trial seeds in the same
    order) on :func:`vectorised_worlds` instead of the one-trial-at-a-time loop: the same samples up to the
    float32 rounding of the batched arithmetic, so the same verdicts, at a fraction of the time.
    """

    wa, wb, cert = vectorised_worlds(method, mode, epsilon=epsilon, delta=delta, task=task)
    certifier = METHOD_RECIPES[method](mode, epsilon, delta, task, toy_setup(task)[4])[2]
    eps = float(cert.epsilon) if cert.mode != "none" and math.isfinite(cert.epsilon) else None
    res = audit(wa, wb, delta=float(cert.delta), epsilon=eps, config=config_audit, generator=generator,
                label=label, mode=cert.mode, progress=progress, chunk=25)
    res.extras.update(certifier=certifier, fresh_training=True, worst_case_starts=False, sigma=cert.sigma,
                      claimed_epsilon=float(cert.epsilon), vectorised=True)
    return res


def trials_per_second(method: str = "r2d", *, n_trials: int = 10_000, device: str | torch.device = "cpu",
                      seed: int = 0, sequential_trials: int = 0) -> dict[str, Any]:
    """Throughput of the vectorised worlds (and, with ``sequential_trials > 0``, of the sequential loop).

    Returns ``{"method", "n_trials", "seconds", "trials_per_second", "device"}`` (trials of both worlds
    counted) plus ``"sequential_trials_per_second"`` when measured.
    """

    wa, wb, _ = vectorised_worlds(method, task=ToyTask(), device=device)
    g = make_generator(seed)
    t0 = time.perf_counter()
    wa(n_trials, g)
    wb(n_trials, g)
    secs = time.perf_counter() - t0
    out: dict[str, Any] = dict(method=method, n_trials=n_trials, seconds=secs,
                               trials_per_second=2 * n_trials / secs, device=str(device))
    if sequential_trials > 0:
        task = ToyTask()
        _, _, _, _, consts = toy_setup(task)
        fn, cfg, certifier = METHOD_RECIPES[method]("sound", 1.0, 1e-5, task, consts)
        sa, sb, _ = unlearner_worlds(fn, cfg, task, certifier=certifier)
        t0 = time.perf_counter()
        sa(sequential_trials, g)
        sb(sequential_trials, g)
        out["sequential_trials_per_second"] = 2 * sequential_trials / (time.perf_counter() - t0)
    return out
