"""Renyi-DP curves as arrays over orders, their composition, and their conversion to (epsilon, delta).

A *curve* is an array ``rdp[i]`` such that the mechanism is ``(orders[i], rdp[i])``-RDP (Mironov 2017,
Definition 4). Composition adds curves order by order (Mironov 2017, Proposition 1), so an accountant is just
a running sum; conversion to (epsilon, delta) minimises a bound over the orders.

Curves
------
- :func:`gaussian_rdp`: ``alpha Delta^2 / (2 sigma^2)`` (Mironov 2017, Proposition 7).
- :func:`subsampled_gaussian_rdp`: the Poisson-subsampled Gaussian, add-or-remove-one neighbours
  (Mironov, Talwar & Zhang 2019, "Renyi DP of the Sampled Gaussian Mechanism"). Integer orders use their
  closed form (Section 3.3, eq. for ``A_alpha``); fractional orders use exact numerical integration of the
  defining integral. Both compute ``A_alpha - 1`` as a sum of *non-negative* terms in log space, so tiny
  sampling rates (``A_alpha = 1 + O(q^2)``) and huge orders keep their digits.
- :func:`linear_rdp`: ``alpha rho``, the shape that amplification by iteration produces (Feldman et al.
  2018; Koloskova et al. 2025, Theorem A.9).

Conversions (:func:`rdp_to_dp`)
-------------------------------
- ``"mironov"``: ``eps = rdp + log(1/delta)/(alpha - 1)`` (Mironov 2017, Proposition 3). RR-DU uses it.
- ``"balle"``: ``eps = rdp + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha - 1)`` (Balle et al. 2020,
  Theorem 21), exactly as Opacus' ``get_privacy_spent`` (no clamping beyond ``eps >= 0``).
- ``"cks"``: the same expression from Canonne, Kamath & Steinke 2020, Proposition 12, exactly as
  ``dp_accounting.rdp.compute_epsilon``: orders ``<= 1.01`` are skipped (numerically unstable) and an order
  whose value already satisfies the KL bound ``delta >= sqrt(1 - exp(-rdp))`` gives epsilon 0.

The two improved conversions are one formula; they differ only in dp_accounting's two guards. On order
grids whose smallest order exceeds 1.01, ``cks <= balle <= mironov`` always.

About fractional orders in the libraries (a finding taught in notebook 02): dp_accounting 0.6.0 sums the
series of Mironov et al. 2019 for fractional orders with ``|binom(alpha, i)|`` (``gammaln`` drops the sign),
so every term after ``i > alpha + 1`` is added instead of alternately subtracted. It *overestimates*: at
q = 0.04, sigma = 1.5 by about 10% at order 1.5. Opacus keeps the signs and agrees with exact integration,
as this module does.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Iterable, Sequence

import numpy as np
from scipy import special

from .._validate import check_choice, check_int, check_positive, check_scale, check_probability


#: orders above this get RDP inf from :func:`subsampled_gaussian_rdp` (sound: the conversion takes the best
#: order; the numerics of the series overflow there)
MAX_ORDER = 1e6

#: dp_accounting's ``DEFAULT_RDP_ORDERS``: 1.1..10.9 in steps of 0.1, 11..63, and 128, 256, 512, 1024.
DEFAULT_ORDERS: np.ndarray = np.array(
    [1.0 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024], dtype=float
)
DEFAULT_ORDERS.setflags(write=False)

CONVERSIONS = ("mironov", "balle", "cks")


class OrderGridWarning(UserWarning):
    """The best order of a conversion sits at the edge of the order grid: a wider grid may be tighter."""


def check_orders(orders: Iterable[float] | float) -> np.ndarray:
    """Orders as a 1-D float array; every order must be > 1 (``inf`` allowed), none NaN.

    Parameters
    ----------
    orders : float or iterable of float
        One Renyi order or a non-empty 1-D sequence of them, each in ``(1, inf]``.

    Returns
    -------
    ndarray
        The orders as a 1-D float array (a scalar becomes shape ``(1,)``); ``ValueError`` otherwise.

    References
    ----------
    Mironov, "Renyi Differential Privacy", CSF 2017, Definition 4 (orders of Renyi DP).
    """
    arr = np.atleast_1d(np.asarray(orders, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"orders={orders!r} must be a non-empty 1-D sequence of Renyi orders > 1")
    if np.any(np.isnan(arr)) or np.any(arr <= 1):
        bad = arr[np.isnan(arr) | (arr <= 1)][0]
        raise ValueError(f"orders contains {bad!r}, out of range: expected every order in (1, inf]")
    return arr


def gaussian_rdp(sigma: float, orders: Iterable[float] | float = DEFAULT_ORDERS,
                 sensitivity: float = 1.0) -> np.ndarray:
    """RDP curve of the Gaussian mechanism: ``alpha Delta^2 / (2 sigma^2)`` (Mironov 2017, Prop. 7).

    ``sigma`` is the noise standard deviation; with ``sensitivity = 1`` it is the noise multiplier.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, in [1e-100, 1e100].
    orders : float or iterable of float
        Renyi orders, each in ``(1, inf]`` (default :data:`DEFAULT_ORDERS`).
    sensitivity : float
        L2 sensitivity ``Delta``, in [1e-100, 1e100].

    Returns
    -------
    ndarray
        ``orders * Delta^2 / (2 sigma^2)``, one value per order.

    References
    ----------
    Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 7.
    """
    sigma = check_scale("sigma", sigma)
    sensitivity = check_scale("sensitivity", sensitivity)
    a = check_orders(orders)
    return a * sensitivity**2 / (2.0 * sigma**2)


def linear_rdp(rho: float, orders: Iterable[float] | float = DEFAULT_ORDERS) -> np.ndarray:
    """The curve ``D_alpha <= alpha rho`` for all orders (amplification by iteration, zCDP-like bounds).

    Parameters
    ----------
    rho : float
        The slope, ``>= 0``, finite.
    orders : float or iterable of float
        Renyi orders, each in ``(1, inf]`` (default :data:`DEFAULT_ORDERS`).

    Returns
    -------
    ndarray
        ``orders * rho``, one value per order.

    References
    ----------
    Koloskova, Allouah, Jha, Guerraoui & Koyejo, "Certified Unlearning for Neural Networks", ICML 2025,
    Theorem A.9 (the linear curve of amplification by iteration).
    """
    rho = check_positive("rho", rho, allow_zero=True)
    return check_orders(orders) * rho


def compose_rdp(curves: Sequence[np.ndarray], counts: Sequence[int] | None = None) -> np.ndarray:
    """Adaptive composition: ``sum_i counts[i] * curves[i]`` order by order (Mironov 2017, Prop. 1).

    Parameters
    ----------
    curves : sequence of array_like
        At least one RDP curve, all of the same shape (on the same orders), entries in ``[0, inf]``.
    counts : sequence of int, optional
        How many times each curve is composed, integers ``>= 0``; one each when omitted.

    Returns
    -------
    ndarray
        The composed curve, shaped like the curves; ``inf`` where a product overflows (a count of 0
        contributes 0 even where its curve is ``inf``).

    References
    ----------
    Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 1.
    """
    if len(curves) == 0:
        raise ValueError("compose_rdp needs at least one curve")
    counts = [1] * len(curves) if counts is None else list(counts)
    if len(counts) != len(curves):
        raise ValueError(f"counts has {len(counts)} entries but there are {len(curves)} curves")
    arrays = []
    for i, (c, k) in enumerate(zip(curves, counts)):
        check_int(f"counts[{i}] (a count)", k, low=0)  # a fractional count composes nothing meaningful
        try:
            c = np.asarray(c, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"curves[{i}]={c!r} is not an array of numbers: expected an RDP curve") from None
        if np.any(np.isnan(c)) or np.any(c < 0):
            raise ValueError(f"curves[{i}] (a curve) contains NaN or negative values: expected every entry of an "
                             "RDP curve in [0, inf]")
        arrays.append(c)
    total = np.zeros_like(arrays[0])
    for c, k in zip(arrays, counts):
        if c.shape != total.shape:
            raise ValueError(f"curve shapes differ: {c.shape} vs {total.shape}")
        with np.errstate(over="ignore"):  # a huge count times a large curve is inf: no privacy, not an error
            total = total + np.where(int(k) == 0, 0.0, float(int(k)) * c)
    return total


# -- the Poisson-subsampled Gaussian ---------------------------------------------------------------------------

def _log_expm1(x: np.ndarray) -> np.ndarray:
    """log(e^x - 1) for x > 0, without overflow."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        return np.where(x > 30.0, x + np.log1p(-np.exp(-np.minimum(x, 1e300))), np.log(np.expm1(np.minimum(x, 30.0))))


