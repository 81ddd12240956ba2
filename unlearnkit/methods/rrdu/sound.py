"""Sound certificates for the token walk: noisy training (the DDP baseline done right) and RR-DU on top of it.

Threat model
-------------------------------------
- **What is certified.** Certified unlearning of a deletion request ``D_f`` of client ``u`` (any subset of
  u's data ``D_u``, up to all but one point): the view of an honest-but-curious observer after the request
  under ``U(D_f, A(D))`` is ``(epsilon, delta)``-indistinguishable from its view under the certifier
  ``U(empty, A(D minus D_f))``, the same procedure run on the data without ``D_f``.
- **The observer** is the strongest single one: it sees *every* model the token carries after the request
  (and it may know the route). Accounting for this observer covers any client's partial view.
- **What the bound needs.** (i) The original model is trained by :class:`~.noisy.NoisyWalkTraining`: every
  local step at every client adds fresh ``N(0, sigma_train^2 I)`` to the mean of per-example gradients
  clipped at ``L`` (the regulariser is data-independent), then projects; so each step at ``u`` is a Gaussian
  mechanism of sensitivity ``2 L`` for *any* change of u's data (client-level: no group factor ``m``, the
  bound holds for every ``D_f`` inside ``D_u``). Minibatches drawn with replacement are covered: the step is a
  mixture of Gaussians whose centres lie within ``2 L`` of each other, and Renyi divergence is jointly
  quasi-convex. Steps at other clients do not read ``D_u``: they are post-processing. (ii) The route is drawn
  independently of the data; the certificate counts the noisy steps at ``u`` of the realised route
  (``hops`` visits times ``local_steps`` steps each, all of them). The a-priori calibration uses the
  ``(1 - delta/4)``-quantile of ``Bin(hops, 1/N)`` and converts at ``delta/2``.
- **DDP "unlearning"** is then post-processing: doing nothing, or continuing the noisy walk on ``D minus
  D_f`` (the same map in both worlds), keeps the training's guarantee (Prop. C.1 of the paper, applied to a
  training that really is private).
- **RR-DU on a noisily trained start** (:func:`rrdu_noisy_start_certify`): the start-model gap (digest P15)
  is the training's guarantee; the RR-DU u-steps add ``alpha Delta_u^2 / (2 sigma^2)`` per visit with the
  variant's sensitivity against the certifier's empty request: ``0`` for ``"exact"`` (both worlds descend on
  ``D_u minus D_f``: the same map), ``(m/n_u) L`` for ``"lightweight"`` (the certifier's ascent weight is
  ``0``), ``(2 + m/n_u) L`` for ``"corrected"``. All noisy steps compose adaptively (the trust-ball centre
  and every later step are post-processing of released values). Every one of them is a *plain* Gaussian, so the
  composition is exactly ``mu``-GDP with ``mu^2 = 2 rho`` (``rho`` the RDP slope; Dong, Roth & Su 2022,
  Cor. 3.3) and is read with :func:`unlearnkit.privacy.gaussian_composition_epsilon` (``composition=
  "gaussian"``, the default); ``composition="rdp"`` keeps the former Prop. A.8 conversion (Mironov 2017),
  17 % looser at ``mu = 1, delta = 1e-5`` (:func:`unlearnkit.privacy.composition_saving_table`).
- **Not covered.** A start model trained without noise (RR-DU's accountants A-D and the DDP calibrations of
  :mod:`.certify` are refuted exactly there); Adam with a noise-free start; observers that saw the training
  itself (nothing can be forgotten from what was already seen).

Pure maths: numpy/scipy/:mod:`unlearnkit.privacy` only (no torch).
"""

from __future__ import annotations

import math

from ..._validate import check_choice, check_int, check_positive, check_range
from ...privacy import Certificate, analytic_gaussian_sigma, gaussian_composition_epsilon
from ...privacy.amplification import visit_count_bound
from ...privacy.linear_rdp import linear_rdp_epsilon, linear_rdp_slope


_VARIANTS = ("exact", "lightweight", "corrected")
_COMPOSITIONS = ("gaussian", "rdp")


def _rho_epsilon(rho: float, delta: float, composition: str) -> float:
    """Epsilon at ``delta`` of Gaussian steps with total RDP slope ``rho``: exact GDP (``mu = sqrt(2 rho)``)
    or Prop. A.8 on ``alpha rho`` (``composition="rdp"``)."""
    check_choice("composition", composition, _COMPOSITIONS)
    if rho == 0:
        return 0.0
    if math.isinf(rho):
        return math.inf
    if composition == "gaussian":
        return gaussian_composition_epsilon([math.sqrt(2 * rho)], delta)
    return linear_rdp_epsilon(rho, delta, method="mironov")


