"""Certificates for RR-DU and its DDP baseline: accountants A, B, C, D and the per-observer ledger.

The paper (Lamri & Maniatakos, Thm 5.1 and Cor. 5.2; App. C.5) only states the noise *scaling*
``sigma = Theta(L/eps sqrt(p T_unlearn ln(1/delta) ln N / N))``. Digest 000 section 3.4 turns it into four
explicit accountants; all of them bound what one honest-but-curious observer ``v != u`` sees (the model
each time the token reaches ``v``), relative to a certifier that never saw D_f, **counting only the
per-visit gradient difference at u** (like the paper, none accounts for the gap between the two starting
models A(D) and A(D \\ D_f), digest P15).

=====  =========================================================  ===========  ===============================
name   what it computes                                           ``mode``     sound when
=====  =========================================================  ===========  ===============================
A      Cor. 5.2 literally: ``C_A L/eps sqrt(p T_unlearn ln(1/d) lnN/N)``  ``paper``    never shown: C_A is a free
       (``C_A`` a free constant, default 1)                                    constant the paper leaves out
B      App. C.5 with explicit constants: per visit                ``paper``    only if *every* hop between u and
       ``min(1,(1+c)E[1/K]) alpha Delta^2/(2 sigma^2)`` (network               v were a noisy contraction
       amplification, Lemma A.11 + Prop A.10), composed over                    (false for RR-DU: non-u hops are
       the (1-delta/4)-quantile of Bin(T_unlearn, p) visits                          noiseless, digest P4)
C      no network amplification: ``alpha Delta^2/(2 sigma^2)``    ``none``     never for unlearning: it ignores the
       per visit, composed over the visit quantile                             start-model gap (P15) and is refuted
       (epsilon kept in ``constants["epsilon_diagnostic"]``)                   (audited eps >= 2.37 against 1)
D      sampled Gaussian (Mironov-Talwar-Zhang): each of the T_unlearn   ``paper``    if the observer cannot tell which
       hops is a Gaussian step with probability p                              hops went to u (a reading of the
                                                                               abstract's "subsampled Gaussian")
=====  =========================================================  ===========  ===============================

The per-visit sensitivity is ``Delta = sens_factor * L`` (digest P11; 2 for replace-one with per-example
clipping at L). B and C convert RDP to (eps, delta) with Prop. A.8 at ``delta/2`` (the visit-count tail costs
``delta/4``); their RDP is linear in alpha, ``alpha K / sigma^2``, so the optimum over alpha is closed form
(digest 3.4; Mironov 2017, Prop. 3): :func:`unlearnkit.privacy.linear_rdp.linear_rdp_epsilon` with
``rho = K/sigma^2`` and ``method="mironov"`` gives ``eps = rho + 2 sqrt(rho ln(1/delta_conv))``, and
:func:`~unlearnkit.privacy.linear_rdp.linear_rdp_slope` inverts it: ``sigma = sqrt(K / slope)``.

Pure maths: numpy, scipy and :mod:`unlearnkit.privacy` only (no torch), plain-number arguments. Every
certificate states its ``mode`` as in the table above. **No RR-DU accountant is sound** (the audit refutes them, docs/results.md section 1b):
certified unlearning compares the observer's view of ``U(D_f, A(D))`` with the certifier's
``U(empty, A(D \\ D_f))``; the two walks *start* from different models, and an observer that receives the
token before u's first visit (probability about one half at ``p = 1/N``) sees a noise-free function of the
start. On the issue's synthetic task (N = 4, 45 of u's 50 points label-flipped, fresh training per trial, the
observer's first received model) accountant C's ``(1, 1e-5)`` at sigma 26.67 is refuted with epsilon >= 2.37
at 95 % (:mod:`unlearnkit.experiments.rrdu.audit`). Accountant C's number is therefore reported only as a
diagnostic of the per-visit gradient part (``mode="none"``, ``epsilon = inf``,
``constants["epsilon_diagnostic"]``).

Threat model of the sound replacements (:mod:`.sound`, in full there): one honest-but-curious observer that
sees every model after the request and the route; certified against ``U(empty, A(D minus D_f))``; the original
trained with Gaussian noise on every clipped local step (:class:`~.noisy.NoisyWalkTraining`), so the start gap
is the training's client-level guarantee; RR-DU's accountant ``"S"`` adds its u-steps' RDP on top.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from ..._validate import check_choice, check_int, check_positive, check_probability, check_range
from ...privacy import Certificate, RDPAccountant, calibrate_sigma
from ...privacy.accountant import GaussianEvent, LinearEvent
from ...privacy.amplification import first_observation_rate, visit_count_bound
from ...privacy.rdp import rdp_to_dp, subsampled_gaussian_rdp
from ...privacy.amplification import expected_inverse_delay as _walk_inverse_delay
from ...privacy.linear_rdp import linear_rdp_epsilon, linear_rdp_slope


CLOSED_FORM_ACCOUNTANTS = ("A", "B", "C", "D")
DDP_CALIBRATIONS = ("alg3", "netdp_group_m", "netdp_rdp", "group_sound")
_ORDERS = np.arange(2, 257, dtype=float)

_SOURCES = {
    "A": "Lamri & Maniatakos, Cor. 5.2 eq. (18), constant C_A (digest 000 s3.4 accountant A)",
    "B": "Lamri & Maniatakos, App. C.5 (Lemma A.11, Prop. A.10, A.8) with explicit constants (digest 3.4 B)",
    "C": "per-visit Gaussian RDP composed over the Binomial visit quantile, Prop. A.8 (digest 3.4 C)",
    "D": "sampled Gaussian RDP (Mironov, Talwar & Zhang 2019) over T_unlearn hops, rate p (digest 3.4 D)",
}
_P15 = "; like every RR-DU accountant it ignores the start-model gap (P15), so it does not hold for unlearning"
_NOTES = {
    "A": "paper scaling with a free constant C_A: a claim, not a proof" + _P15,
    "B": "assumes every hop between u and the observer is noisy (false for RR-DU, digest P4)" + _P15,
    "C": ("NOT a certificate: per-visit accounting only, ignores the start-model gap A(D) vs A(D minus D_f) "
          "(digest P15); refuted by the package's audit (audited epsilon >= 2.37 at 95% against the "
          "claimed 1, N=4, 45/50 flipped, fresh training); constants['epsilon_diagnostic'] is the per-visit part"),
    "D": "assumes the observer cannot tell which hops went to u; add/remove-style SGM bound" + _P15,
}


# ----------------------------------------------------------------------------------------------------------
# Random-walk quantities (complete graph, RR-DU routing; digest 2.5)
# ----------------------------------------------------------------------------------------------------------

def observer_hit_prob(p: float, n_clients: int) -> float:
    """``q = (1 - p)/(N - 1)``: per-hop probability that a given observer ``v != u`` gets the token (s4.3).

    :func:`unlearnkit.privacy.first_observation_rate`, extended to ``p = 1`` (``q = 0``).

    Parameters
    ----------
    p : float
        Probability that a hop returns the token to ``u``, in ``[0, 1]``.
    n_clients : int
        Number of clients ``N``, ``>= 2``.

    Returns
    -------
    float
        ``q``, in ``[0, 1/(N-1)]``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000), Section 4.3.
    """
    check_probability("p", p)
    check_int("n_clients", n_clients, low=2)
    return 0.0 if p == 1 else first_observation_rate(p, n_clients)


def network_amplification(p: float, n_clients: int) -> float:
    """``E[1/K] = q/(1-q) ln(1/q)`` for ``K ~ Geom(q)`` (digest 2.5), via :mod:`unlearnkit.privacy`.

    The network-amplification factor of accountant B; ``ln N/(N-1)`` at ``p = 1/N``; 0 at ``p = 1`` (the
    observer never receives the token).

    Parameters
    ----------
    p : float
        Probability that a hop returns the token to ``u``, in ``[0, 1]``.
    n_clients : int
        Number of clients ``N``, ``>= 2``.

    Returns
    -------
    float
        ``E[1/K]``, ``>= 0``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000 section 2.5), Lemma A.11.
    """
    check_probability("p", p)
    check_int("n_clients", n_clients, low=2)
    return 0.0 if p == 1 else _walk_inverse_delay(p, n_clients)


def visit_quantile(T_unlearn: int, p: float, delta: float) -> int:
    """The ``(1 - delta/4)``-quantile of ``M_u ~ Bin(T_unlearn, p)`` (digest P21: exact, not Chernoff).

    Parameters
    ----------
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    p : float
        Probability that a hop visits ``u``, in ``[0, 1]``.
    delta : float
        Privacy parameter, in ``(0, 1)``; the quantile is taken at ``1 - delta/4``.

    Returns
    -------
    int
        The quantile, in ``[0, T_unlearn]``.

    References
    ----------
    .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), proof
       sketch of Theorem 5.1 (M_u ~ Binomial(T_u, p)) and Appendix C.5 (the Chernoff bound this exact quantile
       replaces).
    """
    check_int("T_unlearn", T_unlearn, low=1)
    check_probability("p", p)
    check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    return visit_count_bound(T_unlearn, p, delta / 4)


# ----------------------------------------------------------------------------------------------------------
# Linear-in-alpha RDP ``alpha K / sigma^2``: conversion and inversion (Prop. A.8, digest 3.4)
# ----------------------------------------------------------------------------------------------------------

def _linear_epsilon(K: float, sigma: float, delta_conv: float) -> float:
    """Epsilon of the curve ``alpha K / sigma^2`` at ``delta_conv`` (Lamri & Maniatakos Prop. A.8, i.e.
    Mironov 2017 Prop. 3, minimised over alpha in closed form; digest 3.4): ``rho = K/sigma^2``."""
    if sigma <= 0:
        return math.inf
    return linear_rdp_epsilon(K / sigma**2, delta_conv, method="mironov")


def _linear_sigma(K: float, epsilon: float, delta_conv: float) -> float:
    """Inverse of :func:`_linear_epsilon` in ``sigma``: ``sigma = sqrt(K / slope)`` with the largest slope
    that still gives ``(epsilon, delta_conv)`` (closed form, digest 3.4)."""
    return math.sqrt(K / linear_rdp_slope(epsilon, delta_conv, method="mironov"))


def _sgm_rdp(q: float, z: float, orders: np.ndarray = _ORDERS) -> np.ndarray:
    """One hop of accountant D: the Poisson-sampled Gaussian RDP (:func:`unlearnkit.privacy.subsampled_gaussian_rdp`)."""
    if q == 0:
        return np.zeros(len(orders))
    return subsampled_gaussian_rdp(q, z, orders)


def _validate(p: float, n_clients: int, T_unlearn: int, L: float, sens_factor: float, delta: float) -> None:
    check_probability("p", p)
    check_int("n_clients", n_clients, low=2)
    check_int("T_unlearn", T_unlearn, low=1)
    check_positive("L", L)
    check_positive("sens_factor", sens_factor)
    check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)


def _linear_K(accountant: str, *, p: float, n_clients: int, T_unlearn: int, L: float, sens_factor: float, delta: float,
              c: float = 1.0) -> float:
    """``K`` with RDP ``alpha K / sigma^2`` for accountants B and C."""
    Delta = sens_factor * L
    M = visit_quantile(T_unlearn, p, delta)
    if accountant == "C":
        return M * Delta**2 / 2
    # capped at 1: the view is post-processing of the per-visit releases, so the unamplified bound (C) always
    # holds too; the weak-convexity factor (1+c) E[1/K] exceeds 1 on small networks (N <= 3 or so)
    return min(1.0, (1 + c) * network_amplification(p, n_clients)) * M * Delta**2 / 2


def rrdu_epsilon(accountant: str, *, sigma: float, delta: float, n_clients: int, p: float, T_unlearn: int, L: float,
                 sens_factor: float = 2.0, C_A: float = 1.0) -> float:
    """The epsilon that ``accountant`` certifies for gradient-noise std ``sigma`` (see the module table).

    A: Cor. 5.2 eq. (18) with constant ``C_A``; B, C: App. C.5 / Prop. A.8 on the linear curve; D: the
    sampled-Gaussian RDP (Mironov, Talwar & Zhang 2019) converted by Prop. A.8.

    Parameters
    ----------
    accountant : {"A", "B", "C", "D"}
        Which accountant of the module table.
    sigma : float
        Gradient-noise std, ``>= 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    n_clients : int
        Number of clients ``N``, ``>= 2``.
    p : float
        Probability that a hop visits ``u``, in ``[0, 1]``.
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    L : float
        Per-example gradient clipping norm, ``> 0``.
    sens_factor : float, default 2.0
        Per-visit sensitivity ``Delta = sens_factor * L``, ``> 0``.
    C_A : float, default 1.0
        The free constant of accountant A.

    Returns
    -------
    float
        The epsilon; ``0.0`` when ``p == 0``, ``inf`` when ``sigma == 0``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000 section 3.4), Corollary 5.2,
    Appendix C.5, Proposition A.8; Mironov, Talwar & Zhang, "Renyi Differential Privacy of the Sampled Gaussian
    Mechanism" (2019).
    """
    check_choice("accountant", accountant, CLOSED_FORM_ACCOUNTANTS)
    _validate(p, n_clients, T_unlearn, L, sens_factor, delta)
    check_positive("sigma", sigma, allow_zero=True)
    if p == 0:
        return 0.0
    if sigma == 0:
        return math.inf
    if accountant == "A":
        return C_A * L / sigma * math.sqrt(p * T_unlearn * math.log(1 / delta) * math.log(n_clients) / n_clients)
    if accountant in ("B", "C"):
        K = _linear_K(accountant, p=p, n_clients=n_clients, T_unlearn=T_unlearn, L=L, sens_factor=sens_factor, delta=delta)
        return _linear_epsilon(K, sigma, delta / 2)
    rdp = T_unlearn * _sgm_rdp(p, sigma / (sens_factor * L), _ORDERS)
    # Prop. A.8 (Mironov's conversion), the one the paper uses
    return rdp_to_dp(_ORDERS, rdp, delta, method="mironov", warn_edge=False)[0]


def rrdu_sigma(accountant: str, *, epsilon: float, delta: float, n_clients: int, p: float, T_unlearn: int, L: float,
               sens_factor: float = 2.0, C_A: float = 1.0) -> float:
    """The gradient-noise std ``sigma`` that ``accountant`` needs for ``(epsilon, delta)``.

    Closed form for A, B, C (digest 3.4); bisection on a log scale for D. ``p = 0`` needs no noise.

    Parameters
    ----------
    accountant : {"A", "B", "C", "D"}
        Which accountant of the module table.
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    n_clients : int
        Number of clients ``N``, ``>= 2``.
    p : float
        Probability that a hop visits ``u``, in ``[0, 1]``.
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    L : float
        Per-example gradient clipping norm, ``> 0``.
    sens_factor : float, default 2.0
        Per-visit sensitivity ``Delta = sens_factor * L``, ``> 0``.
    C_A : float, default 1.0
        The free constant of accountant A.

    Returns
    -------
    float
        The gradient-noise std; ``0.0`` when ``p == 0``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000 section 3.4), Corollary 5.2,
    Appendix C.5, Proposition A.8.
    """
    check_choice("accountant", accountant, CLOSED_FORM_ACCOUNTANTS)
    _validate(p, n_clients, T_unlearn, L, sens_factor, delta)
    eps = check_positive("epsilon", epsilon)
    if p == 0:
        return 0.0
    if accountant == "A":
        return C_A * L / eps * math.sqrt(p * T_unlearn * math.log(1 / delta) * math.log(n_clients) / n_clients)
    if accountant in ("B", "C"):
        K = _linear_K(accountant, p=p, n_clients=n_clients, T_unlearn=T_unlearn, L=L, sens_factor=sens_factor, delta=delta)
        return _linear_sigma(K, eps, delta / 2)
    f = lambda s: rrdu_epsilon("D", sigma=s, delta=delta, n_clients=n_clients, p=p, T_unlearn=T_unlearn,  # noqa: E731
                               L=L, sens_factor=sens_factor)
    return calibrate_sigma(f, eps, sigma_hint=sens_factor * L, rtol=1e-7)


def rrdu_certify(accountant: str, *, sigma: float, delta: float, n_clients: int, p: float, T_unlearn: int, L: float,
                 sens_factor: float = 2.0, C_A: float = 1.0) -> Certificate:
    """A :class:`Certificate` for RR-DU run with noise ``sigma``, with the accountant's provenance
    (:func:`rrdu_epsilon`; ``mode="paper"`` for A, B, D; ``mode="none"`` with ``epsilon = inf`` for C, whose
    per-visit epsilon is kept as ``constants["epsilon_diagnostic"]``: it ignores the start-model gap and is
    refuted by the audit). None of them is ``certified``.

    Parameters
    ----------
    accountant : {"A", "B", "C", "D"}
        Which accountant of the module table.
    sigma : float
        Gradient-noise std of the run, ``>= 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    n_clients : int
        Number of clients ``N``, ``>= 2``.
    p : float
        Probability that a hop visits ``u``, in ``[0, 1]``.
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    L : float
        Per-example gradient clipping norm, ``> 0``.
    sens_factor : float, default 2.0
        Per-visit sensitivity factor.
    C_A : float, default 1.0
        The free constant of accountant A.

    Returns
    -------
    Certificate
        ``mode="paper"`` (A, B, D) or ``"none"`` (C), with the accountant's source, constants and note.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000 section 3.4), Corollary 5.2 and
    Appendix C.5.
    """
    eps = rrdu_epsilon(accountant, sigma=sigma, delta=delta, n_clients=n_clients, p=p, T_unlearn=T_unlearn, L=L,
                  sens_factor=sens_factor, C_A=C_A)
    constants = {"accountant": accountant, "N": n_clients, "p": p, "T_unlearn": T_unlearn, "L": L, "delta": delta}
    if accountant == "A":
        constants["C_A"] = C_A
    else:
        constants["sens_factor"] = sens_factor
        constants["M_quantile"] = visit_quantile(T_unlearn, p, delta)
    if accountant == "B":
        constants["E_inv_K"] = network_amplification(p, n_clients)
    mode = "paper"
    if accountant == "C":
        constants["epsilon_diagnostic"] = eps
        eps, mode = math.inf, "none"
    return Certificate(epsilon=eps, delta=delta, sigma=sigma,
                       mechanism="Gaussian noise on the corrective gradient at u, observed on client views",
                       source=_SOURCES[accountant], mode=mode, constants=constants, note=_NOTES[accountant])


# ----------------------------------------------------------------------------------------------------------
# DDP / NetDP baseline calibrations (digest 3.5, pitfall P6)
# ----------------------------------------------------------------------------------------------------------

def ddp_sigma(calibration: str, *, epsilon: float, delta: float, L: float, m: int = 1, T: int = 100,
              n_clients: int = 10, sens_factor: float = 2.0) -> float:
    """Per-hop gradient-noise std of the DDP baseline (every hop noisy).

    - ``"alg3"``: Algorithm 3 as printed, ``sigma^2 = 8 L^2 ln(1.25/delta)/eps^2`` (one Gaussian mechanism,
      no composition over T, no group factor m: *not* a guarantee for the walk; reproduces Figure 1).
    - ``"netdp_group_m"``: proof of Thm 3.5, step 3, ``m L/eps sqrt(T ln N ln(1/delta)/N)`` (constant 1).
    - ``"netdp_rdp"``: Lemma A.11 explicit: per visit ``(1+c) E[1/K] alpha (m Delta)^2/(2 sigma^2)`` with
      ``q = 1/N`` (uniform routing), over the visit quantile of Bin(T, 1/N) (amplification by iteration:
      needs convex smooth losses).
    - ``"group_sound"``: as ``netdp_rdp`` without amplification (sensitivity ``m Delta``: group privacy for
      a Gaussian mechanism, digest P14).

    Parameters
    ----------
    calibration : {"alg3", "netdp_group_m", "netdp_rdp", "group_sound"}
        Which formula (see above).
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    L : float
        Per-example gradient clipping norm, ``> 0``.
    m : int, default 1
        Group (forget-set) size, ``>= 1``.
    T : int, default 100
        Number of hops, ``>= 1``.
    n_clients : int, default 10
        Number of clients ``N``, ``>= 2``.
    sens_factor : float, default 2.0
        Per-visit sensitivity ``Delta = sens_factor * L`` (``"netdp_rdp"``, ``"group_sound"``).

    Returns
    -------
    float
        The per-hop gradient-noise std.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000 section 3.5), Algorithm 3,
    Theorem 3.5 and Lemma A.11.
    """
    check_choice("calibration", calibration, DDP_CALIBRATIONS)
    eps = check_positive("epsilon", epsilon)
    check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    check_positive("L", L)
    check_int("m", m, low=1)
    check_int("T", T, low=1)
    check_int("n_clients", n_clients, low=2)
    if calibration == "alg3":
        # Algorithm 3 as printed (the formula of unlearnkit.decentral.token.netdp_sigma, kept here torch-free)
        return math.sqrt(8.0 * L * L * math.log(1.25 / delta)) / eps
    if calibration == "netdp_group_m":
        return m * L / eps * math.sqrt(T * math.log(n_clients) * math.log(1 / delta) / n_clients)
    M = visit_quantile(T, 1.0 / n_clients, delta)
    K = M * (m * sens_factor * L) ** 2 / 2
    if calibration == "netdp_rdp":
        q = 1.0 / n_clients
        K *= 2 * q / (1 - q) * math.log(1 / q)
    return _linear_sigma(K, eps, delta / 2)


def ddp_certify(calibration: str, *, sigma: float, epsilon: float, delta: float, L: float, m: int, T: int,
                n_clients: int) -> Certificate:
    """The certificate the DDP baseline :class:`~.baselines.DDPWalk` claims under ``calibration`` (Prop. C.1:
    DP gives unlearning). **None holds** for that baseline: it continues the
    *noise-free* original model A(D) on D minus D_f and projects around A(D), so the accounting describes
    noisy steps on D_f that are never executed (and charges one step per visit where a visit makes
    ``local_steps`` noisy steps). The paper calibrations keep ``mode="paper"`` with a note that says so;
    ``"group_sound"`` (ours, refuted: audited epsilon >= 2.46 against 1) is ``mode="none"``, ``epsilon = inf``,
    the claimed value in ``constants["epsilon_diagnostic"]``.

    Parameters
    ----------
    calibration : {"alg3", "netdp_group_m", "netdp_rdp", "group_sound"}
        Which calibration the noise came from.
    sigma : float
        Per-hop gradient-noise std of the run.
    epsilon : float
        The target epsilon the calibration was run for.
    delta : float
        Privacy parameter.
    L : float
        Per-example gradient clipping norm.
    m : int
        Group (forget-set) size.
    T : int
        Number of hops.
    n_clients : int
        Number of clients ``N``.

    Returns
    -------
    Certificate
        ``mode="paper"`` with ``epsilon`` as given, or ``mode="none"`` with ``epsilon = inf`` for
        ``"group_sound"``; never ``certified``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000), Appendix B.2 and Proposition C.1.
    """
    check_choice("calibration", calibration, DDP_CALIBRATIONS)
    notes = {
        "alg3": "Algorithm 3's one-shot formula: no composition over hops, no group factor m",
        "netdp_group_m": "scaling of Thm 3.5's proof with constant 1 (group privacy linear in m)",
        "netdp_rdp": "amplification by iteration (Lemma A.11) needs convex smooth losses",
        "group_sound": ("NOT a certificate (refuted: audited epsilon >= 2.46 at 95% against the claimed "
                        "1): Gaussian group privacy per visit to u"),
    }
    gap = ("; does not hold for DDPWalk: the original model was trained without noise, so the noisy steps on D_f "
           "the accounting describes never ran (and a visit makes local_steps noisy steps, one is charged)")
    constants = {"L": L, "m": m, "T": T, "N": n_clients, "calibration": calibration}
    mode = "paper"
    if calibration == "group_sound":
        constants["epsilon_diagnostic"] = epsilon
        epsilon, mode = math.inf, "none"
    return Certificate(epsilon=epsilon, delta=delta, sigma=sigma, mechanism="noisy token SGD (network DP)",
                       source=f"Lamri & Maniatakos App. B.2 / C.1, calibration '{calibration}'",
                       mode=mode, constants=constants, note=notes[calibration] + gap)


# ----------------------------------------------------------------------------------------------------------
# Per-observer ledger of a realised walk
# ----------------------------------------------------------------------------------------------------------

@dataclass
class ObserverLedger:
    """Renyi budget of the *per-visit gradient part* of what each client observes along one realised RR-DU
    path: a diagnostic, not an unlearning guarantee. Like accountant C it ignores the
    start-model gap between A(D) and A(D minus D_f) (digest P15), which an observer that receives the token
    before u's first visit sees without noise; its epsilons are therefore no certificate for any observer.

    A noisy u-visit is charged to observer ``v`` when ``v`` next receives the token (that is when the
    released model reaches v's view). ``accountant="C"`` charges a Gaussian mechanism
    ``alpha Delta^2/(2 sigma^2)`` per visit; ``"B"`` multiplies it by ``min(1, (1+c)/K)`` where ``K`` is the
    number of hops the token took to reach ``v`` (the amplification-by-iteration weight whose mean is
    ``E[1/K]``; optimistic for RR-DU, digest P4). The charges go to a
    :class:`unlearnkit.privacy.RDPAccountant` with one ledger per client (``accountant``); ``weight[v]`` is
    the number of visit-equivalents charged to ``v``. The unlearning client ``u`` is not an adversary and
    has no entry (``nan``).
    """

    n_clients: int
    u: int
    sigma: float
    Delta: float
    accountant: str = "C"
    c: float = 1.0
    weight: np.ndarray = field(init=False)
    rdp_accountant: RDPAccountant = field(init=False)
    hop: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        check_choice("accountant", self.accountant, ("B", "C"))
        check_int("n_clients", self.n_clients, low=2)
        check_int("u", self.u, low=0, high=self.n_clients - 1)
        check_positive("sigma", self.sigma)
        check_positive("Delta", self.Delta)
        self.weight = np.zeros(self.n_clients)
        self.rdp_accountant = RDPAccountant(orders=_ORDERS)
        self._pending: list[list[int]] = [[] for _ in range(self.n_clients)]
        self._event = GaussianEvent(self.sigma, self.Delta)

    def record(self, node: int, noisy: bool) -> None:
        """Account for one hop that went to ``node`` (``noisy`` when it was a noisy u-step)."""
        self.hop += 1
        node = int(node)
        if node != self.u and self._pending[node]:
            if self.accountant == "C":
                k = len(self._pending[node])
                self.weight[node] += k
                self.rdp_accountant.compose(self._event, k, observer=node, why="noisy u-visits reach the view")
            else:
                per = self.Delta**2 / (2 * self.sigma**2)
                for t in self._pending[node]:
                    w = min(1.0, (1 + self.c) / (self.hop - t))
                    self.weight[node] += w
                    self.rdp_accountant.compose(LinearEvent(w * per, "amplified Gaussian"), observer=node,
                                                why=f"u-visit seen after {self.hop - t} hops")
            self._pending[node] = []
        if node == self.u and noisy:
            for v in range(self.n_clients):
                if v != self.u:
                    self._pending[v].append(self.hop)

    def epsilons(self, delta: float) -> np.ndarray:
        """Per-client epsilon at ``delta`` (Prop. A.8 over the accountant's orders); ``nan`` at ``u``."""
        out = np.array([self.rdp_accountant.epsilon(delta, "mironov", observer=v) for v in range(self.n_clients)])
        out[self.u] = np.nan
        return out

    def ledger(self, v: int) -> list[dict]:
        """Client ``v``'s ledger rows (what was charged, how often, why)."""
        return self.rdp_accountant.ledger(v)

    @classmethod
    def from_path(cls, path: Sequence[int], *, n_clients: int, u: int, sigma: float, Delta: float,
                  accountant: str = "C", noisy: bool = True) -> "ObserverLedger":
        led = cls(n_clients=n_clients, u=u, sigma=sigma, Delta=Delta, accountant=accountant)
        for v in path:
            led.record(int(v), noisy and v == u)
        return led