def _log_a_minus_1_int(q: float, sigma: float, alphas: np.ndarray) -> np.ndarray:
    """log(A_alpha - 1) for integer orders (Mironov et al. 2019, Sec. 3.3, integer case).

    ``A_alpha = sum_k C(alpha,k) q^k (1-q)^(alpha-k) exp((k^2-k)/(2 sigma^2))``; the binomial weights sum
    to one and the k = 0, 1 exponents vanish, so ``A_alpha - 1`` keeps only k >= 2 terms with the factor
    ``expm1((k^2-k)/(2 sigma^2)) > 0``: a sum of positive numbers, summed with logsumexp. Orders are
    processed together as rows of one (orders x k) array.
    """
    out = np.empty(alphas.shape)
    order = np.argsort(alphas)
    i = 0
    while i < order.size:
        j = i + 1  # batch while the (orders x k) array stays below ~2M entries
        while j < order.size and alphas[order[j]] * (j - i + 1) <= 2_000_000:
            j += 1
        a = alphas[order[i:j]][:, None]
        k = np.arange(2.0, alphas[order[j - 1]] + 1.0)[None, :]
        valid = k <= a
        with np.errstate(invalid="ignore"):
            log_terms = (
                special.gammaln(a + 1.0) - special.gammaln(k + 1.0) - special.gammaln(np.where(valid, a - k, 0.0) + 1.0)
                + k * math.log(q) + (a - k) * math.log1p(-q)
                + _log_expm1((k * k - k) / (2.0 * sigma**2))
            )
        out[order[i:j]] = special.logsumexp(np.where(valid, log_terms, -np.inf), axis=1)
        i = j
    return out


