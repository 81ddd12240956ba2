"""Exact Gaussian composition and the random-length (mixture) bound for compositions of Gaussians.

Two facts, both exact for plain (non-subsampled) Gaussian mechanisms:

1. **Composition.** ``k`` adaptively composed Gaussian mechanisms with sensitivities ``Delta_t`` and noise
   ``sigma_t`` are together ``mu``-GDP with ``mu = sqrt(sum_t (Delta_t/sigma_t)^2)`` (Dong, Roth & Su 2022,
   Cor. 3.3), and ``mu``-GDP has the privacy profile of one Gaussian of sensitivity ``mu`` and unit noise,
   ``delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)`` (Balle & Wang 2018, Thm 8; Dong et al.
   Cor. 2.13). :func:`gaussian_composition_epsilon` reads it at ``delta``; it is never looser than Renyi DP
   (the RDP curve ``alpha mu^2/2`` is what the same mechanism gives, and converting it loses the gap
   shown below).
2. **Mixture over a data-independent count.** If the number ``K`` of Gaussian steps is random, drawn
   independently of the data with the same law in both worlds, then for the joint output ``(K, view)``
   ``H_eps(P || Q) = sum_k P(K = k) H_eps(P_k || Q_k)`` (the common marginal of K factors out), and hiding
   ``K`` can only lower it (post-processing; equivalently joint convexity of the hockey-stick divergence
   ``H_eps(P||Q) = sup_S P(S) - e^eps Q(S)``). Hence

   ``delta(eps) <= sum_k P(K = k) delta_{mu_k}(eps)``, ``mu_k = sqrt(mu_base^2 + k mu_step^2)``

   (:func:`mixture_delta`). The capped composition of the current RR-DU accountants charges every ``k`` at a
   quantile ``k_cap`` and pays ``P(K > k_cap)`` in delta (:func:`capped_delta`); the mixture averages
   instead, and since ``delta_{mu_k}`` grows with ``k`` it is never larger:
   ``sum_k P(k) delta_k <= delta_{k_cap} + P(K > k_cap)`` for every ``k_cap``.

The saving of 1. (epsilon at ``delta = 1e-5``; RDP is Prop. A.8 / Mironov 2017 Prop. 3 on ``alpha mu^2/2``,
what :mod:`unlearnkit.methods.rrdu.sound` used before; computed by :func:`composition_saving_table`):

=====  ==========  ===========  ========
mu     exact GDP   RDP (A.8)    saving
=====  ==========  ===========  ========
0.25   0.926       1.231        24.7 %
0.5    1.993       2.524        21.0 %
1      4.377       5.299        17.4 %
2      9.997       11.597       13.8 %
4      24.382      27.194       10.3 %
=====  ==========  ===========  ========

(``mu = 1`` is the peers' anchor ``sigma = 10``, 100 steps: PLD 4.38; dp_accounting's RDP, with a finer
conversion than Prop. A.8, 4.73.)

A probability mass function ``pmf[k] = P(K = k)`` for ``k = 0 .. len(pmf) - 1`` may sum to less than 1:
the missing mass (a truncated tail) is charged ``delta = 1``, which keeps every bound sound.
Pure maths: numpy and scipy only.
"""

from __future__ import annotations

import math
from typing import Sequence, Union

import numpy as np
from scipy import optimize

from .._validate import SCALE_MAX, check_pmf, check_probability, check_scale
from .gaussian import ArrayLike, analytic_gaussian_epsilon, theta_epsilon
from .linear_rdp import linear_rdp_epsilon


