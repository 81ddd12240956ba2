"""Deletion capacity: how many samples can be deleted while the excess risk stays below ``gamma``.

Definition 3.4 of Lamri & Maniatakos (after Sekhari et al. 2021): the largest ``m`` such that the expected
excess population risk after unlearning ``m`` samples is at most ``gamma``. The paper gives only
``Omega``-scalings; the functions below make every hidden constant an explicit argument (default 1) and
say which are ours (digest 000 section 3.8).

- DDP (Theorem 3.5, eqs. 7-8): with the group-privacy noise ``sigma_DDP ~ m L/eps sqrt(T ln N ln(1/d)/N)``
  the privacy term ``(2 R L m/eps) sqrt(d ln(1/d) ln N / (s N)) (2 + ln T) <= gamma`` gives (derived, digest
  3.8) ``m_DDP = floor(gamma eps / (2 R L (2 + ln T)) sqrt(s N / (d ln(1/d) ln N)))``: essentially zero
  at realistic ``d``.
- RR-DU (eqs. 21-22): ``A = c1 R_cert L/sqrt(s T_unlearn) + c2 R_cert (L/eps) p sqrt(d ln(1/d) ln N / (s N))`` (the
  convex-case optimisation and privacy terms of Table 1/2, independent of ``m``) and the alignment bias
  ``C_b L m/n_u``; ``m* = max(0, floor((gamma - A) n_u / (C_b L)))``: zero in the variance-limited regime
  ``A >= gamma``, linear in ``n_u`` and independent of ``N`` once ``A < gamma``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import check_int, check_positive, check_probability, check_range


def _check_common(epsilon: float, delta: float, n_clients: int, d: int, L: float) -> None:
    check_positive("epsilon", epsilon)
    check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    check_int("n_clients", n_clients, low=2)
    check_int("d", d, low=1)
    check_positive("L", L)


def ddp_capacity(*, gamma: float = 1.0, epsilon: float, delta: float, n_clients: int, d: int, T: int,
                 R: float = 10.0, L: float = 1.0, s: int = 1, floor: bool = True) -> float:
    """Deletion capacity of network-DP token SGD (Lamri & Maniatakos Thm 3.5, eq. 7; eq. 8 with ``s``).

    ``floor=False`` returns the real-valued bound (useful on log plots, where it is often ``<< 1``).

    Parameters
    ----------
    gamma : float
        Excess-risk budget, ``> 0``.
    epsilon : float
        ``> 0``.
    delta : float
        In (0, 1).
    n_clients : int
        Number of clients N, ``>= 2``.
    d : int
        Model dimension, ``>= 1``.
    T : int
        Number of token hops, ``>= 1``.
    R : float
        Diameter of the parameter set, ``> 0``.
    L : float
        Lipschitz constant, ``> 0``.
    s : int
        Minibatches averaged per hop, ``>= 1`` (``s = 1`` is eq. 7).
    floor : bool
        Round down to an integer count.

    Returns
    -------
    float
        ``gamma eps / (2 R L (2 + ln T)) sqrt(s N / (d ln(1/delta) ln N))``, rounded down when ``floor``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning", Theorem 3.5, eqs. (7)-(8); the explicit
    ``gamma`` is derived from its proof.
    Sekhari, Acharya, Kamath & Suresh, "Remember What You Want to Forget: Algorithms for Machine Unlearning",
    NeurIPS 2021 (deletion capacity).
    """
    _check_common(epsilon, delta, n_clients, d, L)
    check_positive("gamma", gamma)
    check_int("T", T, low=1)
    check_positive("R", R)
    check_int("s", s, low=1)
    val = gamma * epsilon / (2 * R * L * (2 + math.log(T))) * math.sqrt(
        s * n_clients / (d * math.log(1 / delta) * math.log(n_clients)))
    return float(math.floor(val)) if floor else val


def rrdu_excess_risk_terms(*, epsilon: float, delta: float, n_clients: int, d: int, T_unlearn: int, L: float, rho: float,
                           p: float, s: int = 1, c1: float = 1.0, c2: float = 1.0) -> tuple[float, float]:
    """``(optimisation term, privacy term)`` of RR-DU's convex bound (eq. 21 / Table 2), ``R_cert = 2 rho``.

    Parameters
    ----------
    epsilon : float
        ``> 0``.
    delta : float
        In (0, 1).
    n_clients : int
        Number of clients N, ``>= 2``.
    d : int
        Model dimension, ``>= 1``.
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    L : float
        Lipschitz constant, ``> 0``.
    rho : float
        Radius of the trust ball, ``> 0``.
    p : float
        Probability of routing to the forgetting client, in [0, 1].
    s : int
        Minibatches averaged per hop, ``>= 1``.
    c1, c2 : float
        The hidden constants of the two terms (ours, default 1; not checked).

    Returns
    -------
    (float, float)
        ``c1 R_cert L / sqrt(s T_unlearn)`` and ``c2 R_cert (L / eps) p sqrt(d ln(1/delta) ln N / (s N))``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning", eq. (21) and Table 2 (scalings; the constants
    are ours).
    """
    _check_common(epsilon, delta, n_clients, d, L)
    check_int("T_unlearn", T_unlearn, low=1)
    check_positive("rho", rho)
    check_probability("p", p)
    check_int("s", s, low=1)
    r_cert = 2 * rho
    opt = c1 * r_cert * L / math.sqrt(s * T_unlearn)
    priv = c2 * r_cert * L / epsilon * p * math.sqrt(d * math.log(1 / delta) * math.log(n_clients) / (s * n_clients))
    return opt, priv


@dataclass(frozen=True)
class RRDUCapacity:
    """RR-DU's capacity and how it arises: ``m``, the m-independent term ``A`` and the regime."""

    m: float
    A: float
    optimisation: float
    privacy: float
    regime: str  # "variance-limited" (A >= gamma, m = 0) or "bias-limited"


