"""From a target (epsilon, delta) to the noise: generic bisection and the DP-SGD convenience.

Every certified method ends with the same question: the smallest sigma whose epsilon is at most the target.
:func:`calibrate_sigma` answers it for any decreasing ``epsilon_of_sigma`` (an accountant, a closed form,
a Monte-Carlo-free bound): it brackets the answer by doubling, then bisects on ``log sigma`` and returns the
*upper* end of the final bracket, so the returned sigma never gives more than the target epsilon. The
tolerance is relative in sigma: the answer is within a factor ``(1 + rtol)`` of the exact threshold.

:func:`get_noise_multiplier` reproduces Opacus' ``opacus.accountants.utils.get_noise_multiplier`` (rdp
accountant): same bracket ``[0, 20]`` grown by doubling, same arithmetic bisection, same stopping rule
``target - epsilon_high <= epsilon_tolerance``, same never-overshoot answer; by default with our orders and
the ``cks`` conversion, or Opacus' own with ``orders=OPACUS_ORDERS, method="balle"``.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, Optional

import numpy as np

from .._validate import check_choice, check_int, check_positive, check_probability
from .rdp import CONVERSIONS, DEFAULT_ORDERS, check_orders, rdp_to_dp, subsampled_gaussian_epsilon


#: Opacus' ``RDPAccountant.DEFAULT_ALPHAS``: 1.1..10.9 in steps of 0.1, then 12..63.
OPACUS_ORDERS: np.ndarray = np.array([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)), dtype=float)
OPACUS_ORDERS.setflags(write=False)

_MAX_SIGMA = 1e12
#: get_noise_multiplier's search floor and its bound on bisection steps (see there)
_MIN_NOISE_MULTIPLIER = 0.1
_MAX_BISECTIONS = 200


def calibrate_sigma(
    epsilon_of_sigma: Callable[[float], float],
    target_epsilon: float,
    *,
    sigma_hint: float = 1.0,
    rtol: float = 1e-6,
    max_iter: int = 200,
) -> float:
    """The smallest sigma (within a factor ``1 + rtol``) with ``epsilon_of_sigma(sigma) <= target_epsilon``.

    Parameters
    ----------
    epsilon_of_sigma : callable
        Epsilon as a function of sigma; must be non-increasing in sigma (more noise, more privacy).
    target_epsilon : float > 0
    sigma_hint : float > 0
        Where to start bracketing (any positive value works; a good hint saves evaluations).
    rtol : float in (0, 1)
        Relative tolerance in sigma: the bisection on ``log sigma`` stops when ``hi / lo <= 1 + rtol``.
    max_iter : int
        Bound on the number of evaluations.

    Returns
    -------
    float
        A sigma with ``epsilon_of_sigma(sigma) <= target_epsilon`` (always: the upper end of the bracket).

    Raises
    ------
    ValueError
        If the target cannot be reached with ``sigma <= 1e12``.
    """
    target = check_positive("target_epsilon", target_epsilon)
    hint = check_positive("sigma_hint", sigma_hint)
    rtol = check_probability("rtol", rtol, allow_zero=False, allow_one=False)
    max_iter = check_int("max_iter", max_iter, low=10)

    def eps(s: float) -> float:
        e = float(epsilon_of_sigma(s))
        if math.isnan(e):
            raise ValueError(f"epsilon_of_sigma({s:g}) returned NaN")
        return e

    lo, hi = hint, hint
    e_hi = eps(hi)
    n = 1
    if e_hi <= target:  # walk down until the target is violated (or sigma is negligible)
        while n < max_iter:
            lo = hi / 2.0
            n += 1
            if eps(lo) > target:
                break
            hi = lo
            if hi < 1e-12:
                return hi
    else:
        while e_hi > target:
            lo, hi = hi, hi * 2.0
            if hi > _MAX_SIGMA:
                raise ValueError(f"target_epsilon={target_epsilon!r} is unreachable: even sigma={_MAX_SIGMA:g} "
                                 f"gives epsilon={e_hi:g}")
            e_hi = eps(hi)
            n += 1
    while hi / lo > 1.0 + rtol and n < max_iter:
        mid = math.sqrt(lo * hi)
        if eps(mid) <= target:
            hi = mid
        else:
            lo = mid
        n += 1
    return hi


def dpsgd_epsilon(sigma: float, sample_rate: float, steps: int, delta: float, *,
                  orders: Iterable[float] = DEFAULT_ORDERS, method: str = "cks") -> float:
    """Epsilon of ``steps`` Poisson-subsampled Gaussian steps with noise multiplier ``sigma``.

    Parameters
    ----------
    sigma : float
        Noise multiplier, in [1e-100, 1e100].
    sample_rate : float
        Poisson sampling rate ``q``, in (0, 1].
    steps : int
        Number of steps, ``>= 1``.
    delta : float
        In (0, 1).
    orders : iterable of float
        Renyi orders, each in ``(1, inf]``.
    method : {"cks", "balle", "mironov"}
        The RDP to (epsilon, delta) conversion of :func:`unlearnkit.privacy.rdp.rdp_to_dp`.

    Returns
    -------
    float
        The smallest epsilon ``>= 0`` over the orders (``inf`` if every order gives ``inf``).

    References
    ----------
    Mironov, Talwar & Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism", 2019 (the curve).
    Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 3; Balle, Barthe, Gaboardi, Hsu & Sato, "Hypothesis
    Testing Interpretations and Renyi Differential Privacy", AISTATS 2020, Theorem 21; Canonne, Kamath & Steinke,
    "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Proposition 12 (the conversions).
    """
    return subsampled_gaussian_epsilon(sample_rate, sigma, steps, delta, orders=orders, method=method)


def get_noise_multiplier(
    *,
    target_epsilon: float,
    target_delta: float,
    sample_rate: float,
    epochs: Optional[int] = None,
    steps: Optional[int] = None,
    epsilon_tolerance: float = 0.01,
    orders: Iterable[float] = DEFAULT_ORDERS,
    method: str = "cks",
) -> float:
    """DP-SGD calibration with the semantics of Opacus' ``get_noise_multiplier`` (``accountant="rdp"``).

    Exactly one of ``epochs`` (then ``steps = int(epochs / sample_rate)``) or ``steps``. The answer's epsilon
    is at most ``target_epsilon`` and within ``epsilon_tolerance`` of it. With
    ``orders=OPACUS_ORDERS, method="balle"`` it returns Opacus' numbers (1.416 at eps=8, delta=1e-5, q=0.04,
    90 epochs).

    Parameters
    ----------
    target_epsilon : float
        ``> 0``.
    target_delta : float
        In (0, 1).
    sample_rate : float
        Poisson sampling rate ``q``, in (0, 1].
    epochs : float, optional
        ``> 0``; gives ``steps = int(epochs / sample_rate)``.
    steps : int, optional
        Number of steps, ``>= 1``.
    epsilon_tolerance : float
        ``> 0``: the bisection stops once ``target_epsilon - epsilon <= epsilon_tolerance``.
    orders : iterable of float
        Renyi orders, each in ``(1, inf]``.
    method : {"cks", "balle", "mironov"}
        The RDP to (epsilon, delta) conversion.

    Returns
    -------
    float
        The noise multiplier (upper end of the bracket): its :func:`dpsgd_epsilon` is at most
        ``target_epsilon``. ``ValueError`` when the doubling bracket must pass 1e6 or the target needs a
        multiplier below 0.1.

    References
    ----------
    Mironov, Talwar & Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism", 2019 (the curve).
    Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 3; Balle, Barthe, Gaboardi, Hsu & Sato, "Hypothesis
    Testing Interpretations and Renyi Differential Privacy", AISTATS 2020, Theorem 21; Canonne, Kamath & Steinke,
    "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Proposition 12 (the conversions).
    """
    target = check_positive("target_epsilon", target_epsilon)
    delta = check_probability("target_delta", target_delta, allow_zero=False, allow_one=False)
    q = check_probability("sample_rate", sample_rate, allow_zero=False)
    tol = check_positive("epsilon_tolerance", epsilon_tolerance)
    check_choice("method", method, CONVERSIONS)
    a = check_orders(orders)
    if (steps is None) == (epochs is None):
        raise ValueError("get_noise_multiplier takes exactly one of epochs= or steps=")
    if steps is None:
        steps = int(check_positive("epochs", epochs) / q)
    steps = check_int("steps", steps, low=1)

    def eps(s: float) -> float:
        return dpsgd_epsilon(s, q, steps, delta, orders=a, method=method)

    sigma_low, sigma_high, eps_high = 0.0, 10.0, math.inf
    floor_checked = False
    while eps_high > target:
        sigma_high *= 2.0
        eps_high = eps(sigma_high)
        if sigma_high > 1e6:
            raise ValueError(f"target_epsilon={target_epsilon!r} is too small: unreachable with sigma <= 1e6")
    for _ in range(_MAX_BISECTIONS):  # bounded: float bisection of [0, 20] is exhausted long before
        if target - eps_high <= tol:
            break
        sigma = (sigma_low + sigma_high) / 2.0
        if sigma < _MIN_NOISE_MULTIPLIER and not floor_checked:
            # below the floor each evaluation takes seconds and the answer protects nobody: refuse targets
            # that need it instead of searching for minutes (target 1e8 took 115 s, 1e308 never returned)
            floor_checked = True
            e_floor = eps(_MIN_NOISE_MULTIPLIER)
            if e_floor < target:
                raise ValueError(f"target_epsilon={target_epsilon!r} is too large: even noise multiplier sigma="
                                 f"{_MIN_NOISE_MULTIPLIER} gives epsilon={e_floor:.4g}; expected target_epsilon <= "
                                 f"{e_floor:.4g} for this sample_rate and steps (smaller noise is not private)")
        e = eps(sigma)
        if e < target:
            sigma_high, eps_high = sigma, e
        else:
            sigma_low = sigma
    return sigma_high