def gaussian_composition_mu(mus: Sequence[float]) -> float:
    """``mu = sqrt(sum_t mu_t^2)`` with ``mu_t = Delta_t / sigma_t`` (Dong, Roth & Su 2022, Cor. 3.3).

    Parameters
    ----------
    mus : sequence of float
        Per-step ratios ``Delta_t / sigma_t >= 0`` (``inf`` for a noise-free step that reads the data).

    Returns
    -------
    float
        The total ``mu >= 0``; ``inf`` when any ratio is infinite.

    References
    ----------
    Dong, Roth & Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022 (arXiv 2019), Corollary 3.3.
    """
    arr = np.asarray(mus, dtype=float).reshape(-1)
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise ValueError(f"mus={mus!r} is out of range: expected every Delta_t/sigma_t in [0, inf]")
    return float(math.sqrt(float(np.sum(arr**2)))) if np.all(np.isfinite(arr)) else math.inf


def _gdp_delta(epsilon: float, mu: np.ndarray) -> np.ndarray:
    """The mu-GDP profile at one epsilon for an array of mu (0 gives 0, inf gives 1)."""
    mu = np.asarray(mu, dtype=float)
    finite = np.isfinite(mu)
    out = np.ones_like(mu)
    # below 1e-100 the profile underflows to nan; bound it by its value at eps = 0, 2 Phi(mu/2) - 1 <= 0.4 mu
    tiny = finite & (mu < 1e-100)
    out[tiny] = 0.4 * mu[tiny]
    rest = finite & ~tiny
    if np.any(rest):
        out[rest] = theta_epsilon(float(epsilon), mu[rest])
    return out


def gaussian_composition_delta(epsilon: ArrayLike, mus: Sequence[float]) -> ArrayLike:
    """The exact delta(epsilon) of the composition of Gaussians with ratios ``mus`` (module fact 1).

    Parameters
    ----------
    epsilon : float or array_like
        ``>= 0``, finite.
    mus : sequence of float
        Per-step ratios ``Delta_t / sigma_t >= 0`` (``inf`` allowed).

    Returns
    -------
    float or ndarray
        The ``mu``-GDP profile ``delta(epsilon)`` in [0, 1] of the total ``mu``, shaped like ``epsilon``
        (1 for ``mu = inf``).

    References
    ----------
    Dong, Roth & Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022 (arXiv 2019), Corollaries 2.13 and
    3.3.
    Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and Optimal
    Denoising", ICML 2018, Theorem 8.
    """
    mu = gaussian_composition_mu(mus)
    eps = _check_eps_array(epsilon)
    out = np.array([_gdp_delta(e, np.array([mu]))[0] for e in eps.reshape(-1)]).reshape(eps.shape)
    return float(out) if out.ndim == 0 else out


def gaussian_composition_epsilon(mus: Sequence[float], delta: float) -> float:
    """The exact epsilon at ``delta`` of adaptively composed plain Gaussians (module fact 1).

    ``mus`` are the per-step ``Delta_t / sigma_t``; the total ``mu`` is read through the analytic Gaussian
    (:func:`unlearnkit.privacy.analytic_gaussian_epsilon` with sensitivity ``mu`` and unit noise). Peers
    anchor: ``sigma = 10``, 100 steps of sensitivity 1 (``mu = 1``) at ``delta = 1e-5`` gives 4.38 (RDP 4.73).
    Returns 0 for ``mu = 0`` and ``inf`` for ``mu = inf``.

    Parameters
    ----------
    mus : sequence of float
        Per-step ratios ``Delta_t / sigma_t >= 0`` (``inf`` allowed).
    delta : float
        In (0, 1).

    Returns
    -------
    float
        The smallest epsilon ``>= 0`` with ``delta(epsilon) <= delta``: 0 when ``0.4 mu <= delta`` (already
        ``(0, delta)``), ``inf`` when ``mu > 1e100``.

    References
    ----------
    Dong, Roth & Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022 (arXiv 2019), Corollaries 2.13 and
    3.3.
    Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and Optimal
    Denoising", ICML 2018, Theorem 8.
    """
    delta = check_probability("delta", delta, allow_zero=False, allow_one=False)
    mu = gaussian_composition_mu(mus)
    if 0.4 * mu <= delta:  # delta(0) = 2 Phi(mu/2) - 1 <= mu / sqrt(2 pi): already (0, delta)
        return 0.0
    if mu > SCALE_MAX:  # beyond the solver's range epsilon exceeds mu^2/2: report it as no privacy
        return math.inf
    return analytic_gaussian_epsilon(1.0, delta, sensitivity=mu)


