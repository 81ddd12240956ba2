"""PDUDT: unlearning a leaving client under dynamic topologies from cached gradients.

Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies", ICML 2025 (digest 002).

Training is *gradient gossip* over a graph that changes every round (paper Eq. 2)::

    theta_i^{t+1} = theta_i^t - eta * sum_j W^t_ij g_j^t,      g_j^t = grad F_j(theta_j^t, xi_j^t)

and every client keeps what it needs of its neighbours' gradients. When client ``k`` leaves at round ``t1``,
each remaining client ``i`` corrects its own model locally, with no communication and no retraining
(Algorithm 2, lines 9-16):

- per-round residuals, Eq. (7) (reconstructed; digest 2.2, consistent with proof Eq. 15)::

      delta_i^t = eta * sum_{j != k} W~^t_ij g_j^t  -  eta * sum_j W^t_ij g_j^t

  where ``W~^t`` is the mixing matrix retraining without ``k`` would have used in round ``t``;
- weights, Eq. (8) (the square on the norm is the digest's reading of a trailing "2")::

      p_i^t = ||sum_j W^t_ij g_j^t||^2 / sum_s ||sum_j W^s_ij g_j^s||^2

- the corrected model, Eq. (9): ``theta_bar_i = theta_i^{t1} - sum_t p_i^t delta_i^t``;
- noise ``z_i ~ N(0, (n-1) sigma^2 I)`` on every remaining client, so that the *average* of the ``n - 1``
  models carries ``N(0, sigma^2 I)`` (proof of Cor. 4.10).

Choices we made where the paper is silent (each one tested, each one named in notebook 08):

- ``retrain_rule="metropolis"`` (default, digest 2.1 option A): ``W~^t`` = Metropolis-Hastings weights on
  ``G^t`` without ``k``. It changes weights up to two hops from ``k`` and needs the neighbours' degrees after
  ``k`` left, which a client never stored (digest P3): the simulator computes it centrally.
  ``retrain_rule="absorb"`` (option B) folds ``k``'s weight into the self-loop, ``W~_ii = W_ii + W_ik``: truly
  local, with the closed form ``delta_i^t = eta W^t_ik (g_i^t - g_k^t)``.
- ``correction_scale="paper"`` subtracts the convex combination ``sum_t p_i^t delta_i^t`` (about one round's
  worth, digest P2); ``"sum"`` subtracts ``sum_t delta_i^t`` (what the stored gradients say the whole
  accumulated effect is); ``"none"`` subtracts nothing (noise only: the control).
- when every applied update of a client is zero (``sum_s a_i^s = 0``), Eq. (8) is 0/0; we use uniform
  weights ``1 / t1`` so that ``sum_t p_i^t = 1`` still holds.

The certificate (Theorem 4.9 + Corollary 4.10) and the experiments live further down in this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np
import torch
from torch import Tensor

from .._validate import check_choice, check_int, check_positive, check_range

__all__ = [
    "RETRAIN_RULES",
    "CORRECTION_SCALES",
    "metropolis_from_adjacency",
    "retrain_mixing",
    "residuals",
    "round_weights",
    "correction",
    "reconstruct_models",
    "HistoryCache",
    "RunningSumCache",
    "client_noise",
]

RETRAIN_RULES = ("metropolis", "absorb")
CORRECTION_SCALES = ("paper", "sum", "none")


# ----------------------------------------------------------------------------------------------------------
# Retrain mixing weights W~^t (digest 2.1, options A and B)
# ----------------------------------------------------------------------------------------------------------

def metropolis_from_adjacency(adj: Tensor, rule: str = "metropolis") -> Tensor:
    """The substrate's mixing weights (default Metropolis-Hastings, digest 2.1) on the graph ``adj``.

    ``adj`` is a symmetric boolean ``(n, n)`` matrix; the graph may be disconnected (a client that loses its
    only neighbour keeps its own vector, ``W_ii = 1``). Delegates to
    :func:`unlearnkit.graphs.mixing.mixing_matrix`, so ``W`` and ``W~`` always come from the same rule.
    """
    import networkx as nx

    from ..graphs.mixing import mixing_matrix

    n = adj.shape[0]
    if n == 1:
        return torch.ones(1, 1, dtype=torch.float64, device=adj.device)
    a = adj.detach().cpu().numpy().astype(bool).copy()
    np.fill_diagonal(a, False)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(*np.nonzero(np.triu(a))))
    W = mixing_matrix(G, rule, require_connected=False)
    return torch.as_tensor(W, dtype=torch.float64, device=adj.device)


def retrain_mixing(W: Tensor, leaver: int, rule: str = "metropolis", *, mixing_rule: str = "metropolis") -> Tensor:
    """The mixing matrix ``W~^t`` retraining without ``leaver`` would use, embedded in ``(n, n)``.

    Row and column ``leaver`` are zero, so that ``W~ @ g`` sums over ``j != leaver`` only (Eq. 7).

    Parameters
    ----------
    W:
        ``(n, n)`` or ``(T, n, n)`` symmetric doubly-stochastic mixing matrices of the original run.
    leaver:
        The client that leaves (the paper's "client-n").
    rule:
        ``"metropolis"`` (digest 2.1 option A: Metropolis-Hastings weights on the graph without the leaver,
        recomputed with the substrate's ``mixing_rule``, the rule the original run used) or ``"absorb"`` (option B:
        ``W~_ij = W_ij`` for ``j != i`` and ``W~_ii = W_ii + W_i,leaver``).
    """
    check_choice("retrain_rule", rule, RETRAIN_RULES)
    if W.dim() == 3:
        return torch.stack([retrain_mixing(w, leaver, rule, mixing_rule=mixing_rule) for w in W])
    n = W.shape[0]
    check_int("leaver", leaver, low=0, high=n - 1)
    keep = torch.ones(n, dtype=torch.bool, device=W.device)
    keep[leaver] = False
    out = torch.zeros_like(W)
    if rule == "absorb":
        Wt = W.clone()
        Wt.diagonal().add_(W[:, leaver])
        out[keep] = Wt[keep]
        out[:, leaver] = 0.0
        return out
    adj = (W > 0)
    adj.fill_diagonal_(False)
    sub = adj[keep][:, keep]
    Wsub = metropolis_from_adjacency(sub, mixing_rule).to(W.dtype)
    idx = keep.nonzero().flatten()
    out[idx[:, None], idx[None, :]] = Wsub
    return out


# ----------------------------------------------------------------------------------------------------------
# Eq. (7), (8), (9) over a stored history
# ----------------------------------------------------------------------------------------------------------

def _check_history(W: Tensor, grads: Tensor) -> tuple[int, int, int]:
    if W.dim() != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W has shape {tuple(W.shape)}: expected (rounds, n, n)")
    if grads.dim() != 3 or grads.shape[:2] != W.shape[:2]:
        raise ValueError(f"grads has shape {tuple(grads.shape)}: expected (rounds, n, d) = "
                         f"({W.shape[0]}, {W.shape[1]}, d) to match W")
    return int(W.shape[0]), int(W.shape[1]), int(grads.shape[2])


def residuals(W: Tensor, grads: Tensor, leaver: int, lr: float, *, rule: str = "metropolis",
              W_tilde: Optional[Tensor] = None) -> Tensor:
    """Per-round residual approximations ``delta_i^t``, Eq. (7) (digest 2.2, reconstructed).

    ``delta_i^t = eta * (W~^t - W^t)_{i,:} @ g^t``: the retrain rule minus the rule that was used, both at the
    stored original gradients. Returns ``(T, n, d)``; the leaver's row is zero (it does not unlearn).
    """
    T, n, _ = _check_history(W, grads)
    check_int("leaver", leaver, low=0, high=n - 1)
    check_positive("lr", lr)
    Wt = retrain_mixing(W, leaver, rule) if W_tilde is None else W_tilde
    diff = (Wt - W).to(grads.dtype)
    delta = lr * torch.einsum("tij,tjd->tid", diff, grads)
    delta[:, leaver] = 0.0
    return delta


def round_weights(W: Tensor, grads: Tensor, horizon: Optional[int] = None) -> Tensor:
    """Weights ``p_i^t``, Eq. (8): squared norm of client ``i``'s applied update, normalised over rounds.

    With ``horizon = t_{1,i}`` (PDUDT(ES), paper Sec. 4.3) only rounds ``t < horizon`` get weight and the
    weights renormalise over them. Returns ``(T, n)``; each column sums to 1 (uniform when all updates of a
    client are zero, our choice for the 0/0 case).
    """
    T, n, _ = _check_history(W, grads)
    H = T if horizon is None else check_int("es_rounds", horizon, low=1, high=T)
    u = torch.einsum("tij,tjd->tid", W.to(grads.dtype), grads)
    a = u.pow(2).sum(dim=-1)
    a[H:] = 0.0
    A = a.sum(dim=0, keepdim=True)
    uniform = torch.zeros_like(a)
    uniform[:H] = 1.0 / H
    return torch.where(A > 0, a / A.clamp_min(torch.finfo(a.dtype).tiny), uniform)


def correction(delta: Tensor, p: Tensor, scale: str = "paper", horizon: Optional[int] = None) -> Tensor:
    """The amount each client subtracts from its model, Eq. (9), shape ``(n, d)``.

    ``scale="paper"``: ``sum_t p_i^t delta_i^t``; ``"sum"``: ``sum_{t < horizon} delta_i^t`` (digest P2);
    ``"none"``: zero.
    """
    check_choice("correction_scale", scale, CORRECTION_SCALES)
    if scale == "none":
        return torch.zeros_like(delta[0])
    if scale == "sum":
        H = delta.shape[0] if horizon is None else horizon
        return delta[:H].sum(dim=0)
    return torch.einsum("ti,tid->id", p.to(delta.dtype), delta)


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
# Caches: full history (small problems) and exact running sums (O(n d) per client, digest P4 iii)
# ----------------------------------------------------------------------------------------------------------

class HistoryCache:
    """Every round's ``W^t`` and every client's ``g^t``, stored once (digest P4 i: all copies are equal).

    A simulator stores ``T n d`` floats in total; a real client would store ``T (1 + N_max) d``.
    ``memory_bytes`` reports the simulator's figure, ``per_client_bytes()`` the decentralized one.
    """

    def __init__(self) -> None:
        self._W: list[Tensor] = []
        self._g: list[Tensor] = []

    def update(self, W_t: Tensor, grads_t: Tensor) -> None:
        self._W.append(W_t.detach().clone())
        self._g.append(grads_t.detach().clone())

    @property
    def rounds(self) -> int:
        return len(self._W)

    @property
    def W(self) -> Tensor:
        return torch.stack(self._W)

    @property
    def grads(self) -> Tensor:
        return torch.stack(self._g)

    @property
    def memory_bytes(self) -> int:
        return sum(w.numel() * w.element_size() for w in self._W) + sum(g.numel() * g.element_size() for g in self._g)

    def per_client_bytes(self) -> np.ndarray:
        """Bytes client ``i`` holds in a real deployment: its own and its neighbours' gradients, every round."""
        if not self._W:
            return np.zeros(0, dtype=np.int64)
        d, item = self._g[0].shape[1], self._g[0].element_size()
        counts = sum(((w > 0).sum(dim=1)).cpu().numpy().astype(np.int64) for w in self._W)
        return counts * d * item

    def correction(self, leaver: int, lr: float, *, rule: str = "metropolis", scale: str = "paper",
                   es_rounds: Optional[int] = None, rounds: Optional[int] = None) -> Tensor:
        """Eq. (9)'s correction for every client from the stored history (rounds ``t < rounds``)."""
        W, g = self.W, self.grads
        if rounds is not None:
            W, g = W[:rounds], g[:rounds]
        delta = residuals(W, g, leaver, lr, rule=rule)
        p = round_weights(W, g, es_rounds)
        return correction(delta, p, scale, es_rounds)


class RunningSumCache:
    """Exact online accumulators for Eq. (9), for every candidate leaver at once (digest P4 iii).

    Since ``p_i^t = a_i^t / A_i`` with ``a_i^t = ||u_i^t||^2``, ``sum_t p_i^t delta_i^t = S_i^(k) / A_i`` with
    ``S_i^(k) = sum_t a_i^t delta_i^{t,(k)}``. Client ``i`` keeps ``A_i`` (a scalar), ``S_i^(k)`` and the plain
    sum ``U_i^(k) = sum_t delta_i^{t,(k)}`` for each candidate ``k``: ``2 n d`` floats, whatever the number of
    rounds. With ``es_rounds`` it stops accumulating after that many rounds (PDUDT(ES)). The request round is
    the number of rounds fed so far.
    """

    def __init__(self, n: int, d: int, lr: float, *, rule: str = "metropolis", es_rounds: Optional[int] = None,
                 dtype: torch.dtype = torch.float64, device: Any = "cpu") -> None:
        self.n = check_int("n_clients", n, low=2)
        self.d = check_int("d", d, low=1)
        self.lr = check_positive("lr", lr)
        self.rule = check_choice("retrain_rule", rule, RETRAIN_RULES)
        self.es_rounds = None if es_rounds is None else check_int("es_rounds", es_rounds, low=1)
        self.A = torch.zeros(n, dtype=dtype, device=device)
        self.S = torch.zeros(n, n, d, dtype=dtype, device=device)  # [leaver k, client i, :]
        self.U = torch.zeros(n, n, d, dtype=dtype, device=device)
        self.rounds = 0

    def update(self, W_t: Tensor, grads_t: Tensor) -> None:
        if W_t.shape != (self.n, self.n) or grads_t.shape != (self.n, self.d):
            raise ValueError(f"round {self.rounds}: W_t {tuple(W_t.shape)} and grads_t {tuple(grads_t.shape)} "
                             f"must be ({self.n}, {self.n}) and ({self.n}, {self.d})")
        active = self.es_rounds is None or self.rounds < self.es_rounds
        self.rounds += 1
        if not active:
            return
        g = grads_t.to(self.S.dtype)
        W = W_t.to(self.S.dtype)
        a = (W @ g).pow(2).sum(dim=1)
        self.A += a
        for k in range(self.n):
            D = self.lr * ((retrain_mixing(W, k, self.rule) - W) @ g)
            D[k] = 0.0
            self.S[k] += a[:, None] * D
            self.U[k] += D

    @property
    def memory_bytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.A, self.S, self.U))

    def correction(self, leaver: int, *, scale: str = "paper") -> Tensor:
        check_int("leaver", leaver, low=0, high=self.n - 1)
        check_choice("correction_scale", scale, CORRECTION_SCALES)
        if self.rounds == 0:
            raise ValueError("t_unlearn=0: no round was trained, there is nothing to unlearn")
        if scale == "none":
            return torch.zeros_like(self.U[leaver])
        if scale == "sum":
            return self.U[leaver].clone()
        # A_i = 0 means every applied update was zero, hence every delta too: the correction is 0 either way
        return self.S[leaver] / self.A.clamp_min(torch.finfo(self.A.dtype).tiny)[:, None]


