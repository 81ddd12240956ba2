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

- ``retrain_rule="recompute"`` (default, digest 2.1 option A): ``W~^t`` = Metropolis-Hastings weights on
  ``G^t`` without ``k``. It changes weights up to two hops from ``k`` and needs the neighbours' degrees after
  ``k`` left, which a client never stored (digest P3): the simulator computes it centrally.
  ``retrain_rule="absorb"`` (option B) folds ``k``'s weight into the self-loop, ``W~_ii = W_ii + W_ik``: truly
  local, with the closed form ``delta_i^t = eta W^t_ik (g_i^t - g_k^t)``.
- ``correction_scale="paper"`` subtracts the convex combination ``sum_t p_i^t delta_i^t`` (about one round's
  worth, digest P2); ``"sum"`` subtracts ``sum_t delta_i^t`` (what the stored gradients say the whole
  accumulated effect is); ``"none"`` subtracts nothing (noise only: the control).
- when every applied update of a client is zero (``sum_s a_i^s = 0``), Eq. (8) is 0/0; the substrate gives
  that client weight 0 everywhere (its residuals are zero too, so the correction is 0 either way).
- the membership-inference attack (the paper does not say which): see :func:`mia_precision`.

Training with caches (full history or exact running sums), retraining without ``k`` and subsequent learning
run on :mod:`unlearnkit.decentral.gradient_gossip`; this module adds the correction over a stored history,
the unlearner (:class:`PDUDT`), the certificate (Theorem 4.9 + Corollary 4.10: :func:`gap_bound`,
:func:`calibrate_sigma`, :func:`pdudt_certificate`), the experiment (:func:`run_pdudt_experiment`) and the CLI
runner (``python -m unlearnkit run pdudt``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch
from torch import Tensor

from .._validate import check_choice, check_int, check_positive, check_range
from ..decentral.gradient_gossip import RunningSumCache, retrain_matrices
from ..decentral.gradient_gossip import round_weights as _substrate_round_weights
from ..privacy import Certificate
from ..privacy.gaussian import analytic_gaussian_sigma, zcdp_gaussian_sigma

__all__ = [
    "RETRAIN_RULES",
    "CORRECTION_SCALES",
    "retrain_mixing",
    "residuals",
    "round_weights",
    "correction",
    "reconstruct_models",
    "client_noise",
    "GapConstants",
    "GapBound",
    "step_size_limit",
    "gap_bound",
    "calibrate_sigma",
    "bun_steinke_epsilon",
    "pdudt_certificate",
    "PDUDTConfig",
    "PDUDT",
    "mia_precision",
    "sigma_sweep",
    "PDUDTExperiment",
    "run_pdudt_experiment",
    "run_profile",
    "PAPER_TABLE2",
    "PAPER_TABLE3",
    "PROFILES",
]

RETRAIN_RULES = ("recompute", "absorb")
CORRECTION_SCALES = ("paper", "sum", "none")


# ----------------------------------------------------------------------------------------------------------
# Eq. (7), (8), (9) over a stored history. The per-round pieces (retrain matrices, residuals, weights, the
# caches) live in the substrate, unlearnkit.decentral.gradient_gossip; this section stacks them over rounds
# for one leaver and applies the correction scale.
# ----------------------------------------------------------------------------------------------------------

def retrain_mixing(W: Tensor, leaver: int, rule: str = "recompute", *, mixing_rule: str = "metropolis") -> Tensor:
    """The mixing matrix ``W~^t`` retraining without ``leaver`` would use, embedded in ``(n, n)``.

    Row and column ``leaver`` are zero, so ``W~ @ g`` sums over ``j != leaver`` only (Eq. 7). ``W`` is
    ``(n, n)`` or ``(T, n, n)``. ``rule="recompute"`` (digest 2.1 option A: the original run's
    ``mixing_rule`` on the round's graph without the leaver) or ``"absorb"`` (option B:
    ``W~_ii = W_ii + W_i,leaver``). Delegates to :func:`unlearnkit.decentral.gradient_gossip.retrain_matrices`.
    """
    check_choice("retrain_rule", rule, RETRAIN_RULES)
    n = W.shape[-1]
    check_int("leaver", leaver, low=0, high=n - 1)
    if W.dim() == 3:
        return torch.stack([retrain_matrices(w, [leaver], retrain_rule=rule, rule=mixing_rule)[0] for w in W])
    return retrain_matrices(W, [leaver], retrain_rule=rule, rule=mixing_rule)[0]


def _check_history(W: Tensor, grads: Tensor) -> tuple[int, int, int]:
    if W.dim() != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W has shape {tuple(W.shape)}: expected (rounds, n, n)")
    if grads.dim() != 3 or grads.shape[:2] != W.shape[:2]:
        raise ValueError(f"grads has shape {tuple(grads.shape)}: expected (rounds, n, d) = "
                         f"({W.shape[0]}, {W.shape[1]}, d) to match W")
    return int(W.shape[0]), int(W.shape[1]), int(grads.shape[2])


def residuals(W: Tensor, grads: Tensor, leaver: int, lr: float, *, rule: str = "recompute",
              mixing_rule: str = "metropolis") -> Tensor:
    """Per-round residual approximations ``delta_i^t``, Eq. (7) (digest 2.2, reconstructed), ``(T, n, d)``.

    ``delta_i^t = eta * (W~^t - W^t)_{i,:} @ g^t``: the retrain rule minus the rule that was used, both at the
    stored original gradients. The leaver's row is zero (it does not unlearn).
    """
    T, n, _ = _check_history(W, grads)
    check_int("leaver", leaver, low=0, high=n - 1)
    check_positive("lr", lr)
    Wt = retrain_mixing(W, leaver, rule, mixing_rule=mixing_rule)
    delta = lr * torch.einsum("tij,tjd->tid", (Wt - W).to(grads.dtype), grads)
    delta[:, leaver] = 0.0
    return delta


def round_weights(W: Tensor, grads: Tensor, horizon: Optional[int] = None) -> Tensor:
    """Weights ``p_i^t``, Eq. (8), ``(T, n)``: :func:`unlearnkit.decentral.gradient_gossip.round_weights`.

    With ``horizon = t_{1,i}`` (PDUDT(ES), paper Sec. 4.3) only rounds ``t < horizon`` get weight and the
    weights renormalise over them; each column sums to 1 (0 for a client whose every update was zero: its
    residuals are zero too).
    """
    T, _, _ = _check_history(W, grads)
    if horizon is not None:
        check_int("es_rounds", horizon, low=1, high=T)
    return _substrate_round_weights(W, grads, horizon)


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


def reconstruct_models(theta0: Tensor, W: Tensor, grads: Tensor, lr: float, rounds: Optional[int] = None) -> Tensor:
    """``theta_i^{t1} = theta^0 - eta sum_{t < t1} sum_j W^t_ij g_j^t`` (paper Eq. 4), shape ``(n, d)``.

    Exact for gradient gossip with one gradient (or one pseudo-gradient, digest P5) per round; lets the
    full-history cache unlearn at any earlier round ``t1`` without a checkpoint.
    """
    T, n, d = _check_history(W, grads)
    t1 = T if rounds is None else check_int("t_unlearn", rounds, low=0, high=T)
    base = theta0.expand(n, d) if theta0.dim() == 1 else theta0
    return base - lr * torch.einsum("tij,tjd->id", W[:t1].to(grads.dtype), grads[:t1])


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


# ----------------------------------------------------------------------------------------------------------
# The unlearner: Algorithm 2, lines 9-16
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class PDUDTConfig:
    """How PDUDT unlearns a leaving client.

    Attributes
    ----------
    retrain_rule:
        ``"recompute"`` or ``"absorb"`` (module docstring; digest 2.1 options A and B).
    correction_scale:
        ``"paper"`` (Eq. 9), ``"sum"`` or ``"none"`` (digest P2).
    es_rounds:
        PDUDT(ES): only rounds ``t < es_rounds`` enter the correction (paper Sec. 4.3; 80 of 100 there).
    t_unlearn:
        The request round ``t1`` (default: every cached round). An earlier round needs the full history:
        the model at ``t1`` is rebuilt exactly from Eq. (4).
    noise:
        ``"manual"`` (``sigma`` as given; the paper's experiments) or ``"certified"`` (from ``d1``).
    sigma:
        Std of the noise on the *average* model for ``noise="manual"``.
    epsilon, beta:
        The (epsilon, beta) target for ``noise="certified"``, and the beta the manual note refers to.
    cert_mode:
        ``"paper"`` or ``"sound"`` (:func:`calibrate_sigma`).
    constants:
        :class:`GapConstants` for the certificate (required for ``noise="certified"``).
    """

    retrain_rule: str = "recompute"
    correction_scale: str = "paper"
    es_rounds: Optional[int] = None
    t_unlearn: Optional[int] = None
    noise: str = "manual"
    sigma: float = 0.0
    epsilon: float = 1.0
    beta: float = 1e-5
    cert_mode: str = "paper"
    constants: Optional[GapConstants] = None

    def __post_init__(self) -> None:
        check_choice("retrain_rule", self.retrain_rule, RETRAIN_RULES)
        check_choice("correction_scale", self.correction_scale, CORRECTION_SCALES)
        if self.es_rounds is not None:
            check_int("es_rounds", self.es_rounds, low=1)
        if self.t_unlearn is not None:
            check_int("t_unlearn", self.t_unlearn, low=1)
        if self.es_rounds is not None and self.t_unlearn is not None and self.es_rounds > self.t_unlearn:
            raise ValueError(f"es_rounds={self.es_rounds} is out of range: expected es_rounds in [1, t_unlearn="
                             f"{self.t_unlearn}]")
        check_choice("noise", self.noise, NOISE_MODES)
        check_positive("sigma", self.sigma, allow_zero=True)
        check_positive("epsilon", self.epsilon)
        check_range("beta", self.beta, 0.0, 1.0, low_open=True, high_open=True)
        check_choice("cert_mode", self.cert_mode, ("paper", "sound"))
        if self.noise == "certified" and self.constants is None:
            raise ValueError("constants=None: noise='certified' needs GapConstants")


class PDUDT:
    """PDUDT (Algorithm 2) behind the package's one calling shape.

    ``state`` is what :func:`unlearnkit.decentral.run_gradient_gossip` returns: ``params`` are the ``(n, d)``
    client models after training; ``extras`` hold the ``"history"`` (full history) or ``"running"``
    (running sums) cache and ``"theta0"``; ``config.lr`` is the training step size. ``request`` is a client request (``kind="client"``). The result's ``params`` are the
    ``n - 1`` remaining models ``theta_i^u`` (in ``extras["clients"]`` order).
    """

    name = "pdudt"

    def unlearn(self, state: Any, request: Any, config: PDUDTConfig, *, generator: torch.Generator,
                callback: Any = None) -> Any:
        from ..core import Cost, Result, Stopwatch, emit

        params = state.params
        n, d = int(params.shape[0]), int(params.shape[1])
        ex = state.extras
        cache = ex.get("cache", ex.get("history", ex.get("running")))
        lr = ex.get("lr", getattr(state.config, "lr", None))
        mixing_rule = getattr(state.config, "rule", "metropolis")
        if cache is None or lr is None:
            raise ValueError("state needs a gradient-gossip cache (extras 'history' or 'running') and the step "
                             "size: train with run_gradient_gossip(..., GradientGossipConfig(cache=...))")
        if request.client is None:
            raise ValueError(f"request.kind={request.kind!r} without a client: PDUDT unlearns a whole client")
        k = request.client
        if isinstance(k, bool) or not (0 <= int(k) < n):
            raise ValueError(f"leaver={k!r} does not exist: expected a client in [0, {n - 1}]")
        k = int(k)
        rounds = cache.rounds
        t1 = rounds if config.t_unlearn is None else config.t_unlearn
        if t1 > rounds or t1 < 1:
            raise ValueError(f"t_unlearn={t1} is after training ended: expected t_unlearn in [1, {rounds}] "
                             f"(rounds trained and cached)")
        es = config.es_rounds
        if es is not None and es > t1:
            raise ValueError(f"es_rounds={es} is out of range: expected es_rounds in [1, t_unlearn={t1}]")
        keep = [i for i in range(n) if i != k]
        extras: dict[str, Any] = {"clients": keep, "leaver": k, "t_unlearn": t1}
        with Stopwatch() as sw:
            if isinstance(cache, RunningSumCache):
                if t1 != rounds:
                    raise ValueError(f"t_unlearn={t1}: running sums only hold the request round {rounds}")
                if cache.retrain_rule != config.retrain_rule or cache.es_rounds != es:
                    raise ValueError(f"retrain_rule={config.retrain_rule!r}, es_rounds={es}: the running sums were "
                                     f"accumulated with retrain_rule={cache.retrain_rule!r}, "
                                     f"es_rounds={cache.es_rounds}")
                if config.correction_scale == "none":
                    corr = torch.zeros(n, d, dtype=cache.A.dtype, device=cache.A.device)
                else:
                    corr = cache.correction(k, scale=config.correction_scale)
                theta = params
            else:
                W, g = cache.W[:t1], cache.grads[:t1]
                if config.correction_scale == "none":  # the control reads nothing from the cache
                    corr = torch.zeros_like(g[0])
                else:
                    # PDUDT(ES) reads only the rounds it kept: that is where its time and memory saving comes from
                    H = t1 if es is None else es
                    delta = residuals(W[:H], g[:H], k, lr, rule=config.retrain_rule, mixing_rule=mixing_rule)
                    p = round_weights(W[:H], g[:H])
                    corr = correction(delta, p, config.correction_scale)
                    extras["delta_norms"] = delta.norm(dim=-1)
                    extras["p"] = p
                if t1 == rounds:
                    theta = params
                else:
                    theta0 = ex.get("theta0")
                    if theta0 is None:
                        raise ValueError(f"t_unlearn={t1} < {rounds} needs state.extras['theta0']")
                    theta = reconstruct_models(theta0.to(g.dtype), W, g, lr).to(params.dtype)
            corr = corr.to(device=params.device, dtype=params.dtype)
            corrected = theta[keep] - corr[keep].to(params.dtype)
            cert = pdudt_certificate(lr=lr, t1=t1, n=n, constants=config.constants, noise=config.noise,
                                     mode=config.cert_mode, epsilon=config.epsilon, beta=config.beta,
                                     sigma=config.sigma if config.noise == "manual" else None)
            z = client_noise(n - 1, d, cert.sigma or 0.0, generator=generator, dtype=params.dtype,
                             device=params.device)
            out = corrected + z
        extras.update(corrected=corrected, correction=corr[keep], noise=z)
        emit(callback, "noise", t1, None, sigma=cert.sigma or 0.0, correction_norm=float(corr[keep].norm()),
             noise_norm=float(z.norm()))
        history = [{"t_unlearn": t1, "sigma": float(cert.sigma or 0.0), "correction_norm": float(corr[keep].norm())}]
        cost = Cost(grad_evals=0, messages=0, seconds=sw.seconds, memory_bytes=int(cache.memory_bytes))
        return Result(out, cert, history, cost, extras)


# ----------------------------------------------------------------------------------------------------------
# Membership inference as the paper reports it (Table 3: attack precision)
# ----------------------------------------------------------------------------------------------------------

def mia_precision(flat: Any, params: Tensor, x_mem: Tensor, y_mem: Tensor, x_non: Tensor, y_non: Tensor, *,
                  repeats: int = 100, seed: int = 0) -> tuple[float, float]:
    """Membership-inference *precision* (paper Table 3), mean and std in percent over ``repeats`` attacks.

    The paper does not say which attack (digest P11). Ours: a loss-threshold attack on the average model,
    on balanced draws of ``m`` members (the leaver's training samples) and ``m`` non-members (held-out
    samples of the same classes); the ``m`` lowest-loss samples are called members. Precision is the share
    of true members among them: 50% is guessing, 100% a model that still remembers every member.
    """
    check_int("mia_repeats", repeats, low=1)
    rng = np.random.default_rng([int(seed), 9])
    from ..evaluate import consensus

    theta = consensus(params)
    with torch.no_grad():
        lm = flat.sample_losses(theta, x_mem, y_mem).cpu().numpy()
        ln = flat.sample_losses(theta, x_non, y_non).cpu().numpy()
    m = min(lm.size, ln.size)
    if m == 0:
        raise ValueError("mia_precision needs at least one member and one non-member sample")
    prec = []
    for _ in range(repeats):
        a = lm[rng.choice(lm.size, m, replace=False)]
        b = ln[rng.choice(ln.size, m, replace=False)]
        scores = np.concatenate([a, b]) + rng.uniform(0, 1e-9, 2 * m)  # random tie-breaking
        called = np.argsort(scores)[:m]
        prec.append(100.0 * np.mean(called < m))
    return float(np.mean(prec)), float(np.std(prec))


# ----------------------------------------------------------------------------------------------------------
# The experiment: train with caches -> client k leaves at t1 -> PDUDT, PDUDT(ES), control, (perturbed)
# retraining -> T rounds of subsequent learning; times, membership inference, accuracy curves
# ----------------------------------------------------------------------------------------------------------

SCHEDULES = ("erdos_renyi", "edge_churn", "static", "one_peer_exponential", "random_k_out")


@dataclass(frozen=True, kw_only=True)
class PDUDTExperiment:
    """One run of the paper's pipeline (digest 4, scaled by the profile).

    The leaver owns class ``leaver_class`` exclusively (paper Sec. 5: "data from class 9 is exclusively owned
    by the client who requests unlearning"); the other classes are split IID among the other clients
    (our choice, digest 4). ``leaver_class=None`` gives an IID split of everything.
    """

    dataset: str = "digits"
    n_clients: int = 10
    leaver: int = 9
    leaver_class: Optional[int] = 9
    model: str = "mlp"
    hidden: int = 32
    schedule: str = "erdos_renyi"
    p_edge: float = 0.4
    churn: float = 1.0
    ensure_connected: bool = True
    t1: int = 60
    es_rounds: Optional[int] = 48
    T: int = 40
    lr: float = 0.1
    local_steps: int = 1
    batch_size: int = 32
    retrain_rule: str = "recompute"
    correction_scale: str = "paper"
    sigma: float = 0.01
    cache: str = "history"
    eval_every: int = 5
    mia_repeats: int = 100
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("n_clients", self.n_clients, low=3, high=200)
        check_int("leaver", self.leaver, low=0, high=self.n_clients - 1)
        if self.leaver_class is not None:
            check_int("leaver_class", self.leaver_class, low=0)
        check_choice("model", self.model, ("logreg", "mlp", "cnn"))
        check_int("hidden", self.hidden, low=1)
        check_choice("schedule", self.schedule, SCHEDULES)
        check_range("p_edge", self.p_edge, 0.0, 1.0, low_open=True)
        check_range("churn", self.churn, 0.0, 1.0)
        check_int("t1", self.t1, low=1)
        if self.es_rounds is not None:
            check_int("es_rounds", self.es_rounds, low=1, high=self.t1)
        check_int("T", self.T, low=0)
        check_positive("lr", self.lr)
        check_int("local_steps", self.local_steps, low=1)
        check_int("batch_size", self.batch_size, low=1)
        check_choice("retrain_rule", self.retrain_rule, RETRAIN_RULES)
        check_choice("correction_scale", self.correction_scale, CORRECTION_SCALES)
        check_positive("sigma", self.sigma, allow_zero=True)
        check_choice("cache", self.cache, ("history", "running"))
        check_int("eval_every", self.eval_every, low=1)
        check_int("mia_repeats", self.mia_repeats, low=1)


def make_schedule_for(exp: PDUDTExperiment) -> Any:
    """The dynamic topology of ``exp`` from the substrate (:mod:`unlearnkit.graphs.dynamic`)."""
    from ..graphs import dynamic
    from ..graphs.topology import erdos_renyi

    if exp.schedule == "edge_churn":
        G = erdos_renyi(exp.n_clients, exp.p_edge, seed=exp.seed)
        return dynamic.EdgeChurnSchedule(G, exp.churn, keep_connected=exp.ensure_connected, seed=exp.seed)
    return dynamic.make_schedule(exp.schedule, exp.n_clients, seed=exp.seed, p_edge=exp.p_edge,
                                 base="erdos_renyi", ensure_connected=exp.ensure_connected)


def leaver_owns_class(dataset: Any, n_clients: int, leaver: int, label: Optional[int], seed: int) -> Any:
    """A :class:`~unlearnkit.data.Federation` where ``leaver`` holds every training sample of ``label``."""
    from ..data import Federation, partition

    if label is None:
        return partition(dataset, n_clients, "iid", seed=seed)
    if label >= dataset.n_classes:
        raise ValueError(f"leaver_class={label} is out of range: expected a class in [0, {dataset.n_classes - 1}]")
    y = dataset.y_train.cpu().numpy()
    rng = np.random.default_rng([int(seed), 7])
    own = np.flatnonzero(y == label)
    rest = rng.permutation(np.flatnonzero(y != label))
    others = [i for i in range(n_clients) if i != leaver]
    parts = np.array_split(rest, len(others))
    idx: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * n_clients
    for i, part in zip(others, parts):
        idx[i] = np.sort(part)
    idx[leaver] = np.sort(own)
    return Federation(dataset, tuple(idx), scheme=f"class {label} on client {leaver}, rest iid")


class _single_thread:
    """Run small CPU models on one thread: with several processes sharing two cores, a second OpenMP thread
    spins and makes each tiny backward pass 20 to 50 times slower (measured here). Restored on exit."""

    def __init__(self, active: bool) -> None:
        self.active = active

    def __enter__(self) -> None:
        self.saved = torch.get_num_threads()
        if self.active:
            torch.set_num_threads(1)

    def __exit__(self, *exc: Any) -> None:
        torch.set_num_threads(self.saved)


def run_pdudt_experiment(exp: PDUDTExperiment, *, progress: bool = False, callback: Any = None,
                         dataset: Any = None) -> dict:
    """Run the whole pipeline (see :func:`_run`) on one CPU thread for small models."""
    import unlearnkit as uk

    with _single_thread(uk.device().type == "cpu" and exp.model != "cnn"):
        return _run(exp, progress=progress, callback=callback, dataset=dataset)


def _run(exp: PDUDTExperiment, *, progress: bool = False, callback: Any = None, dataset: Any = None) -> dict:
    import unlearnkit as uk

    from ..data import load
    from ..decentral.gradient_gossip import GradientGossipConfig, paper_storage_bytes, run_gradient_gossip
    from ..evaluate import accuracy
    from ..models import FlatParams, make_model
    from ..core import Request

    dev = uk.device()
    ds = dataset if dataset is not None else load(exp.dataset, device=dev, seed=exp.seed)
    fed = leaver_owns_class(ds, exp.n_clients, exp.leaver, exp.leaver_class, exp.seed)
    n, k, t1, T = exp.n_clients, exp.leaver, exp.t1, exp.T
    keep = [i for i in range(n) if i != k]
    kw = {"hidden": (exp.hidden,)} if exp.model == "mlp" else {}
    flat = FlatParams(make_model(exp.model, ds.input_shape, ds.n_classes, generator=uk.make_generator(exp.seed),
                                 **kw).to(dev))
    d = flat.d
    sched = make_schedule_for(exp)
    W_np = sched.mixings(t1 + T)
    W_all = torch.as_tensor(W_np)
    label = exp.leaver_class
    test_mask = (ds.y_test == label) if label is not None else torch.ones_like(ds.y_test, dtype=torch.bool)
    x_f, y_f = ds.x_test[test_mask], ds.y_test[test_mask]
    x_mem, y_mem = fed.client_data(k)

    def eval_fn(theta: Tensor) -> dict:
        return {"test_acc": accuracy(flat, theta, ds.x_test, ds.y_test),
                "forget_class_acc": accuracy(flat, theta, x_f, y_f)}

    def mia(theta: Tensor) -> tuple[float, float]:
        return mia_precision(flat, theta, x_mem, y_mem, x_non=x_f, y_non=y_f, repeats=exp.mia_repeats, seed=exp.seed)

    def gg_config(rounds: int, cache: str = "none", eval_every: Optional[int] = None) -> Any:
        return GradientGossipConfig(rounds=rounds, lr=exp.lr, batch_size=exp.batch_size, local_steps=exp.local_steps,
                                    eval_every=exp.eval_every if eval_every is None else eval_every, cache=cache,
                                    retrain_rule=exp.retrain_rule, leavers=(k,))

    def curve(state: Any, offset: int = 0) -> list[dict]:
        return [{"round": r["round"] + offset, "test_acc": r["accuracy"]} for r in state.history if "accuracy" in r]

    # 1. training with caches (Alg. 2, lines 2-8); the generator seeds the minibatches, shared by retraining
    state = run_gradient_gossip(flat, fed, sched, gg_config(t1, exp.cache), generator=uk.make_generator(exp.seed, dev),
                                callback=callback, progress=progress)
    if exp.cache == "running":
        state.extras["cache"] = state.extras["running"]
    theta_t1 = state.params
    request = Request("client", np.asarray(fed.client_indices[k]), client=k)
    gen = uk.make_generator(exp.seed + 1, dev)

    # 2. PDUDT, PDUDT(ES) and the control (no correction, same noise level): Alg. 2, lines 9-16
    method = PDUDT()
    cfgs = {"pdudt": PDUDTConfig(retrain_rule=exp.retrain_rule, correction_scale=exp.correction_scale,
                                 sigma=exp.sigma)}
    if exp.es_rounds is not None and exp.cache == "history":
        cfgs["pdudt_es"] = PDUDTConfig(retrain_rule=exp.retrain_rule, correction_scale=exp.correction_scale,
                                       sigma=exp.sigma, es_rounds=exp.es_rounds)
    cfgs["control"] = PDUDTConfig(retrain_rule=exp.retrain_rule, correction_scale="none", sigma=exp.sigma)
    runs = {name: method.unlearn(state, request, cfg, generator=gen) for name, cfg in cfgs.items()}
    # timings: the best of three calls (a shared machine adds noise to sub-second timings, never removes it)
    best = {name: min([runs[name].cost.seconds] + [method.unlearn(state, request, cfg, generator=gen).cost.seconds
                                                  for _ in range(2)]) for name, cfg in cfgs.items()}

    # 3. retraining from scratch without k on the same minibatches (Alg. 1), then with its noise
    # (no evaluation inside the timed loop: its seconds are the retraining's alone)
    retrain = run_gradient_gossip(flat, fed, sched, gg_config(t1, eval_every=0), generator=uk.make_generator(exp.seed, dev),
                                  exclude=k, progress=progress)
    theta_rt = retrain.params[keep]
    z_rt = client_noise(n - 1, d, exp.sigma, generator=gen, dtype=theta_rt.dtype, device=theta_rt.device)
    at_t1 = {"origin": theta_t1, "retrain": theta_rt, "perturbed_retrain": theta_rt + z_rt,
             **{name: r.params for name, r in runs.items()}}
    seconds = {"retrain": retrain.cost.seconds, "perturbed_retrain": retrain.cost.seconds,
               **best}

    # 4. subsequent learning, Eq. (10): T rounds on the graphs without k, the same minibatches for every method
    final: dict[str, Tensor] = {}
    curves: dict[str, list[dict]] = {"origin": curve(state), "retrain": curve(retrain)}
    if T > 0:
        future = list(W_np[t1:])
        for name in ("retrain", "perturbed_retrain", *runs):
            init = theta_t1.clone()
            init[keep] = at_t1[name]
            sub = run_gradient_gossip(flat, fed, future, gg_config(T), generator=uk.make_generator(exp.seed + 2, dev),
                                      init=init, exclude=k, progress=progress)
            final[name] = sub.params[keep]
            before = curves["retrain"] if name in ("retrain", "perturbed_retrain") else curves["origin"]
            curves[name] = [r for r in before if r["round"] < t1] + \
                [{"round": t1, "test_acc": eval_fn(at_t1[name])["test_acc"]}] + curve(sub, t1)

    # 5. metrics
    def dist(a: Tensor, b: Tensor) -> float:
        return float((a.mean(0) - b.mean(0)).norm())

    methods: dict[str, dict] = {}
    for name, th in at_t1.items():
        p_mean, p_std = mia(th)
        row = {**eval_fn(th), "mia_precision": p_mean, "mia_std": p_std,
               "dist_to_retrain": dist(th[keep] if name == "origin" else th, theta_rt),
               "seconds": seconds.get(name, float("nan"))}
        if name in final:
            p2, s2 = mia(final[name])
            row.update({f"after_T_{key}": v for key, v in eval_fn(final[name]).items()})
            row.update(after_T_mia_precision=p2, after_T_mia_std=s2)
        methods[name] = row
    for name, r in runs.items():
        methods[name]["correction_norm"] = float(r.extras["correction"].norm())
        methods[name]["dist_to_retrain_before_noise"] = dist(r.extras["corrected"], theta_rt)
    n_max = int(((W_all[:t1] > 0).sum(-1) - 1).max())
    return {
        "experiment": exp, "flat": flat, "dataset": ds, "federation": fed, "schedule": sched, "W": W_all,
        "methods": methods, "curves": curves, "request": request, "state": state, "runs": runs,
        "delta_norms": runs["pdudt"].extras.get("delta_norms"), "p": runs["pdudt"].extras.get("p"),
        "certificate": runs["pdudt"].certificate,
        "theta": {"t1": at_t1, "final": final},
        "memory_bytes": {"simulator_cache": int(state.extras["cache" if exp.cache == "running" else "history"].memory_bytes),
                         "paper_per_client": paper_storage_bytes(t1, n_max, d),
                         "paper_per_client_es": paper_storage_bytes(exp.es_rounds or t1, n_max, d),
                         "running_sums_per_client": int(8 * (2 * d + 1))},
        "train_seconds": state.cost.seconds,
        "time_ratio": retrain.cost.seconds / max(best["pdudt"], 1e-9),
        "d": d,
    }


def sigma_sweep(rep: dict, sigmas: Any, *, seed: int = 0) -> dict[str, list[float]]:
    """The paper's Figure 1 in miniature: accuracy of the average model against sigma, right after unlearning.

    For perturbed retraining, PDUDT, PDUDT(ES) and the control, the models before noise are taken from an
    experiment report (:func:`run_pdudt_experiment`) and the same noise draw is added to each at every sigma
    (common random numbers, so the curves differ only by what the methods did).
    """
    from ..evaluate import accuracy

    sigmas = [check_positive("sigma", s, allow_zero=True) for s in sigmas]
    ds, flat = rep["dataset"], rep["flat"]
    bases = {"perturbed_retrain": rep["theta"]["t1"]["retrain"],
             **{name: r.extras["corrected"] for name, r in rep["runs"].items()}}
    out: dict[str, list[float]] = {name: [] for name in bases}
    m, d = next(iter(bases.values())).shape
    for i, sigma in enumerate(sigmas):
        gen = torch.Generator(device=next(iter(bases.values())).device).manual_seed(int(seed) * 100003 + i)
        z = client_noise(m, d, sigma, generator=gen, dtype=next(iter(bases.values())).dtype)
        for name, base in bases.items():
            out[name].append(accuracy(flat, base + z, ds.x_test, ds.y_test))
    return out


# ----------------------------------------------------------------------------------------------------------
# CLI: python -m unlearnkit run pdudt --profile quick|paper
# ----------------------------------------------------------------------------------------------------------

#: The paper's Table 2 (unlearning seconds) and Table 3 (MIA precision %, mean and std), digest 002 section 5.
PAPER_TABLE2 = {"MNIST": {"Retrain": 1322.2, "PDUDT": 3.0, "PDUDT (ES)": 2.3},
                "Fashion-MNIST": {"Retrain": 1299.8, "PDUDT": 3.3, "PDUDT (ES)": 2.6},
                "CIFAR-10": {"Retrain": 1696.2, "PDUDT": 9.6, "PDUDT (ES)": 7.5},
                "SVHN": {"Retrain": 2747.8, "PDUDT": 9.8, "PDUDT (ES)": 7.8}}
PAPER_TABLE3 = {"MNIST": {"Origin": (65.3, 0.9), "Retrain": (49.4, 1.3), "PDUDT": (49.9, 0.6), "PDUDT (ES)": (50.8, 0.6)},
                "Fashion-MNIST": {"Origin": (67.1, 1.9), "Retrain": (49.2, 2.2), "PDUDT": (49.0, 1.3),
                                  "PDUDT (ES)": (50.2, 0.9)},
                "CIFAR-10": {"Origin": (65.3, 0.7), "Retrain": (51.0, 0.6), "PDUDT": (50.1, 1.6),
                             "PDUDT (ES)": (51.1, 1.3)},
                "SVHN": {"Origin": (68.1, 0.5), "Retrain": (49.5, 0.7), "PDUDT": (51.3, 0.3), "PDUDT (ES)": (51.5, 1.4)}}

#: Profiles. ``quick``: digits, seconds on 2 CPU cores; the leaver holds an IID share (with class-exclusive
#: data, gradient gossip never teaches the other clients class 9, so there is nothing to forget: notebook 08).
#: ``paper``: digest 002 section 4 (MNIST, CNN, t1 = 100, ES 80, T = 200, batch 256, lr 0.001, one local
#: epoch per round, the leaver owns class 9); needs the MNIST files.
PROFILES: dict[str, dict[str, Any]] = {
    "quick": dict(dataset="digits", n_clients=10, leaver=9, leaver_class=None, model="mlp", hidden=64,
                  schedule="erdos_renyi", p_edge=0.4, t1=40, es_rounds=32, T=20, lr=0.3, local_steps=5,
                  batch_size=32, sigma=0.01, eval_every=10, mia_repeats=100),
    "paper": dict(dataset="mnist", n_clients=10, leaver=9, leaver_class=9, model="cnn", schedule="erdos_renyi",
                  p_edge=0.4, t1=100, es_rounds=80, T=200, lr=0.001, local_steps=24, batch_size=256, sigma=0.01,
                  eval_every=10, mia_repeats=100),
}


def run_profile(*, profile: str = "quick", seed: int = 0, progress: bool = False, **overrides: Any) -> dict:
    """Run a profile (``overrides`` replace :class:`PDUDTExperiment` fields) and build the result JSON."""
    from ..data import DatasetUnavailableError
    from ..evaluate import report

    check_choice("profile", profile, tuple(PROFILES))
    exp = PDUDTExperiment(**{**PROFILES[profile], "seed": seed, **overrides})
    try:
        rep = run_pdudt_experiment(exp, progress=progress)
    except DatasetUnavailableError as exc:
        raise DatasetUnavailableError(
            f"the '{profile}' profile of pdudt needs the {exp.dataset} files, which are not on disk: {exc} "
            f"(run the 'quick' profile on the bundled digits instead)") from exc
    m = rep["methods"]
    keep = rep["runs"]["pdudt"].extras["clients"]
    metrics = report(rep["flat"], rep["theta"]["t1"]["pdudt"], rep["dataset"], rep["request"],
                     retrained=rep["theta"]["t1"]["retrain"], original=rep["theta"]["t1"]["origin"][keep])
    metrics.update({
        "mia_precision": m["pdudt"]["mia_precision"], "mia_precision_std": m["pdudt"]["mia_std"],
        "retrain_mia_precision": m["retrain"]["mia_precision"], "original_mia_precision": m["origin"]["mia_precision"],
        "es_mia_precision": m.get("pdudt_es", {}).get("mia_precision"),
        "control_mia_precision": m["control"]["mia_precision"],
        "time_ratio_retrain_over_pdudt": rep["time_ratio"],
        "dist_to_retrain_before_noise": m["pdudt"]["dist_to_retrain_before_noise"],
        "control_dist_to_retrain_before_noise": m["control"]["dist_to_retrain_before_noise"],
    })
    for name in ("pdudt", "pdudt_es", "control", "retrain", "perturbed_retrain"):
        if name in m and "after_T_test_acc" in m[name]:
            metrics[f"{name}_after_T_test_acc"] = m[name]["after_T_test_acc"]
    cert = rep["certificate"]
    return {
        "method": "pdudt", "profile": profile, "dataset": exp.dataset, "request": rep["request"].describe(),
        "metrics": metrics,
        "certificate": cert.to_dict() if cert is not None else None,
        "cost": {"grad_evals": 0, "seconds": m["pdudt"]["seconds"],
                 "es_seconds": m.get("pdudt_es", {}).get("seconds"),
                 "retrain_grad_evals": int(rep["state"].cost.grad_evals * (exp.n_clients - 1) / exp.n_clients),
                 "retrain_seconds": m["retrain"]["seconds"], "memory_bytes": rep["memory_bytes"]},
        "methods": m,
        "paper": {"table2_seconds": PAPER_TABLE2, "table3_mia_precision": PAPER_TABLE3},
        "settings": {k: getattr(exp, k) for k in PROFILES["quick"]},
    }
