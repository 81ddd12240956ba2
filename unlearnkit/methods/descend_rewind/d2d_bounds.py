"""The D2D sensitivity bounds of "Descend or Rewind?" (strongly convex only): plain formulas.

Mu & Klabjan, "Descend or Rewind? Stochastic Gradient Descent Unlearning" (arXiv 2511.15983, digest 003) and
Neel, Roth & Sharifi-Malvajerdi (ALT 2021). Pure maths (math only), re-exported by :mod:`.bounds`:

- **SGD-D2D, Theorem 4.10** [derived substitute, digest 003 section 3.4]: a second-moment bound with a floor
  that does not vanish as K grows (:func:`sgd_d2d_sensitivity_derived`).
- **Full-batch D2D** (Neel et al. 2021, Thm 3.1): the paper-mode code formula (:func:`neel_sigma`,
  :func:`neel_initial_iterations`), and our derived deterministic single-request bound for ``mode="sound"``
  (:func:`gd_d2d_sensitivity`, with the contraction :func:`gd_d2d_contraction`).
"""

from __future__ import annotations

import math

from ..._validate import check_int, check_positive, check_probability


def gd_d2d_contraction(eta: float, L: float, mu: float) -> float:
    """Contraction ``gamma`` of one GD step on an L-smooth mu-strongly convex function (full-batch D2D).

    ``max(|1 - eta mu|, |1 - eta L|)``, which equals ``(L - mu)/(L + mu)`` at ``eta = 2/(L + mu)``, Neel et al.'s
    step. Raises ``ValueError`` naming ``eta`` beyond ``2/(L + mu)``.

    Parameters
    ----------
    eta : float
        Step size, ``<= 2/(L + mu)``.
    L : float
        Smoothness constant.
    mu : float
        Strong-convexity constant.

    Returns
    -------
    float
        ``gamma = max(|1 - eta mu|, |1 - eta L|)``.

    References
    ----------
    Neel, Roth & Sharifi-Malvajerdi, "Descent-to-Delete" (ALT 2021).
    """
    if eta > 2.0 / (L + mu) * (1 + 1e-12):
        raise ValueError(f"eta={eta!r} is out of range: full-batch D2D needs eta in (0, 2/(L+mu)] = "
                         f"(0, {2.0 / (L + mu):.6g}]")
    return max(abs(1.0 - eta * mu), abs(1.0 - eta * L))


def sgd_d2d_sensitivity_derived(*, L: float, mu: float, F0: float, eta: float, b: int, T: int, K: int, m: int,
                                n: int, extra_init_var: float = 0.0) -> float:
    """``Delta_2 >= sqrt(E||u_K - w'_T||^2)`` for SGD-D2D (Theorem 4.10 substitute, digest 003 3.4) [derived].

    Independent runs, with-replacement batches, ``eta <= 1/(2L)``; with ``q = 1 - eta mu``, ``R0^2 = 2 F0 / mu``,
    SGD noise ball ``N = 4 eta L F0 / (b mu)`` and ``beta_m = (m / (n mu)) sqrt(2 L F0) (1 + sqrt(L/mu))``::

        E_T       = 2 (q^T R0^2 + N) + 2 beta_m^2
        Delta_2^2 = 2 (q^K E_T + N) + 2 (q^T R0^2 + N)

    The floor ``2 q^T R0^2 + 4N`` does not vanish as K grows (the paper's "constant term that cannot be
    eliminated"). ``extra_init_var`` adds ``E||Z||^2`` to the start of unlearning (perfect publishing mode).

    Parameters
    ----------
    L : float
        Per-sample smoothness constant, ``> 0``.
    mu : float
        Strong-convexity constant, ``> 0``.
    F0 : float
        Bound on the per-sample loss at the start, ``>= 0``.
    eta : float
        Step size, in ``(0, 1/(2L)]``.
    b : int
        Batch size, ``>= 1``.
    T : int
        Training steps, ``>= 1``.
    K : int
        Unlearning steps, ``>= 0``.
    m : int
        Number of deleted samples, ``1 <= m <= n - 1``.
    n : int
        Training-set size, ``>= 2``.
    extra_init_var : float, default 0.0
        ``E||Z||^2`` of noise already on the start of unlearning.

    Returns
    -------
    float
        ``Delta_2``, a bound on ``sqrt(E||u_K - w'_T||^2)``.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), substitute for Theorem 4.10 (digest 003
    section 3.4).
    """
    check_positive("L", L)
    check_positive("mu", mu)
    check_positive("F0", F0, allow_zero=True)
    check_positive("eta", eta)
    check_int("b", b, low=1)
    check_int("T", T, low=1)
    check_int("K", K, low=0)
    check_int("n", n, low=2)
    check_int("m", m, low=1, high=n - 1)
    if eta > 1.0 / (2.0 * L):
        raise ValueError(f"eta={eta!r} is out of range: the derived SGD-D2D bound needs eta in (0, 1/(2L)] = "
                         f"(0, {1.0 / (2.0 * L):.6g}]")
    q = 1.0 - eta * mu
    R0sq = 2.0 * F0 / mu
    N = 4.0 * eta * L * F0 / (b * mu)
    beta_m = (m / (n * mu)) * math.sqrt(2.0 * L * F0) * (1.0 + math.sqrt(L / mu))
    E_T = 2.0 * (q**T * R0sq + N) + 2.0 * beta_m**2
    return math.sqrt(2.0 * (q**K * (E_T + extra_init_var) + N) + 2.0 * (q**T * R0sq + N))


