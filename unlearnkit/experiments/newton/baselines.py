"""Baselines for Newton's sound frontier on the same world: noisy fine-tuning at equal epsilon, plain fine-tuning
and retraining by gradient descent at equal cost.

The world is :func:`~unlearnkit.experiments.newton.frontier.frontier_world` (softmax regression on unit-ball digits, 10 clients, one
backdoored sample of client 0 forgotten at ``lam = 0.5`` by default). Every baseline runs on the *global*
objective ``F(x) = (1/N) sum_i f_i(x)`` (``f_i`` client ``i``'s mean loss plus ``lam/2 ||x||^2``) of the retained
data, full batch: one step costs one gradient per retained sample, the unit in which Newton's cost is counted.
Communication (gossip rounds to average the clients' gradients) is not counted for any method, Newton's
conjugate-gradient iterations included.

- **Noisy fine-tuning** (:func:`noisy_finetune_rows`, ``mode="sound"``): Koloskova et al.'s gradient clipping
  (ICML 2025, eq. 3; :class:`~unlearnkit.methods.noisy_finetune.GradientClippingConfig` supplies the sound
  sigma, Thm A.9 with Balle et al.'s conversion): ``x0 = clip(x_hat, C0)``, then ``T`` steps
  ``x <- x - gamma (clip(grad F_loss(x), C1) + lam x) + N(0, sigma^2 I)`` on the retained data, then
  ``clean_steps`` of noise-free gradient descent on ``F`` (post-processing of a released value: the certificate
  stands). Threat model: the certifier runs the same procedure from the retrained model; the steps never read
  the forget set. ``C0`` must be public: the default is the a-priori bound ``L_loss / lam`` on every
  regularised minimiser (``L_loss = 2``: softmax, unit-ball features with a bias), not the observed norm.
- **Fine-tuning** (uncertified): the clean steps alone, from the original model.
- **Retraining by gradient descent** (exact retraining's cheap stand-in at equal cost): the same number of clean
  full-batch steps from zero. It needs no certificate (it never sees the forget set).

In this world ``F`` is ``lam``-strongly convex and at most ``(lam + a^2/2)``-smooth (``a^2 = 2``), a condition number
of at most 3 at ``lam = 0.5``, so gradient descent at ``lr = 2/(2 lam + 1)`` contracts by at least ``1/2`` per step
from *any* start: the noise of a noisy start is forgotten geometrically, whatever its size. That is why the
baselines are strong here.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from ..._validate import check_int, check_positive
from ...evaluate import accuracy
from .frontier import FrontierSetting
from ...core import MAX_STEPS, MAX_TRIALS
from ...methods.newton import Newton, NewtonConfig
from ...methods.noisy_finetune import GradientClippingConfig
from ...methods.noisy_finetune.bounds import best_T
from ...privacy import gaussian_noise
from ...runtime import make_generator


#: a world with a visible forget signal (a 4x4 trigger on 20 samples of client 0 at lam = 0.5: the original's
#: backdoor success 1.0, clean accuracy 0.14; retraining 0.0 and 0.76). Sound noisy fine-tuning (T = 1, 19 clean
#: steps, cost 0.2 of retraining) meets the target there from epsilon 1; Newton's sound release needs 2048
#: (docs/frontiers/newton.md).
NEWTON_BACKDOOR_SETTING = FrontierSetting(weight_decay=0.5, m=20, patch=4)


def gd_lr(weight_decay: float, smooth_data: float = 1.0) -> float:
    """``2 / (mu + L)`` for ``F``: ``mu = lam`` and ``L = lam + smooth_data`` (softmax on unit-ball features with
    a bias: the loss Hessian is at most ``a^2 / 2 = 1``)."""
    check_positive("weight_decay", weight_decay)
    return 2.0 / (2 * weight_decay + smooth_data)


class _Objective:
    """The global retained objective of a :func:`~unlearnkit.experiments.newton.frontier.frontier_world` (client-weighted, as Newton's)."""

    def __init__(self, world: dict[str, Any]) -> None:
        st, req = world["state"], world["request"]
        after = st.federation.without(req)
        self.flat = world["flat"]
        self.parts = [after.client_data(i) for i in range(after.n_clients)]
        self.lam = float(world["setting"].weight_decay)
        self.n = int(sum(len(x) for x, _ in self.parts))

    def loss_grad(self, x: Tensor) -> Tensor:
        """``(1/N) sum_i grad (mean loss of client i)``, without the regulariser."""
        return sum(self.flat.grad(x, xs, ys) for xs, ys in self.parts) / len(self.parts)

    def descend(self, x: Tensor, steps: int, lr: float) -> Tensor:
        for _ in range(steps):
            x = x - lr * (self.loss_grad(x) + self.lam * x)
        return x


def _clip(v: Tensor, c: float) -> Tensor:
    nrm = float(v.norm())
    return v if nrm <= c else v * (c / nrm)


def _metrics(world: dict[str, Any]):
    flat, ds = world["flat"], world["dataset"]
    acc = lambda p: accuracy(flat, p, ds.x_test, ds.y_test)  # noqa: E731
    bdr = lambda p: accuracy(flat, p, world["x_triggered"], world["y_triggered"])  # noqa: E731
    return acc, bdr


def _row(world: dict[str, Any], method: str, mode: str, epsilon: float, certified: bool, accs: list, bds: list,
         grad_evals: int, **extra: Any) -> dict[str, Any]:
    acc, bdr = _metrics(world)
    ref = acc(world["retrained"])
    row = {"method": method, "mode": mode, "epsilon": epsilon, "certified": certified,
           "test_acc": float(np.mean(accs)), "backdoor": float(np.mean(bds)), "grad_evals": int(grad_evals),
           "retrain_grad_evals": world["retrain_grad_evals"], "retrain_test_acc": ref,
           "retrain_backdoor": bdr(world["retrained"]), **extra}
    row["cost_ratio"] = row["grad_evals"] / max(row["retrain_grad_evals"], 1)
    row["meets_target"] = bool(certified and row["test_acc"] >= ref - 0.03 and row["cost_ratio"] <= 0.2)
    return row


def noisy_finetune_rows(epsilons: Sequence[float], world: dict[str, Any], *, clean_steps: int = 8,
                        C0: Optional[float] = None, C1: float = 2.0, gamma: float = 1.0, T: Optional[int] = 1,
                        T_max: int = 200,
                        lr: Optional[float] = None, delta: float = 1e-5, draws: int = 3) -> list[dict[str, Any]]:
    """Sound noisy fine-tuning (module docstring) at each ``epsilon``: one row per epsilon with the released
    model's ``test_acc`` and ``backdoor`` (mean over ``draws`` noise draws), ``sigma`` per coordinate, the noisy
    steps ``T`` and the cost ``(T + clean_steps) n`` gradient evaluations. ``T=None`` takes the sigma-minimising
    count (:func:`~unlearnkit.methods.noisy_finetune.best_T`, up to ``T_max``; 27 here, too costly); the default
    ``T = 1`` buys more noise, which the clean steps then contract away (at least ``1/2`` per step)."""

    check_int("clean_steps", clean_steps, low=0, high=MAX_STEPS)
    check_int("draws", draws, low=1, high=MAX_TRIALS)
    obj = _Objective(world)
    lam = obj.lam
    C0 = 2.0 / lam if C0 is None else check_positive("C0", C0)  # L_loss / lam: public, data-independent
    lr = gd_lr(lam) if lr is None else check_positive("lr", lr)
    acc, bdr = _metrics(world)
    rows = []
    for e in epsilons:
        check_positive("epsilon", e)
        T_e = best_T(e, delta, C0=C0, C1=C1, gamma=gamma, lam=lam, T_max=T_max)[0] if T is None else check_int(
            "T", T, low=1, high=MAX_STEPS)
        cert = GradientClippingConfig(epsilon=e, delta=delta, C0=C0, C1=C1, gamma=gamma, lam=lam, T=T_e,
                                      mode="sound").certificate()
        accs, bds = [], []
        for k in range(draws):
            g = make_generator(2000 + k)
            x = _clip(world["original"].clone(), C0)
            for _ in range(T_e):
                x = x - gamma * (_clip(obj.loss_grad(x), C1) + lam * x)
                x = x + gaussian_noise(x, cert.sigma, g)
            x = obj.descend(x, clean_steps, lr)
            accs.append(acc(x))
            bds.append(bdr(x))
        rows.append(_row(world, "noisy_finetune", "sound", float(e), cert.certified, accs, bds,
                         (T_e + clean_steps) * obj.n, sigma=float(cert.sigma), T=int(T_e), clean_steps=clean_steps,
                         C0=C0, certified_epsilon=float(cert.epsilon)))
    return rows


def baseline_rows(world: dict[str, Any], *, steps: int = 9, lr: Optional[float] = None) -> list[dict[str, Any]]:
    """Uncertified references at a cost of ``steps`` full-batch passes: fine-tuning from the original model and
    retraining by gradient descent from zero (it never reads the forget set), plus exact retraining itself."""
    check_int("steps", steps, low=1, high=MAX_STEPS)
    obj = _Objective(world)
    lr = gd_lr(obj.lam) if lr is None else check_positive("lr", lr)
    acc, bdr = _metrics(world)
    ft = obj.descend(world["original"].clone(), steps, lr)
    gd = obj.descend(torch.zeros_like(world["original"]), steps, lr)
    rows = [_row(world, "finetune", "none", math.inf, False, [acc(ft)], [bdr(ft)], steps * obj.n, steps=steps),
            _row(world, "gd_retrain", "none", math.inf, False, [acc(gd)], [bdr(gd)], steps * obj.n, steps=steps,
                 distance_to_retrained=float((gd - world["retrained"]).norm())),
            _row(world, "retrain", "none", math.inf, False, [acc(world["retrained"])], [bdr(world["retrained"])],
                 world["retrain_grad_evals"])]
    return rows


def loss_gap_rows(epsilons: Sequence[float], world: dict[str, Any], *, delta: float = 1e-5,
                  draws: int = 20) -> list[dict[str, Any]]:
    """A per-example forget metric for Newton's sound release: the loss on the forgotten samples.

    ``loss_original`` and ``loss_retrained`` are the (deterministic) mean losses of the forgotten samples under
    the original and the exact retrained model; per noise draw of the sound release ``x_u``, ``gap_closed =
    (loss(x_u) - loss_original) / (loss_retrained - loss_original)`` (1: forgotten as retraining forgot, 0:
    as the original) and whether ``loss(x_u)`` is nearer to retraining's than to the original's. One row per
    epsilon: ``gap_closed`` mean and std over ``draws``, ``closer_to_retrained`` (fraction of draws).

    The signal is tiny: at ``lam = 0.5`` and one forgotten sample the two losses differ by about 2e-3 nats (the
    original is 1.7e-3 from the retrained model in parameter space), measurable only because the references are
    exact; the noise that the sound certificate adds moves the loss by about ``sigma ||grad loss||``.
    """

    check_int("draws", draws, low=2, high=MAX_TRIALS)
    flat, ds, st, req = world["flat"], world["dataset"], world["state"], world["request"]
    idx = torch.as_tensor(np.asarray(req.indices), device=ds.x_train.device)
    xf, yf = ds.x_train[idx], ds.y_train[idx]
    loss = lambda p: float(flat.value_and_grad(p, xf, yf)[0])  # noqa: E731  mean loss, no regulariser
    lo, lr_ = loss(world["original"]), loss(world["retrained"])
    rows = []
    for e in epsilons:
        cfg = NewtonConfig(mode="sound", epsilon=check_positive("epsilon", e), delta=delta, curvature="cg_hessian",
                           scope="global", center_gradient=True, release="average",
                           grad_tol=world["setting"].grad_tol, cg_tol=1e-10)
        lu = []
        for k in range(draws):
            res = Newton().unlearn(st, req, cfg, generator=make_generator(1000 + k))
            lu.append(loss(res.params.mean(0)))
        lu_a = np.asarray(lu)
        closed = (lu_a - lo) / (lr_ - lo)
        rows.append({"epsilon": float(e), "certified": res.certificate.certified, "loss_original": lo,
                     "loss_retrained": lr_, "loss_released_mean": float(lu_a.mean()),
                     "gap_closed": float(closed.mean()), "gap_closed_std": float(closed.std()),
                     "closer_to_retrained": float(np.mean(np.abs(lu_a - lr_) < np.abs(lu_a - lo)))})
    return rows


