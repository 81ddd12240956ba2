"""Descend or Rewind? (Mu & Klabjan 2025): the D2D and R2D experiments behind ``python -m unlearnkit run``.

The profiles (data, model, training and loss constants shared by both runners), the runners, and the
noise-free K sweep on batches coupled to training (digest 003 Algorithm 6 on real data). The methods
themselves live in :mod:`unlearnkit.methods.descend_rewind`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional, Sequence

import numpy as np
import torch

from ...runtime import make_generator
from ..._validate import check_choice
from ...audit import AuditConfig, audit
from ...audit.mechanisms import per_trial
from ...constants import Constants, estimate_constants, logistic_constants, softmax_constants
from ...core import Request, TrainedState
from ...evaluate import report
from ...methods.descend_rewind import D2D, R2D, D2DConfig, R2DConfig
from ...methods.descend_rewind.bounds import descend_rewind_sigma
from ...methods.descend_rewind.r2d import initial_norm
from ...privacy.noise import gaussian_noise
from ...train import SGDConfig, run_sgd, train_sgd
from ..audits.recipes import ToyTask, audit_unlearner, toy_setup
from ..centralized import CentralProfile, centralized_setup, run_centralized


def sigma_by_delta(sensitivity: float, epsilon: float, deltas: Sequence[float], *,
                   mode: str = "paper") -> list[dict[str, float]]:
    """The Gaussian noise of a descend-or-rewind release at several deltas, for a first-moment sensitivity and
    for a deterministic sensitivity of the same value.

    Parameters
    ----------
    sensitivity : float
        The sensitivity bound ``Delta_1`` (for instance from ``psgd_r2d_sensitivity``).
    epsilon : float
        The target epsilon.
    deltas : sequence of float
        The target deltas, one row each.
    mode : str
        The calibration mode passed to :func:`~unlearnkit.methods.descend_rewind.descend_rewind_sigma`.

    Returns
    -------
    list of dict
        Per delta: ``delta``, ``Delta_1``, ``sigma`` (first-moment sensitivity), ``deterministic sigma`` (the
        same number as a worst-case sensitivity) and ``ratio`` (their quotient).
    """
    rows = []
    for delta in deltas:
        first = descend_rewind_sigma(sensitivity, epsilon, delta, mode=mode)
        det = descend_rewind_sigma(sensitivity, epsilon, delta, kind="deterministic", mode=mode)
        rows.append({"delta": delta, "Delta_1": sensitivity, "sigma": first, "deterministic sigma": det,
                     "ratio": first / det})
    return rows


#: L2 weight and projection radius of the stochastic (PSGD) profiles: analytic constants hold on this ball
LAM = 0.01
RADIUS = 10.0
#: L2 weight of the full-batch profiles: kappa = L/mu = (1 + lambda)/lambda = 51, so at eta = 2/(L + mu) the
#: contraction rho = (L - mu)/(L + mu) = 1 - 2/(kappa + 1) is 4e-4 after K = 200 steps
GD_LAM = 0.02
#: the profiles of :func:`central_profile`
PROFILES = ("quick", "class", "psgd", "synthetic", "mlp", "paper")
#: default unlearning steps K of each profile (T - K must be a checkpoint)
PROFILE_K = {"quick": 200, "class": 200, "psgd": 100, "synthetic": 100, "mlp": 100, "paper": 154}


def central_profile(name: str) -> CentralProfile:
    """Experiment profiles shared by the R2D and D2D runners (default K: :data:`PROFILE_K`).

    ``"quick"`` (the flagship; certified and useful at epsilon = 1): digits, softmax regression (+ bias) on
    centred features scaled into the unit ball, L2 weight ``GD_LAM = 0.02``, projection radius 10,
    **full-batch** projected GD, T = 400 steps at ``eta = 2/(L + mu)``; unlearning K = 200 steps (50 % of
    retraining's cost). The request forgets m = 60 BadNets-poisoned samples (3x3 trigger, target class 0).
    Full batch makes the R2D/D2D sensitivity deterministic (no Markov step, no 1/delta) and
    ``eta mu = 2 lambda/(1 + 2 lambda) ~ 0.04`` contracts the gap by ``rho^K ~ 4e-4``: at (1, 1e-5) the sound
    sigma is ~0.02 against a weight norm of ~5, so the released model stays within a point of retraining.
    Metrics: backdoor success and forget-set accuracy (original ~0.97, retraining 0) show *whether the
    poison is gone*; the MIA AUC on the forget set (original ~0.8) shows membership; neither shows that the
    released model is distributed like retraining (the certificate's claim), only that it behaves like it.
    ``"class"``: the same training, forgetting class 3: forget accuracy measures class removal, but the MIA
    on a class request has no signal (the original already answers like retraining there on unseen
    samples of other classes) and the clean test accuracy drops by design (one class is gone).
    ``"psgd"``: the same backdoor task trained as the paper does, with projected SGD (batch 32, with
    replacement, L2 0.01, 200 steps at lr 0.4): ``eta mu = 0.004``, so ``rho^K`` barely contracts and the
    sound sigma at epsilon = 1 destroys the model (the contrast of the frontier).
    ``"synthetic"``: binary logistic regression on the unit-ball synthetic data (PSGD). ``"mlp"``: digits
    MLP; its constants can only be estimated, so its certificates are ``mode="none"``.
    ``"paper"``: the paper's eICU setting as far as offline data allows (digest 003 section 4): an MLP with
    two hidden layers (256, 64) trained with projected SGD, batch 64, radius 10, lr 0.1 (the paper's 0.001
    does not train digits in 48 epochs), 48 epochs, rewind K = 7 epochs (14 %, the paper's "R2D 14 %"),
    1 % of the samples forgotten at random; constants estimated from data as the paper does, so not
    certified. What differs: digits (1,347 samples, 10 classes) instead of eICU (94,449 patients, binary),
    ReLU instead of SmeLU, with-replacement batches (the paper's code shuffles without replacement), sample
    instead of user-level forgetting.
    """

    check_choice("profile", name, PROFILES)
    train = SGDConfig(steps=200, lr=0.4, batch_size=32, weight_decay=LAM, radius=RADIUS, checkpoint_every=20)
    if name in ("quick", "class"):
        # eta = 2/(L + mu), the largest step of the contraction lemma, with L = ||(x, 1)||^2 / 2 + lambda =
        # 1 + lambda and mu = lambda (softmax_constants, bias)
        gd = SGDConfig(steps=400, lr=2.0 / (1.0 + 2.0 * GD_LAM), sampling="full", weight_decay=GD_LAM, radius=RADIUS,
                       checkpoint_every=20)
        return CentralProfile(model="logreg", model_kwargs={}, train=gd, request="backdoor" if name == "quick"
                              else "class", m=60, patch=3, label=3, unit_ball=True, center=True)
    if name == "psgd":
        return CentralProfile(model="logreg", model_kwargs={}, train=train, request="backdoor", m=60, patch=3,
                              unit_ball=True, center=True)
    if name == "synthetic":
        return CentralProfile(dataset="synthetic", dataset_kwargs={"n_train": 1000, "n_test": 500, "dim": 20},
                              model="logreg", model_kwargs={}, loss="logistic", train=train, request="samples",
                              m=50, unit_ball=True)
    if name == "mlp":
        return CentralProfile(model="mlp", model_kwargs={"hidden": (32,)}, train=train, request="samples", m=60,
                              unit_ball=True)
    if name == "paper":
        paper = SGDConfig(steps=48 * 22, lr=0.1, batch_size=64, weight_decay=0.0, radius=RADIUS,
                          checkpoint_every=22)  # 22 batches of 64 = one epoch of digits' 1,347 training rows
        return CentralProfile(model="mlp", model_kwargs={"hidden": (256, 64)}, train=paper, request="samples",
                              m=14, unit_ball=True)
    return CentralProfile(model="logreg", model_kwargs={}, train=train, request="samples", m=60, unit_ball=True)


def profile_constants(name: str, state: TrainedState, *, generator: torch.Generator) -> Constants:
    """Analytic constants for the convex profiles, estimated ("not certified") ones for the MLPs.

    ``F0`` is evaluated where training starts: the models' seeded (data-independent) initialisation has a
    norm > 0, where the per-sample loss exceeds its value at ``w0 = 0`` (2.50 > ln 10 = 2.30 on ``"psgd"``),
    so the constants are built for ``||w0|| <= ||state.extras["init"]||``. ``lambda`` is the training's weight
    decay (the coverage check of :mod:`unlearnkit.methods.descend_rewind.coverage`).
    """

    r0 = initial_norm(state) or 0.0
    lam, radius = state.config.weight_decay, state.config.radius
    if name == "synthetic":
        return logistic_constants(lam=lam, radius=radius, bias=True, init_norm=r0)
    if name in ("quick", "class", "psgd"):
        return softmax_constants(n_classes=state.dataset.n_classes, lam=lam, radius=radius, bias=True, init_norm=r0)
    x, y = state.dataset.train_subset(state.train_indices[:128])
    return estimate_constants(state.flat, x, y, radius=radius, weight_decay=lam, n_points=4, n_samples=128,
                              generator=generator)


def coupled_k_sweep(state: TrainedState, request: Request, Ks: Sequence[int], *, batches: Sequence[Any],
                    epsilon: Optional[float] = None, constants: Optional[Constants] = None,
                    seed: int = 0) -> tuple[list[dict[str, float]], torch.Tensor]:
    """R2D and D2D (noise-free D2D) for each K, on batches coupled to training (digest 003 Algorithm 6).

    ``batches`` are the retraining run's minibatches (positions into the retain set, one per step, from
    :func:`unlearnkit.experiments.descend_rewind.coupled.coupled_retrain_batches`). Retrains on them; R2D replays their last K from the
    checkpoint ``T - K`` and D2D runs the same K batches from ``w_T``. Returns ``(rows, retrained_params)``.
    """

    cfg = state.config
    xr, yr = state.dataset.train_subset(request.retain(state.train_indices))
    retrained, _, _ = run_sgd(state.flat, state.extras["init"], xr, yr, replace(cfg, checkpoint_every=0),
                              generator=make_generator(seed), batches=batches)
    T = cfg.steps
    rows = []
    for K in Ks:
        K = int(K)
        tail = batches[T - K:]
        for name, method, conf in [("R2D", R2D(batches=tail), R2DConfig(K=K, epsilon=epsilon, constants=constants)),
                                   ("D2D", D2D(batches=tail), D2DConfig(K=K, epsilon=None))]:
            res = method.unlearn(state, request, conf, generator=make_generator(seed + K))
            m = report(state.flat, res.params, state.dataset, request, retrained=retrained,
                       train_indices=state.train_indices)
            rows.append({"method": name, "K": K, **{k: m[k] for k in ("test_acc", "forget_acc", "retain_acc", "mia_auc",
                                                                      "mia_auc_low", "mia_auc_high", "dist_to_retrain")},
                         "grad_evals": int(res.cost.grad_evals)})
    return rows, retrained


def run_descend_rewind(method, make_config, *, profile: str, seed: int, progress: bool, **kw) -> dict:
    """Train on the profile, compute its constants, then unlearn with ``method`` and compare to retraining."""
    prof = central_profile(profile)
    state, request = centralized_setup(prof, seed=seed, progress=progress)
    c = profile_constants(profile, state, generator=make_generator(seed + 7))
    out = run_centralized(method, make_config(state, c, **kw), profile=prof, seed=seed, progress=progress,
                          setup=(state, request))
    out["profile"] = profile
    return out


def _defaults(profile: str, K: Optional[int], mode: Optional[str]) -> tuple[int, str]:
    check_choice("profile", profile, PROFILES)
    return (PROFILE_K[profile] if K is None else K), (mode or ("paper" if profile == "paper" else "sound"))


def run_r2d(*, profile: str, seed: int, progress: bool, K: Optional[int] = None, epsilon: float = 1.0,
            delta: float = 1e-5, mode: Optional[str] = None, **kw) -> dict:
    """R2D on ``profile`` (K defaults to :data:`PROFILE_K`; mode to ``"paper"`` on the paper profile, else
    ``"sound"``)."""
    K, mode = _defaults(profile, K, mode)

    def make(state, c):
        return R2DConfig(K=K, epsilon=epsilon, delta=delta, constants=c, mode=mode)

    return run_descend_rewind(R2D(), make, profile=profile, seed=seed, progress=progress)


def run_d2d(*, profile: str, seed: int, progress: bool, K: Optional[int] = None, epsilon: Optional[float] = 1.0,
            delta: float = 1e-5, mode: Optional[str] = None, **kw) -> dict:
    """D2D on ``profile`` (defaults as :func:`run_r2d`); no certificate outside strong convexity."""
    K, mode = _defaults(profile, K, mode)

    def make(state, c):
        if c.regime != "strongly_convex":
            return D2DConfig(K=K, epsilon=None)  # no D2D guarantee outside strong convexity: fine-tuning
        return D2DConfig(K=K, epsilon=epsilon, delta=delta, constants=c, mode=mode)

    return run_descend_rewind(D2D(), make, profile=profile, seed=seed, progress=progress)


def gd_r2d_worlds(*, declared_lam: float = 0.1, weight_decay: float = 0.0, steps: int = 60, K: int = 40,
                  lr: float = 2.0, epsilon: float = 1.0, delta: float = 1e-5, task: Any = None):
    """Full-batch GD-R2D on the audit's toy task with constants declaring ``lambda = declared_lam`` while
    training adds ``weight_decay``: the configuration (0 against 0.1) with the diameter cap
    not binding (the deterministic sensitivity is far below 2R), or its matched counterpart.

    Returns ``(world_a, world_b, certificate)``: world A trains on D (fresh per trial; full-batch GD from the
    task's fixed initialisation), rewinds and adds R2D's noise; world B retrains on D minus D_f and adds the
    same noise. ``certificate.constants["nominal_epsilon"]`` is what the declared constants claim when the
    certificate is ``mode="none"``.
    """

    task = task or ToyTask(weight_decay=weight_decay)
    flat, ds, request, sgd, _ = toy_setup(task)
    cfg = SGDConfig(steps=steps, lr=lr, sampling="full", weight_decay=weight_decay, radius=sgd.radius,
                    checkpoint_every=1)
    conf = R2DConfig(K=K, epsilon=epsilon, delta=delta,
                     constants=logistic_constants(lam=declared_lam, radius=sgd.radius, bias=True))
    full = np.arange(ds.n_train)
    retain = request.retain(full)
    probe = R2D().unlearn(train_sgd(flat, ds, full, cfg, generator=make_generator(0)), request, conf,
                          generator=make_generator(1))
    sigma = probe.certificate.sigma

    def world_a(g: torch.Generator) -> torch.Tensor:
        return R2D().unlearn(train_sgd(flat, ds, full, cfg, generator=g), request, conf, generator=g).params

    def world_b(g: torch.Generator) -> torch.Tensor:
        w = train_sgd(flat, ds, retain, cfg, generator=g).params
        return w + gaussian_noise(w, sigma, g)

    return per_trial(world_a), per_trial(world_b), probe.certificate


def audit_descend_rewind(*, n_trials: int = 2000, seed: int = 0, epsilon: float = 1.0, delta: float = 1e-5,
                         task: Any = None, progress: bool = False) -> dict[str, Any]:
    """Benchmark-size audits of the weight-decay mismatch (fresh training in every trial), ``{label: AuditResult}``.

    ``"r2d_sound"``, ``"d2d_sound"``: the sound certificates of the toy task's projected SGD (the diameter cap
    binds); ``"gd_r2d_matched"``: full-batch GD-R2D with weight decay = lambda = 0.1 (cap not binding); all
    three must not be refuted. ``"mismatch"``: weight decay 0 with lambda = 0.1 declared
    (:func:`gd_r2d_worlds`), audited against the epsilon the declared constants claim (refuted; its
    certificate, ``out["mismatch_certificate"]``, is now ``mode="none"``).
    """

    task = task or ToyTask()
    cfg = AuditConfig(n_trials=n_trials)
    consts = toy_setup(task)[4]
    out: dict[str, Any] = {}
    for name, method, conf in [("r2d_sound", R2D(), R2DConfig(K=task.steps // 2, epsilon=epsilon, delta=delta,
                                                               constants=consts)),
                               ("d2d_sound", D2D(), D2DConfig(K=task.steps // 2, epsilon=epsilon, delta=delta,
                                                               constants=consts))]:
        out[name] = audit_unlearner(method.unlearn, conf, task=task, config_audit=cfg, fresh_training=True,
                                    generator=make_generator(seed), label=name, progress=progress)
    for name, wd in [("gd_r2d_matched", 0.1), ("mismatch", 0.0)]:
        wa, wb, cert = gd_r2d_worlds(weight_decay=wd, epsilon=epsilon, delta=delta)
        eps = cert.epsilon if cert.mode == "sound" else cert.constants["nominal_epsilon"]
        out[name] = audit(wa, wb, delta=delta, epsilon=eps, config=cfg, generator=make_generator(seed + 1),
                          label=f"GD-R2D, weight decay {wd}, lambda 0.1 declared", mode=cert.mode, progress=progress)
        out[name + "_certificate"] = cert
    return out
