"""The coupled simulator of "Descend or Rewind?" (digest 003, Algorithm 6): training, retraining and
unlearning on shared randomness, with the actual distance to retraining next to the bound.

The certificates of R2D bound ``E||u_T - w'_T||`` under a *coupling* of the training run on ``D`` and the
retraining run on ``D' = D \\ U`` (Lemma A.13): every batch slot that draws a retained sample draws the
same sample in both runs; a slot that hits ``U`` is redrawn uniformly from ``D'`` for the retraining run. The
last ``K`` steps of retraining and the ``K`` unlearning steps share their batches (Lemma A.12). The coupling
is a proof device (the marginals are what the certificate is about), which is exactly why a simulator can
use it to show the quantity the theorem bounds, trial by trial.

:func:`simulate` runs ``trials`` such coupled experiments at once (vectorised over trials) on any problem with
``grad(W, idx)`` (the 2-D :mod:`unlearnkit.toy` problems, or :class:`ArrayLogistic` for d-dimensional
logistic regression) and returns the trajectories and the distances:

- ``r2d``: rewind to ``w_{T-K}`` and replay K steps on the retraining run's last K batches;
- ``d2d``: K steps from ``w_T`` on the same batches (D2D's bound is for independent runs; any coupling
  gives a valid picture of the marginals).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..._validate import check_int, check_positive
from ...methods.descend_rewind.bounds import psgd_r2d_sensitivity


@dataclass(frozen=True)
class ArrayLogistic:
    """Binary logistic loss (+ ridge) on features ``X`` ``(n, d)`` with labels ``s`` in {-1, +1}, NumPy-vectorised."""

    X: np.ndarray
    s: np.ndarray
    lam: float = 0.0

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    def grad(self, W: np.ndarray, idx: np.ndarray) -> np.ndarray:
        X, s = self.X[idx], self.s[idx]
        z = (W[:, None, :] * X).sum(-1)
        sig = 0.5 * (1.0 - np.tanh(0.5 * s * z))
        return (-(s * sig)[..., None] * X).mean(1) + self.lam * W


def coupled_batches(n: int, forget: np.ndarray, *, steps: int, b: int, trials: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Batches ``(trials, steps, b)`` for training on D and the coupled ones for retraining on D' (Lemma A.13)."""
    forget = np.asarray(forget)
    retain = np.setdiff1d(np.arange(n), forget)
    idx = rng.integers(0, n, size=(trials, steps, b))
    hit = np.isin(idx, forget)
    idx_r = idx.copy()
    idx_r[hit] = retain[rng.integers(0, retain.size, size=int(hit.sum()))]
    return idx, idx_r


def _project(W: np.ndarray, R: float) -> np.ndarray:
    if not math.isfinite(R):
        return W
    nrm = np.linalg.norm(W, axis=-1, keepdims=True)
    return W * np.minimum(1.0, R / np.maximum(nrm, 1e-300))


@dataclass
class CoupledRun:
    """What :func:`simulate` returns (arrays over ``trials`` first).

    ``train``/``retrain``: ``(trials, T+1, d)``; ``r2d``: ``(trials, K+1, d)`` for steps ``T-K..T``; ``d2d``:
    ``(trials, K+1, d)`` for steps ``T..T+K``. ``r2d_gap[t] = ||u_{T-K+t} - w'_{T-K+t}||`` (distance to the
    retraining run at the same step), ``d2d_gap[k] = ||d_k - w'_T||``. ``bound`` is the PSGD-R2D first-moment
    bound of the regime (``None`` when constants are not given).
    """

    train: np.ndarray
    retrain: np.ndarray
    r2d: np.ndarray
    d2d: np.ndarray
    r2d_gap: np.ndarray
    d2d_gap: np.ndarray
    original_gap: np.ndarray
    T: int
    K: int
    bound: Optional[float]
    hits: np.ndarray

    @property
    def mean_r2d_distance(self) -> float:
        """Monte-Carlo estimate of ``E||u_T - w'_T||`` (what Theorem 4.5 bounds)."""
        return float(self.r2d_gap[:, -1].mean())

    @property
    def mean_d2d_distance(self) -> float:
        return float(self.d2d_gap[:, -1].mean())

    @property
    def mean_original_distance(self) -> float:
        """``E||w_T - w'_T||``: how far the un-unlearned model is from retraining."""
        return float(self.original_gap.mean())