def client_noise(n_remaining: int, d: int, sigma: float, *, generator: torch.Generator,
                 dtype: torch.dtype = torch.float32, device: Any = None) -> Tensor:
    """``z_i ~ N(0, (n-1) sigma^2 I_d)`` for each of the ``n - 1`` remaining clients (Alg. 2, line 15).

    Their average is ``N(0, sigma^2 I_d)`` (proof of Cor. 4.10): the certificate covers the average model;
    each client model carries ``sqrt(n-1) sigma`` per coordinate (digest P8).
    """
    check_int("n_remaining", n_remaining, low=1)
    check_positive("sigma", sigma, allow_zero=True)
    device = generator.device if device is None else device
    z = torch.randn(n_remaining, d, generator=generator, device=generator.device, dtype=dtype)
    return (z * (math.sqrt(n_remaining) * sigma)).to(device)


# ----------------------------------------------------------------------------------------------------------
# Certificate: the gap bound d1 (Lemma B.1 + Lemma B.2 => Theorem 4.9) and the noise (Def 4.3, Cor. 4.10)
# ----------------------------------------------------------------------------------------------------------

NOISE_MODES = ("certified", "manual")


@dataclass(frozen=True, kw_only=True)
class GapConstants:
    """The constants Theorem 4.9 assumes (digest 3.1), all user-supplied or estimated.

    Attributes
    ----------
    L:
        Smoothness of every local loss (Assumption 4.5).
    sgd_var, het_var:
        ``sigma_1^2`` (stochastic-gradient variance) and ``sigma_2^2`` (heterogeneity), Assumption 4.6.
    delta_f, delta_f_tilde:
        ``E f(theta^0) - E f(avg theta^{t1})`` and the same for the retrain run; for a non-negative loss
        ``f(theta^0)`` bounds both (digest 3.3).
    rho1, rho2:
        The largest second eigenvalue modulus of ``W^t`` and ``W~^t`` over rounds (Assumption 4.8).
    """

    L: float
    sgd_var: float
    het_var: float
    delta_f: float
    delta_f_tilde: float
    rho1: float
    rho2: float

    def __post_init__(self) -> None:
        check_positive("L", self.L)
        for name in ("sgd_var", "het_var", "delta_f", "delta_f_tilde"):
            check_positive(name, getattr(self, name), allow_zero=True)
        check_range("rho1", self.rho1, 0.0, 1.0)
        check_range("rho2", self.rho2, 0.0, 1.0)

    def as_dict(self) -> dict[str, float]:
        return {"L": self.L, "sigma1^2": self.sgd_var, "sigma2^2": self.het_var, "Delta_f": self.delta_f,
                "Delta_f_tilde": self.delta_f_tilde, "rho1": self.rho1, "rho2": self.rho2}