_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)
_MAX_NODES = 400_000
_WIDTH = 0.5  # panel width in units of min(sigma, sigma^2)
#: the most integrand evaluations (quadrature nodes times orders) one curve's fractional orders may take: about
#: 10-20 s on one core; a curve that needs more (thousands of fractional orders at a tiny sigma) is refused
MAX_QUADRATURE_WORK = 200_000_000


def _frac_batches(sigma: float, alphas: np.ndarray, order: np.ndarray) -> list[tuple[int, int, float, int]]:
    """The batches ``(i, j, hi, n_panels)`` of sorted orders ``order[i:j]`` that share one grid on ``[lo, hi]``."""
    width = _WIDTH * min(sigma, sigma * sigma)
    lo = -14.0 * sigma
    batches = []
    i = 0
    while i < order.size:
        hi = max(float(alphas[order[i]]), 1.0) + 14.0 * sigma
        n_panels = int(min(max(math.ceil((hi - lo) / width), 64), _MAX_NODES // len(_GL_X)))
        # batch the following orders onto this grid while the grid stays small enough for them
        j = i + 1
        while j < order.size:
            hj = max(float(alphas[order[j]]), 1.0) + 14.0 * sigma
            nj = int(min(max(math.ceil((hj - lo) / width), 64), _MAX_NODES // len(_GL_X)))
            if nj * len(_GL_X) * (j - i + 1) > 2_000_000 or hj > 2 * hi:
                break
            hi, n_panels = hj, nj
            j += 1
        batches.append((i, j, hi, n_panels))
        i = j
    return batches


def _check_work(work: int, alphas: np.ndarray, sigma: float, per_order: int) -> None:
    """Refuse a fractional-order integration of more than :data:`MAX_QUADRATURE_WORK` evaluations."""
    if work > MAX_QUADRATURE_WORK:
        raise ValueError(f"orders has {alphas.size} fractional orders (up to {float(alphas.max()):g}); at "
                         f"sigma={sigma:g} each takes up to {per_order} integrand evaluations, more than "
                         f"MAX_QUADRATURE_WORK={MAX_QUADRATURE_WORK:.0e} in all: expected at most "
                         f"{max(MAX_QUADRATURE_WORK // per_order, 1)} fractional orders at this sigma (integer "
                         "orders use a closed form and are not limited)")


def _log_a_minus_1_frac(q: float, sigma: float, alphas: np.ndarray, prune: Any = None) -> np.ndarray:
    """log(A_alpha - 1) for orders alpha > 1 (any, typically fractional) by exact numerical integration.

    ``A_alpha = E_{z ~ N(0, sigma^2)} [(1 - q + q exp((2z - 1)/(2 sigma^2)))^alpha]`` (Mironov et al. 2019,
    Sec. 3.2: the Renyi divergence of the mixture ``(1-q) N(0, s^2) + q N(1, s^2)`` from ``N(0, s^2)``, the
    larger of the two directions). With ``y = q expm1(u)``, ``E[y] = 0``, so
    ``A_alpha - 1 = E[g(z)]`` with ``g = (1 + y)^alpha - 1 - alpha y >= 0`` (convexity): no cancellation.

    The integrand is smooth on the scale ``min(sigma, sigma^2)`` and lives in ``[-14 sigma, alpha + 14 sigma]``
    (beyond, it is below e^-90 of its peak). Composite 8-point Gauss-Legendre on panels half of that
    scale integrates it to about machine precision (checked against mpmath at 40 digits in the tests).
    Orders are processed in batches that share one grid, so a whole curve costs a few array passes.
    ``prune`` (optional) is asked ``prune.hopeless(batch)`` before each batch, which is then left at ``inf``
    without integrating, and told ``prune.record(batch, values)`` after; the batches are formed the same
    way with or without it, so every integrated value is the same.
    """
    s2 = sigma * sigma
    lo = -14.0 * sigma
    out = np.empty(alphas.shape)
    order = np.argsort(alphas)
    batches = _frac_batches(sigma, alphas, order)
    work = [n_panels * len(_GL_X) * (j - i) for i, j, _, n_panels in batches]
    per_order = max(n_panels for *_, n_panels in batches) * len(_GL_X)
    if prune is None:
        _check_work(sum(work), alphas, sigma, per_order)
    done = 0
    for (i, j, hi, n_panels), cost in zip(batches, work):
        if prune is not None and prune.hopeless(alphas[order[i:j]]):
            out[order[i:j]] = np.inf
            continue
        done += cost
        _check_work(done, alphas, sigma, per_order)
        edges = np.linspace(lo, hi, n_panels + 1)
        half = 0.5 * np.diff(edges)
        mid = 0.5 * (edges[1:] + edges[:-1])
        z = (mid[:, None] + half[:, None] * _GL_X[None, :]).ravel()
        w = (half[:, None] * _GL_W[None, :]).ravel()
        a = alphas[order[i:j]][:, None]
        u = (2.0 * z - 1.0) / (2.0 * s2)
        log1p_y = np.logaddexp(math.log1p(-q), math.log(q) + u)  # log(1 + y) = log(1 - q + q e^u)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            y = q * np.expm1(np.minimum(u, 700.0))
            a_l = a * log1p_y
            # where alpha |y| < 1e-3 the direct form cancels: use sum_{k=2..7} C(alpha, k) y^k instead
            small = a * np.abs(y) < 1e-3
            ys = np.where(small, y, 0.0)
            term = a * ys
            series = np.zeros_like(ys)
            for k in range(2, 8):
                term = term * (a - k + 1) / k * ys
                series = series + term
            direct = np.expm1(np.minimum(a_l, 700.0)) - a * y
            log_g = np.log(np.where(small, series, np.where(direct > 0, direct, 1.0)))
            # large values: log g = a_l + log(1 - (1 + alpha y) e^{-a_l}), with log(1 + alpha y) for y > 0
            big = a_l > 30.0
            log_1ay = np.logaddexp(0.0, np.log(a) + math.log(q) + _log_expm1(np.where(u > 0, u, 1.0)))
            log_g = np.where(big, a_l + np.log(-np.expm1(np.minimum(log_1ay - a_l, -1e-300))), log_g)
        log_int = log_g + (np.log(w) - z * z / (2.0 * s2) - math.log(sigma * math.sqrt(2.0 * math.pi)))
        out[order[i:j]] = special.logsumexp(log_int, axis=1)
        if prune is not None:
            prune.record(alphas[order[i:j]], out[order[i:j]])
    return out


def _rdp_curve(q: float, sigma: float, a: np.ndarray, prune: Any = None) -> np.ndarray:
    out = np.full(a.shape, math.inf)
    finite = np.isfinite(a)
    if q == 1.0:
        out[finite] = a[finite] / (2.0 * sigma**2)
        return out
    is_int = finite & (np.mod(np.where(finite, a, 0.5), 1.0) == 0) & (a <= 100_000)
    log_am1 = np.empty(a.shape)
    if np.any(is_int):
        log_am1[is_int] = _log_a_minus_1_int(q, sigma, a[is_int])
        if prune is not None:
            prune.record(a[is_int], log_am1[is_int])
    frac = finite & ~is_int
    if np.any(frac):
        log_am1[frac] = _log_a_minus_1_frac(q, sigma, a[frac], prune)
    out[finite] = np.logaddexp(0.0, log_am1[finite]) / (a[finite] - 1.0)  # log A = log(1 + (A - 1))
    return out


def subsampled_gaussian_rdp(q: float, sigma: float, orders: Iterable[float] | float = DEFAULT_ORDERS) -> np.ndarray:
    """RDP curve of one step of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar & Zhang 2019).

    Each record enters the batch independently with probability ``q``; the (sensitivity-1) sum gets
    ``N(0, sigma^2 I)``, so ``sigma`` is the *noise multiplier*. Neighbours: add or remove one record.
    ``rdp(alpha) = log(A_alpha) / (alpha - 1)``; ``q = 1`` gives :func:`gaussian_rdp`; order ``inf`` gives
    ``inf``. Compose ``T`` steps by multiplying by ``T``.

    Parameters
    ----------
    q : float in (0, 1]
        Sampling rate.
    sigma : float > 0
        Noise multiplier (std of the noise divided by the L2 sensitivity).
    orders : array of orders > 1
        Integer orders use the closed form, others exact numerical integration; orders above
        :data:`MAX_ORDER` give ``inf``.

    Returns
    -------
    ndarray
        ``log(A_alpha) / (alpha - 1)`` per order, ``>= 0``; ``inf`` at order ``inf`` and above
        :data:`MAX_ORDER`.

    References
    ----------
    Mironov, Talwar & Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism", 2019, Sections 3.2
    (fractional orders, the defining integral) and 3.3 (integer orders).
    """
    return _sampled_curve(q, sigma, orders)


def _sampled_curve(q: float, sigma: float, orders: Iterable[float] | float, prune: Any = None) -> np.ndarray:
    """:func:`subsampled_gaussian_rdp`, with ``prune`` passed to the fractional orders' integration."""
    q = check_probability("q", q, allow_zero=False)
    sigma = check_scale("sigma", sigma)
    a = check_orders(orders)
    big = a > MAX_ORDER  # the series overflows there: inf is a sound (if useless) value at such an order
    if not np.any(big):
        return _rdp_curve(q, sigma, a, prune)
    out = np.full(a.shape, np.inf)
    if np.any(~big):
        out[~big] = _rdp_curve(q, sigma, a[~big], prune)
    return out


class _HopelessOrders:
    """Which batches of fractional orders cannot give the smallest epsilon, so need no integration.

    The Renyi divergence of a fixed pair of distributions does not decrease with the order, and each conversion
    of :func:`~unlearnkit.privacy.rdp.rdp_to_dp` does not decrease with the RDP value at a fixed order. So an
    order ``alpha`` has epsilon at least the conversion, at ``alpha``, of the largest RDP value already computed
    at an order ``<= alpha``; a batch whose every order has that lower bound above the best epsilon so far
    (by more than the integration's relative error of 1e-7) cannot change the minimum. At a tiny noise
    multiplier the best order is the smallest, and all but the first batches are skipped.
    """

    def __init__(self, steps: int, delta: float, method: str) -> None:
        self.steps, self.delta, self.method = float(steps), delta, method
        self.orders, self.values = np.empty(0), np.empty(0)     # orders computed so far and steps * rdp there
        self.best, self.best_value = math.inf, 0.0

    def record(self, alphas: np.ndarray, log_a_minus_1: np.ndarray) -> None:
        with np.errstate(over="ignore", invalid="ignore"):
            values = np.logaddexp(0.0, log_a_minus_1) / (alphas - 1.0) * self.steps
        keep = np.isfinite(values)
        self.orders = np.concatenate([self.orders, alphas[keep]])
        self.values = np.concatenate([self.values, values[keep]])
        eps = _epsilons(alphas[keep], values[keep], self.delta, self.method)
        if eps.size and float(eps.min()) < self.best:
            self.best, self.best_value = float(eps.min()), float(values[keep][int(np.argmin(eps))])

    def hopeless(self, alphas: np.ndarray) -> bool:
        if not math.isfinite(self.best):
            return False
        below = self.orders[None, :] <= alphas[:, None]
        low = np.max(np.where(below, self.values[None, :], 0.0), axis=1, initial=0.0)
        margin = 1e-7 * (low + self.best_value) + 1e-12
        return bool(np.all(_epsilons(alphas, low, self.delta, self.method) > self.best + margin))


def subsampled_gaussian_epsilon(q: float, sigma: float, steps: int, delta: float, *,
                                orders: Iterable[float] | float = DEFAULT_ORDERS, method: str = "cks") -> float:
    """Epsilon of ``steps`` Poisson-subsampled Gaussian steps: ``rdp_to_dp(orders, steps * curve, delta)[0]``.

    The same number as converting :func:`subsampled_gaussian_rdp` times ``steps`` with :func:`rdp_to_dp`, bit for
    bit, but fractional orders that cannot give the minimum are not integrated (:class:`_HopelessOrders`): at a
    tiny ``sigma`` the best order is the smallest, and the rest of the curve is skipped.

    Parameters
    ----------
    q : float
        Sampling rate, in (0, 1].
    sigma : float
        Noise multiplier, ``> 0``.
    steps : int
        Number of steps, ``>= 1``.
    delta : float
        In (0, 1).
    orders : iterable of float
        Renyi orders, each in ``(1, inf]``.
    method : {"cks", "balle", "mironov"}
        The conversion of :func:`rdp_to_dp`.

    Returns
    -------
    float
        The smallest epsilon ``>= 0`` over the orders (``inf`` if every order gives ``inf``).

    References
    ----------
    Mironov, Talwar & Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism", 2019 (the curve);
    van Erven & Harremoes, "Renyi Divergence and Kullback-Leibler Divergence", IEEE Trans. Inf. Theory 2014,
    Theorem 3 (the divergence does not decrease with the order: why skipped orders cannot win).
    """
    a = check_orders(orders)
    steps = check_int("steps", steps, low=1)
    prune = _HopelessOrders(steps, check_probability("delta", delta, allow_zero=False, allow_one=False),
                            check_choice("method", method, CONVERSIONS))
    rdp = _sampled_curve(q, sigma, a, prune) * steps
    return rdp_to_dp(a, rdp, delta, method=method, warn_edge=False)[0]


def subsampled_gaussian_rdp_mpmath(q: float, sigma: float, alpha: float, *, dps: int = 30) -> float:
    """The same RDP value by arbitrary-precision quadrature (mpmath): slow, for teaching and cross-checks.

    Integrates ``A_alpha = E_{z ~ N(0, sigma^2)}[(1 - q + q exp((2z - 1)/(2 sigma^2)))^alpha]`` with
    ``mpmath.quad`` at ``dps`` decimal digits, splitting the line at 0, 1/2, 1 and alpha.

    Parameters
    ----------
    q : float
        Sampling rate, in (0, 1].
    sigma : float
        Noise multiplier, ``> 0``.
    alpha : float
        One Renyi order, in ``(1, inf]``.
    dps : int
        Decimal digits of the mpmath working precision.

    Returns
    -------
    float
        ``log(A_alpha) / (alpha - 1)``; ``inf`` for ``alpha = inf``.

    References
    ----------
    Mironov, Talwar & Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism", 2019, Section 3.2.
    """
    import mpmath as mp  # deferred: imports mpmath

    q = check_probability("q", q, allow_zero=False)
    sigma = check_positive("sigma", sigma)
    alpha = float(check_orders([alpha])[0])
    if math.isinf(alpha):
        return math.inf
    with mp.workdps(dps):
        qq, s, a = mp.mpf(q), mp.mpf(sigma), mp.mpf(alpha)
        f = lambda z: mp.exp(-z * z / (2 * s * s)) / (s * mp.sqrt(2 * mp.pi)) * (
            1 - qq + qq * mp.exp((2 * z - 1) / (2 * s * s))) ** a
        pts = sorted({-30 * s, mp.mpf(0), mp.mpf(1) / 2, mp.mpf(1), a, a + 30 * s})
        return float(mp.log(mp.quad(f, pts)) / (a - 1))


# -- conversions --------------------------------------------------------------------------------------------

def _check_curve(orders, rdp) -> tuple[np.ndarray, np.ndarray]:
    a = check_orders(orders)
    r = np.atleast_1d(np.asarray(rdp, dtype=float))
    if r.shape != a.shape:
        raise ValueError(f"rdp has shape {r.shape} but orders has shape {a.shape}; they must match")
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ValueError("rdp contains NaN or negative values; an RDP curve is non-negative")
    return a, r


def _epsilons(a: np.ndarray, r: np.ndarray, delta: float, method: str) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if method == "mironov":
            eps = r + math.log(1.0 / delta) / (a - 1.0)
        else:
            eps = r + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
        eps = np.where(np.isinf(a) | np.isinf(r), np.inf, eps)
        if method == "cks":
            eps = np.where(a > 1.01, eps, np.inf)
            eps = np.where(delta**2 + np.expm1(-r) > 0, 0.0, eps)  # KL bound: delta >= sqrt(1 - e^{-D})
    return np.maximum(eps, 0.0)


def epsilons_per_order(orders: Iterable[float], rdp: Iterable[float], delta: float, method: str = "cks") -> np.ndarray:
    """The epsilon each single order gives (before the minimum over orders), for plots and teaching.

    Parameters
    ----------
    orders, rdp : iterable of float
        The curve, of equal length: ``(orders[i], rdp[i])``-RDP, orders in ``(1, inf]``, ``rdp >= 0``.
    delta : float
        In (0, 1).
    method : {"cks", "balle", "mironov"}
        The conversion (see the module docstring).

    Returns
    -------
    ndarray
        One epsilon ``>= 0`` per order (``inf`` at infinite orders or values, and under ``"cks"`` at orders
        ``<= 1.01``; 0 under ``"cks"`` where the KL bound already gives delta).

    References
    ----------
    Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 3 (``"mironov"``).
    Balle, Barthe, Gaboardi, Hsu & Sato, "Hypothesis Testing Interpretations and Renyi Differential Privacy",
    AISTATS 2020, Theorem 21 (``"balle"``).
    Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Proposition 12
    (``"cks"``).
    """
    a, r = _check_curve(orders, rdp)
    delta = check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_choice("method", method, CONVERSIONS)
    return _epsilons(a, r, delta, method)


def rdp_to_dp(
    orders: Iterable[float],
    rdp: Iterable[float],
    delta: float,
    method: str = "cks",
    *,
    warn_edge: bool = True,
) -> tuple[float, float]:
    """Convert an RDP curve to (epsilon, delta)-DP: returns ``(epsilon, best_order)``.

    Parameters
    ----------
    orders, rdp : arrays of equal length
        The curve: ``(orders[i], rdp[i])``-RDP for every i.
    delta : float in (0, 1)
    method : {"cks", "balle", "mironov"}
        See the module docstring for the three formulas and their sources.
    warn_edge : bool
        Warn (:class:`OrderGridWarning`) when the best order is the smallest or the largest of the grid,
        the situation of opacus#233: a wider grid could give a smaller epsilon.

    Returns
    -------
    (float, float)
        The smallest epsilon over the orders (``inf`` if all orders are infinite) and the order attaining it.

    References
    ----------
    .. [1] I. Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 3 ("mironov").
    .. [2] B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis Testing Interpretations and Renyi Differential
       Privacy", AISTATS 2020, Theorem 21 ("balle").
    .. [3] C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
       Proposition 12 ("cks").
    """
    a, r = _check_curve(orders, rdp)
    delta = check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_choice("method", method, CONVERSIONS)
    eps = _epsilons(a, r, delta, method)
    if not np.any(np.isfinite(eps)):
        return math.inf, math.nan
    i = int(np.argmin(eps))
    if warn_edge and a.size > 1 and eps[i] > 0 and (i == 0 or i == a.size - 1):
        side = "smallest" if i == 0 else "largest"
        warnings.warn(f"the best order {a[i]:g} is the {side} order of the grid; extend the orders for a "
                      "possibly smaller epsilon", OrderGridWarning, stacklevel=2)
    return float(eps[i]), float(a[i])


def rdp_to_delta(orders: Iterable[float], rdp: Iterable[float], epsilon: float,
                 method: str = "cks") -> tuple[float, float]:
    """The inverse reading: the smallest delta for a given epsilon, ``(delta, best_order)``.

    ``"mironov"``: ``delta = exp((alpha - 1)(rdp - eps))`` (Mironov 2017, Prop. 3);
    ``"balle"``/``"cks"``: ``delta = exp((alpha-1)(rdp - eps + log(1 - 1/alpha)) - log alpha)`` (Balle et al.
    2020 Thm 21 / Canonne et al. 2020 Prop 12; ``"cks"`` adds the KL bound and skips orders <= 1.01 as
    ``dp_accounting.rdp.compute_delta``).

    Parameters
    ----------
    orders, rdp : iterable of float
        The curve, of equal length: ``(orders[i], rdp[i])``-RDP, orders in ``(1, inf]``, ``rdp >= 0``.
    epsilon : float
        ``>= 0``, finite.
    method : {"cks", "balle", "mironov"}
        The conversion.

    Returns
    -------
    (float, float)
        The smallest delta over the orders, clipped to [0, 1], and the order attaining it.

    References
    ----------
    Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 3 (``"mironov"``).
    Balle, Barthe, Gaboardi, Hsu & Sato, "Hypothesis Testing Interpretations and Renyi Differential Privacy",
    AISTATS 2020, Theorem 21 (``"balle"``).
    Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Proposition 12
    (``"cks"``).
    """
    a, r = _check_curve(orders, rdp)
    epsilon = check_positive("epsilon", epsilon, allow_zero=True)
    check_choice("method", method, CONVERSIONS)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if method == "mironov":
            logd = (a - 1.0) * (r - epsilon)
        else:
            logd = (a - 1.0) * (r - epsilon + np.log1p(-1.0 / a)) - np.log(a)
        logd = np.where(np.isinf(a) | np.isinf(r), np.inf, logd)
        if method == "cks":
            logd = np.where(a > 1.01, logd, np.inf)
            kl = np.where(r == 0, -np.inf, 0.5 * np.log1p(-np.exp(-r)))
            logd = np.minimum(logd, kl)
    i = int(np.argmin(logd))
    return float(min(math.exp(min(logd[i], 0.0)), 1.0)), float(a[i])
