"""PDUDT's correction, Eqs. (7) to (9), over one round or a stored history: the one copy in the package.

Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies", ICML 2025 (digest 002).
The gradient-gossip caches (:mod:`unlearnkit.decentral.gradient_gossip`) and the unlearner
(:mod:`unlearnkit.methods.pdudt`) both compute through this module. When client ``k`` leaves, client ``i``
subtracts from its model (Algorithm 2, lines 9-16):

- residuals, Eq. (7) (reconstructed; digest 2.2, consistent with proof Eq. 15)::

      delta_i^t = eta * sum_{j != k} W~^t_ij g_j^t  -  eta * sum_j W^t_ij g_j^t

  with ``W~^t`` the mixing matrix retraining without ``k`` would have used in round ``t``;
- weights, Eq. (8) (the square on the norm is the digest's reading of a trailing "2")::

      p_i^t = ||sum_j W^t_ij g_j^t||^2 / sum_s ||sum_j W^s_ij g_j^s||^2

- the corrected model, Eq. (9): ``theta_bar_i = theta_i^{t1} - sum_t p_i^t delta_i^t``.

Where the paper is silent (digest 2.1, P2, P3):

- retrain rules ``W~``: ``"recompute"`` (option A: the original mixing rule on the round's graph without
  ``k``; it needs the neighbours' degrees after ``k`` left, which a client never stored, so the simulator
  computes it centrally) or ``"absorb"`` (option B: ``W~_ii = W_ii + W_ik``, truly local, with the closed form
  ``delta_i^t = eta W^t_ik (g_i^t - g_k^t)``). The round's graph is read off the support of ``W^t``.
- correction scales: ``"paper"`` (the convex combination of Eq. 9, about one round's worth), ``"sum"``
  (``sum_t delta_i^t``, what the stored gradients say the accumulated effect is) or ``"none"`` (the control).
- a client whose every update is zero (``sum_s a_i^s = 0``) makes Eq. (8) 0/0: it gets weight 0 everywhere
  (its residuals are zero too, so its correction is 0 either way).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from .._validate import check_choice, check_int, check_positive
from ..graphs.mixing import MIXING_RULES
from ..graphs.sparse import sparse_mixing_matrix


RETRAIN_RULES = ("recompute", "absorb")
CORRECTION_SCALES = ("paper", "sum", "none")


# ----------------------------------------------------------------------------------------------------------
# W~: the retrain mixing matrices of Eq. (7)
# ----------------------------------------------------------------------------------------------------------

def retrain_matrices(W: Tensor, leavers: Any = None, *, retrain_rule: str = "recompute",
                     rule: str = "metropolis") -> Tensor:
    """``(K, N, N)`` retrain mixing matrices ``W~^{(k)}``, one per leaver ``k`` (default: all ``N``).

    Row and column ``k`` of ``W~^{(k)}`` are zero, so ``W~^{(k)} @ G`` sums over ``j != k`` only (digest 002,
    Eq. 7). ``retrain_rule="recompute"`` applies ``rule`` to the support of ``W`` without ``k`` (vectorised
    over ``k``, equal to :func:`~unlearnkit.graphs.mixing_matrix` on ``G - k``); ``"absorb"`` keeps
    ``W``'s off-diagonal weights and adds ``W_ik`` to ``W_ii``.
    """
    check_choice("retrain_rule", retrain_rule, RETRAIN_RULES)
    check_choice("rule", rule, MIXING_RULES)
    n = W.shape[-1]
    ks = torch.arange(n, device=W.device) if leavers is None else torch.as_tensor(list(leavers), device=W.device)
    if ks.numel() and (int(ks.min()) < 0 or int(ks.max()) >= n):
        raise ValueError(f"leavers={ks.tolist()} must be clients in [0, {n - 1}]")
    K = ks.numel()
    keep = torch.ones(K, n, dtype=torch.bool, device=W.device)
    keep[torch.arange(K, device=W.device), ks] = False
    pair = keep[:, :, None] & keep[:, None, :]
    if retrain_rule == "absorb":
        Wt = W.expand(K, n, n).clone()
        Wt.diagonal(dim1=-2, dim2=-1).add_(W[:, ks].T)
        return torch.where(pair, Wt, torch.zeros_like(Wt))
    return _recompute(W.expand(K, n, n), pair, rule)


def _recompute(W: Tensor, pair: Tensor, rule: str) -> Tensor:
    """``rule`` applied to the support of each ``W[b]`` (a stack ``(B, n, n)``) restricted to ``pair[b]`` (the
    clients that stay), zero outside it: the "recompute" retrain rule, shared by the per-leaver and the
    per-round stacks."""
    n = W.shape[-1]
    eye = torch.eye(n, dtype=torch.bool, device=W.device)
    adj = (W > 0) & ~eye & pair
    deg = adj.sum(-1).to(W.dtype)
    if rule == "max_degree":
        w = (1.0 / (1.0 + deg.max(dim=-1).values))[:, None, None].expand_as(W)
    else:
        w = 1.0 / (1.0 + torch.maximum(deg[:, :, None], deg[:, None, :]))
    Wt = torch.where(adj, w, torch.zeros_like(w))
    Wt = Wt + torch.diag_embed(1.0 - Wt.sum(-1))
    if rule == "lazy":
        Wt = 0.5 * (torch.eye(n, dtype=W.dtype, device=W.device) + Wt)
    return torch.where(pair, Wt, torch.zeros_like(Wt))


def sparse_retrain_matrix(W: Any, leaver: int, *, retrain_rule: str = "recompute",
                          rule: str = "metropolis") -> sp.csr_matrix:
    """:func:`retrain_matrices` for one leaver of a ``scipy.sparse`` ``W``, as float64 CSR, in ``O(N + nnz)``.

    Row and column ``leaver`` hold no entry. ``"recompute"`` rebuilds ``rule`` from the degrees of the support
    of ``W`` without ``leaver`` (:func:`~unlearnkit.graphs.sparse_mixing_matrix`); ``"absorb"`` adds ``W_ik`` to
    ``W_ii``. Equal (to 1e-12) to the dense stack's slice; never an ``N x N`` array.
    """
    check_choice("retrain_rule", retrain_rule, RETRAIN_RULES)
    check_choice("rule", rule, MIXING_RULES)
    W = sp.csr_matrix(W, dtype=np.float64)
    n = W.shape[0]
    k = check_int("leaver", leaver, low=0, high=n - 1)
    keep = np.ones(n)
    keep[k] = 0.0
    if retrain_rule == "absorb":
        col = np.asarray(W[:, [k]].todense()).ravel()
        Wt = W + sp.diags(col, format="csr")
    else:
        C = W.tocoo()
        off = (C.row != C.col) & (C.data > 0) & (C.row != k) & (C.col != k)
        Wt = sparse_mixing_matrix(np.column_stack([C.row[off], C.col[off]]), n, rule, require_connected=False)
    mask = sp.diags(keep, format="csr")
    Wt = (mask @ Wt @ mask).tocsr()
    Wt.eliminate_zeros()
    Wt.sort_indices()
    return Wt


def sparse_residuals(W: Any, grads: Tensor, lr: float, W_tilde: Any) -> Tensor:
    """:func:`mixing_residuals` for one ``scipy.sparse`` pair ``W``, ``W~``: ``lr * (W~ - W) @ grads``, ``(N, d)``,
    rows where ``W~`` is empty zeroed; ``O(nnz d)`` in float64 (on the CPU, returned on ``grads``' device)."""
    D = (sp.csr_matrix(W_tilde, dtype=np.float64) - sp.csr_matrix(W, dtype=np.float64)).tocsr()
    g = grads.detach().to(device="cpu", dtype=torch.float64).numpy()
    delta = lr * (D @ g)
    delta[np.diff(sp.csr_matrix(W_tilde).indptr) == 0] = 0.0
    return torch.as_tensor(delta, dtype=grads.dtype, device=grads.device)


def retrain_mixing(W: Tensor, leaver: int, rule: str = "recompute", *, mixing_rule: str = "metropolis") -> Tensor:
    """The mixing matrix ``W~^t`` retraining without ``leaver`` would use, embedded in ``(n, n)``.

    ``W`` is ``(n, n)`` or ``(T, n, n)`` (one matrix per round); ``rule`` is the retrain rule of
    :func:`retrain_matrices` (digest 2.1 options A and B), ``mixing_rule`` the original run's mixing rule.
    """
    check_choice("retrain_rule", rule, RETRAIN_RULES)
    n = W.shape[-1]
    check_int("leaver", leaver, low=0, high=n - 1)
    if W.dim() == 3:
        # all rounds at once: retrain_matrices is vectorised over leavers, so swap the round axis in as that axis
        # (one leaver per "round-leaver"): same formulas, no Python loop over the rounds (the loop dominated the
        # unlearning time at hundreds of rounds)
        return _retrain_rounds(W, leaver, rule, mixing_rule)
    return retrain_matrices(W, [leaver], retrain_rule=rule, rule=mixing_rule)[0]


def _retrain_rounds(W: Tensor, k: int, retrain_rule: str, rule: str) -> Tensor:
    """:func:`retrain_matrices` for one leaver ``k`` over a stack ``W (T, n, n)`` of rounds."""
    check_choice("rule", rule, MIXING_RULES)
    n = W.shape[-1]
    keep = torch.ones(n, dtype=torch.bool, device=W.device)
    keep[k] = False
    pair = keep[:, None] & keep[None, :]
    if retrain_rule == "absorb":
        Wt = W.clone()
        Wt.diagonal(dim1=-2, dim2=-1).add_(W[:, :, k])
        return torch.where(pair, Wt, torch.zeros_like(Wt))
    return _recompute(W, pair.expand_as(W), rule)


# ----------------------------------------------------------------------------------------------------------
# Eq. (7), (8), (9)
# ----------------------------------------------------------------------------------------------------------

def mixing_residuals(W: Tensor, grads: Tensor, lr: float, W_tilde: Tensor) -> Tensor:
    """Eq. (7) for given retrain matrices: ``delta = lr * (W~ - W) @ g``, rows where ``W~`` is all zero zeroed.

    Batched over leading dimensions, e.g. ``W (N, N)``, ``grads (N, d)`` and ``W_tilde (K, N, N)`` from
    :func:`retrain_matrices` give one residual ``(K, N, d)`` per candidate leaver (the running sums), and
    ``W (T, N, N)``, ``grads (T, N, d)``, ``W_tilde (T, N, N)`` one per round of a history.
    """
    delta = lr * torch.einsum("...ij,...jd->...id", (W_tilde - W).to(grads.dtype), grads)
    # a leaver's row of W~ is all zero (it takes no part in the retraining): it has nothing to correct
    return torch.where(W_tilde.abs().sum(-1).gt(0)[..., None], delta, torch.zeros_like(delta))


def _check_history(W: Tensor, grads: Tensor) -> tuple[int, int, int]:
    if W.dim() != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W has shape {tuple(W.shape)}: expected (rounds, n, n)")
    if grads.dim() != 3 or grads.shape[:2] != W.shape[:2]:
        raise ValueError(f"grads has shape {tuple(grads.shape)}: expected (rounds, n, d) = "
                         f"({W.shape[0]}, {W.shape[1]}, d) to match W")
    return int(W.shape[0]), int(W.shape[1]), int(grads.shape[2])


def residuals(W: Tensor, grads: Tensor, leaver: int, lr: float, *, rule: str = "recompute",
              mixing_rule: str = "metropolis") -> Tensor:
    """Per-round residuals ``delta_i^t`` of one leaver over a history, Eq. (7), shape ``(T, n, d)``.

    ``W (T, n, n)`` and ``grads (T, n, d)`` are the stored mixing matrices and gradients; the retrain rule
    ``rule`` builds ``W~^t`` (:func:`retrain_mixing`). The leaver's row is zero (it does not unlearn).
    """
    _check_history(W, grads)
    check_int("leaver", leaver, low=0, high=W.shape[1] - 1)
    check_positive("lr", lr)
    return mixing_residuals(W, grads, lr, retrain_mixing(W, leaver, rule, mixing_rule=mixing_rule))


def round_weights(W: Tensor, grads: Tensor, horizon: Optional[int] = None) -> Tensor:
    """Weights ``p_i^t = a_i^t / sum_{s < horizon} a_i^s``, ``a_i^t = ||sum_j W^t_ij g_j^t||^2``, Eq. (8), ``(T, n)``.

    With ``horizon = t_{1,i}`` (PDUDT(ES), paper Sec. 4.3) rounds ``t >= horizon`` get weight 0 and the weights
    renormalise over the others; each column sums to 1, or is 0 for a client whose every update was zero.
    """
    T, _, _ = _check_history(W, grads)
    H = T if horizon is None else check_int("es_rounds", horizon, low=1, high=T)
    u = torch.einsum("tij,tjd->tid", W.to(grads.dtype), grads)
    a = u.pow(2).sum(-1)
    a[H:] = 0.0
    A = a.sum(0, keepdim=True)
    return a / A.clamp_min(torch.finfo(a.dtype).tiny)


def correction(delta: Tensor, p: Tensor, scale: str = "paper", horizon: Optional[int] = None) -> Tensor:
    """The amount each client subtracts from its model, Eq. (9), shape ``(n, d)``.

    ``scale="paper"``: ``sum_t p_i^t delta_i^t``; ``"sum"``: ``sum_{t < horizon} delta_i^t`` (digest P2);
    ``"none"``: zero (the control: noise only).
    """
    check_choice("correction_scale", scale, CORRECTION_SCALES)
    if scale == "none":
        return torch.zeros_like(delta[0])
    if scale == "sum":
        H = delta.shape[0] if horizon is None else horizon
        return delta[:H].sum(dim=0)
    return torch.einsum("ti,tid->id", p.to(delta.dtype), delta)


def history_correction(W: Tensor, grads: Tensor, leaver: int, lr: float, *, rule: str = "recompute",
                       mixing_rule: str = "metropolis", scale: str = "paper",
                       es_rounds: Optional[int] = None) -> tuple[Tensor, Tensor, Tensor]:
    """Eqs. (7) to (9) from a full history: ``(correction (n, d), delta (H, n, d), p (H, n))``.

    Only the first ``H = es_rounds`` rounds are read (PDUDT(ES), paper Sec. 4.3: that is where its time and
    memory saving comes from); the weights renormalise over them.
    """
    T, _, _ = _check_history(W, grads)
    H = T if es_rounds is None else min(int(es_rounds), T)
    delta = residuals(W[:H], grads[:H], leaver, lr, rule=rule, mixing_rule=mixing_rule)
    p = round_weights(W[:H], grads[:H])
    return correction(delta, p, scale), delta, p


def reconstruct_models(theta0: Tensor, W: Tensor, grads: Tensor, lr: float, rounds: Optional[int] = None) -> Tensor:
    """``theta_i^{t1} = theta^0 - eta sum_{t < t1} sum_j W^t_ij g_j^t`` (paper Eq. 4), shape ``(n, d)``.

    Exact for gradient gossip with one gradient (or one pseudo-gradient, digest P5) per round; lets the
    full-history cache unlearn at any earlier round ``t1`` without a checkpoint.
    """
    T, n, d = _check_history(W, grads)
    t1 = T if rounds is None else check_int("t_unlearn", rounds, low=0, high=T)
    base = theta0.expand(n, d) if theta0.dim() == 1 else theta0
    return base - lr * torch.einsum("tij,tjd->id", W[:t1].to(grads.dtype), grads[:t1])


# ----------------------------------------------------------------------------------------------------------
# The same, round by round on a history of scipy.sparse W^t: O(N + nnz) per round, never an N x N array
# ----------------------------------------------------------------------------------------------------------

def sparse_history_correction(W: Sequence[Any], grads: Tensor, leaver: int, lr: float, *, rule: str = "recompute",
                              mixing_rule: str = "metropolis", scale: str = "paper",
                              es_rounds: Optional[int] = None) -> tuple[Tensor, Tensor, Tensor]:
    """:func:`history_correction` on a list of ``scipy.sparse`` ``W^t``, round by round, in ``O(H (N + nnz) d)``
    time and ``O(N d + H N)`` extra memory: ``(correction (n, d), delta_norms (H, n), p (H, n))``.

    Per round ``t < H``: ``u = W^t g^t``, ``a_i^t = ||u_i||^2`` (Eq. 8's numerator), ``delta^t = lr (W~^t - W^t) g^t``
    with :func:`sparse_retrain_matrix` (Eq. 7); the correction is ``sum_t a^t delta^t / A`` (``"paper"``, Eq. 9)
    or ``sum_t delta^t`` (``"sum"``). The residuals are not kept, only their norms per round and client (what the
    unlearner reports). Equal to the dense stack's numbers to 1e-12 in float64.
    """
    check_choice("correction_scale", scale, CORRECTION_SCALES)
    T = len(W)
    if grads.dim() != 3 or grads.shape[0] != T or any(w.shape != (grads.shape[1],) * 2 for w in W):
        raise ValueError(f"grads has shape {tuple(grads.shape)}: expected (rounds, n, d) matching {T} (n, n) "
                         "mixing matrices")
    n = int(grads.shape[1])
    k = check_int("leaver", leaver, low=0, high=n - 1)
    check_positive("lr", lr)
    H = T if es_rounds is None else min(int(es_rounds), T)
    S = torch.zeros(grads.shape[1:], dtype=torch.float64, device="cpu")
    D = torch.zeros_like(S)
    a_all = torch.zeros(H, n, dtype=torch.float64, device="cpu")
    norms = torch.zeros(H, n, dtype=torch.float64, device="cpu")
    for t in range(H):
        g = grads[t].detach().to(device="cpu", dtype=torch.float64)
        Wt = sp.csr_matrix(W[t], dtype=np.float64)
        u = Wt @ g.numpy()
        a = torch.as_tensor((u * u).sum(1), device="cpu")  # scipy computes on the host
        delta = sparse_residuals(Wt, g, lr, sparse_retrain_matrix(Wt, k, retrain_rule=rule, rule=mixing_rule))
        a_all[t], norms[t] = a, delta.norm(dim=-1)
        S += a[:, None] * delta
        D += delta
    A = a_all.sum(0)
    p = a_all / A.clamp_min(torch.finfo(A.dtype).tiny)
    if scale == "none":
        out = torch.zeros_like(S)
    elif scale == "sum":
        out = D
    else:
        out = S / A.clamp_min(torch.finfo(A.dtype).tiny)[:, None]
    like = grads.new_empty(0)
    return out.to(like), norms.to(like), p.to(like)


def sparse_reconstruct_models(theta0: Tensor, W: Sequence[Any], grads: Tensor, lr: float,
                              rounds: Optional[int] = None) -> Tensor:
    """:func:`reconstruct_models` (paper Eq. 4) from a list of ``scipy.sparse`` ``W^t``: ``theta^0 - eta sum_{t < t1}
    W^t g^t``, ``(n, d)``, one sparse product per round."""
    T, n, d = int(grads.shape[0]), int(grads.shape[1]), int(grads.shape[2])
    if len(W) != T:
        raise ValueError(f"{len(W)} mixing matrices for {T} rounds of gradients")
    t1 = T if rounds is None else check_int("t_unlearn", rounds, low=0, high=T)
    acc = np.zeros((n, d))
    for t in range(t1):
        acc += sp.csr_matrix(W[t], dtype=np.float64) @ grads[t].detach().to(device="cpu", dtype=torch.float64).numpy()
    base = theta0.expand(n, d) if theta0.dim() == 1 else theta0
    return base - lr * torch.as_tensor(acc, dtype=grads.dtype, device=grads.device)
