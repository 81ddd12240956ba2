"""The audit recipes: the two worlds of each centralized method's certificate on a tiny convex problem.

The statistics (threshold tests, Clopper-Pearson bounds, lower bounds on epsilon) live in
:mod:`unlearnkit.audit`; this module builds the two *worlds* of a method's certificate on :class:`ToyTask`
(train, then unlearn; against the certifier: retrain plus noise, rerun on retrained, or exact retraining)
(:data:`METHOD_RECIPES`); :mod:`.methods` audits each of them in paper and sound mode, and :mod:`.vectorised`
batches the trials. It follows Jagielski et al. 2020 ("Auditing Differentially Private Machine
Learning", NeurIPS) and Nasr et al. 2021 ("Adversary Instantiation", S&P): a lower bound above the certified
epsilon refutes the certificate.

Why the audit is valid. A certificate compares two *distributions*: the law of the
unlearned model U(A(D)) over all of its randomness (training batches, unlearning batches, noise) and the law
of the certifier's model over all of *its* randomness (retraining's batches, noise). Every trial here draws
both worlds afresh from independent generators, so each world's outputs are i.i.d. draws from exactly those
two laws; the threshold is chosen on one split and its errors counted on the other, so the held-out counts
are binomial with the true event probabilities and the Clopper-Pearson bound holds: if the certificate is
true, the audit refutes it with probability at most alpha. Training each world once instead ("fixed
training") samples the laws *conditional* on one trained model, which the certificate says nothing about:
auditing exact retraining (R2D with K = T, true epsilon 0) against one fixed retrained model reported
"epsilon >= 3.18, VIOLATION" because world A kept retraining's randomness and world B did not. Fixed training
is therefore allowed only where the certificate holds for *every* pair of starts (certifier
``"unlearn_retrained"``: the start is clipped to a ball and any two starts are covered).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
import torch

from ... import data as D
from ..._validate import check_choice, check_int, check_positive
from ...audit import AuditConfig, AuditResult, audit
from ...audit.mechanisms import per_trial
from ...constants import logistic_constants
from ...core import Callback, Request
from ...methods import noisy_finetune as nf
from ...methods.baselines import Retrain, RetrainConfig
from ...methods.descend_rewind import D2D, R2D, D2DConfig, R2DConfig
from ...privacy.noise import gaussian_noise
from ...core import MAX_DIM, MAX_SAMPLES, MAX_STEPS
from ...models import FlatParams, make_model
from ...runtime import make_generator
from ...train import SGDConfig, train_sgd


CERTIFIERS = ("retrain_plus_noise", "unlearn_retrained", "retrain")
# certifiers whose certificate holds for every pair of starts: only they may be audited with fixed training
FIXED_START_CERTIFIERS = ("unlearn_retrained",)


@dataclass(frozen=True, kw_only=True)
class ToyTask:
    """A tiny convex task to audit on: binary logistic regression on ``synthetic`` data (``||x|| <= 1``).

    ``forget="flipped"`` flips the labels of the ``m`` forgotten points, so they pull the model as hard as
    points can (the audit then looks along the direction the forget set pushes); ``"random"`` forgets ``m``
    ordinary points. Training is projected SGD with replacement (the certified sampling) and restarts from
    the same initialisation with fresh batches in every trial.
    """

    n_train: int = 60
    dim: int = 2
    m: int = 6
    forget: str = "flipped"
    weight_decay: float = 0.1
    steps: int = 20
    lr: float = 0.5
    batch_size: int = 10
    radius: float = 5.0
    data_seed: int = 0

    def __post_init__(self) -> None:
        check_int("n_train", self.n_train, low=4, high=MAX_SAMPLES)
        check_int("dim", self.dim, low=1, high=MAX_DIM)
        check_int("m", self.m, low=1, high=self.n_train - 2)
        check_choice("forget", self.forget, ("flipped", "random"))
        check_positive("weight_decay", self.weight_decay, allow_zero=True)
        check_int("steps", self.steps, low=1, high=MAX_STEPS)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1, high=MAX_SAMPLES)
        check_positive("radius", self.radius)


def toy_setup(task: ToyTask):
    """``(flat, dataset, request, sgd_config, constants)`` for :class:`ToyTask` (CPU, float32)."""

    ds = D.load("synthetic", device="cpu", seed=task.data_seed, n_train=task.n_train, n_test=200, dim=task.dim)
    rng = np.random.default_rng(task.data_seed)
    forget = np.sort(rng.choice(task.n_train, size=task.m, replace=False))
    if task.forget == "flipped":
        y = ds.y_train.clone()
        y[torch.as_tensor(forget, device=y.device)] = 1 - y[torch.as_tensor(forget, device=y.device)]
        ds = ds.with_train(ds.x_train, y)
    module = make_model("logreg", ds.input_shape, 1, generator=make_generator(task.data_seed))
    flat = FlatParams(module, loss="logistic")
    sgd = SGDConfig(steps=task.steps, lr=task.lr, batch_size=task.batch_size, weight_decay=task.weight_decay,
                    radius=task.radius, checkpoint_every=1)
    consts = logistic_constants(lam=task.weight_decay, radius=task.radius, bias=True)
    return flat, ds, Request("samples", forget), sgd, consts


def unlearner_worlds(unlearn_fn: Callable[..., Any], config: Any, task: ToyTask, *,
                     certifier: str = "retrain_plus_noise", fresh_training: bool = True,
                     worst_case_starts: bool = False):
    """The two worlds of a method's certificate on ``task``, as per-trial mechanisms, plus the certificate.

    World A trains on D (fresh batches) and unlearns with ``unlearn_fn(state, request, config, generator=g)``.
    World B is the certifier, retrained from scratch (fresh batches) in every trial:

    - ``"retrain_plus_noise"``: train on D minus D_f for the same steps, add ``N(0, sigma^2 I)`` with the
      sigma of world A's certificate (Sekhari et al. 2021's certifier; D2D, R2D, Newton, PDUDT); sigma must
      not depend on the trained model (checked in every trial);
    - ``"unlearn_retrained"``: train on D minus D_f, then run the same unlearning procedure, which then
      has nothing to forget (Allouah et al. 2025; the noisy fine-tuning certificates);
    - ``"retrain"``: train on D minus D_f (exact unlearning: epsilon = 0).

    ``fresh_training=True`` (default) redraws training in both worlds in every trial: the two worlds are then
    exactly the two distributions the certificate compares (see the module docstring), so the audit is valid
    for every certificate. ``fresh_training=False`` trains each world once and redraws only the unlearning
    (and noise) randomness: valid only for certificates that hold for *every* pair of trained models, i.e.
    ``certifier="unlearn_retrained"`` (output perturbation and noisy fine-tuning clip the start to a ball of
    radius C0); with any other certifier it raises, because world B would lose retraining's own randomness
    and the audit would refute even exact retraining.

    ``worst_case_starts=True`` (only with ``certifier="unlearn_retrained"``) replaces the two trained models
    by the two ends of the clipping ball, ``+task.radius e_1`` and ``-task.radius e_1``: certificates that
    clip the start to ``C0 = task.radius`` must cover any pair of starts, and this pair is the farthest apart,
    so it is where an under-calibrated noise shows first.
    """

    check_choice("certifier", certifier, CERTIFIERS)
    if worst_case_starts and certifier not in FIXED_START_CERTIFIERS:
        raise ValueError(f"worst_case_starts=True needs certifier='unlearn_retrained', got {certifier!r}")
    if not fresh_training and certifier not in FIXED_START_CERTIFIERS:
        raise ValueError(f"fresh_training=False is not valid with certifier={certifier!r}: the certificate is "
                         "about the law over training randomness, and one fixed trained model per world drops "
                         "it (exact retraining would be refuted); expected fresh_training=True, or "
                         "certifier='unlearn_retrained' for certificates that cover every pair of starts")
    flat, ds, request, sgd, _ = toy_setup(task)
    full = np.arange(ds.n_train)
    retain = request.retain(full)
    probe = unlearn_fn(train_sgd(flat, ds, full, sgd, generator=torch.Generator().manual_seed(0)), request, config,
                       generator=torch.Generator().manual_seed(1))
    cert = probe.certificate
    sigma = float(getattr(cert, "sigma", None) or 0.0)

    fixed_a = fixed_b = None
    if worst_case_starts:
        base = train_sgd(flat, ds, full, sgd, generator=torch.Generator().manual_seed(2))
        e1 = torch.zeros_like(base.params)
        e1.view(-1)[0] = task.radius
        fixed_a = base.replace(params=e1)
        fixed_b = base.replace(params=-e1)
    elif not fresh_training:
        fixed_a = train_sgd(flat, ds, full, sgd, generator=torch.Generator().manual_seed(2))
        fixed_b = train_sgd(flat, ds, retain, sgd, generator=torch.Generator().manual_seed(3))

    def world_a(g: torch.Generator) -> torch.Tensor:
        state = fixed_a if fixed_a is not None else train_sgd(flat, ds, full, sgd, generator=g)
        res = unlearn_fn(state, request, config, generator=g)
        s = float(getattr(res.certificate, "sigma", None) or 0.0)
        if certifier == "retrain_plus_noise" and not math.isclose(s, sigma, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError(f"sigma={s!r} differs from the probe's sigma={sigma!r}: the noise depends on the "
                             "trained model, so 'retrain_plus_noise' cannot reproduce world B; audit such a "
                             "method with certifier='unlearn_retrained'")
        return res.params

    def world_b(g: torch.Generator) -> torch.Tensor:
        state = fixed_b if fixed_b is not None else train_sgd(flat, ds, retain, sgd, generator=g)
        if certifier == "unlearn_retrained":
            # the certifier U(empty, A(D minus D_f)): the same procedure on the retrained model. Presenting it
            # with the full index set and the same request gives exactly the retain set D minus D_f (so the
            # computation is the one of "forget nothing more"), and the request validator sees indices that
            # the index set holds; the model itself never saw D_f
            return unlearn_fn(state.replace(train_indices=full), request, config, generator=g).params
        if certifier == "retrain" or sigma == 0.0:
            return state.params
        return state.params + gaussian_noise(state.params, sigma, g)

    return per_trial(world_a), per_trial(world_b), cert


def audit_unlearner(unlearn_fn: Callable[..., Any], config: Any, *, task: ToyTask | None = None,
                    certifier: str = "retrain_plus_noise", config_audit: AuditConfig | None = None,
                    generator: torch.Generator, label: str = "", progress: bool = False,
                    callback: Optional[Callback] = None, fresh_training: bool = True,
                    worst_case_starts: bool = False) -> AuditResult:
    """Audit one method's certificate on a tiny convex task (see :func:`unlearner_worlds`).

    One audit at ``config_audit.alpha`` (no multiple-testing correction: a single verdict). Fresh training
    in both worlds by default: about 20 ms per trial and world on :class:`ToyTask` on one idle CPU core
    (fixed training, where valid, is about half of that).
    """
    task = task or ToyTask()
    world_a, world_b, cert = unlearner_worlds(unlearn_fn, config, task, certifier=certifier,
                                              fresh_training=fresh_training, worst_case_starts=worst_case_starts)
    if cert is None:
        eps, delta, mode = None, 1e-5, "none"
    else:
        eps = float(cert.epsilon) if math.isfinite(cert.epsilon) and cert.mode != "none" else None
        delta, mode = float(cert.delta), cert.mode
    res = audit(world_a, world_b, delta=delta, epsilon=eps, config=config_audit, generator=generator,
                label=label, mode=mode, progress=progress, callback=callback, chunk=25)
    res.extras.update(certifier=certifier, fresh_training=fresh_training, worst_case_starts=worst_case_starts,
                      sigma=None if cert is None else cert.sigma,
                      claimed_epsilon=None if cert is None else float(cert.epsilon))
    return res


class ModeNotSupported(ValueError):
    """A recipe cannot audit a method in the requested mode (e.g. retraining has no paper calibration)."""


def _recipe_retrain(mode: str, eps: float, delta: float, task: ToyTask, consts: Any):
    if mode != "sound":
        raise ModeNotSupported(f"mode={mode!r}: retraining is exact (epsilon 0), expected mode='sound'")
    r = Retrain()
    return (lambda st, rq, cfg, generator: r.unlearn(st, rq, cfg, generator=generator)), RetrainConfig(), "retrain"


def _recipe_d2d(mode: str, eps: float, delta: float, task: ToyTask, consts: Any):
    return D2D().unlearn, D2DConfig(K=task.steps // 2, epsilon=eps, delta=delta, constants=consts, mode=mode), \
        "retrain_plus_noise"


def _recipe_r2d(mode: str, eps: float, delta: float, task: ToyTask, consts: Any):
    return R2D().unlearn, R2DConfig(K=task.steps // 2, epsilon=eps, delta=delta, constants=consts, mode=mode), \
        "retrain_plus_noise"


def _recipe_r2d_full_rewind(mode: str, eps: float, delta: float, task: ToyTask, consts: Any):
    # K = T rewinds to the initialisation: this *is* exact retraining (sigma 0, true epsilon 0), so any
    # violation is the audit's fault (the control)
    return R2D().unlearn, R2DConfig(K=task.steps, epsilon=eps, delta=delta, constants=consts, mode=mode), \
        "retrain_plus_noise"


def _recipe_gc(mode: str, eps: float, delta: float, task: ToyTask, consts: Any):
    # C1 = C0 and gamma = 0.5 keep the paper's step rule T = ceil(C0 / (gamma C1)) at 2 noisy steps, so an
    # audit of hundreds of trials stays within minutes on a laptop CPU
    cfg = nf.GradientClippingConfig(epsilon=eps, delta=delta, C0=task.radius, C1=task.radius, gamma=0.5,
                                    lam=task.weight_decay, mode=mode, batch_size=task.batch_size,
                                    finetune=nf.CleanFinetuneConfig(steps=0))
    return nf.GradientClipping().unlearn, cfg, "unlearn_retrained"


def _recipe_op(mode: str, eps: float, delta: float, task: ToyTask, consts: Any):
    cfg = nf.OutputPerturbationConfig(epsilon=eps, delta=delta, C0=task.radius, mode=mode)
    return nf.OutputPerturbation().unlearn, cfg, "unlearn_retrained"


METHOD_RECIPES: dict[str, Callable[..., tuple[Callable[..., Any], Any, str]]] = {
    "retrain": _recipe_retrain,
    "d2d": _recipe_d2d,
    "r2d": _recipe_r2d,
    "r2d_full_rewind": _recipe_r2d_full_rewind,
    "noisy_finetune_gc": _recipe_gc,
    "output_perturbation": _recipe_op,
}
"""How to audit each centralized method on :class:`ToyTask`: ``recipe(mode, eps, delta, task, constants) ->
(unlearn_fn, config, certifier)``; a recipe raises :class:`ModeNotSupported` for a mode it cannot audit.
``"r2d_full_rewind"`` (R2D with K = T) is exact retraining, a control that must never be refuted.
Decentralized methods (RR-DU, Newton, PDUDT) certify views or averages of
a network and need their own worlds; they are not in this table yet."""