def _check_eps_array(epsilon: ArrayLike) -> np.ndarray:
    eps = np.asarray(epsilon, dtype=float)
    if np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError(f"epsilon={epsilon!r} is out of range: expected epsilon in [0, inf)")
    return eps


def _check_mu(name: str, value: float) -> float:
    v = float(value)
    if math.isnan(v) or v < 0:
        raise ValueError(f"{name}={value!r} is out of range: expected {name} in [0, inf]")
    return v


def _mus(n: int, mu_per_step: float, mu_base: float) -> np.ndarray:
    mu_per_step = _check_mu("mu_per_step", mu_per_step)
    mu_base = _check_mu("mu_base", mu_base)
    if math.isinf(mu_per_step) or math.isinf(mu_base):
        out = np.full(n, math.inf)
        if not math.isinf(mu_base):
            out[0] = mu_base
        return out
    with np.errstate(over="ignore"):  # mu beyond 1e154 squares to inf: no privacy at all, the right limit
        return np.sqrt(np.float64(mu_base)**2 + np.arange(n) * np.float64(mu_per_step)**2)


def mixture_delta(epsilon: ArrayLike, pmf: Sequence[float], mu_per_step: float, *,
                  mu_base: float = 0.0) -> ArrayLike:
    """``sum_k P(K = k) delta_{mu_k}(eps)`` with ``mu_k = sqrt(mu_base^2 + k mu_per_step^2)`` (module fact 2).

    Sound for the joint output (K, view) when K is independent of the data; the missing mass of a truncated
    ``pmf`` counts as delta 1.

    Parameters
    ----------
    epsilon : float or array
        ``>= 0``.
    pmf : sequence of float
        ``P(K = k)`` for ``k = 0, 1, ...``; sums to at most 1.
    mu_per_step : float
        ``Delta / sigma`` of one Gaussian step (``>= 0``, ``inf`` for a noise-free step).
    mu_base : float
        GDP parameter of a part that is always there (e.g. a noisily trained start), ``>= 0``.

    Returns
    -------
    float or ndarray
        The bound, in [0, 1], shaped like ``epsilon``.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022 (arXiv 1905.02383),
       Corollary 3.3 (composition: mu_k) and Corollary 2.13 (the profile delta_mu(eps)).
    .. [2] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and
       Optimal Denoising", ICML 2018, Theorem 8 (the exact privacy profile of one Gaussian).
    """
    arr = check_pmf(pmf)
    mus = _mus(arr.size, mu_per_step, mu_base)
    tail = max(0.0, 1.0 - float(arr.sum()))
    eps = _check_eps_array(epsilon)
    out = np.array([min(1.0, float(arr @ _gdp_delta(e, mus)) + tail) for e in eps.reshape(-1)]).reshape(eps.shape)
    return float(out) if out.ndim == 0 else out