def noisy_walk_rho(*, sigma: float, L: float, u_steps: int) -> float:
    """RDP slope ``rho`` (RDP ``alpha rho``) of ``u_steps`` Gaussian steps of sensitivity ``2 L`` and std ``sigma``:
    ``rho = u_steps (2 L)^2 / (2 sigma^2)``.

    Parameters
    ----------
    sigma : float
        Noise std per step, ``>= 0``.
    L : float
        Per-example gradient clipping norm, ``> 0``.
    u_steps : int
        Number of noisy steps at ``u``, ``>= 0``.

    Returns
    -------
    float
        ``rho``; ``0.0`` for no steps, ``inf`` for ``sigma == 0`` with steps.

    References
    ----------
    .. [1] I. Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 7 (Gaussian RDP alpha Delta^2/(2 sigma^2))
       and Proposition 1 (composition).
    """
    check_positive("L", L)
    check_int("u_steps", u_steps, low=0)
    check_positive("sigma", sigma, allow_zero=True)
    if u_steps == 0:
        return 0.0
    return math.inf if sigma == 0 else u_steps * (2 * L) ** 2 / (2 * sigma**2)


def noisy_walk_epsilon(*, sigma: float, L: float, u_steps: int, delta: float, composition: str = "gaussian") -> float:
    """Client-level epsilon at ``delta`` of a noisy walk that made ``u_steps`` noisy steps at ``u`` (exact GDP;
    ``composition="rdp"``: Prop. A.8).

    Parameters
    ----------
    sigma : float
        Noise std per step, ``>= 0``.
    L : float
        Per-example gradient clipping norm, ``> 0``.
    u_steps : int
        Number of noisy steps at ``u``, ``>= 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    composition : {"gaussian", "rdp"}, default "gaussian"
        Exact GDP reading or the RDP conversion.

    Returns
    -------
    float
        The client-level epsilon (``0.0`` for no steps, ``inf`` for ``sigma == 0`` with steps).

    References
    ----------
    Dong, Roth & Su, "Gaussian Differential Privacy" (JRSS-B 2022), Corollary 3.3; Lamri & Maniatakos (digest
    000), Proposition A.8.
    """
    check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    return _rho_epsilon(noisy_walk_rho(sigma=sigma, L=L, u_steps=u_steps), delta, composition)


def noisy_walk_sigma(*, epsilon: float, delta: float, L: float, hops: int, n_clients: int, local_steps: int = 1,
                     composition: str = "gaussian") -> float:
    """A-priori ``sigma_train`` for ``(epsilon, delta)``: every one of the ``local_steps`` steps of each of the
    ``(1 - delta/4)``-quantile of ``Bin(hops, 1/N)`` visits to ``u`` is charged, converted at ``delta/2``
    (exact GDP: ``sigma = sqrt(steps) 2 L sigma_1`` with ``sigma_1`` the analytic Gaussian sigma of one unit
    step; ``composition="rdp"``: Prop. A.8).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    L : float
        Per-example gradient clipping norm, ``> 0``.
    hops : int
        Number of hops of the walk, ``>= 1``.
    n_clients : int
        Number of clients ``N``, ``>= 2``.
    local_steps : int, default 1
        Noisy steps per visit, ``>= 1``.
    composition : {"gaussian", "rdp"}, default "gaussian"
        Exact GDP calibration or the RDP one.

    Returns
    -------
    float
        The per-step training noise std ``sigma_train``.

    References
    ----------
    Dong, Roth & Su, "Gaussian Differential Privacy" (JRSS-B 2022), Corollary 3.3; Lamri & Maniatakos (digest
    000), Proposition A.8.
    """
    check_choice("composition", composition, _COMPOSITIONS)
    check_positive("epsilon", epsilon)
    check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    check_positive("L", L)
    check_int("hops", hops, low=1)
    check_int("n_clients", n_clients, low=2)
    check_int("local_steps", local_steps, low=1)
    steps = local_steps * visit_count_bound(hops, 1.0 / n_clients, delta / 4)
    if composition == "gaussian":
        return math.sqrt(steps) * 2 * L * analytic_gaussian_sigma(epsilon, delta / 2)
    return math.sqrt(steps * (2 * L) ** 2 / 2 / linear_rdp_slope(epsilon, delta / 2, method="mironov"))


