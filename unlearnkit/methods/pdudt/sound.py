"""A sound noise calibration for PDUDT where Theorem 4.9's premises fail: a worst-case gradient-gossip sensitivity.

Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies", ICML 2025 (digest 002).

Why not Theorem 4.9. Its ``d1`` (:func:`~unlearnkit.methods.pdudt.certify.gap_bound`) needs (i) the step-size
condition ``eta < 1 / (sqrt(12) L t1)`` (with ``L = 1`` and ``t1 = 100`` that is ``eta < 0.0029``; every
profile we train breaks it: the models would not learn), (ii) bounded variances ``sigma_1^2, sigma_2^2`` that
hold for every dataset a leaver may hold, and (iii) it bounds the *expected* squared gap, not a sensitivity
(digest P8): the Gaussian mechanism needs a bound that holds for every pair of neighbouring inputs.

What holds instead (our argument, stated for the certificate's note). Assumptions:

A1. Training is gradient gossip with one (minibatch) gradient per round and no weight decay (Eq. 2,
    ``local_steps = 1``), from a start ``theta^0`` that does not depend on the data.
A2. Every exchanged gradient has norm at most ``C`` and the minibatch gradient map is ``L``-Lipschitz in the
    parameters, *for every dataset* (:class:`GossipSmoothness`). For softmax regression on inputs with
    ``||x|| <= R`` (a public bound, e.g. rows scaled to unit norm) with a bias,
    ``C = sqrt(2) sqrt(R^2 + 1)`` (``||p - y|| <= sqrt(2)``) and ``L = (R^2 + 1) / 2`` (Boehning's bound
    ``diag(p) - p p^T <= I / 2``).
A3. The topology ``W^t`` and the minibatch draws do not depend on the data (the retraining reuses them, as
    the package's coupled retraining does); the retrain matrices ``W~^t`` are symmetric doubly stochastic.

Let ``e_i^t`` bound ``||theta_i^t - theta~_i^t||`` for each remaining client ``i != k``. Subtracting Eq. (3)
from Eq. (2) with ``W~_ik = 0``::

    theta_i^{t+1} - theta~_i^{t+1} = (theta_i^t - theta~_i^t) - eta sum_{j!=k} W~_ij (g_j - g~_j)
                                     - eta sum_j (W - W~)_ij g_j .

The last coefficients sum to 0 (both rows sum to 1), so ``||sum_j (W - W~)_ij g_j|| <= C ||(W - W~)_i||_1``
(the "kick", the leaver's direct influence); ``||g_j - g~_j|| <= min(2C, L e_j^t)`` (the "drift", its indirect
influence). Hence, from ``e^0 = 0``::

    kick_i^t  = eta C ||(W^t - W~^t)_i||_1,   drift_i^t = eta sum_{j!=k} W~^t_ij min(2C, L e_j^t),
    e_i^{t+1} = e_i^t + drift_i^t + kick_i^t .

Eq. (7) gives ``theta_i^{t1} - sum_t delta_i^t = theta^0 - eta sum_t sum_j W~^t_ij g_j^t``: the ``"sum"``
correction removes the kicks *exactly* and leaves ``Delta_i = sum_t drift_i^t``; weights ``w_i^t`` in
``[0, 1]`` (``"paper"``, ``"none"``) leave at most ``sum_t (1 - w) kick`` more, bounded by ``sum_t kick_i^t``.
These bounds hold for every dataset pair (the leaver's data arbitrary) and every coupled minibatch draw, so
they are sensitivities. Releasing all ``n - 1`` models with independent noise ``N(0, (n-1) sigma^2 I)`` is a
Gaussian mechanism of sensitivity ``sqrt(sum_i Delta_i^2)`` and std ``sqrt(n-1) sigma``, i.e. sensitivity
``rms_i(Delta_i)`` at std ``sigma`` (``scope="clients"``, the default: it covers each model and every
post-processing of them, the average included); the paper's scope, the average model only, has sensitivity
``mean_i(Delta_i)`` for the sum correction (``W~``'s columns sum to 1) (``scope="average"``). The analytic
Gaussian mechanism (Balle & Wang 2018) calibrates ``sigma`` exactly; conditioning on the shared draws and
averaging keeps the (epsilon, delta) guarantee (joint convexity). Threat model: the observer sees the released
models (not the caches, which hold the leaver's gradients and must be deleted), knows the topology and the
seeds; the reference is perturbed retraining with the same topology, retrain rule and draws.

Consequence worth teaching: the drift grows like ``eta^2 L C t1^2`` while what the model learns grows like
``eta C t1``, so small total step ``eta t1`` makes the sum-corrected model nearly exact (the correction undoes
the leaver's first-order effect); the kicks the paper's convex weights leave behind grow like ``eta C t1``,
as fast as the model, and no epsilon below hundreds keeps that model useful.

Plain numpy (or per-round ``scipy.sparse`` matrices) in, plain numbers out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..._validate import check_choice, check_int, check_positive
from ...core import Certificate
from ...privacy.gaussian import analytic_gaussian_sigma


SOUND_SCOPES = ("clients", "average")
_SCALES = ("paper", "sum", "none")


@dataclass(frozen=True, kw_only=True)
class GossipSmoothness:
    """Assumption A2 of this module: ``||g|| <= lipschitz`` and the gradient map is ``smoothness``-Lipschitz.

    Attributes
    ----------
    lipschitz:
        ``C``, a bound on every exchanged gradient's norm, for every dataset.
    smoothness:
        ``L``, the Lipschitz constant of the minibatch gradient in the parameters, for every dataset.
    """

    lipschitz: float
    smoothness: float

    def __post_init__(self) -> None:
        check_positive("lipschitz", self.lipschitz)
        check_positive("smoothness", self.smoothness, allow_zero=True)

    @classmethod
    def softmax_regression(cls, input_norm: float, *, bias: bool = True) -> "GossipSmoothness":
        """``C = sqrt(2) ||x~||``, ``L = ||x~||^2 / 2`` with ``||x~||^2 = R^2 (+ 1 for the bias)``, cross-entropy."""
        R = check_positive("input_norm", input_norm)
        sq = R**2 + (1.0 if bias else 0.0)
        return cls(lipschitz=math.sqrt(2.0 * sq), smoothness=0.5 * sq)

    def as_dict(self) -> dict[str, float]:
        return {"C": self.lipschitz, "L": self.smoothness}


@dataclass(frozen=True)
class GossipSensitivity:
    """Per-client bounds ``Delta_i`` (remaining clients, in order) and the two release scopes' sensitivities."""

    per_client: np.ndarray
    average: float
    kick_total: float
    drift_total: float

    @property
    def clients(self) -> float:
        return float(np.sqrt(np.mean(self.per_client**2))) if self.per_client.size else 0.0

    def for_scope(self, scope: str) -> float:
        check_choice("scope", scope, SOUND_SCOPES)
        return self.clients if scope == "clients" else self.average


