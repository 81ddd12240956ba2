"""Amplification primitives: by iteration (shift reduction), by contraction (model clipping), by random walks.

Three ways the papers get privacy from *post-processing* noisy iterations, each a pure function:

1. **Amplification by iteration** (Feldman, Mironov, Talwar & Thakurta 2018; Koloskova et al. 2025,
   Theorem A.9, digest 004 section 3.1). Two chains ``x_{t+1} = psi_t(x_t) + N(0, sigma_t^2 I)`` whose maps
   satisfy ``||psi_t(x) - psi_t(x')|| <= rho_t ||x - x'|| + s_t`` and start at most ``z_0`` apart. A "shift
   budget" ``z_{t+1} = rho_t z_t + s_t - a_t`` with ``z_T = 0`` is paid down by ``a_t`` at a Renyi cost
   ``alpha a_t^2 / (2 sigma_t^2)`` per step (shift reduction, Feldman et al. Lemma 20 = Koloskova Lemma A.6;
   contraction, Lemma A.7). Minimising the total cost gives the *linear* curve
   ``D_alpha <= alpha B^2 / (2 sum_t w_t^2 sigma_t^2)`` with ``w_t = prod_{k>t} rho_k`` and
   ``B = (prod_t rho_t) z_0 + sum_t w_t s_t`` (eq. 21), attained by ``a_t = B w_t sigma_t^2 / sum_k w_k^2 sigma_k^2``
   (eq. 27; the paper's denominator has a typo, ``sigma_t^2`` for ``sigma_k^2``).
   :func:`iteration_rdp` / :func:`optimal_shift_schedule` do this for arbitrary per-step sequences;
   :func:`gradient_clipping_rho` is the constant-step closed form (gradient clipping: ``s = 2 gamma C1``,
   ``rho = 1 - gamma lambda``, ``z_0 = 2 C0``).
2. **Contraction of delta** for model clipping (Koloskova et al. 2025, Theorem 4.2, digest 004 section 3.5).
   After projection onto a ``C2``-ball any two means are ``<= 2 C2`` apart, so one noisy step is a Markov
   kernel with hockey-stick contraction ``theta_eps(2 C2 / sigma)``: delta shrinks geometrically at fixed
   epsilon. :func:`model_clipping_delta` gives both the paper's closed form (eq. 10) and the tighter
   recursion of the authors' code (Balle et al. 2019, Theorem 1, with ``eps~ = log(1 + (e^eps - 1)/delta_t)``).
3. **Random walks** for RR-DU (digest 000 sections 2.5, 3.3-3.4): the first-observation delay
   ``K ~ Geom((1-p)/(N-1))``, ``E[1/K] = q ln(1/q) / (1 - q)`` (the ``ln N / N`` factor), and a high-probability
   bound on the number of sensitive visits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .._validate import check_choice, check_int, check_positive, check_probability
from .gaussian import theta_epsilon


# -- 1. amplification by iteration ----------------------------------------------------------------------------

def _as_steps(name: str, value, n: int | None) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(value, dtype=float))
    if n is not None and arr.size == 1:
        arr = np.full(n, float(arr[0]))
    if np.any(~np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name}={value!r} is out of range: expected finite values in [0, inf)")
    return arr


@dataclass(frozen=True)
class ShiftSchedule:
    """The optimal shift-reduction schedule of :func:`optimal_shift_schedule`.

    ``shifts[t]`` is ``a_t`` (how much distance step t's noise absorbs), ``budget[t]`` is ``z_t`` for
    ``t = 0..T`` (``z_0`` the initial distance, ``z_T = 0``), ``costs[t] = a_t^2 / (2 sigma_t^2)`` (the RDP cost
    per unit order), ``rho = sum(costs)``: the chain is ``(alpha, alpha rho)``-RDP for every order alpha.
    """

    shifts: np.ndarray
    budget: np.ndarray
    costs: np.ndarray
    weights: np.ndarray
    B: float
    rho: float


def optimal_shift_schedule(
    shifts_per_step: Sequence[float] | float,
    contractions: Sequence[float] | float,
    sigmas: Sequence[float] | float,
    initial_distance: float,
    steps: int | None = None,
) -> ShiftSchedule:
    """Koloskova et al. 2025, Theorem A.9 (eqs. 20, 21, 27), for arbitrary per-step sequences.

    Parameters
    ----------
    shifts_per_step : float or sequence of float
        ``s_t >= 0``, finite: the additive part of the Lipschitz bound of step t (gradient clipping:
        ``2 gamma_t C1``). A scalar is repeated over all steps.
    contractions : float or sequence of float
        ``rho_t >= 0``, finite: the multiplicative part (weight decay: ``1 - gamma_t lambda``; 1 without).
    sigmas : float or sequence of float
        ``sigma_t > 0``: std of the Gaussian noise added after step t.
    initial_distance : float
        ``z_0 >= 0``: bound on the distance between the two chains' starting points (projection on a
        C0-ball: ``2 C0``).
    steps : int, optional
        T (``>= 1``); required when all three sequences are scalars, otherwise it must equal their length.

    Returns
    -------
    ShiftSchedule
        The shifts ``a_t = B w_t sigma_t^2 / sum_k w_k^2 sigma_k^2`` (all 0 when the denominator is 0), the
        budget ``z_0..z_T``, the per-step costs ``a_t^2 / (2 sigma_t^2)``, the weights
        ``w_t = prod_{k>t} rho_k``, ``B = (prod_t rho_t) z_0 + sum_t w_t s_t`` and
        ``rho = B^2 / (2 sum_t w_t^2 sigma_t^2)``.

    References
    ----------
    Koloskova, Allouah, Jha, Guerraoui & Koyejo, "Certified Unlearning for Neural Networks", ICML 2025, Theorem A.9,
    eqs. (20), (21), (27).
    Feldman, Mironov, Talwar & Thakurta, "Privacy Amplification by Iteration", FOCS 2018.
    """
    z0 = check_positive("initial_distance", initial_distance, allow_zero=True)
    if steps is not None:
        steps = check_int("steps", steps, low=1)
    n = steps
    for v in (shifts_per_step, contractions, sigmas):
        if np.ndim(v) > 0:
            n = len(v) if n is None else n
    if n is None:
        raise ValueError("steps= is required when shifts_per_step, contractions and sigmas are all scalars")
    s = _as_steps("shifts_per_step", shifts_per_step, n)
    r = _as_steps("contractions", contractions, n)
    sig = _as_steps("sigmas", sigmas, n)
    if not (s.size == r.size == sig.size == n):
        raise ValueError(f"shifts_per_step, contractions and sigmas must all have length steps={n}")
    if np.any(sig <= 0):
        raise ValueError(f"sigmas={sigmas!r} is out of range: expected every sigma in (0, inf)")
    # w_t = prod_{k=t+1}^{T-1} rho_k: how much of step t's shift survives to the end
    w = np.append(np.cumprod(r[::-1])[::-1][1:], 1.0)
    B = float(np.prod(r) * z0 + np.dot(w, s))
    S = float(np.dot(w * w, sig * sig))
    a = B * w * sig**2 / S if S > 0 else np.zeros(n)
    budget = np.empty(n + 1)
    budget[0] = z0
    for t in range(n):
        budget[t + 1] = r[t] * budget[t] + s[t] - a[t]
    costs = a**2 / (2.0 * sig**2)
    return ShiftSchedule(shifts=a, budget=budget, costs=costs, weights=w, B=B, rho=B * B / (2.0 * S))


def iteration_rdp(shifts_per_step, contractions, sigmas, initial_distance, steps: int | None = None) -> float:
    """The coefficient ``rho`` of the linear curve ``D_alpha <= alpha rho`` (Koloskova et al., eq. 21).

    Parameters
    ----------
    shifts_per_step, contractions, sigmas : float or sequence of float
        ``s_t >= 0``, ``rho_t >= 0`` and ``sigma_t > 0`` per step, as in :func:`optimal_shift_schedule`.
    initial_distance : float
        ``z_0 >= 0``, the distance bound between the two starting points.
    steps : int, optional
        T (``>= 1``); required when all three sequences are scalars.

    Returns
    -------
    float
        ``rho = B^2 / (2 sum_t w_t^2 sigma_t^2) >= 0``: the chain is ``(alpha, alpha rho)``-RDP for every
        order alpha (the ``rho`` field of :func:`optimal_shift_schedule`).

    References
    ----------
    Koloskova, Allouah, Jha, Guerraoui & Koyejo, "Certified Unlearning for Neural Networks", ICML 2025, Theorem A.9,
    eq. (21).
    """
    return optimal_shift_schedule(shifts_per_step, contractions, sigmas, initial_distance, steps).rho


def gradient_clipping_rho(C0: float, C1: float, gamma: float, lam: float, T: int, sigma: float) -> float:
    """Closed form of eq. 21 for constant step size, weight decay and noise (digest 004 section 3.1).

    ``lam > 0``: ``rho = gamma lam (2 - gamma lam) [2 C0 r^T + (2 C1/lam)(1 - r^T)]^2 / (2 sigma^2 (1 - r^{2T}))``
    with ``r = 1 - gamma lam``; ``lam = 0``: ``rho = 2 (C0 + gamma C1 T)^2 / (T sigma^2)``. Requires
    ``gamma lam < 1`` (Theorem A.9).

    Parameters
    ----------
    C0 : float
        Radius of the ball the starting point is projected on, ``>= 0`` (``z_0 = 2 C0``).
    C1 : float
        Gradient clipping norm, ``>= 0`` (per-step shift ``s = 2 gamma C1``).
    gamma : float
        Step size, ``> 0``.
    lam : float
        Weight decay, ``>= 0``, with ``gamma * lam < 1``; when ``gamma lam T < 1e-12`` the ``lam = 0``
        formula is used.
    T : int
        Number of noisy steps, ``>= 1``.
    sigma : float
        Std of the Gaussian noise of every step, ``> 0``.

    Returns
    -------
    float
        ``rho >= 0`` of the linear Renyi curve ``D_alpha <= alpha rho`` of the T steps.

    References
    ----------
    Koloskova, Allouah, Jha, Guerraoui & Koyejo, "Certified Unlearning for Neural Networks", ICML 2025, Theorem A.9,
    eq. (21) with constant step size, weight decay and noise.
    """
    C0 = check_positive("C0", C0, allow_zero=True)
    C1 = check_positive("C1", C1, allow_zero=True)
    gamma = check_positive("gamma", gamma)
    lam = check_positive("lam", lam, allow_zero=True)
    T = check_int("T", T, low=1)
    sigma = check_positive("sigma", sigma)
    if gamma * lam >= 1:
        raise ValueError(f"gamma*lam={gamma * lam!r} is out of range: Theorem A.9 needs gamma*lam in [0, 1)")
    try:  # a shift that overflows against the noise is an infinite rho (no privacy), not an OverflowError
        if gamma * lam * T < 1e-12:  # lam = 0, or so small that the lam -> 0 limit is exact to ~1e-12
            return 2.0 * ((C0 + gamma * C1 * T) / sigma) ** 2 / T
        log_r = math.log1p(-gamma * lam)  # expm1/log1p keep the digits when gamma*lam is tiny
        rT = math.exp(T * log_r)
        one_minus_rT = -math.expm1(T * log_r)
        one_minus_r2T = -math.expm1(2 * T * log_r)
        B = 2.0 * C0 * rT + (2.0 * C1 / lam) * one_minus_rT
        return gamma * lam * (2.0 - gamma * lam) * (B / sigma) ** 2 / (2.0 * one_minus_r2T)
    except OverflowError:
        return math.inf


# -- 2. model clipping: contraction of delta ------------------------------------------------------------------

def model_clipping_delta(
    epsilon: float,
    T: int,
    C2: float,
    sigma: float,
    *,
    C0: float | None = None,
    sigma0: float = 0.0,
    recursion: str = "tight",
) -> np.ndarray:
    """delta_t for t = 0..T of projected noisy steps at fixed epsilon (Koloskova et al. 2025, Thm 4.2).

    ``delta_0 = theta_eps(2 C0 / sigma0)`` (output perturbation of the starting point) or 1 without initial
    noise. Then:

    - ``recursion="paper"``: ``delta_{t+1} = theta_eps(2 C2/sigma) delta_t`` (Lemma A.2 as printed; its
      closed form is eq. 10);
    - ``recursion="tight"``: ``delta_{t+1} = delta_t theta_{eps~_t}(2 C2/sigma)`` with
      ``eps~_t = log(1 + (e^eps - 1)/delta_t) >= eps`` (Balle et al. 2019, Theorem 1, as implemented in the
      authors' code; it reproduces their Tables 6 and 8). The digest could not re-read that theorem, so this
      is the code's reading; it is never looser than "paper" because theta falls as epsilon grows.

    Parameters
    ----------
    epsilon : float
        The fixed epsilon, ``> 0``.
    T : int
        Number of projected noisy steps, ``>= 0``.
    C2 : float
        Radius of the projection ball, ``> 0``: two means are at most ``2 C2`` apart.
    sigma : float
        Std of the noise of every step, ``> 0``.
    C0 : float, optional
        Radius of the ball of the starting point, ``> 0``; required when ``sigma0 > 0``.
    sigma0 : float
        Std of the noise added to the starting point, ``>= 0`` (0: no initial noise, ``delta_0 = 1``).
    recursion : {"tight", "paper"}
        Which recursion to run (see above).

    Returns
    -------
    ndarray
        Shape ``(T + 1,)``: ``delta_t`` for ``t = 0..T``, non-increasing, in [0, 1].

    References
    ----------
    Koloskova, Allouah, Jha, Guerraoui & Koyejo, "Certified Unlearning for Neural Networks", ICML 2025, Theorem 4.2,
    Lemma A.2, eq. (10).
    Balle et al. 2019, Theorem 1 (the "tight" recursion, as the authors' code reads it).
    """
    epsilon = check_positive("epsilon", epsilon)
    T = check_int("T", T, low=0)
    C2 = check_positive("C2", C2)
    sigma = check_positive("sigma", sigma)
    sigma0 = check_positive("sigma0", sigma0, allow_zero=True)
    check_choice("recursion", recursion, ("tight", "paper"))
    if sigma0 > 0:
        if C0 is None:
            raise ValueError("C0 is required when sigma0 > 0")
        d0 = theta_epsilon(epsilon, 2.0 * check_positive("C0", C0) / sigma0)
    else:
        d0 = 1.0
    r = 2.0 * C2 / sigma
    out = np.empty(T + 1)
    out[0] = d0
    theta = theta_epsilon(epsilon, r)
    for t in range(T):
        if recursion == "paper" or out[t] >= 1.0:
            out[t + 1] = out[t] * theta
        elif out[t] == 0.0:
            out[t + 1] = 0.0
        else:
            eps_t = math.log1p(math.expm1(epsilon) / out[t])
            out[t + 1] = out[t] * theta_epsilon(eps_t, r)
    return out


def model_clipping_steps(
    epsilon: float,
    delta: float,
    C2: float,
    sigma: float,
    *,
    C0: float | None = None,
    sigma0: float = 0.0,
    recursion: str = "tight",
    max_steps: int = 1_000_000,
) -> int:
    """The smallest T with ``delta_T <= delta`` (eq. 10 for ``"paper"``, the recursion for ``"tight"``).

    Parameters
    ----------
    epsilon : float
        The fixed epsilon, ``> 0``.
    delta : float
        Target delta, in (0, 1).
    C2 : float
        Radius of the projection ball, ``> 0``.
    sigma : float
        Std of the noise of every step, ``> 0``.
    C0 : float, optional
        Radius of the ball of the starting point, ``> 0``; required when ``sigma0 > 0``.
    sigma0 : float
        Std of the noise added to the starting point, ``>= 0``.
    recursion : {"tight", "paper"}
        ``"paper"``: the closed form of eq. (10); ``"tight"``: iterate the recursion of
        :func:`model_clipping_delta`.
    max_steps : int
        Bound on the iterations of the ``"tight"`` recursion; ``ValueError`` when it is exceeded.

    Returns
    -------
    int
        ``T >= 0`` (0 when ``delta_0`` is already at most ``delta``).

    References
    ----------
    Koloskova, Allouah, Jha, Guerraoui & Koyejo, "Certified Unlearning for Neural Networks", ICML 2025, Theorem 4.2,
    eq. (10).
    """
    delta = check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_choice("recursion", recursion, ("tight", "paper"))
    d0 = model_clipping_delta(epsilon, 0, C2, sigma, C0=C0, sigma0=sigma0)[0]
    if d0 <= delta:
        return 0
    theta = theta_epsilon(epsilon, 2.0 * C2 / sigma)
    if recursion == "paper":
        # eq. (10): T >= (log(1/delta) + log delta_0) / log(1/theta)
        return max(0, math.ceil((math.log(1.0 / delta) + math.log(d0)) / math.log(1.0 / theta) - 1e-12))
    d, t = d0, 0
    while d > delta:
        if t >= max_steps:
            raise ValueError(f"delta={delta!r} not reached within max_steps={max_steps}")
        d = d * theta if d >= 1.0 else d * theta_epsilon(math.log1p(math.expm1(epsilon) / d), 2.0 * C2 / sigma)
        t += 1
    return t


def model_clipping_sigma_paper(epsilon: float, delta: float, T: int, C2: float, *, C0: float = 1.0,
                               sigma0: float = 0.0) -> float:
    """Koloskova et al. 2025, eq. (11), the paper's closed-form noise for model clipping:

    ``sigma^2 = 8 C2^2 ln(1.25) / eps^2 [1 + (ln(1.25/delta) - sigma0^2 eps^2 / (8 C0^2)) / T]``.

    Derived with the classic bound (Lemma A.4), so **only for epsilon in (0, 1)**; we raise otherwise.

    Parameters
    ----------
    epsilon : float
        Target epsilon, in (0, 1).
    delta : float
        Target delta, in (0, 1).
    T : int
        Number of projected noisy steps, ``>= 1``.
    C2 : float
        Radius of the projection ball, ``> 0``.
    C0 : float
        Radius of the ball of the starting point, ``> 0``.
    sigma0 : float
        Std of the noise added to the starting point, ``>= 0``.

    Returns
    -------
    float
        sigma of eq. (11); the bracket is floored at 1, so sigma is never below ``sqrt(8 ln 1.25) C2 / epsilon``.

    References
    ----------
    Koloskova, Allouah, Jha, Guerraoui & Koyejo, "Certified Unlearning for Neural Networks", ICML 2025, eq. (11) and
    Lemma A.4.
    """
    epsilon = check_positive("epsilon", epsilon)
    if epsilon >= 1:
        raise ValueError(f"epsilon={epsilon!r} is out of range: eq. (11) is derived for epsilon in (0, 1)")
    delta = check_probability("delta", delta, allow_zero=False, allow_one=False)
    T = check_int("T", T, low=1)
    C2 = check_positive("C2", C2)
    C0 = check_positive("C0", C0)
    sigma0 = check_positive("sigma0", sigma0, allow_zero=True)
    var = 8 * C2**2 * math.log(1.25) / epsilon**2 * (
        1 + (math.log(1.25 / delta) - sigma0**2 * epsilon**2 / (8 * C0**2)) / T)
    return math.sqrt(max(var, 8 * C2**2 * math.log(1.25) / epsilon**2))


# -- 3. random walks (RR-DU) -----------------------------------------------------------------------------------

def first_observation_rate(p: float, n_nodes: int) -> float:
    """``q = (1 - p)/(N - 1)``: per hop, the walker leaves the forgetting client u and lands at observer v.

    RR-DU routing on the complete graph (digest 000 section 2.5): from anywhere, go to u with probability p,
    else to a uniform node among the other N - 1.

    Parameters
    ----------
    p : float
        Probability of routing to u at each hop, in [0, 1).
    n_nodes : int
        Number of nodes N, ``>= 2``.

    Returns
    -------
    float
        ``q = (1 - p) / (N - 1)``, in (0, 1].

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (RR-DU routing).
    """
    p = check_probability("p", p, allow_one=False)
    n_nodes = check_int("n_nodes", n_nodes, low=2)
    return (1.0 - p) / (n_nodes - 1)


def first_observation_delay_pmf(k, p: float, n_nodes: int) -> np.ndarray:
    """``P(K = k) = (1 - q)^{k-1} q`` on ``k = 1, 2, ...``: hops until observer v first sees the model.

    Parameters
    ----------
    k : int, float or array_like
        Delay(s) at which to evaluate the pmf; the formula is evaluated as written at every ``k >= 1``.
    p : float
        Probability of routing to u at each hop, in [0, 1).
    n_nodes : int
        Number of nodes N, ``>= 2``.

    Returns
    -------
    ndarray
        ``P(K = k)`` shaped like ``k`` (0 where ``k < 1``), with ``q`` from :func:`first_observation_rate`.

    References
    ----------
    .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), Section
       4.3: the first-observation delay of a sensitive update is Geom(q), q = (1 - p)/(N - 1).
    """
    q = first_observation_rate(p, n_nodes)
    k = np.asarray(k, dtype=float)
    with np.errstate(under="ignore"):
        return np.where(k >= 1, q * np.exp((np.maximum(k, 1.0) - 1.0) * np.log1p(-q)), 0.0)


def sample_first_observation_delay(p: float, n_nodes: int, size: int, *, rng: np.random.Generator) -> np.ndarray:
    """Draw ``size`` first-observation delays (``Geom(q)`` on 1, 2, ...) with an explicit numpy generator.

    Parameters
    ----------
    p : float
        Probability of routing to u at each hop, in [0, 1).
    n_nodes : int
        Number of nodes N, ``>= 2``.
    size : int
        Number of draws, ``>= 1``.
    rng : numpy.random.Generator
        The generator the draws come from.

    Returns
    -------
    ndarray of int
        Shape ``(size,)``, every entry ``>= 1``.

    References
    ----------
    .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026), Section
       4.3: the first-observation delay of a sensitive update is Geom(q), q = (1 - p)/(N - 1).
    """
    q = first_observation_rate(p, n_nodes)
    size = check_int("size", size, low=1)
    return rng.geometric(q, size=size)


def expected_inverse_delay(p: float, n_nodes: int) -> float:
    """``E[1/K] = q ln(1/q) / (1 - q)`` for ``K ~ Geom(q)`` on 1, 2, ... (digest 000 section 2.5, derived).

    Amplification by iteration makes a contribution observed after K noisy contractive steps cost ``~1/K``
    of its RDP; averaging over the delay (weak convexity, RR-DU Prop. A.10) gives this factor: ``ln N/(N-1)``
    at ``p = 1/N``. (It assumes noise on every intermediate hop, which RR-DU's noiseless hops do not have;
    digest 000 pitfall P4.)

    Parameters
    ----------
    p : float
        Probability of routing to u at each hop, in [0, 1).
    n_nodes : int
        Number of nodes N, ``>= 2``.

    Returns
    -------
    float
        ``E[1/K]`` in (0, 1]; exactly 1 when ``q = 1`` (``N = 2``, ``p = 0``).

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning", Section 5 and Proposition A.10 (the averaging);
    the closed form of ``E[1/K]`` is derived.
    """
    q = first_observation_rate(p, n_nodes)
    if q == 1.0:
        return 1.0
    return q * math.log(1.0 / q) / (1.0 - q)


def visit_count_bound(n_hops: int, p: float, tail: float) -> int:
    """The smallest m with ``P(Binomial(n_hops, p) > m) <= tail``: visits to u, except with probability ``tail``.

    The exact quantile replaces the paper's Chernoff step (App. C.5), which needs ``beta < 1`` and fails for
    small ``p T_u`` (digest 000 section 3.4): 26 for ``T_u = 100``, ``p = 0.1``, ``tail = 2.5e-6``.

    Parameters
    ----------
    n_hops : int
        Number of hops, ``>= 0``.
    p : float
        Probability of a visit to u per hop, in [0, 1].
    tail : float
        Allowed failure probability, in (0, 1).

    Returns
    -------
    int
        The ``1 - tail`` quantile of ``Binomial(n_hops, p)``, in ``[0, n_hops]``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning", Appendix C.5 (the Chernoff step this quantile
    replaces).
    """
    n_hops = check_int("n_hops", n_hops, low=0)
    p = check_probability("p", p)
    tail = check_probability("tail", tail, allow_zero=False, allow_one=False)
    from scipy import stats  # imported here: scipy.stats costs about a second to import

    return int(stats.binom.ppf(1.0 - tail, n_hops, p))
