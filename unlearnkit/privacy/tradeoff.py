"""Trade-off functions: the hypothesis-testing view of a Gaussian certificate (Gaussian differential privacy).

An adversary who tests "record in" against "record out" from the output, with type I error ``alpha``, has type
II error at least ``f(alpha)``; for a mechanism that is ``mu``-GDP the best it can do is

    ``G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu)``

(Dong, Roth & Su 2019, Def. 2.3). The Gaussian mechanism with L2 sensitivity ``Delta`` and noise ``sigma`` is
exactly ``(Delta / sigma)``-GDP, and ``T`` of them compose to ``sqrt(T) Delta / sigma`` (their Cor. 3.3;
:func:`unlearnkit.privacy.mixture.gaussian_composition_mu` for unequal steps), so a Gaussian-family certificate
has one number, ``mu``, that carries every (epsilon, delta) pair at once (their Cor. 2.13).

References
----------
Dong, Roth & Su 2019, "Gaussian differential privacy" (J. R. Stat. Soc. B 2022).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._validate import check_int, check_positive, check_scale

__all__ = ["gdp_tradeoff", "gaussian_certificate_mu"]


def gdp_tradeoff(mu: float, alpha):
    """The trade-off function of ``mu``-GDP: ``beta = Phi(Phi^{-1}(1 - alpha) - mu)``.

    Parameters
    ----------
    mu : float >= 0
        GDP parameter (``0``: perfect privacy, ``beta = 1 - alpha``; ``inf``: ``beta = 0``).
    alpha : float or array in [0, 1]
        Type I error(s) of the test.

    Returns
    -------
    float or ndarray
        The smallest type II error any test can reach at each ``alpha``.
    """
    mu = float(mu)
    if not mu >= 0:  # NaN fails too
        raise ValueError(f"mu={mu!r} is out of range: expected mu in [0, inf]")
    a = np.asarray(alpha, dtype=float)
    if np.any(~((a >= 0) & (a <= 1))):
        bad = a[~((a >= 0) & (a <= 1))].ravel()[0]
        raise ValueError(f"alpha contains {bad!r}, out of range: expected every alpha in [0, 1]")
    beta = special.ndtr(special.ndtri(1.0 - a) - mu) if np.isfinite(mu) else np.zeros_like(a)
    return float(beta) if np.ndim(beta) == 0 else beta


def gaussian_certificate_mu(sigma: float, sensitivity: float = 1.0, steps: int = 1) -> float:
    """The GDP ``mu`` of ``steps`` Gaussian mechanisms with noise ``sigma`` and L2 sensitivity ``sensitivity``.

    Parameters
    ----------
    sigma : float > 0
        Noise standard deviation (a certificate's ``sigma``).
    sensitivity : float > 0
        The L2 sensitivity the noise was calibrated to.
    steps : int >= 1
        Number of such mechanisms composed.

    Returns
    -------
    float
        ``mu = sqrt(steps) sensitivity / sigma`` (Dong, Roth & Su 2019, Thm 2.7 and Cor. 3.3).
    """
    sigma = check_scale("sigma", sigma)
    sensitivity = check_positive("sensitivity", sensitivity)
    steps = check_int("steps", steps, low=1)
    return float(np.sqrt(steps) * sensitivity / sigma)