def noisy_walk_certify(*, sigma: float, L: float, u_steps: int, delta: float, hops: int, local_steps: int,
                       n_clients: int) -> Certificate:
    """The sound certificate of a noisy walk for client ``u``'s data (see the module's threat model).

    Parameters
    ----------
    sigma : float
        Noise std per step of the training walk.
    L : float
        Per-example gradient clipping norm, ``> 0``.
    u_steps : int
        Noisy steps made at ``u`` on the realised route, ``>= 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    hops : int
        Number of hops (recorded in the constants).
    local_steps : int
        Noisy steps per visit (recorded in the constants).
    n_clients : int
        Number of clients (recorded in the constants).

    Returns
    -------
    Certificate
        ``mode="sound"``, with the exact-GDP epsilon of :func:`noisy_walk_epsilon`.

    References
    ----------
    Dong, Roth & Su, "Gaussian Differential Privacy" (JRSS-B 2022), Corollary 3.3.
    """
    eps = noisy_walk_epsilon(sigma=sigma, L=L, u_steps=u_steps, delta=delta)
    return Certificate(epsilon=eps, delta=delta, sigma=sigma, mode="sound",
                       mechanism="noisy token SGD: Gaussian on every clipped local step (client-level, sensitivity 2L)",
                       source="Gaussian steps at u composed exactly (GDP, Dong, Roth & Su 2022 Cor. 3.3)",
                       constants={"L": L, "u_steps": u_steps, "hops": hops, "local_steps": local_steps,
                                  "N": n_clients, "sensitivity": 2 * L},
                       note=("training's own guarantee for any D_f inside D_u; deletion = post-processing (nothing, "
                             "or the noisy walk continued on D minus D_f); observer sees every model after the request"))


def rrdu_u_sensitivity(variant: str, *, L: float, m: int, n_u: int) -> float:
    """Sensitivity of RR-DU's corrective step at ``u`` against the certifier's empty request (module docstring).

    Parameters
    ----------
    variant : {"exact", "lightweight", "corrected"}
        The RR-DU variant.
    L : float
        Per-example gradient clipping norm, ``> 0``.
    m : int
        Number of deleted points at ``u``, ``0 <= m <= n_u``.
    n_u : int
        Number of points at ``u``, ``>= 1``.

    Returns
    -------
    float
        ``0`` (exact), ``(m/n_u) L`` (lightweight) or ``(2 + m/n_u) L`` (corrected).

    References
    ----------
    .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), Algorithm
       4 and eq. (12) (the u-step in its lightweight and exact modes); the sensitivity against the certifier's empty
       request is derived here.
    """
    check_choice("variant", variant, _VARIANTS)
    check_positive("L", L)
    check_int("n_u", n_u, low=1)
    check_int("m", m, low=0, high=n_u)
    r = m / n_u
    return {"exact": 0.0, "lightweight": r * L, "corrected": (2 + r) * L}[variant]


def rrdu_noisy_start_certify(*, train_rho: float, variant: str, sigma: float, L: float, m: int, n_u: int,
                             u_visits: int, delta: float, composition: str = "gaussian") -> Certificate:
    """RR-DU run from a noisily trained start (the sound accountant ``"S"``): the training's RDP slope
    ``train_rho`` (:func:`noisy_walk_rho`) plus ``u_visits`` Gaussian u-steps of the variant's sensitivity.

    Parameters
    ----------
    train_rho : float
        RDP slope of the noisy training at ``u`` (from :func:`noisy_walk_rho`), ``>= 0``.
    variant : {"exact", "lightweight", "corrected"}
        The RR-DU variant; sets the u-step sensitivity (:func:`rrdu_u_sensitivity`).
    sigma : float
        Noise std of the corrective u-steps, ``>= 0``.
    L : float
        Per-example gradient clipping norm, ``> 0``.
    m : int
        Number of deleted points at ``u``, ``0 <= m <= n_u``.
    n_u : int
        Number of points at ``u``, ``>= 1``.
    u_visits : int
        Noisy u-steps made, ``>= 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    composition : {"gaussian", "rdp"}, default "gaussian"
        Exact GDP reading or the RDP conversion.

    Returns
    -------
    Certificate
        ``mode="sound"``, accountant ``"S"``, with both slopes in its constants.

    References
    ----------
    Dong, Roth & Su, "Gaussian Differential Privacy" (JRSS-B 2022), Corollary 3.3; Lamri & Maniatakos (digest
    000), Proposition A.8.
    """
    check_positive("train_rho", train_rho, allow_zero=True)
    check_int("u_visits", u_visits, low=0)
    check_positive("sigma", sigma, allow_zero=True)
    sens = rrdu_u_sensitivity(variant, L=L, m=m, n_u=n_u)
    if sens == 0 or u_visits == 0:
        rho_u = 0.0
    else:
        rho_u = math.inf if sigma == 0 else u_visits * sens**2 / (2 * sigma**2)
    rho = train_rho + rho_u  # train_rho must come from plain Gaussian steps (noisy_walk_rho) for the GDP reading
    eps = _rho_epsilon(rho, delta, composition)
    return Certificate(epsilon=eps, delta=delta, sigma=sigma, mode="sound",
                       mechanism="RR-DU from a noisily trained start: training + corrective u-steps, composed",
                       source=("adaptive composition of plain Gaussians (training at u, RR-DU u-visits): "
                               + ("exact GDP, mu^2 = 2 rho" if composition == "gaussian" else "RDP, Prop. A.8")),
                       constants={"accountant": "S", "train_rho": train_rho, "u_rho": rho_u, "variant": variant,
                                  "sensitivity_u": sens, "u_visits": u_visits, "L": L, "m": m, "n_u": n_u},
                       note="start-model gap covered by the noisy training's guarantee (threat model: methods.rrdu.sound)")


