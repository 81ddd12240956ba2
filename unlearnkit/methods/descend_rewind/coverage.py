"""What a Descend-or-Rewind certificate assumes about the training it certifies, and the projected SGD-D2D bound.

Every bound of :mod:`.bounds` is a statement about one training objective run from one kind of start:

- **the loss constants are those of the training objective.** ``G``, ``L`` and ``mu`` of an L2-regularised
  loss include the weight ``lambda``; training with a different ``weight_decay`` optimises a different
  objective (weight decay 0 with ``lambda = 0.1`` declared: the strongly convex contraction ``1 - eta mu``
  is claimed for a merely convex loss). Checked: the training's ``weight_decay`` must equal
  :attr:`Constants.assumed_weight_decay <unlearnkit.constants.Constants.assumed_weight_decay>`.
- **F0 holds at the start.** The unprojected derived bounds (SGD-R2D, SGD-D2D) need ``f(w0; z) <= F0`` at
  the initial point actually used; ``F0`` is defined on ``{||w0|| <= Constants.init_norm}``. Checked
  against the norm of the initialisation stored in the trained state.
- **the start lies in the ball** for the projected bounds (PSGD-R2D, projected SGD-D2D, full-batch D2D):
  ``G`` bounds the gradients there only.
- **the bound matches the training's projection.** The derived SGD-D2D bound (digest 003 section 3.4) is
  for *unprojected* SGD (Gower et al.'s bound around the unconstrained minimiser); projected training gets
  :func:`psgd_d2d_sensitivity` instead.

Pure maths (math only).
"""

from __future__ import annotations

import math
from typing import Any, Optional

from ..._validate import check_int, check_positive


CLASSIC_RANGE_NOTE = ("classic Gaussian used at epsilon >= 1, outside its proof (Dwork & Roth Thm A.1: "
                      "sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon is proven for epsilon < 1 only)")
PAPER_PSGD_D2D = ("projected SGD-D2D, derived bound (projected-SGD recursion of Nemirovski, Juditsky, Lan & "
                  "Shapiro 2009, Sec. 2.1) + Lemma 4.4")


def classic_range_note(mode: str, epsilon: float) -> str:
    """The note a paper-mode (classic Gaussian) certificate carries at ``epsilon >= 1`` (else ``""``).

    Parameters
    ----------
    mode : str
        Certificate mode; only ``"paper"`` (the classic Gaussian mechanism) gets a note.
    epsilon : float
        The certificate's epsilon.

    Returns
    -------
    str
        :data:`CLASSIC_RANGE_NOTE` or ``""``.

    References
    ----------
    Dwork & Roth, "The Algorithmic Foundations of Differential Privacy" (2014), Theorem A.1.
    """
    return CLASSIC_RANGE_NOTE if mode == "paper" and math.isfinite(epsilon) and epsilon >= 1 else ""


def coverage_problems(constants: Any, train_cfg: Any, *, init_norm: Optional[float], uses_F0: bool,
                      needs_ball: bool) -> list[str]:
    """Why the bound does not cover this training (``[]`` when it does); see the module docstring.

    ``init_norm`` is the norm of the initialisation training started from (``None``: unknown, which fails
    any check that needs it); ``uses_F0``: the bound uses ``constants.F0``; ``needs_ball``: it uses ``G`` from
    step 0, so the start must lie in the training's projection ball.

    Parameters
    ----------
    constants : Constants
        The loss constants the bound uses (``assumed_weight_decay``, ``mu``, ``F0``, ``init_norm`` are read).
    train_cfg : object
        The training config (``weight_decay`` and ``radius`` are read).
    init_norm : float or None
        ``||w0||`` of the training's initialisation; ``None`` when unknown.
    uses_F0 : bool
        The bound uses ``constants.F0``.
    needs_ball : bool
        The bound uses ``G`` from step 0.

    Returns
    -------
    list of str
        One sentence per failed check; empty when the bound covers the training.
    """
    out = []
    wd, want = float(train_cfg.weight_decay), float(constants.assumed_weight_decay)
    if not math.isclose(wd, want, rel_tol=1e-9, abs_tol=1e-12):
        out.append(f"training weight_decay={wd!r} differs from the L2 weight the constants assume "
                   f"(lambda={want!r}, mu={constants.mu!r}): G, L and mu are not those of the training objective")
    if uses_F0 or needs_ball:
        if init_norm is None:
            out.append("the initial point is unknown (no state.extras['init'] nor checkpoint 0): F0 and the "
                       "start's position cannot be checked")
            return out
    if uses_F0 and init_norm > constants.init_norm * (1 + 1e-6) + 1e-9:
        out.append(f"training started at ||w0||={init_norm:.4g}, but F0={constants.F0:.4g} holds only for "
                   f"||w0|| <= init_norm={constants.init_norm:g} (build the constants with init_norm >= "
                   f"{init_norm:.4g}, or train from w0 = 0)")
    if needs_ball and init_norm > train_cfg.radius * (1 + 1e-6):
        out.append(f"training started at ||w0||={init_norm:.4g}, outside the projection ball of radius "
                   f"{train_cfg.radius:g} where G holds")
    return out