def step_size_limit(*, L: float, t1: int, n: int, rho1: float, rho2: float) -> float:
    """The step-size condition of Lemmas B.1, B.2 and Theorem 4.9 (digest 3.2)::

        eta < min{ sqrt(1/(12 L^2 t1^2)), sqrt(1/(24 L^2 rho1^2 n t1)), sqrt(1/(36 L^2 rho2^2 (n-1) t1)) }
    """
    lims = [math.sqrt(1.0 / (12 * L**2 * t1**2))]
    if rho1 > 0:
        lims.append(math.sqrt(1.0 / (24 * L**2 * rho1**2 * n * t1)))
    if rho2 > 0:
        lims.append(math.sqrt(1.0 / (36 * L**2 * rho2**2 * (n - 1) * t1)))
    return min(lims)


@dataclass(frozen=True)
class GapBound:
    """``d1 = B1 + B2`` of Theorem 4.9 and the terms it is made of (for the calculator in notebook 08)."""

    B1: float
    B2: float
    terms: dict[str, float]
    mode: str

    @property
    def d1(self) -> float:
        return self.B1 + self.B2


def gap_bound(*, lr: float, t1: int, n: int, constants: GapConstants, mode: str = "paper") -> GapBound:
    """Theorem 4.9's bound ``d1`` on the distance between the average corrected and average retrained model.

    ``B1`` (Lemma B.1: original vs retrain) and ``B2`` (Lemma B.2: size of the correction, with or without
    ES) use the constants ``D1..D3, E1..E3, I1..I4, I1'..I3'`` of digest 3.2. The theorem statement rounds the
    lemma's ``(n - 1)`` up to ``n`` in the ``E2`` parts of ``I2`` and ``I4``; both modes use the theorem's ``n``.

    ``mode="paper"`` prints ``D2`` in ``I2'`` as the paper does; ``mode="sound"`` uses ``min(D1, D2)``
    because the derivation gives ``D1`` (digest P9). Both bound an *expected* distance
    ``sqrt(E||.||^2)``, not a worst case (digest P8): :func:`calibrate_sigma` handles that in sound mode.

    Raises ``ValueError`` naming ``lr`` when the step-size condition fails.
    """
    check_choice("mode", mode, ("paper", "sound"))
    eta = check_positive("lr", lr)
    t1 = check_int("t1", t1, low=1)
    n = check_int("n_clients", n, low=2)
    c = constants
    L, r1, r2 = c.L, c.rho1**2, c.rho2**2
    lim = step_size_limit(L=L, t1=t1, n=n, rho1=c.rho1, rho2=c.rho2)
    if not eta < lim:
        raise ValueError(f"lr={lr!r} is out of range: Theorem 4.9 needs lr in (0, {lim:.4g}) for t1={t1}, "
                         f"n={n}, L={L}, rho1={c.rho1}, rho2={c.rho2}")
    D1 = 1 - 24 * eta**2 * L**2 * r1 * n * t1
    D2 = 1 - 36 * eta**2 * L**2 * r2 * (n - 1) * t1
    D3 = r1 + r2 + 1.0 / (n - 1) ** 2
    E1 = (6 + 4 * r1) * r1 / D1
    E2 = r2 / D2
    E3 = 8 * (1 + r1) * r1 / (n * D1)
    I1 = (24 * eta**4 * L**2 * n * t1**4 + 144 * eta**5 * L**3 * t1**4) * (E1 + E2 + E3) \
        + 8 * eta**2 * (5 + 2 * r1) * t1**3
    I2 = 144 * eta**4 * L**2 * n * t1**4 * (E1 + 3 * E2 + 2 * E3) + 48 * eta**2 * (1 + r1) * t1**3
    I3 = 288 * eta**3 * L**2 * n * t1**3 * (E1 + E3) + 192 * eta * (1 + r1) * t1**2 / n
    I4 = 288 * eta**3 * L**2 * n * t1**3 * E2
    I1p = 6 * (eta**2 * n + 3 * eta**3 * L + 12 * eta**4 * L**2 * r1 * n**2 * t1 / D1
               + 72 * eta**5 * L**3 * r1 * n * t1 / D1)
    D_I2p = D2 if mode == "paper" else min(D1, D2)
    I2p = 18 * eta**2 * n + 432 * eta**4 * L**2 * r1 * n**2 * t1 / D_I2p
    I3p = 36 * eta * n * t1 + 864 * eta**3 * L**2 * r1 * n**2 * t1**2 / D1
    b1_terms = {"I1*sigma1^2": I1 * c.sgd_var, "I2*sigma2^2": I2 * c.het_var,
                "I3*Delta_f": I3 * c.delta_f, "I4*Delta_f_tilde": I4 * c.delta_f_tilde}
    b2_terms = {"D3*t1^2*I1'*sigma1^2": D3 * t1**2 * I1p * c.sgd_var,
                "D3*t1^2*I2'*sigma2^2": D3 * t1**2 * I2p * c.het_var,
                "D3*I3'*Delta_f": D3 * I3p * c.delta_f}
    B1 = math.sqrt(sum(b1_terms.values()))
    B2 = math.sqrt(sum(b2_terms.values()))
    terms = {"D1": D1, "D2": D2, "D3": D3, "E1": E1, "E2": E2, "E3": E3, "I1": I1, "I2": I2, "I3": I3,
             "I4": I4, "I1'": I1p, "I2'": I2p, "I3'": I3p, "lr_max": lim, **b1_terms, **b2_terms}
    return GapBound(B1, B2, terms, mode)