def mixture_epsilon(delta: float, pmf: Sequence[float], mu_per_step: float, *, mu_base: float = 0.0) -> float:
    """The smallest epsilon with :func:`mixture_delta` ``<= delta`` (Brent's method on a bracket, then nudged
    upwards so the bound holds exactly as evaluated). ``inf`` when no epsilon reaches ``delta`` (the tail or
    noise-free steps carry more than ``delta``).

    Parameters
    ----------
    delta : float
        In (0, 1).
    pmf : sequence of float
        ``P(K = k)`` for ``k = 0, 1, ...``, non-negative, summing to at most 1 (the missing mass counts as
        delta 1).
    mu_per_step : float
        ``Delta / sigma`` of one Gaussian step, ``>= 0`` (``inf`` for a noise-free step).
    mu_base : float
        GDP parameter of a part that is always there, ``>= 0`` (``inf`` allowed).

    Returns
    -------
    float
        Epsilon ``>= 0`` (0 when :func:`mixture_delta` at 0 is already ``<= delta``), or ``inf``.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022 (arXiv 1905.02383),
       Corollaries 2.13 and 3.3 (the profile inverted here by root finding).
    .. [2] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and
       Optimal Denoising", ICML 2018, Theorem 8 (the exact privacy profile of one Gaussian).
    """
    delta = check_probability("delta", delta, allow_zero=False, allow_one=False)
    arr = check_pmf(pmf)
    mus = _mus(arr.size, mu_per_step, mu_base)
    floor = float(arr[~np.isfinite(mus)].sum()) + max(0.0, 1.0 - float(arr.sum()))
    if floor >= delta:
        return math.inf

    def md(e: float) -> float:
        return mixture_delta(e, arr, mu_per_step, mu_base=mu_base)

    if md(0.0) <= delta:
        return 0.0
    f = lambda e: math.log(max(md(e), 1e-300)) - math.log(delta)  # noqa: E731  decreasing in e
    hi = max(1.0, min(float(np.max(mus[np.isfinite(mus)])), 1e150) ** 2)
    while f(hi) > 0:
        if hi > 1e300:  # no representable epsilon reaches delta (mu_per_step near the double range)
            return math.inf
        hi *= 2.0
    eps = optimize.brentq(f, 0.0, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps, maxiter=500)
    while md(eps) > delta:
        eps = math.nextafter(eps, math.inf)
    return eps


def mixture_sigma(epsilon: float, delta: float, pmf: Sequence[float], sensitivity: float = 1.0, *,
                  mu_base: float = 0.0) -> float:
    """The smallest per-step noise ``sigma`` with ``mixture_delta(epsilon, pmf, sensitivity/sigma) <= delta``.

    Brent's method on ``log sigma`` inside a bracket that is widened until the bound changes side, then
    nudged upwards. ``0`` when ``K = 0`` almost surely (nothing to hide). Raises ``ValueError`` when even
    infinite noise cannot reach ``(epsilon, delta)`` (``mu_base`` or the truncated tail alone exceed it).

    Parameters
    ----------
    epsilon : float
        Target epsilon, in [1e-100, 1e100].
    delta : float
        Target delta, in (0, 1).
    pmf : sequence of float
        ``P(K = k)`` for ``k = 0, 1, ...``, non-negative, summing to at most 1 (the missing mass counts as
        delta 1).
    sensitivity : float
        L2 sensitivity of one step, in [1e-100, 1e100].
    mu_base : float
        GDP parameter of a part that is always there, ``>= 0``.

    Returns
    -------
    float
        The per-step sigma ``>= 0`` (0 when ``P(K >= 1) = 0``).

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022 (arXiv 1905.02383),
       Corollaries 2.13 and 3.3 (the profile inverted here by root finding in sigma).
    .. [2] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and
       Optimal Denoising", ICML 2018, Theorem 8 (the exact privacy profile of one Gaussian).
    """
    epsilon = check_scale("epsilon", epsilon)
    delta = check_probability("delta", delta, allow_zero=False, allow_one=False)
    sensitivity = check_scale("sensitivity", sensitivity)
    arr = check_pmf(pmf)
    floor = mixture_delta(epsilon, arr, 0.0, mu_base=mu_base)
    if floor > delta:
        raise ValueError(f"(epsilon, delta)=({epsilon:g}, {delta:g}) is out of range: with mu_base={mu_base:g} and "
                         f"tail mass {max(0.0, 1 - arr.sum()):.3g} the bound is {floor:.3g} even without per-step "
                         "leakage; expected a larger epsilon or delta")
    if float(arr[1:].sum()) == 0.0:
        return 0.0

    def f(log_s: float) -> float:
        d = mixture_delta(epsilon, arr, sensitivity / math.exp(log_s), mu_base=mu_base)
        return math.log(max(d, 1e-300)) - math.log(delta)

    lo = hi = math.log(sensitivity)
    for _ in range(400):
        if f(lo) > 0:
            break
        lo -= 1.0
    for _ in range(400):
        if f(hi) <= 0:
            break
        hi += 1.0
    else:  # pragma: no cover - delta_k -> floor < delta as sigma -> inf, so this is unreachable
        raise ValueError(f"no sigma up to {math.exp(hi):.3g} reaches delta={delta:g}")
    if f(lo) <= 0:  # tiny per-step leakage already suffices at the lowest bracket
        return math.exp(lo)
    sigma = math.exp(optimize.brentq(f, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500))
    while mixture_delta(epsilon, arr, sensitivity / sigma, mu_base=mu_base) > delta:
        sigma = math.nextafter(sigma, math.inf)
    return sigma