def gossip_sensitivity(W: np.ndarray, W_tilde: np.ndarray, leaver: int, lr: float, smooth: GossipSmoothness,
                       correction_scale: str = "sum") -> GossipSensitivity:
    """The worst-case gap between corrected and retrained models (module docstring), per remaining client.

    Parameters
    ----------
    W, W_tilde : numpy.ndarray or list of scipy.sparse matrices
        ``(t1, n, n)``: the rounds' mixing matrices and the retrain rule's ``W~^t`` embedded in ``(n, n)``
        (row and column ``leaver`` zero); or two lists of ``t1`` sparse matrices (``O(nnz)`` a round).
    leaver : int
        The leaving client ``k``.
    lr : float
        The training step size ``eta``.
    smooth : GossipSmoothness
        ``C`` and ``L``.
    correction_scale : {"sum", "paper", "none"}, default "sum"
        ``"sum"`` (the kicks are removed exactly), ``"paper"`` or ``"none"`` (weights in ``[0, 1]``: the kicks
        stay in the bound).

    Returns
    -------
    GossipSensitivity
        Per-client bounds ``Delta_i`` and the sensitivities of the two release scopes.

    References
    ----------
    .. [1] J. Qiao, Y. Liu, Z. Chen, M. Li, Y. Yuan, X. Zhang, D. Yu, "PDUDT: Provable Decentralized Unlearning under
       Dynamic Topologies", ICML 2025 (PMLR 267), eqs. (2), (3) and (7) (training, retraining and the correction whose
       gap is bounded); the worst-case bound is derived here, in place of Theorem 4.9.
    """
    if isinstance(W, (list, tuple)) and W and sp.issparse(W[0]):  # per-round CSR matrices: O(nnz) per round
        W, Wt = [sp.csr_matrix(w, dtype=float) for w in W], [sp.csr_matrix(w, dtype=float) for w in W_tilde]
        shapes = {w.shape for w in (*W, *Wt)}
        if len(W) != len(Wt) or len(shapes) != 1 or next(iter(shapes))[0] != next(iter(shapes))[1]:
            raise ValueError(f"W and W_tilde hold {len(W)} and {len(Wt)} matrices of shapes {sorted(shapes)}: "
                             "expected as many square (n, n) matrices of one shape")
        T, n = len(W), W[0].shape[0]
    else:
        W = np.asarray(W, dtype=float)
        Wt = np.asarray(W_tilde, dtype=float)
        if W.ndim != 3 or W.shape != Wt.shape or W.shape[1] != W.shape[2]:
            raise ValueError(f"W has shape {W.shape} and W_tilde {Wt.shape}: expected two (t1, n, n) arrays")
        T, n, _ = W.shape
    k = check_int("leaver", leaver, low=0, high=n - 1)
    eta = check_positive("lr", lr)
    check_choice("correction_scale", correction_scale, _SCALES)
    C, L = smooth.lipschitz, smooth.smoothness
    keep = np.array([i for i in range(n) if i != k])
    e = np.zeros(n)
    kick_sum = np.zeros(n)
    drift_sum = np.zeros(n)
    drift_avg = 0.0
    for t in range(T):
        m = np.minimum(2.0 * C, L * e)
        m[k] = 0.0
        kick = eta * C * np.asarray(abs(W[t] - Wt[t]).sum(axis=1)).ravel()
        drift = eta * np.asarray(Wt[t] @ m).ravel()
        drift_avg += eta * m[keep].sum() / (n - 1)  # W~'s columns sum to 1 over the remaining clients
        kick[k] = drift[k] = 0.0
        e = e + drift + kick
        kick_sum += kick
        drift_sum += drift
    per = drift_sum[keep] + (0.0 if correction_scale == "sum" else kick_sum[keep])
    avg = drift_avg + (0.0 if correction_scale == "sum" else float(kick_sum[keep].mean()))
    return GossipSensitivity(per, float(avg), float(kick_sum[keep].sum()), float(drift_sum[keep].sum()))


