"""Gradient clipping's second accountant: the first noisy step is a plain Gaussian, the rest post-processing.

In gradient clipping (eq. 3) the two worlds start from ``clip(x_hat, C0)`` and ``clip(x_hat', C0)`` and then
run the *same* noisy steps on the *same* retain set. So the released ``x_T`` is post-processing of ``x_1``
(steps ``2..T`` read only the retain set, a data-independent minibatch and fresh noise), and ``x_1`` is the
Gaussian mechanism ``phi(x_0) + N(0, sigma^2 I)`` with ``phi(x) = (1 - gamma lam) x - gamma clip(g(x), C1)``,
whose sensitivity is at most

    ``B_1 = 2 C0 (1 - gamma lam) + 2 gamma C1``

(both starts lie in the ball of radius ``C0``; a clipped gradient moves by at most ``gamma C1``; a random
minibatch is a data-independent mixture, which joint convexity of the hockey-stick divergence covers). That
pair is exactly ``(B_1 / sigma)``-GDP, read here through the PLD of one Gaussian (:class:`unlearnkit.privacy.pld.PLD`,
upper end certified). It ignores the contraction of the later steps, which Theorem A.9's shifted Renyi bound
uses, so it wins only for few noisy steps (``T = 1``: the same pair, read without the RDP conversion's loss);
``accountant="pld"`` of :class:`~.algorithms.GradientClippingConfig` certifies the smaller of the two epsilons,
never more than the RDP one.
"""

from __future__ import annotations

import math

from ..._validate import check_choice, check_positive, check_probability
from ...privacy.calibrate import calibrate_sigma
from ...privacy.pld import PLD, EpsilonBracket
from .bounds import check_gc_constants, gc_epsilon


#: gradient clipping's accountants: Theorem A.9's linear Renyi curve (default) or also the first step's PLD
GC_ACCOUNTANTS = ("rdp", "pld")


def gc_first_step_sensitivity(C0: float, C1: float, gamma: float, lam: float) -> float:
    """``B_1 = 2 C0 (1 - gamma lam) + 2 gamma C1``: how far the two worlds' first noise-free steps can lie apart.

    Parameters
    ----------
    C0, C1 : float
        Start clip radius and gradient clip threshold, ``> 0``.
    gamma, lam : float
        Step size ``> 0`` and weight decay ``>= 0`` with ``gamma * lam < 1``.

    Returns
    -------
    float
        The L2 sensitivity of the first noisy step.

    References
    ----------
    .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
       ICML 2025, eq. (3) (the iteration) and Lemma A.8 (the per-step shift ``2 gamma C1``).
    """
    check_gc_constants(C0, C1, gamma, lam)
    return 2.0 * C0 * (1.0 - gamma * lam) + 2.0 * gamma * C1


def gc_pld_epsilon(sigma: float, delta: float, *, C0: float, C1: float, gamma: float, lam: float = 0.0,
                   grid: float = 1e-3) -> EpsilonBracket:
    """Epsilon at ``delta`` of the first noisy step (Gaussian, sensitivity :func:`gc_first_step_sensitivity`).

    Parameters
    ----------
    sigma : float
        Noise std per step, ``> 0``.
    delta : float
        In ``(0, 1)``.
    C0, C1, gamma, lam : float
        Gradient clipping's constants (:func:`gc_first_step_sensitivity`).
    grid : float
        The PLD's loss grid width.

    Returns
    -------
    EpsilonBracket
        ``lower <= exact <= upper`` for the released model (post-processing of the first step); ``upper``
        certifies.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS B 2022, Cor. 2.13 (the Gaussian pair)
       and Prop. 2.8 (post-processing).
    .. [2] V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi, "Connect the Dots: Tighter Discrete
       Approximations of Privacy Loss Distributions", PoPETs 2022 (the PLD's upper end).
    """
    check_positive("sigma", sigma)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    b1 = gc_first_step_sensitivity(C0, C1, gamma, lam)
    ratio = sigma / b1
    if ratio < 1e-3:  # below the PLD's range: nothing certified (0 is always a lower end)
        return EpsilonBracket(0.0, math.inf)
    if ratio > 1e6:  # above it: more noise than the ratio 1e6, whose upper end therefore still holds
        return EpsilonBracket(0.0, PLD.gaussian(1e6, grid=grid).epsilon(delta).upper)
    return PLD.gaussian(ratio, grid=grid).epsilon(delta)


def gc_accountant_epsilon(sigma: float, delta: float, *, C0: float, C1: float, gamma: float, lam: float = 0.0,
                          T: int, accountant: str = "rdp", grid: float = 1e-3) -> float:
    """The sound epsilon of gradient clipping with noise ``sigma``: Theorem A.9 (``"rdp"``), or the smaller of
    that and the first step's PLD upper end (``"pld"``; never larger than ``"rdp"``).

    Parameters
    ----------
    sigma, delta : float
        Noise std per step ``> 0``; delta in ``(0, 1)``.
    C0, C1, gamma, lam : float
        Gradient clipping's constants.
    T : int
        Number of noisy steps.
    accountant : {"rdp", "pld"}
        Which accountant (see above).
    grid : float
        The PLD's loss grid width (``"pld"`` only).

    Returns
    -------
    float
        The certified epsilon at ``delta``.

    References
    ----------
    .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
       ICML 2025, Theorem A.9 (with B. Balle et al., AISTATS 2020, Theorem 21: accountant "rdp").
    .. [2] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS B 2022, Cor. 2.13 (accountant "pld",
       read through the PLD of :func:`gc_pld_epsilon`).
    """
    check_choice("accountant", accountant, GC_ACCOUNTANTS)
    rdp = gc_epsilon(sigma, delta, C0=C0, C1=C1, gamma=gamma, lam=lam, T=T, mode="sound")
    if accountant == "rdp":
        return rdp
    return min(rdp, gc_pld_epsilon(sigma, delta, C0=C0, C1=C1, gamma=gamma, lam=lam, grid=grid).upper)


def gc_accountant_sigma(epsilon: float, delta: float, *, C0: float, C1: float, gamma: float, lam: float = 0.0,
                        T: int, accountant: str = "rdp", grid: float = 1e-3, sigma_hint: float = 1.0) -> float:
    """The smallest noise std whose :func:`gc_accountant_epsilon` is at most ``epsilon``.

    Parameters
    ----------
    epsilon, delta : float
        Target; epsilon ``> 0``, delta in ``(0, 1)``.
    C0, C1, gamma, lam : float
        Gradient clipping's constants.
    T : int
        Number of noisy steps.
    accountant : {"rdp", "pld"}
        As in :func:`gc_accountant_epsilon`.
    grid : float
        The PLD's loss grid width.
    sigma_hint : float
        Where the bisection starts (e.g. the RDP sigma).

    Returns
    -------
    float
        The noise std, by :func:`unlearnkit.privacy.calibrate.calibrate_sigma` (never below the target's need).

    References
    ----------
    .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
       ICML 2025, Theorem A.9; J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS B 2022.
    """
    check_positive("epsilon", epsilon)
    return float(calibrate_sigma(lambda s: gc_accountant_epsilon(s, delta, C0=C0, C1=C1, gamma=gamma, lam=lam, T=T,
                                                                  accountant=accountant, grid=grid),
                                 epsilon, sigma_hint=sigma_hint, rtol=1e-4))
