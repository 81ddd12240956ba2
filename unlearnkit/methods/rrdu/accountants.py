"""RR-DU's accountants as objects with the same two operations, in one table (:data:`ACCOUNTANTS`).

Each accountant calibrates the u-step noise for the target ``(config.epsilon, config.delta)`` and reports the
certificate of a run with that noise:

- ``"A"`` .. ``"D"``: the closed-form accountants of :mod:`.certify` (:func:`~.certify.rrdu_sigma`,
  :func:`~.certify.rrdu_certify`), from a noise-free start; none is sound;
- ``"S"``: the sound accountant on a start trained by :class:`~.noisy.NoisyWalkTraining`, composed over the
  realised u-visits of the route (:func:`~.noisy_start.noisy_start_sigma`,
  :func:`~.noisy_start.noisy_start_certificate`);
- ``"M"``: the sound accountant averaged over the visit count ``Bin(T_unlearn, p)``, a-priori
  (:func:`~.noisy_start.mixture_start_sigma`, :func:`~.noisy_start.mixture_start_certificate`).

:class:`~.algorithm.RRDU` looks its accountant up here by ``RRDUConfig.accountant``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Optional, Protocol

import numpy as np

from ...core import NoisePoint, Plan
from ...privacy import Certificate
from .certify import CLOSED_FORM_ACCOUNTANTS, rrdu_certify, rrdu_sigma, visit_quantile
from .noisy_start import mixture_start_certificate, mixture_start_sigma, noisy_start_certificate, noisy_start_sigma
from .sound import rrdu_u_sensitivity
from .walk import WalkData


def _finite_L(config: Any) -> float:
    return 1.0 if config.clip_L == math.inf else float(config.clip_L)


class Accountant(Protocol):
    """What every RR-DU accountant offers.

    Attributes
    ----------
    name:
        Its key in :data:`ACCOUNTANTS` (``RRDUConfig.accountant``).
    noisy_start:
        Whether it needs (and covers) a start trained by :class:`~.noisy.NoisyWalkTraining`: its exact variant
        reads no D_f at u and needs neither clipping nor noise, and the run carries the sound per-observer ledger.
    any_routing:
        Whether its certificate holds for every routing (else only for the complete-graph routing).
    """

    name: str
    noisy_start: bool
    any_routing: bool

    def sigma(self, state: Any, data: Any, config: Any, p: float) -> float:
        """The u-step noise std that reaches ``(config.epsilon, config.delta)`` at routing probability ``p``."""
        ...

    def certificate(self, state: Any, data: Any, config: Any, sigma: float, p: float,
                    path: Optional[np.ndarray]) -> Certificate:
        """The certificate of a run with u-step noise ``sigma`` along ``path`` (``None``: the route is not yet
        drawn; an accountant that reads the route then reports its a-priori certificate and says so)."""
        ...


@dataclass(frozen=True)
class ClosedFormAccountant:
    """Accountants ``"A"`` .. ``"D"``: :func:`~.certify.rrdu_sigma` and :func:`~.certify.rrdu_certify`
    (the route is not read: the visit count enters through its law)."""

    name: str
    noisy_start: bool = False
    any_routing: bool = False

    def sigma(self, state: Any, data: Any, config: Any, p: float) -> float:
        return rrdu_sigma(self.name, epsilon=config.epsilon, delta=config.delta, n_clients=data.n_clients, p=p,
                          T_unlearn=config.T_unlearn, L=_finite_L(config), sens_factor=config.sens_factor,
                          C_A=config.C_A)

    def certificate(self, state: Any, data: Any, config: Any, sigma: float, p: float,
                    path: Optional[np.ndarray]) -> Certificate:
        return rrdu_certify(self.name, sigma=sigma, delta=config.delta, n_clients=data.n_clients, p=p,
                            T_unlearn=config.T_unlearn, L=_finite_L(config), sens_factor=config.sens_factor,
                            C_A=config.C_A)


@dataclass(frozen=True)
class NoisyStartAccountant:
    """Accountant ``"S"``: calibrated at the visit cap (the ``(1 - delta/4)``-quantile of the visit count),
    certified for the realised number of u-visits of ``path``; without a path, for the visit cap (a-priori)."""

    name: str = "S"
    noisy_start: bool = True
    any_routing: bool = True

    def sigma(self, state: Any, data: Any, config: Any, p: float) -> float:
        return noisy_start_sigma(state, data, config, p)

    def certificate(self, state: Any, data: Any, config: Any, sigma: float, p: float,
                    path: Optional[np.ndarray]) -> Certificate:
        if path is not None:
            return noisy_start_certificate(state, data, config, sigma, int(np.sum(np.asarray(path) == data.u)))
        cap = visit_quantile(config.T_unlearn, p, config.delta)
        cert = noisy_start_certificate(state, data, config, sigma, cap)
        return replace(cert, note=cert.note + f"; a-priori: the route is not drawn yet, so this is the certificate "
                       f"at the visit cap {cap} (the (1 - delta/4)-quantile of Bin(T_unlearn, p)); unlearn reports "
                       "the one of the realised route")


@dataclass(frozen=True)
class MixtureAccountant:
    """Accountant ``"M"``: the exact Gaussian composition averaged over ``Bin(T_unlearn, p)`` visits, a-priori
    (the route is not read; the visit law is the complete-graph routing's)."""

    name: str = "M"
    noisy_start: bool = True
    any_routing: bool = False

    def sigma(self, state: Any, data: Any, config: Any, p: float) -> float:
        return mixture_start_sigma(state, data, config, p)

    def certificate(self, state: Any, data: Any, config: Any, sigma: float, p: float,
                    path: Optional[np.ndarray]) -> Certificate:
        return mixture_start_certificate(state, data, config, sigma, p)


#: every RR-DU accountant by its ``RRDUConfig.accountant`` name
ACCOUNTANTS: dict[str, Accountant] = {
    **{name: ClosedFormAccountant(name) for name in CLOSED_FORM_ACCOUNTANTS},
    "S": NoisyStartAccountant(),
    "M": MixtureAccountant(),
}


def _reasons(config: Any, accountant: Accountant, sigma: float) -> list[str]:
    """Why a run with these settings is not certified whatever the accountant reports (empty: no reason)."""
    exact_start = accountant.noisy_start and config.variant == "exact"
    reasons = []
    if config.optimizer == "adam":
        reasons.append("Adam (the paper's experimental setting) is not covered by the SGD analysis")
    if config.clip_L == math.inf and not exact_start:
        reasons.append("no per-example clipping: the sensitivity is unbounded")
    if (not config.noise or sigma == 0) and not exact_start:
        reasons.append("no noise was added")
    if config.routing != "rrdu_complete" and not accountant.any_routing:
        reasons.append("the certificate is proved only for the complete-graph routing")
    return reasons


def rrdu_plan(state: Any, request: Any, config: Any, route: Optional[Any] = None) -> Plan:
    """RR-DU's certificate for ``request`` and its noise point ``"rrdu.u_step"``, before any hop.

    The u-step noise is ``config.sigma`` or the one ``ACCOUNTANTS[config.accountant]`` calibrates; the
    certificate is that accountant's for this noise, ``mode="none"`` (its note says why) with Adam, without
    clipping or noise, or with a routing the accountant does not cover.

    Parameters
    ----------
    state:
        Carries ``federation`` (and ``network`` for ``routing="walk_with_restart"``); ``request.client`` is u.
    request:
        Samples or a class of one client.
    config:
        :class:`~.algorithm.RRDUConfig`.
    route:
        The client of every hop when it is fixed in advance (``RRDU(route=...)``); ``None``: the route is drawn
        in ``unlearn``, and accountant ``"S"`` (which reads the realised u-visits) reports its a-priori
        certificate, at the visit cap.

    Returns
    -------
    Plan
        The certificate and one noise point, ``"rrdu.u_step"``: std the calibrated sigma, sensitivity the
        variant's per-visit bound (:func:`~.sound.rrdu_u_sensitivity`), count the u-visits of ``route`` (or, with
        no route, the visit cap).

    References
    ----------
    .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), Algorithm
       4 (the u-step noise), Theorem 5.1 with Corollary 5.2 (accountants "A" to "D") and Proposition A.8 (the RDP
       conversion).
    .. [2] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Corollaries 2.13 and
       3.3 (the exact Gaussian composition of accountants "S" and "M").
    """
    return accountant_plan(state, request, config, route)[0]


def accountant_plan(state: Any, request: Any, config: Any, route: Optional[Any] = None) -> tuple[Plan, Any, float]:
    """``(plan, walk data, p)`` of :func:`rrdu_plan`.

    :class:`~.algorithm.RRDU` reuses the walk data and ``p`` for the run, and calls it again with the realised
    route so that accountant ``"S"`` certifies the u-visits that happened.

    Parameters
    ----------
    state : TrainedState
        Carries ``federation`` (and ``network`` for ``routing="walk_with_restart"``); ``request.client`` is u.
    request : Request
        Samples or a class of one client.
    config : RRDUConfig
        The run's settings (:class:`~.algorithm.RRDUConfig`).
    route : array of int, optional
        The client of every hop when it is known; ``None``: accountant ``"S"`` reports its a-priori certificate
        and the noise point counts the visit cap (:func:`~.certify.visit_quantile`).

    Returns
    -------
    tuple of (Plan, WalkData, float)
        The plan of :func:`rrdu_plan`, the clients' indices split at u (:class:`~.walk.WalkData`) and the
        routing probability ``p`` (``config.p``, default ``1/N``).

    References
    ----------
    .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), Algorithm
       4 (the u-step noise, routing probability ``p``), Theorem 5.1 with Corollary 5.2 (accountants "A" to "D") and
       Proposition A.8 (the RDP conversion).
    .. [2] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Corollaries 2.13 and
       3.3 (the exact Gaussian composition of accountants "S" and "M").
    """
    data = WalkData.from_state(state, request)
    p = config.routing_p(data.n_clients)
    accountant = ACCOUNTANTS[config.accountant]
    sigma = config.sigma if config.sigma is not None else accountant.sigma(state, data, config, p)
    path = None if route is None else np.asarray(route)
    cert = accountant.certificate(state, data, config, sigma, p, path)
    reasons = _reasons(config, accountant, sigma)
    if reasons:
        cert = replace(cert, epsilon=math.inf, mode="none", note="; ".join(reasons) + f" (was: {cert.note})")
    sens = rrdu_u_sensitivity(config.variant, L=_finite_L(config), m=data.m, n_u=data.n_u)
    visits = int(np.sum(path == data.u)) if path is not None else visit_quantile(config.T_unlearn, p, config.delta)
    return Plan(cert, (NoisePoint("rrdu.u_step", sens, float(sigma), count=visits),)), data, p
