"""Curvature for Newton-style unlearning: exact Hessian, Fisher variants and matrix-free solves.

The Newton correction of Wu et al. (digest 001, Algorithm 1, eq. 3) needs ``C^{-1} g`` where ``C`` is the
retained-data curvature of one client and ``g`` the summed gradient of the samples to forget. This module
gives every curvature the paper names or implies, behind one :func:`solve`:

============== =================================================================================== ===========
kind           matrix ``C`` (``lam`` = ``weight_decay``, ``rho`` = ``damping``)                     memory
============== =================================================================================== ===========
hessian        ``(1/n) sum_i grad^2 l_i + (lam + rho) I`` (dense, d Hessian-vector products)        ``O(d^2)``
fisher         empirical Fisher ``(1/n) sum_i g_i g_i^T + (lam + rho) I`` (eq. 7, dense)             ``O(d^2)``
true_fisher    ``(1/n) sum_i E_{y ~ p(.|x_i)} g_i g_i^T + (lam + rho) I`` (exact over labels)       ``O(d^2)``
diag_fisher    ``diag(empirical Fisher) + (lam + rho)`` (the paper's "O(d)" Fisher, digest P10a)     ``O(d)``
cg_hessian     conjugate gradient on Hessian-vector products (``torch.func`` forward-over-reverse) ``O(d)``
cg_fisher      conjugate gradient on Fisher-vector products ``J^T J v / n`` (jvp then vjp)          ``O(d)``
============== =================================================================================== ===========

Choices we made where the paper is silent (digest 001 P10, P11), each tested in ``tests/methods/newton``:

- Fisher matrices are built from gradients of the **unregularised** per-sample loss ``l_i`` and the
  regulariser's Hessian ``lam I`` is added afterwards (P10d: outer products of regularised gradients would
  contain ``lam * theta`` terms that are not curvature).
- ``damping`` is an extra ``rho I`` on top of ``lam I``; it is what keeps the Fisher invertible for a
  network without weight decay (P10b: the empirical Fisher has rank at most n).
- The *true* Fisher (labels drawn from the model) equals the Hessian of the unregularised loss for
  logistic and softmax regression at every point (canonical-link GLM; Kunstner et al. 2019); the
  *empirical* Fisher (observed labels) does not. The paper's claim "Psi_c = H_c at x_c*" (section IV-D,
  citing FedFisher) is only asymptotic (P10c). :func:`true_fisher` computes the expectation exactly by
  summing over labels, or by Monte Carlo with ``labels="sample"``.

Cost is counted on :class:`~unlearnkit.core.Cost`'s axis: a per-sample gradient over n samples
costs n, a Hessian-vector (or Fisher-vector) product over n samples n, a dense Hessian n d.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import torch
from torch import Tensor
from torch.func import jvp, vjp

from ._validate import check_choice, check_int, check_positive


CURVATURES = ("hessian", "fisher", "true_fisher", "diag_fisher", "cg_hessian", "cg_fisher")
DENSE_CURVATURES = ("hessian", "fisher", "true_fisher")

MatVec = Callable[[Tensor], Tensor]


def _check_xy(flat, theta: Tensor, x: Tensor, y: Optional[Tensor] = None) -> None:
    if theta.dim() != 1 or theta.shape[0] != flat.d:
        raise ValueError(f"theta has shape {tuple(theta.shape)}; expected ({flat.d},)")
    if x.shape[0] == 0:
        raise ValueError("x is empty: curvature needs at least one retained sample")
    if y is not None and y.shape[0] != x.shape[0]:
        raise ValueError(f"x has {x.shape[0]} rows but y has {y.shape[0]}")


def _shift(damping: float, weight_decay: float) -> float:
    check_positive("damping", damping, allow_zero=True)
    check_positive("weight_decay", weight_decay, allow_zero=True)
    return float(weight_decay) + float(damping)


# ----------------------------------------------------------------------------------------------------------
# Dense matrices (small d)
# ----------------------------------------------------------------------------------------------------------

def hessian(flat, theta: Tensor, x: Tensor, y: Tensor, *, weight_decay: float = 0.0, damping: float = 0.0) -> Tensor:
    """Exact Hessian of the mean regularised loss, plus ``damping * I`` (digest 001 eq. 2 with Remark 3).

    ``(1/n) sum_i grad^2 l(theta; x_i, y_i) + (weight_decay + damping) I``, built column by column from
    ``d`` Hessian-vector products (``FlatParams.hessian``). Symmetrised to remove round-off asymmetry.
    """
    _check_xy(flat, theta, x, y)
    shift = _shift(damping, weight_decay)
    H = flat.hessian(theta, x, y, weight_decay=0.0)
    H = 0.5 * (H + H.T)
    return H + shift * torch.eye(flat.d, dtype=H.dtype, device=H.device)


def _per_sample(flat, theta: Tensor, x: Tensor, y: Tensor, chunk_size: Optional[int]) -> Tensor:
    return flat.per_sample_grads(theta, x, y, chunk_size=chunk_size)


def empirical_fisher(flat, theta: Tensor, x: Tensor, y: Tensor, *, weight_decay: float = 0.0,
                     damping: float = 0.0, chunk_size: Optional[int] = None) -> Tensor:
    """Empirical Fisher of digest 001 eq. (7), ``(1/n) sum_i g_i g_i^T``, plus ``(weight_decay + damping) I``.

    ``g_i`` is the gradient of sample i's *unregularised* loss at ``theta`` with its observed label.
    """
    _check_xy(flat, theta, x, y)
    shift = _shift(damping, weight_decay)
    G = _per_sample(flat, theta, x, y, chunk_size)
    F = G.T @ G / G.shape[0]
    return F + shift * torch.eye(flat.d, dtype=F.dtype, device=F.device)


def _label_values(flat) -> Optional[int]:
    """Number of label values to sum over for the exact true Fisher (2 for the binary logistic loss)."""
    return 2 if flat.loss_name == "logistic" else None


def _model_probs(flat, theta: Tensor, x: Tensor) -> Tensor:
    logits = flat.forward(theta, x)
    if flat.loss_name == "logistic":
        p1 = torch.sigmoid(logits.reshape(-1))
        return torch.stack([1 - p1, p1], dim=1)
    return torch.softmax(logits, dim=-1)


def true_fisher(flat, theta: Tensor, x: Tensor, *, weight_decay: float = 0.0, damping: float = 0.0,
                labels: str = "exact", n_draws: int = 1, generator: Optional[torch.Generator] = None,
                chunk_size: Optional[int] = None) -> tuple[Tensor, int]:
    """The Fisher with labels drawn from the model, ``(1/n) sum_i E_{y ~ p(.|x_i, theta)} g_i(y) g_i(y)^T``.

    Parameters
    ----------
    labels:
        ``"exact"`` sums over every label value weighted by the model's probability (k per-sample gradient
        passes for k classes); ``"sample"`` draws ``n_draws`` labels per sample from the model with
        ``generator`` and averages empirical Fishers (the Monte Carlo estimate the issue's test uses).

    Returns
    -------
    (matrix, grad_evals):
        The ``d x d`` matrix plus ``(weight_decay + damping) I``, and the per-sample gradients it cost.
    """
    _check_xy(flat, theta, x)
    check_choice("labels", labels, ("exact", "sample"))
    n_draws = check_int("n_draws", n_draws, low=1)
    shift = _shift(damping, weight_decay)
    n = x.shape[0]
    with torch.no_grad():
        probs = _model_probs(flat, theta, x)
    k = probs.shape[1]
    F = torch.zeros(flat.d, flat.d, dtype=theta.dtype, device=theta.device)
    evals = 0
    if labels == "exact":
        for c in range(k):
            yc = torch.full((n,), c, dtype=torch.long, device=x.device)
            G = _per_sample(flat, theta, x, yc, chunk_size)
            F += (G * probs[:, c:c + 1].to(G.dtype)).T @ G
            evals += n
        F /= n
    else:
        if generator is None:
            raise ValueError("true_fisher(labels='sample') needs a generator: randomness is explicit")
        # all draws in one vmap: row j of the stacked batch is sample j % n with its own sampled label
        ys = torch.multinomial(probs.to(torch.float64).to(generator.device), n_draws, replacement=True,
                               generator=generator)
        ys = ys.T.reshape(-1).to(x.device)
        G = _per_sample(flat, theta, x.repeat(n_draws, *([1] * (x.dim() - 1))), ys, chunk_size)
        F += G.T @ G
        evals += n * n_draws
        F /= n * n_draws
    return F + shift * torch.eye(flat.d, dtype=F.dtype, device=F.device), evals


def diag_fisher(flat, theta: Tensor, x: Tensor, y: Tensor, *, chunk_size: Optional[int] = 256) -> Tensor:
    """Diagonal of the empirical Fisher, ``(1/n) sum_i g_i^2`` elementwise, in ``O(d)`` memory.

    Per-sample gradients are computed ``chunk_size`` rows at a time and squared on the fly, so the ``n x d``
    gradient matrix never exists (digest 001 Appendix A ``diag_fisher``). No regulariser or damping: the
    caller adds ``weight_decay + damping``.
    """
    _check_xy(flat, theta, x, y)
    acc = torch.zeros_like(theta)
    step = x.shape[0] if chunk_size is None else check_int("chunk_size", chunk_size, low=1)
    for i in range(0, x.shape[0], step):
        G = _per_sample(flat, theta, x[i:i + step], y[i:i + step], None)
        acc += G.pow(2).sum(0)
    return acc / x.shape[0]


# ----------------------------------------------------------------------------------------------------------
# Matrix-free operators (any d)
# ----------------------------------------------------------------------------------------------------------

def hessian_operator(flat, theta: Tensor, x: Tensor, y: Tensor, *, weight_decay: float = 0.0,
                     damping: float = 0.0) -> MatVec:
    """``v -> (H + damping I) v`` with ``H`` the Hessian of the mean regularised loss (forward-over-reverse)."""
    _check_xy(flat, theta, x, y)
    _shift(damping, weight_decay)

    def matvec(v: Tensor) -> Tensor:
        return flat.hvp(theta, x, y, v, weight_decay=weight_decay) + damping * v

    return matvec


def fisher_operator(flat, theta: Tensor, x: Tensor, y: Tensor, *, weight_decay: float = 0.0,
                    damping: float = 0.0) -> MatVec:
    """``v -> (Psi + (weight_decay + damping) I) v`` with the empirical Fisher ``Psi = J^T J / n``.

    ``J`` is the Jacobian of the per-sample losses; ``J v`` is one ``jvp`` and ``J^T u`` one ``vjp`` of
    ``FlatParams.sample_losses``, so neither the ``n x d`` Jacobian nor the ``d x d`` Fisher is formed
    (digest 001 P11, "CG with Fisher-vector products").
    """
    _check_xy(flat, theta, x, y)
    shift = _shift(damping, weight_decay)
    n = x.shape[0]

    def losses(t: Tensor) -> Tensor:
        return flat.sample_losses(t, x, y)

    _, pullback = vjp(losses, theta)

    def matvec(v: Tensor) -> Tensor:
        jv = jvp(losses, (theta,), (v,))[1]
        return pullback(jv)[0] / n + shift * v

    return matvec


@dataclass(frozen=True)
class CGResult:
    """Solution of ``A z = b`` by conjugate gradient, with how it got there."""

    x: Tensor
    iterations: int
    residual_norm: float
    converged: bool


def conjugate_gradient(matvec: MatVec, b: Tensor, *, tol: float = 1e-10, max_iter: Optional[int] = None,
                       preconditioner: Optional[Tensor] = None) -> CGResult:
    """Solve ``A z = b`` for a symmetric positive definite ``A`` given only ``v -> A v`` (Hestenes-Stiefel).

    Stops when ``||r|| <= tol * ||b||`` (relative residual). ``preconditioner`` is an optional positive
    vector ``P`` approximating ``diag(A)`` (e.g. the diagonal Fisher plus damping): Jacobi preconditioning.
    Raises ``ValueError`` if ``A`` turns out not to be positive definite along a search direction.
    """
    check_positive("tol", tol)
    max_iter = 10 * b.numel() if max_iter is None else check_int("max_iter", max_iter, low=1)
    z = torch.zeros_like(b)
    r = b.clone()
    bnorm = float(b.norm())
    if bnorm == 0.0:
        return CGResult(z, 0, 0.0, True)
    minv = None if preconditioner is None else 1.0 / preconditioner
    s = r if minv is None else minv * r
    p = s.clone()
    rs = torch.dot(r, s)
    it = 0
    rnorm = bnorm
    while it < max_iter:
        Ap = matvec(p)
        pAp = torch.dot(p, Ap)
        if not float(pAp) > 0:
            raise ValueError(f"conjugate_gradient: the matrix is not positive definite (p^T A p = {float(pAp):.3g}); "
                             "increase damping")
        alpha = rs / pAp
        z = z + alpha * p
        r = r - alpha * Ap
        it += 1
        rnorm = float(r.norm())
        if rnorm <= tol * bnorm:
            break
        s = r if minv is None else minv * r
        rs_new = torch.dot(r, s)
        p = s + (rs_new / rs) * p
        rs = rs_new
    return CGResult(z, it, rnorm, rnorm <= tol * bnorm)


# ----------------------------------------------------------------------------------------------------------
# One entry point
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Solve:
    """``z = C^{-1} b`` for one curvature choice, with its cost.

    ``min_eig`` is a lower bound on the smallest eigenvalue of ``C`` that holds by construction
    (``weight_decay + damping``): certificates use it to bound ``||C^{-1} b||``.
    """

    z: Tensor
    kind: str
    grad_evals: int
    iterations: int = 0
    residual_norm: float = 0.0
    converged: bool = True
    min_eig: float = 0.0


def curvature_matrix(kind: str, flat, theta: Tensor, x: Tensor, y: Tensor, *, weight_decay: float = 0.0,
                     damping: float = 0.0, chunk_size: Optional[int] = None) -> tuple[Tensor, int]:
    """The dense ``d x d`` matrix (or, for ``diag_fisher``, the diagonal vector) of a curvature, and its cost.

    Used when the matrix itself travels (client-wise removal collects every client's statistic ``T_i``,
    digest 001 eq. 5) or is averaged across clients (``scope="global"``).
    """
    check_choice("kind", kind, ("hessian", "fisher", "true_fisher", "diag_fisher"))
    n = x.shape[0]
    if kind == "hessian":
        # the cost unit (experiments.contract.COST_UNIT): a dense Hessian is d Hessian-vector products, each
        # counted as one gradient evaluation per sample, so n * d
        return hessian(flat, theta, x, y, weight_decay=weight_decay, damping=damping), n * flat.d
    if kind == "fisher":
        return empirical_fisher(flat, theta, x, y, weight_decay=weight_decay, damping=damping,
                                chunk_size=chunk_size), n
    if kind == "true_fisher":
        return true_fisher(flat, theta, x, weight_decay=weight_decay, damping=damping, chunk_size=chunk_size)
    return diag_fisher(flat, theta, x, y, chunk_size=chunk_size or 256) + _shift(damping, weight_decay), n


def _dense_solve(C: Tensor, b: Tensor) -> Tensor:
    # Cholesky, never an explicit inverse (digest 001 P21); fall back to LU if round-off breaks definiteness
    L, info = torch.linalg.cholesky_ex(C)
    if int(info) == 0:
        return torch.cholesky_solve(b.unsqueeze(1), L).squeeze(1)
    return torch.linalg.solve(C, b)


def solve(kind: str, flat, theta: Tensor, x: Tensor, y: Tensor, b: Tensor, *, weight_decay: float = 0.0,
          damping: float = 0.0, cg_tol: float = 1e-10, cg_max_iter: Optional[int] = None,
          chunk_size: Optional[int] = None) -> Solve:
    """``C^{-1} b`` for ``C`` the chosen curvature of the mean loss on ``(x, y)`` at ``theta``.

    Parameters
    ----------
    kind:
        One of :data:`CURVATURES`.
    weight_decay:
        The L2 weight ``lam`` of the loss (its Hessian ``lam I`` is part of every curvature).
    damping:
        Extra ``rho I`` (Levenberg-Marquardt style).
    cg_tol, cg_max_iter:
        Relative residual and iteration cap of :func:`conjugate_gradient` (``cg_*`` kinds only).
    """
    check_choice("curvature", kind, CURVATURES)
    if b.shape != theta.shape:
        raise ValueError(f"b has shape {tuple(b.shape)}; expected {tuple(theta.shape)}")
    n = x.shape[0]
    floor = _shift(damping, weight_decay)
    if kind in DENSE_CURVATURES:
        C, evals = curvature_matrix(kind, flat, theta, x, y, weight_decay=weight_decay, damping=damping,
                                    chunk_size=chunk_size)
        return Solve(_dense_solve(C, b), kind, evals, min_eig=floor)
    if kind == "diag_fisher":
        D, evals = curvature_matrix(kind, flat, theta, x, y, weight_decay=weight_decay, damping=damping,
                                    chunk_size=chunk_size)
        if not bool((D > 0).all()):
            raise ValueError("diag_fisher has zero entries: set weight_decay > 0 or damping > 0")
        return Solve(b / D, kind, evals, min_eig=floor)
    if kind == "cg_hessian":
        op = hessian_operator(flat, theta, x, y, weight_decay=weight_decay, damping=damping)
    else:
        op = fisher_operator(flat, theta, x, y, weight_decay=weight_decay, damping=damping)
    # the cost unit (experiments.contract.COST_UNIT): one curvature-vector product (a Hessian-vector product,
    # or the Fisher's jvp + vjp) counts as one gradient evaluation per sample, as in Pearlmutter's
    # constant-factor argument; the unit is the same for every method, so the constant factor is left out
    per_iter = n
    res = conjugate_gradient(op, b, tol=cg_tol, max_iter=cg_max_iter)
    return Solve(res.x, kind, per_iter * res.iterations, res.iterations, res.residual_norm, res.converged,
                 min_eig=floor)


def cosine(a: Tensor, b: Tensor) -> float:
    """Cosine similarity of two vectors (0 when either is zero)."""
    na, nb = float(a.norm()), float(b.norm())
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(torch.dot(a.flatten(), b.flatten()) / (na * nb))