def rrdu_capacity(*, gamma: float = 1.0, epsilon: float, delta: float, n_clients: int, d: int, T_unlearn: int, n_u: int,
                  L: float, rho: float, p: float | None = None, s: int = 1, c1: float = 1.0, c2: float = 1.0,
                  C_b: float = 1.0, floor: bool = True) -> RRDUCapacity:
    """Deletion capacity of RR-DU (Lamri & Maniatakos eqs. 21-24; constants ``c1, c2, C_b`` ours, default 1).

    ``p`` defaults to ``1/N``. Returns an :class:`RRDUCapacity`; ``.m`` is 0 when ``A >= gamma``.

    Parameters
    ----------
    gamma : float
        Excess-risk budget, ``> 0``.
    epsilon : float
        ``> 0``.
    delta : float
        In (0, 1).
    n_clients : int
        Number of clients N, ``>= 2``.
    d : int
        Model dimension, ``>= 1``.
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    n_u : int
        Samples held by the forgetting client, ``>= 1``.
    L : float
        Lipschitz constant, ``> 0``.
    rho : float
        Radius of the trust ball, ``> 0``.
    p : float, optional
        Probability of routing to the forgetting client, in [0, 1]; ``1 / n_clients`` when omitted.
    s : int
        Minibatches averaged per hop, ``>= 1``.
    c1, c2 : float
        Constants of :func:`rrdu_excess_risk_terms`.
    C_b : float
        Constant of the alignment bias ``C_b L m / n_u``, ``> 0``.
    floor : bool
        Round ``m`` down to an integer count.

    Returns
    -------
    RRDUCapacity
        ``m = min((gamma - A) n_u / (C_b L), n_u)`` (rounded down when ``floor``) in the bias-limited regime,
        ``m = 0`` in the variance-limited one (``A >= gamma``), with ``A`` and its two terms.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning", Definition 3.4 and eqs. (21)-(24) (scalings; the
    constants are ours).
    """
    check_positive("gamma", gamma)
    check_int("n_u", n_u, low=1)
    check_positive("C_b", C_b)
    p = 1.0 / n_clients if p is None else p
    opt, priv = rrdu_excess_risk_terms(epsilon=epsilon, delta=delta, n_clients=n_clients, d=d, T_unlearn=T_unlearn, L=L, rho=rho,
                                       p=p, s=s, c1=c1, c2=c2)
    A = opt + priv
    if A >= gamma:
        return RRDUCapacity(0.0, A, opt, priv, "variance-limited")
    m = (gamma - A) * n_u / (C_b * L)
    m = min(m, float(n_u))  # cannot delete more than u holds
    return RRDUCapacity(float(math.floor(m)) if floor else m, A, opt, priv, "bias-limited")


def capacity_curves(n_u_grid: np.ndarray, n_grid: np.ndarray, **kw) -> dict[str, np.ndarray]:
    """``m*`` of RR-DU over ``n_u_grid`` and ``m_DDP`` over ``n_grid`` (for plots; keyword args shared).

    Parameters
    ----------
    n_u_grid : array_like of int
        Values of ``n_u`` for :func:`rrdu_capacity`.
    n_grid : array_like of int
        Values of ``n_clients`` for :func:`ddp_capacity`.
    **kw
        Keyword arguments of the two functions: :func:`rrdu_capacity` takes ``gamma, epsilon, delta,
        n_clients, d, T_unlearn, L, rho, p, s, c1, c2, C_b``; :func:`ddp_capacity` takes ``gamma, epsilon,
        delta, d, L, s`` and ``T`` (default 100) and ``R`` (default 10). Other keys are ignored.

    Returns
    -------
    dict of str to ndarray
        ``{"rrdu": m* per n_u, "ddp": m_DDP per N}``, both real-valued (``floor=False``).

    References
    ----------
    .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), Theorem
       3.5, eqs. (7)-(8) (m_DDP) and Definition 3.4 with eqs. (21)-(24) (m* of RR-DU; scalings, the constants are ours).
    """
    rr_kw = {k: kw[k] for k in ("gamma", "epsilon", "delta", "n_clients", "d", "T_unlearn", "L", "rho", "p", "s", "c1",
                                "c2", "C_b") if k in kw}
    ddp_kw = {k: kw[k] for k in ("gamma", "epsilon", "delta", "d", "L", "s") if k in kw}
    rr = np.array([rrdu_capacity(n_u=int(n), floor=False, **rr_kw).m for n in n_u_grid])
    ddp = np.array([ddp_capacity(n_clients=int(n), T=kw.get("T", 100), R=kw.get("R", 10.0), floor=False, **ddp_kw)
                    for n in n_grid])
    return {"rrdu": rr, "ddp": ddp}