def capped_delta(epsilon: ArrayLike, pmf: Sequence[float], mu_per_step: float, k_cap: int, *,
                 mu_base: float = 0.0) -> ArrayLike:
    """The capped composition: ``P(K > k_cap) + delta_{mu_{k_cap}}(eps)`` (every count charged at ``k_cap``,
    the tail paid in delta), the way the quantile accountants of :mod:`unlearnkit.methods.rrdu.certify`
    treat the visit count, here with the exact Gaussian profile instead of RDP.

    Parameters
    ----------
    epsilon : float or array_like
        ``>= 0``, finite.
    pmf : sequence of float
        ``P(K = k)`` for ``k = 0, 1, ...``, non-negative, summing to at most 1 (the missing mass counts as
        delta 1).
    mu_per_step : float
        ``Delta / sigma`` of one Gaussian step, ``>= 0`` (``inf`` for a noise-free step).
    mu_base : float
        GDP parameter of a part that is always there, ``>= 0`` (``inf`` allowed).
    k_cap : int
        The cap, an integer ``>= 0``.

    Returns
    -------
    float or ndarray
        ``min(1, P(K > k_cap) + delta_{mu_{k_cap}}(epsilon))``, shaped like ``epsilon``.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022 (arXiv 1905.02383),
       Corollaries 2.13 and 3.3.
    .. [2] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), Theorem
       5.1 and its proof sketch (the visit count M_u ~ Binomial(T_u, p)) with Appendix C.5 (its tail bounded by
       Chernoff; here by the exact quantile).
    """
    arr = check_pmf(pmf)
    if not isinstance(k_cap, (int, np.integer)) or k_cap < 0:
        raise ValueError(f"k_cap={k_cap!r} is out of range: expected an integer >= 0")
    tail = max(0.0, 1.0 - float(arr[: k_cap + 1].sum()))
    mu = float(_mus(k_cap + 1, mu_per_step, mu_base)[k_cap])
    eps = _check_eps_array(epsilon)
    out = np.array([min(1.0, tail + float(_gdp_delta(e, np.array([mu]))[0])) for e in eps.reshape(-1)])
    out = out.reshape(eps.shape)
    return float(out) if out.ndim == 0 else out


def _quantile(arr: np.ndarray, tail_delta: float) -> int:
    """Smallest ``k`` with ``P(K > k) <= tail_delta``."""
    cdf = np.cumsum(arr)
    ok = np.nonzero(1.0 - cdf <= tail_delta)[0]
    if ok.size == 0:
        raise ValueError(f"tail_delta={tail_delta:g} is out of range: the pmf's missing mass "
                         f"{1 - cdf[-1]:.3g} exceeds it")
    return int(ok[0])


