"""The certificates of certified noisy fine-tuning: pure formulas (Koloskova et al., ICML 2025; digest 004).

Plain numbers in, plain numbers out (numpy, scipy and math only, no torch), so the calibrations can be
checked against the paper's tables without training anything. Each function names the theorem or equation it
implements and, where the paper's code and its theorems disagree, offers both as ``mode="paper"`` (what the
tables report) and ``mode="sound"`` (what the theorems certify); see :mod:`unlearnkit.methods.noisy_finetune`.

- gradient clipping (eq. 3, Theorem 4.1, Theorem A.9): :func:`paper_T`, :func:`gc_rdp_slope`,
  :func:`gc_sigma`, :func:`gc_epsilon`, :func:`gc_sigma_closed_form`, :func:`best_T`;
- model clipping (eq. 4, Theorem 4.2, Lemma A.2): :func:`theta_eps`, :func:`mc_delta_trace`,
  :func:`mc_steps`, :func:`mc_sigma_closed_form`;
- output perturbation (eq. 1): :func:`op_sigma`;
- DP-SGD with group privacy (Sec. 4.2): :func:`dpsgd_group_targets`, :func:`dpsgd_group_sigma_formula`.

The linear Renyi curve ``D_q <= q rho`` of Theorem A.9 is converted to ``(epsilon, delta)`` by
:func:`unlearnkit.privacy.linear_rdp.linear_rdp_epsilon` with ``method="balle"`` (Balle et al. 2020, Thm 21,
the conversion the paper says it uses "in practice").
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..._validate import check_choice, check_int, check_positive, check_probability, check_range
from ...privacy.amplification import gradient_clipping_rho, model_clipping_delta
from ...privacy.gaussian import analytic_gaussian_sigma, theta_epsilon
from ...privacy.linear_rdp import linear_rdp_epsilon, linear_rdp_slope


CALIBRATION_MODES = ("paper", "sound")
SOURCE = "Koloskova et al. ICML 2025"

# ----------------------------------------------------------------------------------------------------------
# Gradient clipping (Theorem 4.1, Theorem A.9)
# ----------------------------------------------------------------------------------------------------------


def check_gc_constants(C0: float, C1: float, gamma: float, lam: float, T: Optional[int] = None) -> None:
    """Raise ``ValueError`` unless the gradient-clipping constants are in range (``gamma * lam < 1``: Theorem A.9).

    Parameters
    ----------
    C0, C1, gamma : float
        Start clip radius, gradient clip threshold and step size, each ``> 0``.
    lam : float
        L2 regularisation weight, ``>= 0`` with ``gamma * lam < 1``.
    T : int, optional
        Number of noisy steps, ``>= 1`` (not checked when ``None``).

    Returns
    -------
    None

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025), Theorem A.9 (``gamma_t lam < 1``).
    """
    check_positive("C0", C0)
    check_positive("C1", C1)
    check_positive("gamma", gamma)
    check_positive("lam", lam, allow_zero=True)
    if gamma * lam >= 1:
        raise ValueError(f"gamma*lam={gamma * lam!r} is out of range: Theorem A.9 needs gamma*lam in [0, 1)")
    if T is not None:
        check_int("T", T, low=1)


def paper_T(C0: float, C1: float, gamma: float, lam: float = 0.0) -> int:
    """The number of noisy steps the paper's code uses (digest 004 3.4, pitfall 5).

    ``T = ceil(C0 / (C1 gamma))`` (the minimiser ``T* = C0 / (gamma C1)`` of eq. 7), replaced by
    ``ceil(log(2 lam C0 / C1) / (gamma lam))`` when ``lam > 0`` and that is positive and smaller. The factor 2
    is the code's; the text (eq. 13) prints ``log(lam C0 / C1)``.

    Parameters
    ----------
    C0 : float
        Clipping radius of the start ``x0 = clip(x_hat, C0)``, ``> 0``.
    C1 : float
        Gradient clipping threshold, ``> 0``.
    gamma : float
        Step size, ``> 0``.
    lam : float, default 0.0
        L2 regularisation weight, ``>= 0`` with ``gamma * lam < 1``.

    Returns
    -------
    int
        The number of noisy steps, ``>= 1``.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), eq. (7) and eq. (13).
    """
    check_gc_constants(C0, C1, gamma, lam)
    T = int(np.ceil(C0 / (C1 * gamma)))
    if lam:
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.log(lam * 2 * C0 / C1) / (gamma * lam)
        Ts = int(np.ceil(v)) if np.isfinite(v) else -1
        if 0 < Ts < T:
            T = Ts
    return max(T, 1)


def gc_rdp_slope(sigma: float, C0: float, C1: float, gamma: float, lam: float, T: int) -> float:
    """Slope ``rho`` of Theorem A.9 (eq. 21) for constant step and noise: ``D_q(x_T || x_T') <= q rho``.

    ``rho = B^2 / (2 sigma^2 sum_t r^{2(T-1-t)})`` with ``r = 1 - gamma lam``, shift budget
    ``B = 2 C0 r^T + 2 gamma C1 sum_t r^t`` (``s_t = 2 gamma C1``, Lemma A.8). For ``lam = 0`` this is
    ``2 (C0 + gamma C1 T)^2 / (T sigma^2)``.

    Parameters
    ----------
    sigma : float
        Noise std per step, ``> 0``.
    C0 : float
        Clipping radius of the start ``x0 = clip(x_hat, C0)``, ``> 0``.
    C1 : float
        Gradient clipping threshold, ``> 0``.
    gamma : float
        Step size, ``> 0``.
    lam : float
        L2 regularisation weight, ``>= 0`` with ``gamma * lam < 1``.
    T : int
        Number of noisy steps, ``>= 1``.

    Returns
    -------
    float
        The slope ``rho``.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), Theorem A.9, eq. (21),
    and Lemma A.8.
    """
    check_positive("sigma", sigma)
    check_gc_constants(C0, C1, gamma, lam, T)
    return float(gradient_clipping_rho(C0, C1, gamma, lam, T, sigma))


def gc_sigma(epsilon: float, delta: float, *, C0: float, C1: float, gamma: float, lam: float = 0.0,
             T: int, mode: str = "sound") -> float:
    """Noise std per step of gradient clipping (eq. 3) for ``(epsilon, delta)``-unlearning after ``T`` noisy steps
    (Theorem 4.1 via Theorem A.9).

    ``mode="sound"``: ``sigma^2 = K / rho*`` where ``K = sigma^2 rho`` from :func:`gc_rdp_slope` and ``rho*`` is
    the largest linear-RDP slope that converts to ``(epsilon, delta)`` (Balle et al. 2020).
    ``mode="paper"``: the code behind the paper's tables: ``rho = epsilon`` (delta unused), and for
    ``lam = 0`` the variance ``(2 C0 + 2 C1 gamma T)^2 / (4 epsilon T)``. Reproduces Tables 5, 7, 12-15.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    C0 : float
        Clipping radius of the start ``x0 = clip(x_hat, C0)``, ``> 0``.
    C1 : float
        Gradient clipping threshold, ``> 0``.
    gamma : float
        Step size, ``> 0``.
    lam : float, default 0.0
        L2 regularisation weight, ``>= 0`` with ``gamma * lam < 1``.
    T : int
        Number of noisy steps, ``>= 1``.
    mode : {"sound", "paper"}, default "sound"
        Calibration (see above).

    Returns
    -------
    float
        The noise std per step.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), Theorem 4.1 and
    Theorem A.9; Balle et al., "Hypothesis testing interpretations and Renyi differential privacy" (AISTATS 2020),
    Theorem 21.
    """
    check_choice("mode", mode, CALIBRATION_MODES)
    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_gc_constants(C0, C1, gamma, lam, T)
    if mode == "paper":
        if lam:
            r = 1 - gamma * lam
            c = r**T
            var = (2 * C0 * c + (2 * C1 / lam) * (1 - c)) ** 2 * gamma * lam * (2 - gamma * lam) / (2 * epsilon * (1 - c**2))
        else:
            var = (2 * C0 + 2 * C1 * gamma * T) ** 2 / (4 * epsilon * T)
        return float(np.sqrt(var))
    K = gc_rdp_slope(1.0, C0, C1, gamma, lam, T)
    return float(math.sqrt(K / linear_rdp_slope(epsilon, delta, method="balle")))


def gc_epsilon(sigma: float, delta: float, *, C0: float, C1: float, gamma: float, lam: float = 0.0, T: int,
               mode: str = "sound") -> float:
    """The epsilon a gradient-clipping run with noise ``sigma`` certifies at ``delta``.

    ``mode="sound"``: Theorem A.9 + Balle et al. (2020) on the linear curve. ``mode="paper"``: what the paper's
    code reports: it treats the slope as an order-independent Renyi bound,
    ``min_q [eps_R + log((q-1)/q) - (log delta + log q)/(q-1)]`` on ``q in linspace(1.001, 1000, 10000)``,
    with ``eps_R`` the paper-mode target (about ``eps_R + 0.0036`` at delta 1e-5).

    Parameters
    ----------
    sigma : float
        Noise std per step, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    C0 : float
        Clipping radius of the start ``x0 = clip(x_hat, C0)``, ``> 0``.
    C1 : float
        Gradient clipping threshold, ``> 0``.
    gamma : float
        Step size, ``> 0``.
    lam : float, default 0.0
        L2 regularisation weight, ``>= 0`` with ``gamma * lam < 1``.
    T : int
        Number of noisy steps, ``>= 1``.
    mode : {"sound", "paper"}, default "sound"
        Conversion (see above).

    Returns
    -------
    float
        The certified epsilon.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), Theorem A.9; Balle et
    al. (AISTATS 2020), Theorem 21.
    """
    check_choice("mode", mode, CALIBRATION_MODES)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    rho = gc_rdp_slope(sigma, C0, C1, gamma, lam, T)
    if mode == "sound":
        return linear_rdp_epsilon(rho, delta, method="balle")
    eps_R = rho if lam else rho / 2.0  # the code's lam = 0 branch is calibrated with half the variance
    qs = np.linspace(1.001, 1000, 10000)
    return float(np.min(eps_R + np.log((qs - 1) / qs) - (np.log(delta) + np.log(qs)) / (qs - 1)))


def gc_sigma_closed_form(epsilon: float, delta: float, *, C0: float, C1: float, gamma: float, lam: float = 0.0,
                         T: int) -> float:
    """Theorem 4.1 as printed: eq. (5) for ``lam = 0``, eq. (6) for ``gamma lam in (1/2, 1)``.

    Eq. (5) is valid (conservative) up to epsilon of about 3-5 at delta 1e-5 but not on the whole range
    ``eps < 3 log(1/delta)`` the theorem claims (digest 004 3.2); shown as "paper closed form" only.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    C0 : float
        Clipping radius of the start ``x0 = clip(x_hat, C0)``, ``> 0``.
    C1 : float
        Gradient clipping threshold, ``> 0``.
    gamma : float
        Step size, ``> 0``.
    lam : float, default 0.0
        L2 regularisation weight: 0 (eq. 5) or with ``gamma * lam`` in ``(1/2, 1)`` (eq. 6).
    T : int
        Number of noisy steps, ``>= 1``.

    Returns
    -------
    float
        The printed closed-form noise std.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), Theorem 4.1, eqs. (5)
    and (6).
    """
    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_gc_constants(C0, C1, gamma, lam, T)
    if lam == 0:
        return math.sqrt(9 * math.log(1 / delta) / (epsilon**2 * T) * (C0 + C1 * gamma * T) ** 2)
    if not (0.5 < gamma * lam < 1):
        raise ValueError(f"gamma*lam={gamma * lam!r} is out of range: eq. (6) needs gamma*lam in (0.5, 1)")
    return math.sqrt(72 * gamma * lam * math.log(1 / delta) / epsilon**2 * (C0 * (1 - gamma * lam) ** T + C1 / lam) ** 2)


def best_T(epsilon: float, delta: float, *, C0: float, C1: float, gamma: float, lam: float = 0.0,
           T_max: int = 10_000) -> tuple[int, float]:
    """The number of noisy steps that minimises the sound sigma, and that sigma.

    Only the data-independent part ``K(T) = sigma^2 rho`` depends on T, so the minimiser is found on ``K``
    (one conversion, not one per T). For ``lam = 0`` it is near ``T* = C0 / (gamma C1)`` (eq. 7).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    C0 : float
        Clipping radius of the start ``x0 = clip(x_hat, C0)``, ``> 0``.
    C1 : float
        Gradient clipping threshold, ``> 0``.
    gamma : float
        Step size, ``> 0``.
    lam : float, default 0.0
        L2 regularisation weight, ``>= 0`` with ``gamma * lam < 1``.
    T_max : int, default 10000
        Largest T searched, ``>= 1``.

    Returns
    -------
    tuple of (int, float)
        ``(T, sigma)``: the best number of steps in ``[1, T_max]`` and its sound sigma.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), Theorem A.9 and eq. (7).
    """
    check_gc_constants(C0, C1, gamma, lam)
    check_int("T_max", T_max, low=1)
    Ts = np.arange(1, T_max + 1)
    if lam == 0:
        K = 2.0 * (C0 + gamma * C1 * Ts) ** 2 / Ts
    else:
        r = 1.0 - gamma * lam
        B = 2 * C0 * r**Ts + (2 * C1 / lam) * (1 - r**Ts)
        K = B**2 * (1 - r**2) / (2 * (1 - r ** (2 * Ts)))
    i = int(np.argmin(K))
    return int(Ts[i]), float(math.sqrt(K[i] / linear_rdp_slope(epsilon, delta, method="balle")))


# ----------------------------------------------------------------------------------------------------------
# Model clipping (Theorem 4.2, Lemma A.2)
# ----------------------------------------------------------------------------------------------------------


def theta_eps(epsilon: float, r: float) -> float:
    """``theta_eps(r) = E_eps(N(0, 1) || N(r, 1))``, the Gaussian privacy profile (eq. 9, Lemma A.3).

    Parameters
    ----------
    epsilon : float
        Privacy parameter.
    r : float
        Mean shift in units of the noise std.

    Returns
    -------
    float
        ``theta_eps(r)``, in ``[0, 1]``.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), eq. (9) and Lemma A.3.
    """
    return float(theta_epsilon(epsilon, r))


def mc_delta_trace(epsilon: float, *, C2: float, sigma: float, T: int, C0: float = math.inf, sigma0: float = 0.0,
                   tight: bool = True) -> np.ndarray:
    """``delta_t`` for ``t = 0..T`` of model clipping at fixed ``epsilon`` (Theorem 4.2's recursion).

    ``delta_0 = theta_eps(2 C0 / sigma0)`` with initial noise, else 1. Each step multiplies by
    ``theta(2 C2 / sigma)`` at ``eps~ = log(1 + (e^eps - 1) / delta_t)`` (``tight=True``: Balle et al. 2019
    Thm 1, what the paper's code does) or at ``eps`` itself (``tight=False``: Lemma A.2 as printed).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    C2 : float
        Model clipping radius, ``> 0``.
    sigma : float
        Noise std per step, ``> 0``.
    T : int
        Number of noisy steps, ``>= 0``.
    C0 : float, default inf
        Clipping radius of the start, in ``(0, inf]`` (``inf``: no clip).
    sigma0 : float, default 0.0
        Std of the initial noise, ``>= 0`` (used only with a finite ``C0``).
    tight : bool, default True
        Use Balle et al.'s tight recursion (else Lemma A.2 as printed).

    Returns
    -------
    numpy.ndarray
        Float array of length ``T + 1``: ``delta_0, ..., delta_T``.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), Theorem 4.2 and Lemma
    A.2; Balle et al. 2019 (as cited in digest 004), Theorem 1.
    """
    check_positive("epsilon", epsilon)
    check_positive("C2", C2)
    check_positive("sigma", sigma)
    check_int("T", T, low=0)
    if not (C0 > 0):
        raise ValueError(f"C0={C0!r} is out of range: expected C0 in (0, inf]")
    check_positive("sigma0", sigma0, allow_zero=True)
    if sigma0 > 0 and math.isfinite(C0):
        return model_clipping_delta(epsilon, T, C2, sigma, C0=C0, sigma0=sigma0, recursion="tight" if tight else "paper")
    return model_clipping_delta(epsilon, T, C2, sigma, recursion="tight" if tight else "paper")


def mc_steps(epsilon: float, delta: float, *, C2: float, sigma: float, C0: float = math.inf, sigma0: float = 0.0,
             tight: bool = True, T_max: int = 100_000) -> int:
    """Fewest model-clipping steps that reach ``(epsilon, delta)``.

    ``tight=True`` (sound mode, reproduces Tables 6/8: C2/sigma = 1 -> 6 steps, 1.25 -> 9, 1.95 -> 36);
    ``tight=False`` is the paper's eq. (10) with ``beta = 1`` (C2/sigma = 1 -> 18 steps).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    C2 : float
        Model clipping radius, ``> 0``.
    sigma : float
        Noise std per step, ``> 0``.
    C0 : float, default inf
        Clipping radius of the start (``inf``: no clip).
    sigma0 : float, default 0.0
        Std of the initial noise, ``>= 0``.
    tight : bool, default True
        Tight recursion (else eq. 10 with ``beta = 1``).
    T_max : int, default 100000
        Largest step count searched (tight recursion), ``>= 1``.

    Returns
    -------
    int
        The number of noisy steps, ``>= 0``.

    Raises
    ------
    ValueError
        When the tight recursion needs more than ``T_max`` steps.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), Theorem 4.2, eq. (10).
    """
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_int("T_max", T_max, low=1)
    if not tight:
        b = theta_eps(epsilon, 2 * C0 / sigma0) if (sigma0 > 0 and math.isfinite(C0)) else 1.0
        a = theta_eps(epsilon, 2 * C2 / sigma)
        if b <= delta:
            return 0
        if a <= 0:
            return 1
        return int(math.ceil((math.log(1 / delta) + math.log(b)) / math.log(1 / a)))
    n = 64
    while True:
        tr = mc_delta_trace(epsilon, C2=C2, sigma=sigma, T=n, C0=C0, sigma0=sigma0, tight=True)
        hit = np.nonzero(tr <= delta)[0]
        if hit.size:
            return int(hit[0])
        if n >= T_max:
            raise ValueError(f"C2/sigma={C2 / sigma!r}: model clipping needs more than T_max={T_max} steps; "
                             "lower C2 or raise sigma")
        n = min(4 * n, T_max)


def mc_sigma_closed_form(epsilon: float, delta: float, *, C2: float, T: int, C0: float = math.inf,
                         sigma0: float = 0.0) -> float:
    """Eq. (11) of Theorem 4.2 (via Dwork-Roth Lemma A.4, needs ``epsilon < 1``).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, in ``(0, 1)``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    C2 : float
        Model clipping radius, ``> 0``.
    T : int
        Number of noisy steps, ``>= 1``.
    C0 : float, default inf
        Clipping radius of the start (finite with ``sigma0 > 0`` adds the initial-noise term).
    sigma0 : float, default 0.0
        Std of the initial noise, ``>= 0``.

    Returns
    -------
    float
        The printed closed-form noise std per step.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), Theorem 4.2, eq. (11).
    """
    check_range("epsilon", epsilon, 0, 1, low_open=True, high_open=True)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_positive("C2", C2)
    check_int("T", T, low=1)
    init = (sigma0**2 * epsilon**2 / (8 * C0**2)) if (sigma0 > 0 and math.isfinite(C0)) else 0.0
    return math.sqrt(8 * C2**2 * math.log(1.25) / epsilon**2 * (1 + (math.log(1.25 / delta) - init) / T))


# ----------------------------------------------------------------------------------------------------------
# Output perturbation (eq. 1) and DP-SGD with group privacy (Sec. 4.2)
# ----------------------------------------------------------------------------------------------------------


def op_sigma(epsilon: float, delta: float, *, C0: float, mode: str = "sound") -> float:
    """Output perturbation noise for sensitivity ``2 C0`` (eq. 1).

    ``mode="paper"``: ``sqrt(8 C0^2 ln(1.25/delta)) / eps`` (classic Gaussian mechanism, Dwork & Roth Thm A.1;
    only valid for ``eps < 1``; under-noises for ``eps > 1``). ``mode="sound"``: the analytic Gaussian mechanism.
    Pinned: C0 = 1 -> 9.689610, 0.1 -> 0.968961 (Tables 9/10).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    C0 : float
        Clipping radius of the released model (sensitivity ``2 C0``), ``> 0``.
    mode : {"sound", "paper"}, default "sound"
        Classic (``"paper"``) or analytic (``"sound"``) Gaussian mechanism.

    Returns
    -------
    float
        The output-noise std.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), eq. (1); Dwork & Roth
    (2014), Theorem A.1.
    """
    check_choice("mode", mode, CALIBRATION_MODES)
    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_positive("C0", C0)
    if mode == "paper":
        return math.sqrt(2 * math.log(1.25 / delta) * (2 * C0) ** 2 / epsilon**2)
    return analytic_gaussian_sigma(epsilon, delta, 2 * C0)


def dpsgd_group_targets(epsilon: float, delta: float, k: int, *, mode: str = "sound") -> tuple[float, float]:
    """Per-record ``(eps1, delta1)`` such that group privacy covers a forget set of ``k`` records.

    Group privacy (Vadhan 2017, Lemma 2.2): ``(eps1, delta1)``-DP implies ``(k eps1, k e^{(k-1) eps1} delta1)``
    for groups of ``k``. ``mode="sound"``: ``eps1 = eps / k``, ``delta1 = delta / (k e^{(k-1) eps1})``.
    ``mode="paper"``: the paper's code, ``delta1 = delta e^{eps1 - k eps1}`` (the ``1/k`` is missing, so the
    baseline is under-noised by a factor ``k`` in delta).

    Parameters
    ----------
    epsilon : float
        Group privacy parameter, ``> 0``.
    delta : float
        Group privacy parameter, in ``(0, 1)``.
    k : int
        Group (forget-set) size, ``>= 1``.
    mode : {"sound", "paper"}, default "sound"
        Per-record delta (see above).

    Returns
    -------
    tuple of (float, float)
        ``(eps1, delta1)`` per record.

    Raises
    ------
    ValueError
        When ``delta1`` would fall below ``1e-300``.

    References
    ----------
    Vadhan, "The Complexity of Differential Privacy" (2017), Lemma 2.2; Koloskova et al., "Certified Unlearning for
    Neural Networks" (ICML 2025, digest 004), Section 4.2.
    """
    check_choice("mode", mode, CALIBRATION_MODES)
    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_int("k", k, low=1)
    e1 = epsilon / k
    # in logs: the per-record delta shrinks like e^{-(k-1) eps1} and leaves floating point for large epsilon
    log_d1 = math.log(delta) + (e1 - k * e1 if mode == "paper" else -math.log(k) - (k - 1) * e1)
    if log_d1 < math.log(1e-300):
        raise ValueError(f"epsilon={epsilon:g} over a group of k={k} records needs a per-record delta of "
                         f"e^{log_d1:.4g}, below 1e-300: group privacy cannot be calibrated here; valid range: "
                         f"(k - 1) * epsilon / k <= {math.log(delta) - math.log(1e-300) - (0 if mode == 'paper' else math.log(k)):.4g}")
    return e1, math.exp(log_d1)


def dpsgd_group_sigma_formula(epsilon: float, delta: float, *, C: float, k: int) -> float:
    """Sec. 4.2's one-shot formula ``sigma^2 = 2 C^2 k^2 / eps^2 (ln(1.25 k / delta) + k eps)`` (paper mode only).

    It follows from the paper's ``(k eps, k e^{k eps} delta)`` group statement; shown to teach that the
    noise grows at least linearly in ``k`` (sigma proportional to k).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    C : float
        Per-sample gradient clipping threshold, ``> 0``.
    k : int
        Group (forget-set) size, ``>= 1``.

    Returns
    -------
    float
        The noise std of the formula.

    References
    ----------
    Koloskova et al., "Certified Unlearning for Neural Networks" (ICML 2025, digest 004), Section 4.2.
    """
    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_positive("C", C)
    check_int("k", k, low=1)
    return math.sqrt(2 * C**2 * k**2 / epsilon**2 * (math.log(1.25 * k / delta) + k * epsilon))
