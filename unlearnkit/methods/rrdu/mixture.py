"""Accountant ``"M"``: RR-DU's per-visit Gaussian averaged over the random number of visits to ``u``
(beyond what the paper proves; :mod:`unlearnkit.privacy.mixture` holds the maths).

Threat model (where this bound is used)
---------------------------------------
- **What it covers.** The per-visit Gaussian mechanism at ``u`` (sensitivity ``Delta`` from the variant,
  :func:`.sound.rrdu_u_sensitivity`, noise ``sigma``), composed over the walk, *plus* a start-model gap that is
  covered separately as in accountant ``"S"`` (:mod:`.sound`): the start trained by
  :class:`~.noisy.NoisyWalkTraining`, whose Gaussian steps at ``u`` give RDP slope ``train_rho`` (exactly
  ``mu_start = sqrt(2 train_rho)``-GDP). Without that (``train_rho=None``) the number is a diagnostic of the
  per-visit part only (``mode="none"``, ``epsilon = inf``), like accountant C: the start gap (digest P15) is
  then uncovered and the audit refutes such numbers.
- **The observer** ``"every_model"``: sees every model the token carries after the request, the final one
  included, and may see the route. Its count is ``M_u ~ Bin(T_unlearn, p)``. ``"own_visits"``: an observer
  ``v != u`` that sees only the models it receives and not the final model; its count is the number of
  u-visits before its last receipt of the token (:func:`observer_visit_pmf`). If the final model is published,
  use ``"every_model"``.
- **What must hold.** The route (hence the count) is drawn independently of the data with the same law in both
  worlds (RR-DU's complete-graph routing, :func:`unlearnkit.graphs.walks.rrdu_route`, is). It need not be
  hidden: for the joint output (route, view) the hockey-stick divergence is exactly the average over routes,
  and hiding the route only lowers it. The guarantee is a-priori, over the route's randomness: on one
  unusually long realised walk the conditional loss is larger (the capped accountants pay that tail in delta
  too). A route chosen from the data, or a walk that stops on a data-dependent rule, breaks the bound.
- **Compared with the capped composition** (as accountants B/C/S: the count at its ``(1 - delta/4)``-quantile;
  here converted at the remaining ``3 delta/4``, kinder than their ``delta/2``), the mixture is never looser (:func:`accountant_comparison`). At
  ``T_unlearn = 100, p = 0.25, Delta/sigma = 0.2, delta = 1e-5``: capped RDP 7.51, capped exact Gaussian 6.35,
  mixture 4.67.

Pure maths: numpy, scipy and :mod:`unlearnkit.privacy`.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..._validate import check_choice, check_int, check_positive, check_probability, check_range
from ...privacy import Certificate, mixture_epsilon
from ...privacy.mixture import capped_epsilon, mixture_sigma


OBSERVERS = ("every_model", "own_visits")


def rrdu_visit_pmf(T_unlearn: int, p: float) -> np.ndarray:
    """``P(M_u = k)``, ``M_u ~ Bin(T_unlearn, p)``: the u-visits an observer of every model sees (k = 0..T).

    Parameters
    ----------
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    p : float
        Probability that a hop visits ``u``, in ``[0, 1]``.

    Returns
    -------
    numpy.ndarray
        Float array of length ``T_unlearn + 1`` summing to 1.

    References
    ----------
    .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), proof
       sketch of Theorem 5.1: the sensitive visits M_u ~ Binomial(T_u, p) of Algorithm 4's routing.
    """
    check_int("T_unlearn", T_unlearn, low=1)
    check_probability("p", p)
    from scipy import stats  # here, not at the top: scipy.stats costs about a second to import

    return stats.binom.pmf(np.arange(T_unlearn + 1), T_unlearn, p)


def observer_visit_pmf(T_unlearn: int, p: float, n_clients: int) -> np.ndarray:
    """``P(K_v = k)`` for an observer ``v`` that sees only the models it receives (RR-DU routing: i.i.d. hops,
    ``u`` w.p. ``p``, ``v`` w.p. ``q = (1-p)/(N-1)``). With ``J`` the last hop at ``v``:
    ``P(J = j) = q (1-q)^(T-j)`` and ``K_v | J = j ~ Bin(j - 1, p)`` (the hops before ``j`` are unconstrained);
    ``K_v = 0`` when ``v`` never receives the token.

    Parameters
    ----------
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    p : float
        Probability that a hop visits ``u``, in ``[0, 1]``.
    n_clients : int
        Number of clients ``N``, ``>= 2``.

    Returns
    -------
    numpy.ndarray
        Float array of length ``T_unlearn + 1``: ``P(K_v = k)`` for ``k = 0..T_unlearn``.

    References
    ----------
    .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), Section
       4.3 (the routing: u w.p. p, else uniform, so an observer v is hit w.p. q = (1 - p)/(N - 1)) and proof sketch of
       Theorem 5.1; the law of K_v is derived here.
    """
    check_int("T_unlearn", T_unlearn, low=1)
    check_probability("p", p)
    check_int("n_clients", n_clients, low=2)
    from scipy import stats  # deferred: imports scipy.stats

    q = (1 - p) / (n_clients - 1)
    ks = np.arange(T_unlearn + 1)
    out = np.zeros(T_unlearn + 1)
    out[0] = (1 - q) ** T_unlearn
    for j in range(1, T_unlearn + 1):
        out += q * (1 - q) ** (T_unlearn - j) * stats.binom.pmf(ks, j - 1, p)
    return out


def _pmf(observer: str, T_unlearn: int, p: float, n_clients: Optional[int]) -> np.ndarray:
    check_choice("observer", observer, OBSERVERS)
    if observer == "every_model":
        return rrdu_visit_pmf(T_unlearn, p)
    if n_clients is None:
        raise ValueError("observer='own_visits' needs n_clients (an integer >= 2)")
    return observer_visit_pmf(T_unlearn, p, n_clients)


def _mu_start(train_rho: Optional[float]) -> float:
    if train_rho is None:
        return 0.0
    return math.sqrt(2 * check_positive("train_rho", train_rho, allow_zero=True))


def rrdu_mixture_epsilon(*, sigma: float, delta: float, T_unlearn: int, p: float, sensitivity: float,
                         train_rho: Optional[float] = None, observer: str = "every_model",
                         n_clients: Optional[int] = None) -> float:
    """Epsilon of accountant ``"M"``: ``sum_k P(K = k) delta_{mu_k}(eps) <= delta`` with
    ``mu_k^2 = 2 train_rho + k (sensitivity/sigma)^2`` (module threat model).

    Parameters
    ----------
    sigma : float
        Noise std of the u-steps.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    p : float
        Probability that a hop visits ``u``, in ``[0, 1]``.
    sensitivity : float
        Sensitivity of one u-step (:func:`.sound.rrdu_u_sensitivity`), ``>= 0``.
    train_rho : float, optional
        RDP slope of the noisy training at ``u``; ``None`` counts no start gap (per-visit part only).
    observer : {"every_model", "own_visits"}, default "every_model"
        Which observer's visit count (module threat model).
    n_clients : int, optional
        Number of clients; required for ``observer="own_visits"``.

    Returns
    -------
    float
        The epsilon at ``delta``.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Corollary 3.3 (mu_k)
       and Corollary 2.13 (the profile delta_mu(eps)).
    .. [2] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and
       Optimal Denoising", ICML 2018, Theorem 8.
    .. [3] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), proof
       sketch of Theorem 5.1 (the visit count averaged over).
    """
    check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    check_positive("sigma", sigma, allow_zero=True)
    check_positive("sensitivity", sensitivity, allow_zero=True)
    pmf = _pmf(observer, T_unlearn, p, n_clients)
    step = 0.0 if sensitivity == 0 else (math.inf if sigma == 0 else sensitivity / sigma)
    return mixture_epsilon(delta, pmf, step, mu_base=_mu_start(train_rho))


def rrdu_mixture_sigma(*, epsilon: float, delta: float, T_unlearn: int, p: float, sensitivity: float,
                       train_rho: Optional[float] = None, observer: str = "every_model",
                       n_clients: Optional[int] = None) -> float:
    """The smallest u-step noise for ``(epsilon, delta)`` under accountant ``"M"`` (bracketed root finding,
    :func:`unlearnkit.privacy.mixture_sigma`); ``0`` for a zero sensitivity (the exact variant).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    p : float
        Probability that a hop visits ``u``, in ``[0, 1]``.
    sensitivity : float
        Sensitivity of one u-step, ``>= 0``.
    train_rho : float, optional
        RDP slope of the noisy training at ``u``; ``None`` counts no start gap.
    observer : {"every_model", "own_visits"}, default "every_model"
        Which observer's visit count.
    n_clients : int, optional
        Number of clients; required for ``observer="own_visits"``.

    Returns
    -------
    float
        The u-step noise std; ``0.0`` for a zero sensitivity.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Corollaries 2.13 and
       3.3 (the profile inverted here in sigma).
    .. [2] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), proof
       sketch of Theorem 5.1 (the visit count averaged over).
    """
    check_positive("epsilon", epsilon)
    check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    check_positive("sensitivity", sensitivity, allow_zero=True)
    if sensitivity == 0:
        return 0.0
    pmf = _pmf(observer, T_unlearn, p, n_clients)
    return mixture_sigma(epsilon, delta, pmf, sensitivity, mu_base=_mu_start(train_rho))


def rrdu_mixture_certify(*, sigma: float, delta: float, T_unlearn: int, p: float, sensitivity: float,
                         train_rho: Optional[float] = None, observer: str = "every_model",
                         n_clients: Optional[int] = None) -> Certificate:
    """A-priori certificate of accountant ``"M"``: ``mode="sound"`` when the start is covered (``train_rho``
    from :func:`.sound.noisy_walk_rho`), else ``mode="none"`` with the per-visit number in
    ``constants["epsilon_diagnostic"]``.

    Parameters
    ----------
    sigma : float
        Noise std of the u-steps.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    p : float
        Probability that a hop visits ``u``, in ``[0, 1]``.
    sensitivity : float
        Sensitivity of one u-step, ``>= 0``.
    train_rho : float, optional
        RDP slope of the noisy training at ``u``; ``None`` gives ``mode="none"``.
    observer : {"every_model", "own_visits"}, default "every_model"
        Which observer's visit count.
    n_clients : int, optional
        Number of clients; required for ``observer="own_visits"``.

    Returns
    -------
    Certificate
        Accountant ``"M"``'s certificate.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Corollaries 2.13 and
       3.3.
    .. [2] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), Theorem
       5.1 (the certificate this one replaces for a noisy start).
    """
    eps = rrdu_mixture_epsilon(sigma=sigma, delta=delta, T_unlearn=T_unlearn, p=p, sensitivity=sensitivity,
                               train_rho=train_rho, observer=observer, n_clients=n_clients)
    constants = {"accountant": "M", "T_unlearn": T_unlearn, "p": p, "sensitivity_u": sensitivity,
                 "train_rho": train_rho, "observer": observer, "N": n_clients}
    mode, note = "sound", ("route independent of the data (visible or not); start covered by the noisy training; "
                           "a-priori over the route's randomness (threat model: methods.rrdu.mixture)")
    if train_rho is None:
        constants["epsilon_diagnostic"] = eps
        eps, mode = math.inf, "none"
        note = "per-visit part only: the start-model gap (P15) is not covered without a noisily trained start"
    return Certificate(epsilon=eps, delta=delta, sigma=sigma, mode=mode, constants=constants, note=note,
                       mechanism="Gaussian u-steps of RR-DU, composed over a data-independent random visit count",
                       source=("joint convexity of the hockey-stick divergence over the visit count, exact GDP "
                               "composition (Dong, Roth & Su 2022, Cor. 3.3); not in Lamri & Maniatakos"))


def accountant_comparison(*, sigma: float, delta: float, T_unlearn: int, p: float, sensitivity: float,
                          train_rho: float = 0.0) -> dict:
    """Epsilon of the same walk under the capped RDP accounting (B/C/S style: ``(1 - delta/4)``-quantile,
    Prop. A.8 at the remaining delta), the capped exact Gaussian, and the mixture (every-model observer).

    Parameters
    ----------
    sigma : float
        Noise std of the u-steps, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    T_unlearn : int
        Number of unlearning hops, ``>= 1``.
    p : float
        Probability that a hop visits ``u``, in ``[0, 1]``.
    sensitivity : float
        Sensitivity of one u-step, ``>= 0``.
    train_rho : float, default 0.0
        RDP slope of the noisy training at ``u``.

    Returns
    -------
    dict
        ``{"capped_rdp": ..., "capped_gaussian": ..., "mixture": ...}``, each a float epsilon at ``delta``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000), Proposition A.8.
    """
    pmf = rrdu_visit_pmf(T_unlearn, p)
    step = sensitivity / check_positive("sigma", sigma)
    base = _mu_start(train_rho)
    kw = dict(tail_delta=delta / 4, mu_base=base)
    return {"capped_rdp": capped_epsilon(delta, pmf, step, conversion="rdp", **kw),
            "capped_gaussian": capped_epsilon(delta, pmf, step, conversion="gaussian", **kw),
            "mixture": mixture_epsilon(delta, pmf, step, mu_base=base)}
