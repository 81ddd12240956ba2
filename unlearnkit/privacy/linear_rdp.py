"""Linear Renyi curves ``D_alpha <= alpha rho`` (Gaussian mechanisms, amplification by iteration) to (eps, delta).

One conversion, two methods, named by ``method=``:

- ``"mironov"``: Mironov (2017), Proposition 3, minimised in closed form over the order:
  ``min_{alpha>1} alpha rho + ln(1/delta)/(alpha - 1) = rho + 2 sqrt(rho ln(1/delta))``.
- ``"balle"``: Balle et al. (2020), Theorem 21 (tighter), minimised numerically on a dense order grid through
  :func:`unlearnkit.privacy.rdp.rdp_to_dp`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validate import check_choice, check_delta, check_positive, check_scale, check_probability
from .rdp import linear_rdp, rdp_to_dp


LINEAR_METHODS = ("mironov", "balle")

# a dense order grid (1 + 1e-6 .. 1e7): the optimal order of a linear curve is ~1 + sqrt(log(1/delta)/rho)
_ORDERS = 1.0 + np.exp(np.linspace(np.log(1e-6), np.log(1e7), 6_001))


def linear_rdp_epsilon(rho: float, delta: float, *, method: str = "balle") -> float:
    """Epsilon at ``delta`` of a mechanism with ``D_alpha <= alpha rho`` for every order ``alpha > 1``.

    Parameters
    ----------
    rho : float
        The slope, ``>= 0``, finite.
    delta : float
        In (0, 1).
    method : {"balle", "mironov"}
        ``"mironov"``: the closed form ``rho + 2 sqrt(rho ln(1/delta))``; ``"balle"``: the minimum over a
        dense grid of orders from ``1 + 1e-6`` to about ``1e7``.

    Returns
    -------
    float
        Epsilon ``>= 0`` (0 for ``rho = 0``).

    References
    ----------
    Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 3 (``"mironov"``).
    Balle, Barthe, Gaboardi, Hsu & Sato, "Hypothesis Testing Interpretations and Renyi Differential Privacy",
    AISTATS 2020, Theorem 21 (``"balle"``).
    """
    check_positive("rho", rho, allow_zero=True)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_choice("method", method, LINEAR_METHODS)
    if rho == 0:
        return 0.0
    if method == "mironov":
        b = math.log(1 / delta)
        return rho + 2 * math.sqrt(rho * b)
    eps, _ = rdp_to_dp(_ORDERS, linear_rdp(rho, _ORDERS), delta, method="balle", warn_edge=False)
    return float(eps)


@functools.lru_cache(maxsize=4096)
def linear_rdp_slope(epsilon: float, delta: float, *, method: str = "balle") -> float:
    """The largest slope ``rho`` whose linear Renyi curve still gives ``(epsilon, delta)``: the inverse of
    :func:`linear_rdp_epsilon` in ``rho`` (a noise ``sigma`` for sensitivity ``s`` is ``s / sqrt(2 rho)``
    for the Gaussian's ``rho = s^2 / (2 sigma^2)``).

    Parameters
    ----------
    epsilon : float
        Target epsilon, in [1e-100, 1e100].
    delta : float
        Target delta, in [1e-300, 1).
    method : {"balle", "mironov"}
        ``"mironov"`` inverts the closed form exactly; ``"balle"`` solves by Brent's method, never below the
        Mironov slope.

    Returns
    -------
    float
        The slope ``rho > 0``; results are cached per ``(epsilon, delta, method)``.

    References
    ----------
    Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 3 (``"mironov"``).
    Balle, Barthe, Gaboardi, Hsu & Sato, "Hypothesis Testing Interpretations and Renyi Differential Privacy",
    AISTATS 2020, Theorem 21 (``"balle"``).
    """
    check_scale("epsilon", epsilon)
    check_delta("delta", delta)
    check_choice("method", method, LINEAR_METHODS)
    if method == "mironov":
        b = math.log(1 / delta)
        # sqrt(rho) = sqrt(b + eps) - sqrt(b), written as eps / (sqrt(b + eps) + sqrt(b)) for tiny epsilon
        root = epsilon / (math.sqrt(b + epsilon) + math.sqrt(b))
        return root * root
    from scipy.optimize import brentq  # deferred: imports scipy.optimize

    # the Mironov slope is a valid lower end: Balle's conversion is never looser on a grid that holds the
    # optimal order; where it is looser (rho so tiny that the optimum leaves the grid) the Mironov slope
    # itself is the sound answer
    lo = linear_rdp_slope(epsilon, delta, method="mironov")
    f = lambda r: linear_rdp_epsilon(r, delta, method=method) - epsilon  # noqa: E731  increasing in r
    if f(lo) >= 0:
        return lo
    hi = max(1.0, 2.0 * lo)
    while f(hi) < 0:
        hi *= 4.0
    return float(brentq(f, lo, hi, xtol=min(1e-14, 1e-6 * lo), rtol=1e-12))