def rrdu_noisy_start_sigma(*, epsilon: float, delta: float, train_rho: float, sensitivity: float, visit_cap: int,
                           composition: str = "gaussian") -> float:
    """Accountant ``"S"``'s a-priori u-step noise: the smallest ``sigma`` at which the training (RDP slope
    ``train_rho``) composed with ``visit_cap`` u-steps of ``sensitivity`` reaches ``epsilon`` at ``delta/2``
    (the other ``delta/4`` pays for the visit count exceeding its quantile ``visit_cap``).

    Every step is a plain Gaussian (no subsampling amplification is claimed: a minibatch step is a mixture of
    Gaussians whose centres lie within the sensitivity, dominated by one Gaussian; module threat model), so
    the composition is exactly ``mu``-GDP (Dong, Roth & Su 2022, Cor. 3.3):

    ``composition="gaussian"`` (default, exact): with ``mu_eps = 1 / analytic_gaussian_sigma(epsilon, delta/2)``
    the GDP parameter that meets ``(epsilon, delta/2)`` (Balle & Wang 2018),
    ``mu_eps^2 = 2 train_rho + visit_cap (sensitivity / sigma)^2``, so
    ``sigma = sensitivity sqrt(visit_cap / (mu_eps^2 - 2 train_rho))`` in closed form.

    ``composition="rdp"`` (the former calibration, kept as the comparison): Prop. A.8 (Mironov 2017), the
    slope ``rho_eps`` of ``(epsilon, delta/2)`` shared as ``rho_eps = train_rho + visit_cap sensitivity^2 /
    (2 sigma^2)``. The exact sigma is never larger (the RDP conversion is never tighter than the exact profile).

    Returns ``0`` for a zero sensitivity or cap (nothing of D_f is read at u). Raises ``ValueError`` when the
    training alone already spends the budget.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    train_rho : float
        RDP slope of the noisy training, ``>= 0``.
    sensitivity : float
        Sensitivity of one u-step, ``>= 0``.
    visit_cap : int
        Number of u-steps charged, ``>= 0``.
    composition : {"gaussian", "rdp"}, default "gaussian"
        Exact GDP calibration or the RDP one.

    Returns
    -------
    float
        The u-step noise std, ``0.0`` for a zero sensitivity or cap.

    Raises
    ------
    ValueError
        When the training alone spends the budget.

    References
    ----------
    Dong, Roth & Su, "Gaussian Differential Privacy" (JRSS-B 2022), Corollary 3.3; Balle & Wang, "Improving the
    Gaussian Mechanism for Differential Privacy" (ICML 2018); Mironov, "Renyi Differential Privacy" (CSF 2017).
    """
    check_choice("composition", composition, _COMPOSITIONS)
    check_positive("epsilon", epsilon)
    check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    check_positive("train_rho", train_rho, allow_zero=True)
    check_positive("sensitivity", sensitivity, allow_zero=True)
    check_int("visit_cap", visit_cap, low=0)
    if sensitivity == 0 or visit_cap == 0:
        return 0.0
    if composition == "gaussian":
        left = analytic_gaussian_sigma(epsilon, delta / 2) ** -2 - 2 * train_rho  # mu^2 left for the u-steps
        return _left_sigma(left, epsilon, train_rho, "mu^2", sensitivity * math.sqrt(visit_cap))
    left = linear_rdp_slope(epsilon, delta / 2, method="mironov") - train_rho  # RDP slope left for the u-steps
    return _left_sigma(left, epsilon, train_rho, "RDP slope", sensitivity * math.sqrt(visit_cap / 2))


def _left_sigma(left: float, epsilon: float, train_rho: float, what: str, scale: float) -> float:
    if left <= 0:
        raise ValueError(f"epsilon={epsilon} is out of range: the noisy training alone (RDP slope {train_rho:.4g}) "
                         f"already spends the {what} of (epsilon, delta/2); expected a larger epsilon")
    return scale / math.sqrt(left)