def psgd_d2d_sensitivity(*, G: float, mu: float, eta: float, radius: float, T: int, K: int, m: int, n: int,
                         init_norm: float = 0.0, extra_init_var: float = 0.0) -> float:
    """``Delta_2 >= sqrt(E||u_K - w'_T||^2)`` for *projected* SGD-D2D on a ball of radius R [derived].

    Strongly convex, batches with replacement (or full), per-sample gradients bounded by ``G`` on the ball,
    start ``||w0|| <= init_norm <= R``, ``eta mu <= 1/2``. Let ``w*`` be the minimiser of ``f_D'`` *on the
    ball*. Projection is nonexpansive towards ``w*`` and ``<grad f(w), w - w*> >= mu ||w - w*||^2`` on the
    ball (strong monotonicity plus first-order optimality of ``w*``), so with ``E||g||^2 <= G^2``::

        E||w_{t+1} - w*||^2 <= (1 - 2 eta mu) E||w_t - w*||^2 + eta^2 G^2

    (Nemirovski, Juditsky, Lan & Shapiro 2009, "Robust stochastic approximation approach to stochastic
    programming", SIAM J. Optim. 19(4), Sec. 2.1), hence ``E||w_t - w*||^2 <= p^t R0^2 + P`` with
    ``p = 1 - 2 eta mu``, ``R0 = init_norm + R`` and ``P = eta G^2 / (2 mu)``. The constrained minimisers of
    ``f_D`` and ``f_D'`` differ by at most ``beta = 2 G m / (mu n)`` (same two facts). With independent runs::

        E_T       = 2 (p^T R0^2 + P) + 2 beta^2                     (training on D, seen from w*)
        Delta_2^2 = 2 (p^K (E_T + extra_init_var) + P) + 2 (p^T R0^2 + P)

    ``extra_init_var`` adds ``E||Z||^2`` when unlearning starts from the projected published model
    ``Pi(w_T + Z)`` (perfect publishing; projection onto the ball keeps the distance to ``w*`` at most
    ``||w_T + Z - w*||``, whose square has mean ``E||w_T - w*||^2 + E||Z||^2``).

    Parameters
    ----------
    G : float
        Per-sample gradient-norm bound on the ball, ``> 0``.
    mu : float
        Strong-convexity constant, ``> 0``.
    eta : float
        Step size, in ``(0, 1/(2 mu)]``.
    radius : float
        Radius ``R`` of the projection ball, ``> 0`` and finite.
    T : int
        Training steps, ``>= 1``.
    K : int
        Unlearning steps, ``>= 0``.
    m : int
        Number of deleted samples, ``1 <= m <= n - 1``.
    n : int
        Training-set size, ``>= 2``.
    init_norm : float, default 0.0
        ``||w0||`` bound of the start, ``>= 0``.
    extra_init_var : float, default 0.0
        ``E||Z||^2`` of the published noise unlearning starts from (perfect publishing).

    Returns
    -------
    float
        ``Delta_2``, a bound on ``sqrt(E||u_K - w'_T||^2)``.

    Raises
    ------
    ValueError
        For an infinite radius or ``eta mu > 1/2``.

    References
    ----------
    Nemirovski, Juditsky, Lan & Shapiro, "Robust stochastic approximation approach to stochastic programming",
    SIAM J. Optim. 19(4), 2009, Section 2.1; the D2D bound is derived here, for the setting of Mu & Klabjan,
    "Descend or Rewind?" (arXiv 2511.15983, digest 003).
    """
    check_positive("G", G)
    check_positive("mu", mu)
    check_positive("eta", eta)
    check_positive("radius", radius)
    check_positive("init_norm", init_norm, allow_zero=True)
    check_int("T", T, low=1)
    check_int("K", K, low=0)
    check_int("n", n, low=2)
    check_int("m", m, low=1, high=n - 1)
    if not math.isfinite(radius):
        raise ValueError("radius=inf: the projected SGD-D2D bound needs projected training (finite radius); "
                         "unprojected training uses sgd_d2d_sensitivity_derived")
    if eta * mu > 0.5:
        raise ValueError(f"eta={eta!r} is out of range: the projected SGD-D2D bound needs eta in (0, 1/(2 mu)] = "
                         f"(0, {0.5 / mu:.6g}]")
    p = 1.0 - 2.0 * eta * mu
    R0sq = (init_norm + radius) ** 2
    P = eta * G * G / (2.0 * mu)
    beta = 2.0 * G * m / (mu * n)
    E_T = 2.0 * (p**T * R0sq + P) + 2.0 * beta**2
    return math.sqrt(2.0 * (p**K * (E_T + extra_init_var) + P) + 2.0 * (p**T * R0sq + P))