def bun_steinke_epsilon(sensitivity: float, sigma: float, beta: float) -> float:
    """The epsilon that the paper's calibration grants at std ``sigma`` for means ``sensitivity`` apart.

    Inverse of :func:`unlearnkit.privacy.gaussian.zcdp_gaussian_sigma` (Bun & Steinke 2016, as Neel et al.
    state it): ``rho = Delta^2 / (2 sigma^2)``, ``eps = rho + 2 sqrt(rho ln(1/beta))``.
    """
    check_positive("sigma", sigma)
    rho = sensitivity**2 / (2.0 * sigma**2)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / beta))


def calibrate_sigma(d1: float, epsilon: float, beta: float, mode: str = "paper") -> float:
    """The std of the noise on the *average* model (per client: ``sqrt(n-1)`` times it).

    ``mode="paper"``: ``sigma = d1 / (sqrt(2 ln(1/beta) + 2 eps) - sqrt(2 ln(1/beta)))`` (Def 4.3, Alg. 2
    line 14; digest 3.3 reconstructs it as the Bun-Steinke zCDP conversion that Neel et al. state, which is
    :func:`unlearnkit.privacy.gaussian.zcdp_gaussian_sigma`), treating ``d1`` as a deterministic bound on the
    distance of the means. It is not: Theorem 4.9 bounds
    ``sqrt(E ||gap||^2)`` over the SGD randomness (digest P8).

    ``mode="sound"`` (ours): by Markov on ``||gap||^2``, ``P(||gap|| > d1 / sqrt(gamma)) <= gamma``; on the
    complement the two averages are Gaussians whose means are at most ``Delta = d1 / sqrt(gamma)`` apart. We
    split ``beta`` as ``gamma = beta / 2`` for the tail and ``beta / 2`` for the mechanism, and calibrate
    with the analytic Gaussian mechanism (Balle & Wang 2018), exact for two Gaussians. The two runs are
    coupled through the shared minibatch draws, as in the lemmas.
    """
    check_choice("mode", mode, ("paper", "sound"))
    check_positive("d1", d1, allow_zero=True)
    check_positive("epsilon", epsilon)
    check_range("delta", beta, 0.0, 1.0, low_open=True, high_open=True)
    from ..privacy.gaussian import analytic_gaussian_sigma, zcdp_gaussian_sigma

    if d1 == 0:
        return 0.0
    if mode == "paper":
        return float(zcdp_gaussian_sigma(epsilon, beta, sensitivity=d1))

    gamma = beta / 2.0
    return float(analytic_gaussian_sigma(epsilon, beta - gamma, sensitivity=d1 / math.sqrt(gamma)))