def gd_d2d_sensitivity(*, G: float, L: float, mu: float, eta: float, radius: float, T: int, I: int, m: int,
                       n: int, extra_init: float = 0.0) -> float:
    """Deterministic ``||u_I - w'_T||`` for full-batch projected GD-D2D, one request of m deletions [derived].

    The ``mode="sound"`` substitute for Neel et al. 2021, Thm 3.1:
    ``gamma^I (2R gamma^T + 2 G m / (mu n) + extra_init) + 2R gamma^T``: training and retraining each end within
    ``2R gamma^T`` of their (constrained) minimisers, the minimisers differ by at most ``2 G m / (mu n)``, and
    the I unlearning steps contract the gap by ``gamma^I``. ``extra_init`` is a bound on the norm of noise
    already added to the start (perfect publishing).

    Parameters
    ----------
    G : float
        Gradient-norm bound, ``> 0``.
    L : float
        Smoothness constant.
    mu : float
        Strong-convexity constant, ``> 0``.
    eta : float
        Step size, ``<= 2/(L + mu)``.
    radius : float
        Radius ``R`` of the feasible ball, ``> 0``.
    T : int
        Training steps, ``>= 1``.
    I : int
        Unlearning steps, ``>= 0``.
    m : int
        Number of deleted samples, ``1 <= m <= n - 1``.
    n : int
        Training-set size, ``>= 2``.
    extra_init : float, default 0.0
        Bound on the norm of noise already on the start.

    Returns
    -------
    float
        A worst-case bound on ``||u_I - w'_T||``.

    References
    ----------
    Neel, Roth & Sharifi-Malvajerdi, "Descent-to-Delete" (ALT 2021), Theorem 3.1 (the setting); the bound is derived
    here.
    """
    check_positive("G", G)
    check_positive("radius", radius)
    check_int("T", T, low=1)
    check_int("I", I, low=0)
    check_int("n", n, low=2)
    check_int("m", m, low=1, high=n - 1)
    g = gd_d2d_contraction(eta, L, mu)
    gT = 2.0 * radius * g**T
    return g**I * (gT + 2.0 * G * m / (mu * n) + extra_init) + gT


def neel_initial_iterations(*, G: float, L: float, mu: float, n: int, I: int, radius: float) -> int:
    """Training length Neel et al. 2021 assume: ``I + log(D mu n / (2 M)) / log(1/gamma)`` with ``D = 2R`` (DescDel).

    Parameters
    ----------
    G : float
        Gradient-norm bound ``M``.
    L : float
        Smoothness constant.
    mu : float
        Strong-convexity constant.
    n : int
        Training-set size.
    I : int
        Unlearning iterations per request.
    radius : float
        Radius ``R`` of the feasible ball.

    Returns
    -------
    int
        The training length, rounded up (at least ``I``).

    References
    ----------
    Neel, Roth & Sharifi-Malvajerdi, "Descent-to-Delete" (ALT 2021).
    """
    g = (L - mu) / (L + mu)
    extra = math.log(max(2 * radius * mu * n / (2 * G), 1.0)) / math.log(1.0 / g)
    return int(math.ceil(I + extra))


def neel_sigma(epsilon: float, delta: float, *, G: float, L: float, mu: float, n: int, I: int, m: int = 1) -> float:
    """The paper-mode D2D noise (Neel et al. 2021, Thm 3.1 as coded; peers.md A.4).

    ``4 sqrt2 M g^I / (mu n (1-g^I) (sqrt(ln 1/d + e) - sqrt(ln 1/d)))`` with ``g = (L - mu)/(L + mu)``,
    ``M = G``; times ``m`` for m deletions at once (our extension, named here).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Privacy parameter, in ``(0, 1)``.
    G : float
        Gradient-norm bound ``M``.
    L : float
        Smoothness constant.
    mu : float
        Strong-convexity constant, ``> 0``.
    n : int
        Training-set size.
    I : int
        Unlearning iterations, ``>= 1``.
    m : int, default 1
        Deletions per request (the factor ``m`` is our extension).

    Returns
    -------
    float
        The noise std.

    References
    ----------
    Neel, Roth & Sharifi-Malvajerdi, "Descent-to-Delete" (ALT 2021), Theorem 3.1.
    """
    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    check_positive("mu", mu)
    check_int("I", I, low=1)
    g = (L - mu) / (L + mu)
    lg = math.log(1.0 / delta)
    return m * 4.0 * math.sqrt(2.0) * G * g**I / (mu * n * (1.0 - g**I) * (math.sqrt(lg + epsilon) - math.sqrt(lg)))