def sound_gossip_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """The std on the average model (per client ``sqrt(n-1)`` times it) for ``(epsilon, delta)``: analytic
    Gaussian mechanism (Balle & Wang 2018) at the given sensitivity (:meth:`GossipSensitivity.for_scope`).

    Parameters
    ----------
    sensitivity : float
        The scope's sensitivity, ``>= 0``.
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Failure probability, in ``(0, 1)``.

    Returns
    -------
    float
        The std on the average model.

    References
    ----------
    Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy" (ICML 2018).
    """
    check_positive("sensitivity", sensitivity, allow_zero=True)
    check_positive("epsilon", epsilon)
    if not (0.0 < float(delta) < 1.0):
        raise ValueError(f"delta={delta!r} is out of range: expected delta in (0, 1)")
    if sensitivity == 0:
        return 0.0
    return float(analytic_gaussian_sigma(epsilon, delta, sensitivity=sensitivity))


def gossip_certificate(*, sensitivity: GossipSensitivity, smooth: GossipSmoothness, epsilon: float, delta: float,
                       scope: str = "clients", correction_scale: str = "sum",
                       violations: tuple[str, ...] = ()) -> Certificate:
    """The sound :class:`~unlearnkit.core.Certificate` of this module (mode ``"sound"``), or mode ``"none"``
    with the noise still calibrated when a premise (A1 to A3) fails: ``violations`` name them.

    Parameters
    ----------
    sensitivity : GossipSensitivity
        From :func:`gossip_sensitivity`.
    smooth : GossipSmoothness
        The constants ``C`` and ``L`` the sensitivity used.
    epsilon : float
        Privacy parameter, ``> 0``.
    delta : float
        Failure probability, in ``(0, 1)``.
    scope : {"clients", "average"}, default "clients"
        What the release covers.
    correction_scale : {"paper", "sum", "none"}, default "sum"
        The correction's weights (recorded in the note and constants).
    violations : tuple of str, default ()
        Premises that fail; non-empty gives ``mode="none"``.

    Returns
    -------
    Certificate
        ``mode="sound"``, or ``mode="none"`` with ``epsilon = inf`` and the calibrated sigma.

    References
    ----------
    .. [1] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and
       Optimal Denoising", ICML 2018, Theorem 8 (calibration for the derived sensitivity).
    .. [2] J. Qiao, Y. Liu, Z. Chen, M. Li, Y. Yuan, X. Zhang, D. Yu, "PDUDT: Provable Decentralized Unlearning under
       Dynamic Topologies", ICML 2025 (PMLR 267), Algorithm 2 (the perturbation of every remaining model).
    """
    check_choice("scope", scope, SOUND_SCOPES)
    delta_s = sensitivity.for_scope(scope)
    sigma = sound_gossip_sigma(delta_s, epsilon, delta)
    consts = {**smooth.as_dict(), "sensitivity": delta_s, "scope": scope, "correction_scale": correction_scale,
              "sensitivity_clients": sensitivity.clients, "sensitivity_average": sensitivity.average,
              "kick_total": sensitivity.kick_total, "drift_total": sensitivity.drift_total}
    mechanism = ("Gaussian output perturbation of the n-1 client models" if scope == "clients"
                 else "Gaussian output perturbation of the average of the n-1 client models")
    source = ("unlearnkit: worst-case gradient-gossip sensitivity (kick + drift recursion, "
              "methods/pdudt/sound.py) + analytic Gaussian (Balle & Wang 2018)")
    if violations:
        return Certificate(epsilon=math.inf, delta=float(delta), sigma=sigma, mechanism=mechanism, source=source,
                           mode="none", constants={**consts, "calibration_mode": "sound"},
                           note=(f"not certified: {'; '.join(violations)}; sigma={sigma:.4g} is the sound "
                                 f"calibration, added but certifying nothing"))
    note = (f"(epsilon, delta)-indistinguishable from perturbed retraining (same topology, retrain rule, "
            f"minibatch draws and noise) for {'every released client model' if scope == 'clients' else 'the average model'}, "
            f"for any data of the leaver; assumes gradient norms <= C={smooth.lipschitz:.4g} and an "
            f"L={smooth.smoothness:.4g}-Lipschitz gradient for every dataset (A2), one gradient per round (A1); "
            f"the caches must be deleted")
    return Certificate(epsilon=float(epsilon), delta=float(delta), sigma=sigma, mechanism=mechanism, source=source,
                       mode="sound", constants=consts, note=note)