def pdudt_certificate(*, lr: float, t1: int, n: int, constants: Optional[GapConstants], noise: str = "certified",
                      mode: str = "paper", epsilon: float = 1.0, beta: float = 1e-5,
                      sigma: Optional[float] = None) -> Any:
    """The :class:`~unlearnkit.privacy.Certificate` of Corollary 4.10 for PDUDT and PDUDT(ES).

    ``noise="certified"``: sigma from ``d1`` (Theorem 4.9) in ``mode`` ``"paper"`` or ``"sound"``.
    ``noise="manual"``: the given ``sigma`` (the paper's experiments sweep 0.001 to 0.015 and never compute
    ``d1``, digest P7); the certificate says "not certified" (``mode="none"``, ``epsilon=inf``) and, when
    ``constants`` are given, notes the epsilon the paper's bound would grant at that sigma.
    """
    from ..privacy import Certificate

    check_choice("noise", noise, NOISE_MODES)
    mechanism = "Gaussian output perturbation of the average of n-1 client models"
    source = "Qiao et al. 2025, Thm 4.9 + Cor. 4.10 (Def 4.3 Gaussian mechanism)"
    if noise == "manual":
        if sigma is None:
            raise ValueError("sigma=None: noise='manual' needs sigma >= 0 (the paper sweeps 0.001 to 0.015)")
        check_positive("sigma", sigma, allow_zero=True)
        note = "not certified: sigma set by hand, as in the paper's experiments"
        consts: dict[str, Any] = {}
        if constants is not None:
            d1 = gap_bound(lr=lr, t1=t1, n=n, constants=constants, mode="paper").d1
            need = calibrate_sigma(d1, epsilon, beta, "paper")
            implied = bun_steinke_epsilon(d1, sigma, beta) if sigma > 0 else math.inf
            consts = {**constants.as_dict(), "d1": d1, "certified_sigma": need, "implied_epsilon": implied}
            note += (f"; the paper's bound would need sigma={need:.4g} for eps={epsilon:g}, "
                     f"and grants eps={implied:.4g} at sigma={sigma:g}")
        return Certificate(epsilon=math.inf, delta=beta, sigma=float(sigma), mechanism=mechanism, source=source,
                           mode="none", constants=consts, note=note)
    if constants is None:
        raise ValueError("constants=None: noise='certified' needs GapConstants (L, sigma_1^2, sigma_2^2, "
                         "Delta_f, Delta_f_tilde, rho1, rho2)")
    bound = gap_bound(lr=lr, t1=t1, n=n, constants=constants, mode=mode)
    s = calibrate_sigma(bound.d1, epsilon, beta, mode)
    consts = {**constants.as_dict(), "lr": lr, "t1": t1, "n": n, "B1": bound.B1, "B2": bound.B2, "d1": bound.d1}
    if mode == "paper":
        note = ("covers only the average of the n-1 models; d1 bounds an expected distance, "
                "treated as deterministic as in the paper")
    else:
        note = ("covers only the average of the n-1 models; Markov tail (delta/2) turns the expected "
                "d1 into a high-probability sensitivity, analytic Gaussian for the rest")
    return Certificate(epsilon=float(epsilon), delta=float(beta), sigma=float(s), mechanism=mechanism,
                       source=source + (" [sound: Markov + analytic Gaussian]" if mode == "sound" else ""),
                       mode=mode, constants=consts, note=note)