def simulate(problem: Any, *, T: int, K: int, eta: float, b: int = 8, forget: Optional[np.ndarray] = None,
             w0: Optional[np.ndarray] = None, radius: float = math.inf, trials: int = 1, seed: int = 0,
             constants: Any = None, d2d_steps: Optional[int] = None) -> CoupledRun:
    """Run ``trials`` coupled training / retraining / R2D / D2D experiments (Algorithm 6).

    Parameters
    ----------
    problem:
        Anything with ``n`` and ``grad(W (N, d), idx (N, b)) -> (N, d)``; toy problems also carry ``forget``,
        ``w0`` and ``radius`` defaults.
    T, K:
        Training steps and rewind depth (``0 <= K <= T``); D2D runs ``d2d_steps`` (default K) steps.
    eta, b:
        Constant step size and batch size (batches with replacement).
    constants:
        :class:`~unlearnkit.constants.Constants`: adds the PSGD-R2D bound of ``constants.regime``.
    """
    check_int("T", T, low=1)
    check_int("K", K, low=0)
    if K > T:
        raise ValueError(f"K={K!r} is out of range: the rewind depth must satisfy 0 <= K <= T={T}")
    check_positive("eta", eta)
    check_int("b", b, low=1)
    check_int("trials", trials, low=1)
    forget = np.asarray(getattr(problem, "forget", None) if forget is None else forget)
    if forget is None or forget.size == 0:
        raise ValueError("forget is empty: name the forget set (indices into the problem's samples)")
    w0 = np.asarray(getattr(problem, "w0") if w0 is None else w0, dtype=float)
    if not math.isfinite(radius):
        radius = float(getattr(problem, "radius", math.inf))
    Kd = K if d2d_steps is None else check_int("d2d_steps", d2d_steps, low=0)
    rng = np.random.default_rng(seed)
    n, d = problem.n, w0.size
    idx, idx_r = coupled_batches(n, forget, steps=T, b=b, trials=trials, rng=rng)
    retain = np.setdiff1d(np.arange(n), forget)
    extra = retain[rng.integers(0, retain.size, size=(trials, max(Kd - K, 0), b))]
    d2d_batches = np.concatenate([idx_r[:, T - K:], extra], axis=1)[:, :Kd]
    W = np.empty((trials, T + 1, d))
    Wr = np.empty((trials, T + 1, d))
    W[:, 0] = w0
    Wr[:, 0] = w0
    for t in range(T):
        W[:, t + 1] = _project(W[:, t] - eta * problem.grad(W[:, t], idx[:, t]), radius)
        Wr[:, t + 1] = _project(Wr[:, t] - eta * problem.grad(Wr[:, t], idx_r[:, t]), radius)
    U = np.empty((trials, K + 1, d))
    U[:, 0] = W[:, T - K]
    for k in range(K):
        U[:, k + 1] = _project(U[:, k] - eta * problem.grad(U[:, k], idx_r[:, T - K + k]), radius)
    Dd = np.empty((trials, Kd + 1, d))
    Dd[:, 0] = W[:, T]
    for k in range(Kd):
        Dd[:, k + 1] = _project(Dd[:, k] - eta * problem.grad(Dd[:, k], d2d_batches[:, k]), radius)
    r2d_gap = np.linalg.norm(U - Wr[:, T - K:], axis=-1)
    d2d_gap = np.linalg.norm(Dd - Wr[:, T:T + 1], axis=-1)
    bound = None
    if constants is not None:
        bound = psgd_r2d_sensitivity(constants.regime, G=constants.G, L=constants.L, mu=constants.mu, eta=eta,
                                     T=T, K=K, m=int(forget.size), n=n)
    return CoupledRun(train=W, retrain=Wr, r2d=U, d2d=Dd, r2d_gap=r2d_gap, d2d_gap=d2d_gap,
                      original_gap=np.linalg.norm(W[:, T] - Wr[:, T], axis=-1), T=T, K=K, bound=bound,
                      hits=np.isin(idx, forget).sum(-1))


def coupled_retrain_batches(state: Any, request: Any, *, rng: np.random.Generator) -> list:
    """Retraining batches coupled to a real training run (Lemma A.13), as positions into the retain set.

    ``state.extras["batches"]`` holds the training batches (positions into ``state.train_indices``). Every slot
    that drew a retained sample keeps it; a slot that drew a forgotten one is redrawn uniformly from the retain
    set. Retraining on these and replaying their last K in R2D is Algorithm 6 on real data: with ``K = T``
    the R2D output *is* the retrained model. Full-batch training (``sampling="full"``) couples trivially:
    every retraining step uses the whole retain set.
    """
    import torch  # deferred: imports torch

    if "batches" not in state.extras:
        raise ValueError("state.extras has no 'batches': train with unlearnkit.train.train_sgd to couple runs")
    idx = np.asarray(state.train_indices)
    retain = request.retain(idx)
    if getattr(state.config, "sampling", None) == "full":
        full = torch.arange(retain.size, device=state.extras["batches"][0].device)
        return [full] * len(state.extras["batches"])
    pos_in_retain = np.full(idx.size, -1, dtype=np.int64)
    keep = ~np.isin(idx, request.indices)
    pos_in_retain[keep] = np.arange(retain.size)
    out = []
    for b in state.extras["batches"]:
        p = pos_in_retain[np.asarray(b.cpu())]
        hit = p < 0
        p[hit] = rng.integers(0, retain.size, size=int(hit.sum()))
        out.append(torch.as_tensor(p, device=b.device))
    return out
