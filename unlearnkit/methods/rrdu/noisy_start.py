"""RR-DU's sound accountants ``"S"`` and ``"M"``: RR-DU run from a start trained by :class:`~.noisy.NoisyWalkTraining`.

The start-model gap (digest P15) is covered by the noisy training's guarantee; the corrective u-steps add the
variant's per-visit Gaussian RDP (threat model and proof sketch: :mod:`.sound`). A start without the
noisy-training record gets ``mode="none"``. ``"S"`` caps the visit count at its ``(1 - delta/4)``-quantile and
composes the plain Gaussians exactly at ``delta/2`` (GDP; ``RRDUConfig.composition="rdp"`` keeps the former Prop.
A.8 calibration as the comparison); ``"M"`` averages the exact Gaussian composition over the visit count
(:mod:`.mixture`), never looser.
"""

from __future__ import annotations

import math
from typing import Any

from ...privacy import Certificate
from .certify import visit_quantile
from .mixture import rrdu_mixture_certify, rrdu_mixture_sigma
from .noisy import training_rho
from .sound import rrdu_noisy_start_certify, rrdu_noisy_start_sigma, rrdu_u_sensitivity


def noisy_start_sigma(state: Any, data: Any, config: Any, p: float) -> float:
    """The RR-DU u-step noise that, with the training's Gaussian steps at ``u``, reaches ``(config.epsilon,
    config.delta)`` (the visit count at its ``(1 - delta/4)``-quantile, the composition read at ``delta/2``):
    :func:`.sound.rrdu_noisy_start_sigma` with ``config.composition`` (``"gaussian"``, the default: exact GDP
    composition, since the training's steps and the u-steps are plain Gaussians, none subsampled with
    amplification; ``"rdp"``: the former Prop. A.8 calibration, kept for comparison). ``0`` for the exact variant
    (its u-step reads no D_f); ``0`` too without a noisy-training record (the certificate is then ``none``).

    Parameters
    ----------
    state : TrainedState
        The trained model; its noisy-training record gives ``train_rho`` at ``u``.
    data : WalkData
        The walk's data split (``u``, ``m``, ``n_u``).
    config : RRDUConfig
        The run (``epsilon``, ``delta``, ``variant``, ``clip_L``, ``composition``, ``T_unlearn``).
    p : float
        Probability that a hop visits ``u``.

    Returns
    -------
    float
        The u-step noise std, ``>= 0``.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Corollaries 2.13 and
       3.3 (composition="gaussian").
    .. [2] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
       Proposition A.8 (composition="rdp") and Appendix C.5 (the visit count's quantile).
    """
    rho_t = training_rho(state, data.u)
    L = 1.0 if config.clip_L == math.inf else float(config.clip_L)
    sens = rrdu_u_sensitivity(config.variant, L=L, m=data.m, n_u=data.n_u)
    if rho_t is None or sens == 0:
        return 0.0
    return rrdu_noisy_start_sigma(epsilon=config.epsilon, delta=config.delta, train_rho=rho_t, sensitivity=sens,
                                  visit_cap=visit_quantile(config.T_unlearn, p, config.delta),
                                  composition=getattr(config, "composition", "gaussian"))


def noisy_start_certificate(state: Any, data: Any, config: Any, sigma: float, u_visits: int) -> Certificate:
    """Accountant ``"S"`` for the realised walk (``u_visits`` noisy visits to u).

    Parameters
    ----------
    state : TrainedState
        The trained model; its noisy-training record gives ``train_rho`` at ``u``.
    data : WalkData
        The walk's data split.
    config : RRDUConfig
        The run.
    sigma : float
        Noise std of the u-steps.
    u_visits : int
        Noisy visits to ``u`` on the realised walk.

    Returns
    -------
    Certificate
        :func:`.sound.rrdu_noisy_start_certify`'s certificate, or ``mode="none"`` with ``epsilon = inf`` without a
        noisy-training record.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Corollaries 2.13 and
       3.3 (composition="gaussian").
    .. [2] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
       Proposition A.8 (composition="rdp").
    """
    rho_t = training_rho(state, data.u)
    if rho_t is None:
        return Certificate(epsilon=math.inf, delta=config.delta, sigma=sigma, mode="none",
                           mechanism="RR-DU from a noise-free start",
                           source="accountant S needs a start trained by NoisyWalkTraining",
                           constants={"accountant": "S"},
                           note="no noisy-training record: the start-model gap (P15) is not covered")
    L = 1.0 if config.clip_L == math.inf else float(config.clip_L)
    return rrdu_noisy_start_certify(train_rho=rho_t, variant=config.variant, sigma=sigma if config.noise else 0.0,
                                    L=L, m=data.m, n_u=data.n_u, u_visits=u_visits, delta=config.delta)


def mixture_start_sigma(state: Any, data: Any, config: Any, p: float) -> float:
    """Accountant ``"M"``'s u-step noise: the smallest sigma at which the realised training (its Gaussian steps at
    ``u``, exactly ``sqrt(2 train_rho)``-GDP) composed with the u-visits, averaged over ``M_u ~ Bin(T_unlearn, p)``
    (:func:`.mixture.rrdu_mixture_sigma`, observer of every model), reaches ``(config.epsilon, config.delta)``.
    ``0`` for the exact variant (nothing of D_f is read) or without a noisy-training record (then ``none``).

    Parameters
    ----------
    state : TrainedState
        The trained model; its noisy-training record gives ``train_rho`` at ``u``.
    data : WalkData
        The walk's data split.
    config : RRDUConfig
        The run.
    p : float
        Probability that a hop visits ``u``.

    Returns
    -------
    float
        The u-step noise std, ``>= 0``.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Corollaries 2.13 and
       3.3.
    .. [2] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), proof
       sketch of Theorem 5.1 (M_u ~ Binomial(T_u, p)).
    """
    rho_t = training_rho(state, data.u)
    L = 1.0 if config.clip_L == math.inf else float(config.clip_L)
    sens = rrdu_u_sensitivity(config.variant, L=L, m=data.m, n_u=data.n_u)
    if rho_t is None or sens == 0:
        return 0.0
    return rrdu_mixture_sigma(epsilon=config.epsilon, delta=config.delta, T_unlearn=config.T_unlearn, p=p,
                              sensitivity=sens, train_rho=rho_t)


def mixture_start_certificate(state: Any, data: Any, config: Any, sigma: float, p: float) -> Certificate:
    """Accountant ``"M"``'s a-priori certificate (threat model: :mod:`.mixture`; the route must be drawn
    independently of the data, as RR-DU's complete-graph routing is). ``mode="none"`` without a noisy start.

    Parameters
    ----------
    state : TrainedState
        The trained model.
    data : WalkData
        The walk's data split.
    config : RRDUConfig
        The run.
    sigma : float
        Noise std of the u-steps.
    p : float
        Probability that a hop visits ``u``.

    Returns
    -------
    Certificate
        :func:`.mixture.rrdu_mixture_certify`'s certificate.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Corollaries 2.13 and
       3.3.
    .. [2] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), proof
       sketch of Theorem 5.1 (M_u ~ Binomial(T_u, p)).
    """
    rho_t = training_rho(state, data.u)
    L = 1.0 if config.clip_L == math.inf else float(config.clip_L)
    sens = rrdu_u_sensitivity(config.variant, L=L, m=data.m, n_u=data.n_u)
    return rrdu_mixture_certify(sigma=sigma if config.noise else 0.0, delta=config.delta, T_unlearn=config.T_unlearn,
                                p=p, sensitivity=sens, train_rho=rho_t)
