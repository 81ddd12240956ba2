"""Constants, sensitivities and the certificate of Newton/Fisher decentralized unlearning (Wu et al. 2026).

Plain numbers in, plain numbers out: nothing here touches a model or a tensor. The algorithm
(:mod:`unlearnkit.methods.newton.algorithm`) measures the constants of its model and the requesters'
fractions ``m_c / n_c`` and asks :func:`newton_certificate` for the message noise.

Two modes (digest 001 sections 2.6-3.8):

- ``mode="paper"``: sensitivity ``Delta F_c = 2 M L^2 m_c^2 / (lam^3 n_c^2)`` (Wu et al. 2026, Theorem 1,
  eq. (10), Algorithm 1) and the classic Gaussian ``sigma_c = Delta F_c sqrt(2 ln(1.25/delta)) / epsilon``
  added to the *message*, which the receivers average down by ``1/N`` (digest pitfall 1, reproduced on
  purpose). The classic formula is outside its proof for ``epsilon >= 1`` (said in the certificate's note).
- ``mode="sound"``: the analytic Gaussian (Balle & Wang 2018) on a sensitivity we can prove (digest 3.7),
  with the message noise scaled so that each model *carries* the calibrated standard deviation after the
  receivers' weighting. It needs a **public** bound ``tau`` (``NewtonConfig.grad_tol``) on the gradient of the
  training objective at the start point ``x_s`` (the average of the released models before the correction);
  without one it raises. Two bounds on ``||x_hat - x'||`` (``G = tau + 2 L r``): the first-order
  ``||step|| + G / lam`` (always valid: sound mode clips every correction to :func:`step_bounds`) and, for the
  exact global Newton step only (Wu et al. 2026, Lemma 3), the second-order ``M G^2 / (2 lam^3)`` plus the
  omitted ``grad f(x_s)`` term; the smaller one is used and named in ``constants["bound"]``. The certificate
  covers **the average model** (``release="local"``: the local models' differences are released and not
  covered) or the whole released tuple (``release="average"``: every client releases that average).

``mode="none"`` (or no certified constants: a non-convex network) reports the uncalibrated noise and no
guarantee.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

from ..._validate import check_choice, check_int, check_positive
from ...constants import logistic_constants, softmax_constants
from ...core import Certificate
from ...privacy.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma


NEWTON_PAPER = ("H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, 'Certified Unlearning in Decentralized "
         "Federated Learning', arXiv 2601.06436 (2026)")


def logistic_newton_constants(*, weight_decay: float, x_norm: float = 1.0, bias: bool = True,
                              loss: str = "logistic", n_classes: int = 2) -> dict[str, float]:
    """``L``, ``M``, ``lam`` of the regularised logistic loss on the ball ``||w|| <= L_loss / lam``.

    Wu et al. 2026, Remark 3 and Lemma 4; digest 001 section 3.5. With ``a`` the augmented feature norm
    (``sqrt(x_norm^2 + 1)`` with a bias), the loss gradient is at most ``L_loss = a`` (binary) or
    ``sqrt(2) a`` (softmax); every regularised minimiser lies in ``||w|| <= L_loss / lam``, where the
    regularised loss is ``L = 2 L_loss``-Lipschitz (:mod:`unlearnkit.constants` gives ``G``).
    Hessian-Lipschitz: ``M = a^3 / (6 sqrt 3)`` (binary; ``sup |sigmoid''|``) and ``M = 1.5 a^3`` for softmax
    (our bound: the directional derivative of ``diag p - p p^T`` along ``u`` has operator norm at most
    ``1.5 ||u||``).

    Parameters
    ----------
    weight_decay:
        ``lam > 0`` of the regulariser ``lam/2 ||w||^2``.
    x_norm:
        Public bound on the feature norm.
    bias:
        Whether the linear model has an intercept (treated as a feature of value 1).
    loss:
        ``"logistic"`` (binary, one output) or ``"softmax"`` (cross-entropy over ``n_classes`` outputs).
    n_classes:
        Number of outputs of the softmax model (ignored for ``"logistic"``).

    Returns
    -------
    dict of str to float
        ``{"L", "M", "lam", "L_loss", "a"}``: the regularised loss's Lipschitz constant, the Hessian-Lipschitz
        constant, the regularisation weight, the loss-gradient bound and the augmented feature norm.

    References
    ----------
    Wu et al., "Certified Unlearning in Decentralized Federated Learning" (2026, digest 001), Remark 3 and Lemma 4.
    """
    check_choice("loss", loss, ("logistic", "softmax"))
    lam = check_positive("weight_decay", weight_decay)
    a = math.sqrt(x_norm**2 + 1.0) if bias else float(x_norm)
    if loss == "logistic":
        L_loss = a
        c = logistic_constants(lam=lam, radius=L_loss / lam, x_norm=x_norm, bias=bias)
        M = a**3 / (6.0 * math.sqrt(3.0))
    else:
        L_loss = math.sqrt(2.0) * a
        c = softmax_constants(n_classes=n_classes, lam=lam, radius=L_loss / lam, x_norm=x_norm, bias=bias)
        M = 1.5 * a**3
    return {"L": float(c.G), "M": float(M), "lam": lam, "L_loss": L_loss, "a": a}


def paper_sensitivity(m: float, n: float, *, L: float, M: float, lam: float) -> float:
    """``Delta F = 2 M L^2 m^2 / (lam^3 n^2)`` (Wu et al. 2026, eq. (9)-(10) and Algorithm 1; digest 001).

    Parameters
    ----------
    m : float
        Number of samples to forget, ``0 <= m <= n``.
    n : float
        Number of samples the client holds, ``> 0``.
    L : float
        Lipschitz constant of the loss.
    M : float
        Hessian-Lipschitz constant.
    lam : float
        Strong-convexity (regularisation) constant, ``> 0``.

    Returns
    -------
    float
        ``Delta F``.

    References
    ----------
    Wu et al., "Certified Unlearning in Decentralized Federated Learning" (2026, digest 001), Theorem 1, eqs. (9)
    and (10), Algorithm 1.
    """
    check_positive("n", n)
    check_positive("m", m, allow_zero=True)
    if m > n:
        raise ValueError(f"m={m} exceeds n={n}: a client cannot forget more samples than it holds")
    return 2.0 * M * L**2 * (m / n) ** 2 / lam**3


def sound_sensitivity(r: float, *, L: float, M: float, lam: float, tau: float = 0.0, exact_step: bool = True,
                      step_bound: float = 0.0, cg_term: float = 0.0) -> float:
    """A sensitivity we can prove for the noise-free output ``x_hat`` against the exact retrain ``x'``.

    Digest 001 section 3.7 (strong monotonicity plus the Newton residual of Wu et al. 2026, Lemma 3). With
    ``G = tau + 2 L r`` a bound on ``||grad f^-(x)||``. ``L`` may be the per-sample *loss*-gradient bound
    ``L_loss`` (what :func:`newton_certificate` passes): for client ``c``,
    ``grad f_c^- - grad f_c = (1/(n-m)) sum_R g_i - (1/n) sum_all g_i = (m/(n(n-m))) sum_R g_i - (1/n) sum_U g_i``
    with ``g_i`` the loss gradients only (the common ``lam x`` cancels), so its norm is at most
    ``2 (m/n) L_loss``; averaging over clients gives ``2 L_loss r`` (client-wise: ``(1/N)(mean_{i != c}
    grad f_i - grad f_c)``, again at most ``2 L_loss / N``). The bound holds at every ``x`` (a softmax or
    logistic loss gradient is at most ``L_loss`` for any weights when ``||x|| <= x_norm``) (``tau = ||grad f(x)||``, ``r`` the deleted mass:
    ``(1/N) sum_c m_c/n_c`` sample-wise, ``1/N`` client-wise), strong convexity gives
    ``||x - x'|| <= G / lam``. The exact Newton step of ``f^-`` then leaves ``M G^2 / (2 lam^3)``
    (``exact_step=True``, plus ``cg_term`` for an inexact CG solve). Any other step (local or Fisher
    curvature, uncentered gradient) only gives ``||x_hat - x'|| <= step_bound + G / lam``.

    Parameters
    ----------
    r : float
        Deleted mass (sample-wise ``(1/N) sum_c m_c/n_c``; client-wise ``1/N``), ``>= 0``.
    L : float
        Per-sample (loss-)gradient bound.
    M : float
        Hessian-Lipschitz constant (second-order bound only).
    lam : float
        Strong-convexity constant, ``> 0``.
    tau : float, default 0.0
        Public bound on ``||grad f(x)||`` at the start, ``>= 0``.
    exact_step : bool, default True
        The step was the exact global Newton step (second-order bound).
    step_bound : float, default 0.0
        Bound on the correction's norm (first-order bound).
    cg_term : float, default 0.0
        Extra term for an inexact CG solve (second-order bound).

    Returns
    -------
    float
        The second-order bound ``M G^2 / (2 lam^3) + cg_term`` (``exact_step``) or the first-order bound
        ``step_bound + G / lam``.

    References
    ----------
    Wu et al., "Certified Unlearning in Decentralized Federated Learning" (2026, digest 001 section 3.7), Lemma 3.
    """
    for name, v in (("r", r), ("tau", tau), ("step_bound", step_bound), ("cg_term", cg_term)):
        check_positive(name, v, allow_zero=True)
    G = tau + 2.0 * L * r
    if exact_step:
        return M * G**2 / (2.0 * lam**3) + cg_term
    return step_bound + G / lam


def _client_sensitivity(M: float, L: float, lam: float, N: int) -> float:
    # the paper gives no client-wise noise: eq. (10) with m_c = n_c and the 1/N of eq. (6) (digest 2.7)
    return 2.0 * M * L**2 / (lam**3 * N**2)


def step_bounds(*, kind: str, fractions: Mapping[int, tuple[int, int]], n_clients: int, L: float, lam: float,
                tau: float, center_gradient: bool = False, damping: float = 0.0) -> dict[int, float]:
    """Public bound ``B_c`` on each noise-free correction ``||x_delta_c||`` (before the receivers' weight).

    Sound mode clips every correction to ``B_c`` (so the first-order bound holds unconditionally) and uses the
    second-order bound only when no clip was active. The values are what an honest step meets at a start
    ``x`` with ``||grad f(x)|| <= tau`` (``||x|| <= (L_loss + tau)/lam``, ``C >= (lam + damping) I``):
    sample-wise ``kappa m_c L / ((n_c - m_c)(lam + damping))`` with ``kappa = 2`` for the centred gradient
    (two sums of gradients of norm at most ``L``; their ``lam x`` parts cancel) and ``(L + tau)`` per sample
    for the uncentered one; client-wise ``(L + tau) / ((N - 1)(lam + damping))`` (eq. 6: ``||grad f_c(x)||
    <= L_loss + lam ||x|| <= L + tau``).

    Parameters
    ----------
    kind : {"samples", "class", "client"}
        The request kind (``"client"`` uses the client-wise bound).
    fractions : mapping of int to (int, int)
        ``{c: (m_c, n_c)}`` for every requester.
    n_clients : int
        ``N`` before the request.
    L : float
        Per-sample loss-gradient bound.
    lam : float
        Regularisation weight, ``> 0``.
    tau : float
        Public bound on the start's gradient norm, ``>= 0``.
    center_gradient : bool, default False
        The step uses the centred gradient (``kappa = 2``).
    damping : float, default 0.0
        Curvature damping added to ``lam``, ``>= 0``.

    Returns
    -------
    dict of int to float
        ``{c: B_c}`` for every requester.

    References
    ----------
    .. [1] H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, "Certified Unlearning in Decentralized Federated
       Learning", arXiv 2601.06436, 2026, Lemma 3 (the noise-free gap) and Lemma 4 with Remark 3 (the regularised
       minimiser has ||x*|| <= L/lam); the start's ||x|| <= (L + tau)/lam at gradient norm tau and the per-correction
       bound B_c are derived here.
    """
    check_choice("kind", kind, ("samples", "class", "client"))
    N = check_int("n_clients", n_clients, low=2)
    lam_c = check_positive("lam", lam) + check_positive("damping", damping, allow_zero=True)
    check_positive("tau", tau, allow_zero=True)
    if kind == "client":
        return {c: (L + tau) / ((N - 1) * lam_c) for c in fractions}
    per = 2.0 * L if center_gradient else L + tau
    return {c: per * m / ((n - m) * lam_c) for c, (m, n) in fractions.items()}


def _not_certified(fractions: Mapping[int, Any], sigma: float, why: str, consts: Optional[dict] = None,
                   ) -> tuple[dict[int, float], Certificate]:
    return {c: sigma for c in fractions}, Certificate(
        epsilon=math.inf, delta=1.0, sigma=sigma, mechanism="Gaussian message noise (uncalibrated)",
        source="Wu et al. 2026, Algorithm 1 (heuristic use)", mode="none", constants=consts or {},
        note="not certified: " + why)


_PAPER_GAPS = ("not a proved guarantee for this run: Theorem 1 assumes exact optima and consensus (grad f = 0), "
               "the global retained Hessian with a centred gradient (Lemma 3 analyses that step, not Algorithm 1's "
               "local one), equal client sizes and requests; the local models' differences are released "
               "noise-free (digest 001 section 3.8)")


def newton_certificate(*, epsilon: float, delta: float, mode: str, kind: str, fractions: Mapping[int, tuple[int, int]],
                       n_clients: int, constants: Optional[Mapping[str, float]], weight: float,
                       tau: Optional[float] = None, measured_grad: Optional[float] = None, converged: bool = True,
                       clipped: bool = False, release: str = "local", sigma: Optional[float] = None,
                       curvature: str = "hessian", scope: str = "local", center_gradient: bool = False,
                       clientwise_weight: str = "1", damping: float = 0.0,
                       cg_tol: float = 1e-8) -> tuple[dict[int, float], Certificate]:
    """Message noise ``sigma_c`` for every requester ``c`` and the certificate (module docstring).

    Paper mode: Wu et al. 2026, Theorem 1, eq. (10), Algorithm 1 (section IV-C client-wise, noise derived in
    digest 001 section 2.7), classic Gaussian (Dwork & Roth Thm A.1). Sound mode: digest 001 section 3.7 with
    the analytic Gaussian (Balle & Wang 2018).

    Sound mode certifies **the average model** ``x_s + weight sum_c (x_delta_c + nu_c)``, where ``x_s`` is the
    average of the models that are released (all ``N`` clients sample-wise, the ``N - 1`` remaining ones
    client-wise), against the certifier ``x' + N(0, model_sigma^2 I)`` with ``x'`` the exact minimiser of the
    retained objective (a function of the retained data only). It needs a public ``tau >= ||grad f(x_s)||``
    (``NewtonConfig.grad_tol``).

    Parameters
    ----------
    epsilon, delta, mode:
        The target guarantee and ``"paper"``, ``"sound"`` or ``"none"``.
    kind:
        The request kind (``"samples"``, ``"class"`` or ``"client"``).
    fractions:
        ``{c: (m_c, n_c)}`` for every requester (``(n_c, n_c)`` for a departing client).
    n_clients:
        ``N`` before the request.
    constants:
        ``{"L", "M", "lam"}`` (:func:`logistic_newton_constants`), or ``None`` for a network.
    weight:
        What the receivers multiply the message by (``1/N`` sample-wise; 1 or ``1/N`` client-wise).
    tau:
        Sound mode: the **public** bound on ``||grad f(x_s)||`` (a value the user states, never measured on the
        data); ``None`` raises ``ValueError``.
    measured_grad:
        Sound mode: the measured ``||grad f(x_s)||``; above ``tau`` the assumption fails and the result is
        ``mode="none"`` (the noise stays the one calibrated to ``tau``).
    converged, clipped:
        Whether every CG solve met its tolerance, and whether a correction was clipped to its
        :func:`step_bounds`: either makes the step approximate (first-order bound only).
    release:
        ``"local"`` (each client keeps its own model: the certificate covers only their average) or
        ``"average"`` (every client releases the certified average: the whole tuple is covered).
    sigma:
        The uncalibrated message noise of ``mode="none"``.
    curvature, scope, center_gradient, clientwise_weight, damping, cg_tol:
        How the step was computed (``NewtonConfig``'s fields): sound mode gives the second-order bound only
        to the exact global Newton step.

    Returns
    -------
    tuple of (dict of int to float, Certificate)
        ``({c: sigma_c}, certificate)``: the message noise std of every requester and the certificate
        (``mode`` ``"paper"``, ``"sound"`` or ``"none"``).

    Raises
    ------
    ValueError
        For an empty ``fractions``, or sound mode without ``tau``.

    References
    ----------
    Wu et al., "Certified Unlearning in Decentralized Federated Learning" (2026, digest 001), Theorem 1, eq. (10),
    Algorithm 1 and Lemma 3; Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy" (ICML
    2018); Dwork & Roth (2014), Theorem A.1.
    """
    check_choice("mode", mode, ("paper", "sound", "none"))
    check_choice("kind", kind, ("samples", "class", "client"))
    check_choice("release", release, ("local", "average"))
    if not fractions:
        raise ValueError("fractions is empty: a certificate needs at least one requester")
    eps = epsilon
    N = check_int("n_clients", n_clients, low=2)
    if mode == "none" or constants is None:
        return _not_certified(fractions, float(sigma or 0.0),
                              "no certified constants (a non-convex network, or weight_decay = 0)"
                              if constants is None else "mode='none'")
    L, M, lam = float(constants["L"]), float(constants["M"]), float(constants["lam"])
    consts: dict[str, Any] = {"L": L, "M": M, "lam": lam, "N": N, "weight": weight}
    if mode == "paper":
        sig = {}
        for c, (m, n) in fractions.items():
            if kind == "client":
                dF = _client_sensitivity(M, L, lam, N)
            else:
                dF = paper_sensitivity(m, n, L=L, M=M, lam=lam)
            sig[c] = classic_gaussian_sigma(eps, delta, dF, warn=False) if dF > 0 else 0.0
        note = ("noise added to the message and averaged down by the receivers' weight (digest pitfall 1); "
                + _PAPER_GAPS)
        if eps >= 1:
            note += "; classic Gaussian used at epsilon >= 1, outside its proof (Dwork & Roth Thm A.1)"
        src = ("Wu et al. 2026, Theorem 1, eq. (10), Algorithm 1" if kind != "client"
               else "Wu et al. 2026, section IV-C (noise derived in digest 001 section 2.7)")
        consts["sensitivity"] = max(
            _client_sensitivity(M, L, lam, N) if kind == "client" else paper_sensitivity(m, n, L=L, M=M, lam=lam)
            for m, n in fractions.values())
        return sig, Certificate(epsilon=eps, delta=delta, sigma=max(sig.values()), mode="paper",
                                mechanism="classic Gaussian on the flooded Newton correction",
                                source=src, constants=consts, note=note)
    if tau is None:
        raise ValueError("mode='sound' needs a public bound on ||grad f(x_bar)||: grad_tol (tau) is None; "
                         "expected grad_tol in [0, inf), a value stated before seeing the data")
    tau = check_positive("tau", tau, allow_zero=True)
    # sound: the deleted mass r and the bound G = tau + 2 L r on ||grad f^-(x_s)|| (digest 3.7)
    r = 1.0 / N if kind == "client" else sum(m / n for m, n in fractions.values()) / N
    # grad f^- - grad f is a difference of averages of *loss* gradients: both objectives carry the same
    # lam/2 ||x||^2, so it cancels, and each sum is bounded by the per-sample loss-gradient bound L_loss (valid
    # at every x, no ball needed), not by the regularised loss's L = 2 L_loss on the ball (loss_gradient_gap)
    L_gap = min(float(constants.get("L_loss", L)), L)
    G = tau + 2.0 * L_gap * r
    bounds = step_bounds(kind=kind, fractions=fractions, n_clients=N, L=L_gap if center_gradient else L, lam=lam,
                         tau=tau, center_gradient=center_gradient, damping=damping)
    # first-order (always valid: corrections are clipped to their bounds): ||x_s - x'|| <= G/lam plus the step
    first = sound_sensitivity(r, L=L_gap, M=M, lam=lam, tau=tau, exact_step=False,
                              step_bound=weight * sum(bounds.values()))
    exact = (scope == "global" and curvature in ("hessian", "cg_hessian") and converged and not clipped
             and damping == 0 and (center_gradient or kind == "client")
             and (kind != "client" or clientwise_weight == "1"))
    second = math.inf
    if exact:
        # the step omits grad f(x_s) (norm tau): + tau/lam (sample-wise) or N tau/((N-1) lam) (client-wise)
        extra = tau / lam if kind != "client" else N * tau / ((N - 1) * lam)
        if curvature == "cg_hessian":
            extra += cg_tol * G / lam
        second = sound_sensitivity(r, L=L_gap, M=M, lam=lam, tau=tau, exact_step=True, cg_term=extra)
    sens = min(first, second)
    bound = ("second-order (Newton residual of the exact global step: Wu et al. 2026 Lemma 3, digest 001 "
             "section 3.7)" if second < first else
             "first-order (||step|| + ||x_s - x'|| by strong monotonicity: digest 001 section 3.7)")
    target = analytic_gaussian_sigma(eps, delta, sens) if sens > 0 else 0.0
    # every model must carry std `target`: it receives weight * sum_c nu_c, of std weight * sigma * sqrt(|C|)
    per_msg = target / (weight * math.sqrt(len(fractions)))
    covers = ("the released models, all equal to the average model (release='average')" if release == "average"
              else "only the average model (1/N') sum_i x_i of the N' released local models (release='local')")
    consts.update({"tau": tau, "r": r, "L_gap": L_gap, "sensitivity": sens, "model_sigma": target, "bound": bound,
                   "first_order": first, "second_order": second if math.isfinite(second) else None, "step_bounds": bounds, "covers": covers,
                   "measured_grad": measured_grad})
    if measured_grad is not None and measured_grad > tau:
        return _not_certified(fractions, per_msg, f"the measured ||grad f(x_bar)|| = {measured_grad:.4g} exceeds "
                              f"grad_tol = {tau:.4g}, the public bound the sound certificate assumes", consts)
    note = (f"certifies {covers} against the exact retrained minimiser plus the same noise; assumes "
            f"||grad f(x_bar)|| <= grad_tol = {tau:.4g} (public; checked on this run), strong convexity lam and "
            "the constants L, M")
    if release == "local":
        note += ("; the local models are released too and their differences x_i - x_j (noise-free, trained on "
                 "D including D_f) are NOT covered")
    if not exact:
        note += "; approximate step (local/Fisher curvature, uncentered gradient, damping or a clip): first-order"
    return {c: per_msg for c in fractions}, Certificate(
        epsilon=eps, delta=delta, sigma=target, mode="sound", mechanism="analytic Gaussian (Balle & Wang 2018)",
        source="digest 001 section 3.7 (strong monotonicity + Newton residual), Wu et al. 2026 Lemma 3",
        constants=consts, note=note)
