"""A one-run canary audit of unlearning (Steinke, Nasr & Jagielski 2023, adapted to deletion).

One training run and one unlearning run give a lower bound on epsilon, instead of thousands of trials:

1. ``m`` canaries, each *included* in the training set with probability 1/2 (a fair coin ``S_i`` per canary,
   drawn from the generator before anything else). Canary ``i`` is the point ``x = e_{d0 + i}`` (its own
   coordinate, outside the ``d0`` coordinates of the ordinary data) with label 1, so its weight is pushed up
   only when it is trained on (a "Dirac canary": the white-box design of Steinke et al. Sec. 6);
2. train on the ordinary data plus the included canaries; then **delete every included canary** with the
   method under test (the request is the included set) and release its output;
3. score each canary by the released model's logit on it, guess "included" for the ``k_plus`` highest scores
   and "excluded" for the ``k_minus`` lowest (fixed in advance), count the right guesses, and turn them into
   a lower bound with :func:`unlearnkit.audit.one_run_epsilon_lower_bound`.

**What it assumes (the claim being audited).** An unlearning certificate does not say "DP with respect to
each canary"; it says the released model ``U(A(D + C_S), C_S)`` is (eps, delta)-close to the certifier's
output on the retained data ``D`` (retraining plus the same noise for R2D; retrain-then-unlearn for
output perturbation). That certifier does not depend on ``S`` at all *provided the noise does not depend on
S*: we therefore fix the method's noise to the one it calibrates for the **largest** request (all ``m``
canaries deleted, ``n = n_base + m``) and assume, as the method's bound does (its sensitivity grows with the
deleted share), that it covers every smaller deletion; the run's own certificate for the realised request is
reported beside it. Then for two coin vectors differing in canary ``i`` both laws are (eps, delta)-close to
the same law, so by the triangle inequality of hockey-stick divergences the mechanism ``S -> output`` is
``(2 eps, (1 + e^eps) delta)``-DP with respect to each canary: that is the per-canary claim we test (bound at
``delta' = (1 + e^eps) delta``, violation when it exceeds ``2 eps``). Besides, Steinke et al.'s assumptions:
the coins are independent fair coins, the guesses are a post-processing of the output only, and ``k_plus``,
``k_minus`` are fixed before the scores are seen. A bound of 0 is weak evidence: with ``r`` guesses the
bound cannot exceed :func:`unlearnkit.audit.ceiling.audit_ceiling` (``r`` canaries, all right).

Controls: ``"retrain"`` deletes by retraining on ``D`` (the output does not depend on ``S``: the bound must
be 0 with probability ``>= 1 - alpha``), ``"no_unlearning"`` releases the trained model (no deletion: the
audit must see the canaries), and ``"r2d_no_noise"`` runs R2D's rewind and replay without its output noise
while keeping the calibrated claim (a broken certificate: the checkpoint it rewinds to still holds the
canaries, and the audit should refute it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from ... import data as D
from ..._validate import check_choice, check_int, check_positive, check_probability
from ...audit.one_run import one_run_epsilon_lower_bound, one_run_guesses
from ...constants import logistic_constants
from ...core import MAX_DIM, MAX_SAMPLES, MAX_STEPS, Request
from ...methods import noisy_finetune as nf
from ...methods.baselines import Retrain, RetrainConfig
from ...models import FlatParams, make_model
from ...runtime import make_generator
from ...train import SGDConfig, train_sgd


CANARY_METHODS = ("retrain", "no_unlearning", "r2d", "r2d_no_noise", "output_perturbation")


@dataclass(frozen=True, kw_only=True)
class CanaryTask:
    """The one-run task: ``n_base`` ordinary synthetic points in ``base_dim`` coordinates and ``m`` canaries.

    Training is projected SGD with replacement (the certified sampling), ``steps`` steps of ``batch_size``;
    ``k_plus``/``k_minus`` are the guesses, fixed in advance.
    """

    m: int = 1000
    n_base: int = 200
    base_dim: int = 2
    steps: int = 400
    lr: float = 0.5
    batch_size: int = 64
    weight_decay: float = 0.01
    radius: float = 5.0
    k_plus: int = 50
    k_minus: int = 50
    data_seed: int = 0

    def __post_init__(self) -> None:
        check_int("m", self.m, low=2, high=MAX_SAMPLES)
        check_int("n_base", self.n_base, low=4, high=MAX_SAMPLES)
        check_int("base_dim", self.base_dim, low=1, high=MAX_DIM)
        check_int("steps", self.steps, low=2, high=MAX_STEPS)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1, high=MAX_SAMPLES)
        check_positive("weight_decay", self.weight_decay)
        check_positive("radius", self.radius)
        check_int("k_plus", self.k_plus, low=0, high=self.m)
        check_int("k_minus", self.k_minus, low=0, high=self.m - self.k_plus)
        if self.k_plus + self.k_minus == 0:
            raise ValueError("k_plus=0 and k_minus=0: expected at least one guess")


def _setup(task: CanaryTask):
    base = D.load("synthetic", device="cpu", seed=task.data_seed, n_train=task.n_base, n_test=50,
                  dim=task.base_dim)
    dim = task.base_dim + task.m

    def pad(x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, torch.zeros((x.shape[0], task.m), dtype=x.dtype, device=x.device)], dim=1)

    canaries = torch.cat([torch.zeros((task.m, task.base_dim), device="cpu"), torch.eye(task.m, device="cpu")],
                         dim=1)
    x = torch.cat([pad(base.x_train), canaries])
    y = torch.cat([base.y_train, torch.ones(task.m, dtype=base.y_train.dtype, device="cpu")])
    ds = replace(base, x_train=x, y_train=y, x_test=pad(base.x_test), input_shape=(dim,))
    module = make_model("logreg", ds.input_shape, 1, generator=make_generator(task.data_seed))
    flat = FlatParams(module, loss="logistic")
    sgd = SGDConfig(steps=task.steps, lr=task.lr, batch_size=task.batch_size, weight_decay=task.weight_decay,
                    radius=task.radius, checkpoint_every=1)
    consts = logistic_constants(lam=task.weight_decay, radius=task.radius, bias=True)
    return flat, ds, sgd, consts, canaries


def _method(name: str, mode: str, eps: float, delta: float, task: CanaryTask, consts, flat, ds, sgd):
    """``(unlearn_fn, per-canary claim epsilon, noise sigma)`` with the noise fixed for the largest request."""
    from ...methods.descend_rewind import R2D, R2DConfig  # deferred: imports scipy.optimize

    if name == "retrain":
        return (lambda st, rq, g: Retrain().unlearn(st, rq, RetrainConfig(), generator=g)), 0.0, 0.0
    if name == "no_unlearning":
        return (lambda st, rq, g: None), math.inf, 0.0
    if name == "output_perturbation":
        cfg = nf.OutputPerturbationConfig(epsilon=eps, delta=delta, C0=task.radius, mode=mode)
        return (lambda st, rq, g: nf.OutputPerturbation().unlearn(st, rq, cfg, generator=g)), eps, None
    cfg = R2DConfig(K=task.steps // 2, epsilon=eps, delta=delta, constants=consts, mode=mode)
    full = np.arange(ds.n_train)
    probe = R2D().unlearn(train_sgd(flat, ds, full, sgd, generator=torch.Generator().manual_seed(0)),
                          Request("samples", np.arange(task.n_base, ds.n_train)), cfg,
                          generator=torch.Generator().manual_seed(1))
    sigma = float(probe.certificate.sigma)
    if name == "r2d_no_noise":
        sigma = 0.0
    fixed = replace(cfg, sigma=sigma)
    return (lambda st, rq, g: R2D().unlearn(st, rq, fixed, generator=g)), eps, sigma


def canary_audit(method: str = "r2d", mode: str = "sound", *, epsilon: float = 1.0, delta: float = 1e-5,
                 alpha: float = 0.05, task: CanaryTask | None = None,
                 generator: torch.Generator) -> dict[str, Any]:
    """One training run, one unlearning run, one lower bound (see the module docstring for the claim tested).

    Returns a row: ``method``, ``mode``, ``m``, ``n_included``, ``n_guesses``, ``n_correct``,
    ``epsilon_lower`` (per-canary, at ``delta_canary``), ``claimed_canary_epsilon`` (``2 eps``; 0 for
    retraining, inf without unlearning), ``certified_epsilon_run`` (the method's certificate for the realised
    request), ``ceiling`` (the bound if every guess were right), ``violation``.
    """

    check_choice("method", method, CANARY_METHODS)
    check_choice("mode", mode, ("paper", "sound"))
    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    task = task or CanaryTask()
    flat, ds, sgd, consts, canaries = _setup(task)
    fn, eps_claim, sigma = _method(method, mode, epsilon, delta, task, consts, flat, ds, sgd)
    # the coins first: nothing the guesses see is drawn before them
    included = torch.rand((task.m,), generator=generator, device=generator.device).cpu().numpy() < 0.5
    inc_idx = task.n_base + np.flatnonzero(included)
    train_idx = np.concatenate([np.arange(task.n_base), inc_idx])
    state = train_sgd(flat, ds, train_idx, sgd, generator=generator)
    cert_run = None
    if method == "no_unlearning" or inc_idx.size == 0:
        params = state.params
    else:
        res = fn(state, Request("samples", inc_idx), generator)
        params, cert_run = res.params, res.certificate
    with torch.no_grad():
        scores = flat.forward(params, canaries).reshape(-1).cpu().numpy()
    r, v = one_run_guesses(scores, included, k_plus=task.k_plus, k_minus=task.k_minus)
    # the per-canary claim implied by the certificate (module docstring): (2 eps, (1 + e^eps) delta)
    canary_eps = 2 * eps_claim
    delta_c = min(delta * (1 + math.exp(eps_claim)), 0.5) if math.isfinite(eps_claim) else delta
    lower = one_run_epsilon_lower_bound(r, v, task.m, delta_c, alpha)
    ceiling = one_run_epsilon_lower_bound(r, r, task.m, delta_c, alpha)
    return dict(kind="one_run", method=method, mode=mode if method not in ("retrain", "no_unlearning") else "-",
                m=task.m, n_included=int(included.sum()), n_guesses=r, n_correct=v, delta_canary=delta_c,
                epsilon_lower=lower, claimed_canary_epsilon=canary_eps, sigma=sigma,
                certified_epsilon_run=None if cert_run is None else float(cert_run.epsilon),
                ceiling=ceiling, violation=bool(lower > canary_eps + 1e-12))


def canary_bench_rows(*, quick: bool = False, seed: int = 0) -> list[dict[str, Any]]:
    """The one-run audit of every canary method (sound mode; R2D also paper), one generator seed."""

    task = CanaryTask(m=200, k_plus=20, k_minus=20, steps=200) if quick else CanaryTask()
    rows = []
    for method, mode in (("retrain", "sound"), ("no_unlearning", "sound"), ("r2d", "sound"), ("r2d", "paper"),
                         ("r2d_no_noise", "sound"), ("output_perturbation", "sound")):
        rows.append(canary_audit(method, mode, task=task, generator=make_generator(seed)))
    return rows


def canary_verdict_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of :func:`canary_audit` reduced to what a reader checks: guesses, bound, claim and verdict.

    Parameters
    ----------
    rows : sequence of mappings
        Rows returned by :func:`canary_audit`.

    Returns
    -------
    list of dict
        Per row: ``method``, ``right guesses`` (``"correct/guesses"``), ``eps_canary >=`` (the lower bound),
        ``claim`` (the per-canary epsilon the certificate implies), ``ceiling`` (the bound if every guess were
        right) and ``verdict`` (``"VIOLATION"`` when the bound exceeds the claim, else ``"not refuted"``).
    """
    return [{"method": r["method"], "right guesses": f"{r['n_correct']}/{r['n_guesses']}",
             "eps_canary >=": r["epsilon_lower"], "claim": r["claimed_canary_epsilon"], "ceiling": r["ceiling"],
             "verdict": "VIOLATION" if r["violation"] else "not refuted"} for r in rows]