def capped_epsilon(delta: float, pmf: Sequence[float], mu_per_step: float, *, tail_delta: float,
                   conversion: str = "gaussian", mu_base: float = 0.0) -> float:
    """Epsilon of the capped composition: the count capped at its ``tail_delta`` upper quantile, the rest of
    ``delta`` given to the conversion (``delta - tail_delta``). ``conversion="gaussian"`` is exact GDP;
    ``"rdp"`` is Prop. A.8 (Mironov 2017, Prop. 3) on ``alpha mu^2/2``, as the RR-DU accountants B/C/S do.

    Parameters
    ----------
    delta : float
        In (0, 1).
    pmf : sequence of float
        ``P(K = k)`` for ``k = 0, 1, ...``, non-negative, summing to at most 1 (the missing mass counts as
        delta 1).
    mu_per_step : float
        ``Delta / sigma`` of one Gaussian step, ``>= 0`` (``inf`` for a noise-free step).
    mu_base : float
        GDP parameter of a part that is always there, ``>= 0`` (``inf`` allowed).
    tail_delta : float
        The part of delta paid for ``K > k_cap``, in ``[0, delta)``; the cap is the smallest ``k`` with
        ``P(K > k) <= tail_delta``.
    conversion : {"gaussian", "rdp"}
        Exact GDP or the RDP conversion.

    Returns
    -------
    float
        Epsilon ``>= 0`` at ``delta - tail_delta`` of the composition of ``k_cap`` steps (0 when its ``mu``
        is 0, ``inf`` when it is infinite).

    References
    ----------
    Dong, Roth & Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022 (arXiv 2019), Corollaries 2.13 and 3.3
    (``"gaussian"``).
    Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 3 = Lamri & Maniatakos, "Fully Decentralized
    Certified Unlearning", Proposition A.8 (``"rdp"``).
    """
    delta = check_probability("delta", delta, allow_zero=False, allow_one=False)
    tail_delta = check_probability("tail_delta", tail_delta, allow_zero=True, allow_one=False)
    if tail_delta >= delta:
        raise ValueError(f"tail_delta={tail_delta:g} is out of range: expected tail_delta in [0, delta={delta:g})")
    if conversion not in ("gaussian", "rdp"):
        raise ValueError(f"conversion={conversion!r} is out of range: expected 'gaussian' or 'rdp'")
    arr = check_pmf(pmf)
    k = _quantile(arr, tail_delta)
    mu = float(_mus(k + 1, mu_per_step, mu_base)[k])
    if mu == 0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    if conversion == "gaussian":
        return gaussian_composition_epsilon([mu], delta - tail_delta)
    return linear_rdp_epsilon(mu**2 / 2, delta - tail_delta, method="mironov")


def composition_saving_table(mus: Sequence[float] = (0.25, 0.5, 1.0, 2.0, 4.0), delta: float = 1e-5) -> list[dict]:
    """Rows ``{"mu", "exact", "rdp", "saving"}``: exact-GDP epsilon against the RDP (Prop. A.8) epsilon of the
    same Gaussian composition; the table of the module docstring.

    Parameters
    ----------
    mus : sequence of float
        Total GDP parameters, each ``> 0``, finite.
    delta : float
        In (0, 1).

    Returns
    -------
    list of dict
        One row per ``mu``: ``"mu"``, ``"exact"`` (:func:`gaussian_composition_epsilon`), ``"rdp"``
        (``mu^2/2 + 2 sqrt(mu^2/2 ln(1/delta))``) and ``"saving" = 1 - exact / rdp``.

    References
    ----------
    Dong, Roth & Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022 (arXiv 2019), Corollaries 2.13 and
    3.3.
    Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 3 = Lamri & Maniatakos, "Fully Decentralized
    Certified Unlearning", Proposition A.8.
    """
    rows = []
    for mu in mus:
        exact = gaussian_composition_epsilon([mu], delta)
        rdp = linear_rdp_epsilon(mu**2 / 2, delta, method="mironov")
        rows.append({"mu": float(mu), "exact": exact, "rdp": rdp, "saving": 1 - exact / rdp})
    return rows
