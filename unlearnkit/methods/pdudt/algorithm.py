"""PDUDT's unlearner: Algorithm 2, lines 9-16, behind the package's one calling shape.

Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies", ICML 2025 (digest 002).

Training is *gradient gossip* over a graph that changes every round (paper Eq. 2)::

    theta_i^{t+1} = theta_i^t - eta * sum_j W^t_ij g_j^t,      g_j^t = grad F_j(theta_j^t, xi_j^t)

and every client keeps what it needs of its neighbours' gradients (:mod:`unlearnkit.decentral.gradient_gossip`
trains and caches). When client ``k`` leaves at round ``t1``, each remaining client ``i`` corrects its own
model locally, with no communication and no retraining: residuals, weights and the correction of Eqs. (7) to
(9) (:mod:`unlearnkit.decentral.correction`, shared with the caches), then noise
``z_i ~ N(0, (n-1) sigma^2 I)`` on every remaining client, so that the *average* of the ``n - 1`` models
carries ``N(0, sigma^2 I)`` (proof of Cor. 4.10). The noise level comes from
:mod:`unlearnkit.methods.pdudt.certify` (Theorem 4.9 + Corollary 4.10) or is set by hand, as in the paper's
experiments.

Choices we made where the paper is silent (each one tested, each one named in notebook 08): the retrain rule
(``"recompute"``, digest 2.1 option A, or ``"absorb"``, option B), the correction scale (``"paper"``,
``"sum"`` or the ``"none"`` control, digest P2), both described in :mod:`unlearnkit.decentral.correction`;
the membership-inference attack: :func:`unlearnkit.evaluate.mia_precision`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch
from torch import Tensor

from ..._validate import check_choice, check_epsilon, check_instance, check_int, check_positive, check_range
from ...core import Callback, Cost, NoisePoint, Plan, Request, Result, Stopwatch, TrainedState, emit
from ...core import checked_unlearn
from ...decentral.correction import (CORRECTION_SCALES, RETRAIN_RULES, history_correction, reconstruct_models,
                                     retrain_mixing, sparse_history_correction, sparse_reconstruct_models,
                                     sparse_retrain_matrix)
from ...decentral.gradient_gossip import RunningSumCache
from ...graphs.mixing import slem
from ...graphs.sparse import sparse_slem
from ...privacy.noise import gaussian_noise
from ...privacy.trace import record_release, recording_active
from .certify import NOISE_MODES, GapConstants, pdudt_certificate
from .sound import SOUND_SCOPES, GossipSmoothness, gossip_certificate, gossip_sensitivity

#: A residual weight ``|W~_ij - W_ij|`` at or below this is round-off (the two rules computed in another order).
_ROUNDOFF = 1e-12


def measured_rho(W: Tensor, leaver: int, retrain_rule: str = "recompute", *,
                 mixing_rule: str = "metropolis") -> tuple[float, float]:
    """``(rho1, rho2)`` of Assumption 4.8 on a stored history: the largest second eigenvalue modulus of the
    rounds' ``W^t`` and of the retrain rule's ``W~^t`` (on the ``n - 1`` remaining clients), over ``W (T, n, n)``.

    The certificate checks the :class:`GapConstants` against them: ``rho2`` depends on the retrain rule.

    Parameters
    ----------
    W : torch.Tensor or list of scipy.sparse matrices
        ``(T, n, n)`` mixing matrices of the stored rounds, or the ``T`` CSR matrices of
        :attr:`~unlearnkit.decentral.HistoryCache.W_sparse` (ARPACK past 2,000 clients).
    leaver : int
        The leaving client.
    retrain_rule : {"recompute", "absorb"}, default "recompute"
        Retrain rule whose ``W~^t`` is measured.
    mixing_rule : str, default "metropolis"
        The mixing rule the rounds were built with.

    Returns
    -------
    tuple of (float, float)
        ``(rho1, rho2)``, each in ``[0, 1]``.

    References
    ----------
    Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies" (ICML 2025, digest 002),
    Assumption 4.8.
    """
    if isinstance(W, (list, tuple)):  # the CSR history: sparse_slem (exact dense eigenvalues up to 2,000 clients)
        n = int(W[0].shape[0])
        keep = np.array([i for i in range(n) if i != leaver])
        r1 = max(sparse_slem(w) for w in W)
        r2 = max(sparse_slem(sparse_retrain_matrix(w, leaver, retrain_rule=retrain_rule,
                                                   rule=mixing_rule)[keep][:, keep]) for w in W)
        return min(float(r1), 1.0), min(float(r2), 1.0)
    keep = [i for i in range(int(W.shape[-1])) if i != leaver]
    Wt = retrain_mixing(W, leaver, retrain_rule, mixing_rule=mixing_rule)[:, keep][:, :, keep]
    r1 = max(slem(w) for w in W.detach().cpu().double().numpy())
    r2 = max(slem(w) for w in Wt.detach().cpu().double().numpy())
    return min(float(r1), 1.0), min(float(r2), 1.0)  # a stochastic matrix has slem <= 1; float32 round-off


def _history_W(cache: Any, t1: int) -> Any:
    """The first ``t1`` rounds' ``W^t`` of a history cache: the dense ``(t1, n, n)`` stack for a small network,
    the list of CSR matrices past ``cache.dense_max`` clients."""
    return cache.W[:t1] if cache.dense else cache.W_sparse[:t1]


def client_noise(n_remaining: int, d: int, sigma: float, *, generator: torch.Generator,
                 dtype: torch.dtype = torch.float32, device: Any = None) -> Tensor:
    """``z_i ~ N(0, (n-1) sigma^2 I_d)`` for each of the ``n - 1`` remaining clients (Alg. 2, line 15).

    Their average is ``N(0, sigma^2 I_d)`` (proof of Cor. 4.10): the certificate covers the average model;
    each client model carries ``sqrt(n-1) sigma`` per coordinate (digest P8). Drawn on the generator's device
    in ``dtype`` (:func:`unlearnkit.privacy.noise.gaussian_noise`), then moved to ``device`` (default: the
    generator's).

    Parameters
    ----------
    n_remaining : int
        Number of remaining clients ``n - 1``, ``>= 1``.
    d : int
        Number of parameters per model.
    sigma : float
        Std on the average model, ``>= 0``.
    generator : torch.Generator
        Source of the noise.
    dtype : torch.dtype, default torch.float32
        Dtype of the draw.
    device : torch.device or str, optional
        Where the result goes (default: the generator's device).

    Returns
    -------
    torch.Tensor
        ``(n_remaining, d)`` noise, std ``sqrt(n_remaining) sigma`` per coordinate.

    References
    ----------
    Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies" (ICML 2025, digest 002),
    Algorithm 2 and Corollary 4.10.
    """
    check_int("n_remaining", n_remaining, low=1)
    check_positive("sigma", sigma, allow_zero=True)
    device = generator.device if device is None else device
    like = torch.empty(0, dtype=dtype, device=device)
    return gaussian_noise(like, math.sqrt(n_remaining) * sigma, generator, shape=(n_remaining, d))


def _trace_release(corrected: Tensor, z: Tensor, point: NoisePoint) -> None:
    """Record the release for the replay check under the plan's noise point: the ``n - 1`` models at std
    ``sqrt(n-1) sigma`` (``"pdudt.clients"``) or their average at std ``sigma`` (``"pdudt.average"``)."""
    if not recording_active():
        return
    sigma = point.sigma
    if point.name == "pdudt.average":
        record_release(point.name, corrected.mean(0), sigma, z.mean(0) / sigma if sigma > 0 else z.mean(0),
                       sensitivity=point.sensitivity)
        return
    record_release(point.name, corrected, sigma, z / sigma if sigma > 0 else z, sensitivity=point.sensitivity)


@dataclass(frozen=True, kw_only=True)
class PDUDTConfig:
    """How PDUDT unlearns a leaving client.

    Attributes
    ----------
    retrain_rule:
        ``"recompute"`` or ``"absorb"`` (:mod:`unlearnkit.decentral.correction`; digest 2.1 options A and B).
    correction_scale:
        ``"sum"`` (default: ``sum_t delta_i^t``, which removes the leaver's direct contribution to every model
        exactly and is the one that moves the model towards retraining), ``"paper"`` (Eq. 9's convex
        weights, about one round's worth: the paper's rule) or ``"none"`` (the control), digest P2.
    es_rounds:
        PDUDT(ES): only rounds ``t < es_rounds`` enter the correction (paper Sec. 4.3; 80 of 100 there).
    t_unlearn:
        The request round ``t1`` (default: every cached round). An earlier round needs the full history:
        the model at ``t1`` is rebuilt exactly from Eq. (4).
    noise:
        ``"manual"`` (``sigma`` as given; the paper's experiments) or ``"certified"`` (from ``d1``).
    sigma:
        Std of the noise on the *average* model for ``noise="manual"``.
    epsilon, delta:
        The (epsilon, delta) target for ``noise="certified"``, and the delta the manual note refers to.
    mode:
        ``"paper"`` (Theorem 4.9's ``d1`` with the printed calibration, needs ``constants``) or ``"sound"``:
        with ``smoothness``, the worst-case gradient-gossip sensitivity of
        :mod:`~unlearnkit.methods.pdudt.sound` (holds for our models); with ``constants`` only, a Markov tail
        on ``d1`` (sound only where Theorem 4.9's premises hold, :func:`~unlearnkit.methods.pdudt.pdudt_sigma`).
    constants:
        :class:`GapConstants` of Theorem 4.9 (``mode="paper"``, or ``"sound"`` without ``smoothness``).
    smoothness:
        :class:`~unlearnkit.methods.pdudt.sound.GossipSmoothness` (``C``, ``L``) for the sound sensitivity.
    scope:
        What the sound certificate covers: ``"clients"`` (every released model) or ``"average"`` (the paper's).
    """

    retrain_rule: str = "recompute"
    correction_scale: str = "sum"
    es_rounds: Optional[int] = None
    t_unlearn: Optional[int] = None
    noise: str = "manual"
    sigma: float = 0.0
    epsilon: float = 1.0
    delta: float = 1e-5
    mode: str = "paper"
    constants: Optional[GapConstants] = None
    smoothness: Optional[GossipSmoothness] = None
    scope: str = "clients"

    def __new__(cls, *args: Any, **kwargs: Any) -> "PDUDTConfig":
        # the failure probability is ``delta`` (the paper writes it beta): name the new keyword for the old one
        if "beta" in kwargs:
            raise TypeError("PDUDTConfig: beta was renamed delta (the failure probability of Definition 4.3): "
                            f"pass delta={kwargs['beta']!r}")
        return super().__new__(cls)

    def __post_init__(self) -> None:
        check_choice("retrain_rule", self.retrain_rule, RETRAIN_RULES)
        check_choice("correction_scale", self.correction_scale, CORRECTION_SCALES)
        if self.es_rounds is not None:
            check_int("es_rounds", self.es_rounds, low=1)
        if self.t_unlearn is not None:
            check_int("t_unlearn", self.t_unlearn, low=1)
        if self.es_rounds is not None and self.t_unlearn is not None and self.es_rounds > self.t_unlearn:
            raise ValueError(f"es_rounds={self.es_rounds} is out of range: expected es_rounds in [1, t_unlearn="
                             f"{self.t_unlearn}]")
        check_choice("noise", self.noise, NOISE_MODES)
        check_positive("sigma", self.sigma, allow_zero=True)
        check_epsilon("epsilon", self.epsilon)
        check_range("delta", self.delta, 0.0, 1.0, low_open=True, high_open=True)
        check_choice("mode", self.mode, ("paper", "sound"))
        check_choice("scope", self.scope, SOUND_SCOPES)
        # a bare number (nan, 1.0) is not the constants of Theorem 4.9: GapConstants validates each one finite
        check_instance("constants", self.constants, GapConstants, optional=True)
        check_instance("smoothness", self.smoothness, GossipSmoothness, optional=True)
        if self.noise == "certified" and self.constants is None and not (self.mode == "sound" and self.smoothness):
            raise ValueError("constants=None: noise='certified' needs GapConstants (or mode='sound' with "
                             "smoothness=GossipSmoothness(...))")


def _setup(state: TrainedState, request: Request, config: PDUDTConfig) -> tuple:
    """``(cache, lr, mixing_rule, n, d, leaver, t1, es_rounds)`` of a request, validated against the state."""
    params = state.params
    n, d = int(params.shape[0]), int(params.shape[1])
    ex = state.extras
    cache = ex.get("cache", ex.get("history", ex.get("running")))
    lr = ex.get("lr", getattr(state.config, "lr", None))
    mixing_rule = getattr(state.config, "rule", "metropolis")
    if cache is None or lr is None:
        raise ValueError("state needs a gradient-gossip cache (extras 'history' or 'running') and the step "
                         "size: train with run_gradient_gossip(..., GradientGossipConfig(cache=...))")
    if request.client is None:
        raise ValueError(f"request.kind={request.kind!r} without a client: PDUDT unlearns a whole client")
    k = request.client
    if isinstance(k, bool) or not (0 <= int(k) < n):
        raise ValueError(f"leaver={k!r} does not exist: expected a client in [0, {n - 1}]")
    k = int(k)
    rounds = cache.rounds
    t1 = rounds if config.t_unlearn is None else config.t_unlearn
    if t1 > rounds or t1 < 1:
        raise ValueError(f"t_unlearn={t1} is after training ended: expected t_unlearn in [1, {rounds}] "
                         f"(rounds trained and cached)")
    es = config.es_rounds
    if es is not None and es > t1:
        raise ValueError(f"es_rounds={es} is out of range: expected es_rounds in [1, t_unlearn={t1}]")
    if isinstance(cache, RunningSumCache):
        if t1 != rounds:
            raise ValueError(f"t_unlearn={t1}: running sums only hold the request round {rounds}")
        if cache.retrain_rule != config.retrain_rule or cache.es_rounds != es:
            raise ValueError(f"retrain_rule={config.retrain_rule!r}, es_rounds={es}: the running sums were "
                             f"accumulated with retrain_rule={cache.retrain_rule!r}, "
                             f"es_rounds={cache.es_rounds}")
    return cache, lr, mixing_rule, n, d, k, t1, es


def _plan(state: TrainedState, request: Request, config: PDUDTConfig) -> tuple[Plan, Optional[tuple[float, float]]]:
    """The plan of :func:`pdudt_plan` and the measured ``(rho1, rho2)`` it checked (``None`` when none)."""
    cache, lr, mixing_rule, n, _, k, t1, _ = _setup(state, request, config)
    rho = None
    if config.noise == "certified" and config.mode == "sound" and config.smoothness is not None:
        cert = PDUDT._sound_certificate(state, cache, config, k, t1, lr, mixing_rule)
    else:
        if config.noise == "certified" and not isinstance(cache, RunningSumCache):
            rho = measured_rho(_history_W(cache, t1), k, config.retrain_rule, mixing_rule=mixing_rule)
        cert = pdudt_certificate(lr=lr, t1=t1, n=n, constants=config.constants, noise=config.noise,
                                 mode=config.mode, epsilon=config.epsilon, delta=config.delta,
                                 sigma=config.sigma if config.noise == "manual" else None,
                                 correction_scale=config.correction_scale, measured_rho=rho)
    sigma = float(cert.sigma or 0.0)
    sens = cert.constants.get("sensitivity") if cert.mode == "sound" and cert.constants else None
    if config.scope == "average":
        point = NoisePoint("pdudt.average", sens, sigma)
    else:  # every remaining model carries sqrt(n - 1) sigma: the n - 1 of them are one release
        root = math.sqrt(n - 1)
        point = NoisePoint("pdudt.clients", None if sens is None else root * sens, root * sigma)
    return Plan(cert, (point,)), rho


def pdudt_plan(state: TrainedState, request: Request, config: PDUDTConfig) -> Plan:
    """PDUDT's certificate for the leaving client and its one noise point, before any correction.

    The certificate reads only the config and the public mixing schedule ``W^t``: the sound one
    (:mod:`~unlearnkit.methods.pdudt.sound`, with ``config.smoothness``) or Theorem 4.9 / Corollary 4.10
    (:func:`~unlearnkit.methods.pdudt.certify.pdudt_certificate`, checked against the measured ``rho1, rho2``).

    Parameters
    ----------
    state:
        What :func:`unlearnkit.decentral.run_gradient_gossip` returns (a gradient-gossip cache and the step size).
    request:
        A client request (``request.client`` leaves).
    config:
        :class:`PDUDTConfig`.

    Returns
    -------
    Plan
        The certificate and the noise point: ``"pdudt.clients"`` (``config.scope="clients"``: the ``n - 1``
        models, std ``sqrt(n-1) sigma``, sensitivity ``sqrt(n-1)`` times the sound one) or ``"pdudt.average"``
        (their average, std ``sigma``); the sensitivity is ``None`` unless the certificate is sound.

    References
    ----------
    .. [1] J. Qiao, Y. Liu, Z. Chen, M. Li, Y. Yuan, X. Zhang, D. Yu, "PDUDT: Provable Decentralized Unlearning under
       Dynamic Topologies", ICML 2025 (PMLR 267), Algorithm 2 (lines 9 and 15: the Gaussian perturbation), Theorem 4.9
       and Corollary 4.10.
    .. [2] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and
       Optimal Denoising", ICML 2018, Theorem 8 (the sound calibration).
    """
    return _plan(state, request, config)[0]


class PDUDT:
    """PDUDT (Algorithm 2) behind the package's one calling shape.

    Requests: a whole client only (every sample of ``request.client``, as kind ``"client"`` or ``"samples"``):
    the correction removes the leaver's every gradient and the certificate is for a client leaving.
    """

    name = "pdudt"
    request_kinds = ("samples", "client")
    client_scope = "whole"

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: PDUDTConfig, *, generator: torch.Generator,
                callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Unlearn the client ``request.client`` from every remaining client's model (Alg. 2, lines 9-16).

        Parameters
        ----------
        state:
            What :func:`unlearnkit.decentral.run_gradient_gossip` returns: ``params`` are the ``(n, d)`` client
            models after training; ``extras`` hold the ``"history"`` (full history) or ``"running"`` (running
            sums) cache and ``"theta0"``; ``config.lr`` is the training step size.
        request:
            A client request (``kind="client"``).
        config:
            :class:`PDUDTConfig`.
        generator:
            Draws the noise of Alg. 2, line 15 (one ``(n - 1, d)`` draw per call, also at ``sigma = 0``).
        callback:
            Receives one ``"noise"`` event.
        progress:
            Accepted for the common calling shape; the correction is one pass, there is nothing to show.

        Returns
        -------
        Result
            ``params``: the ``n - 1`` remaining models ``theta_i^u`` (in ``extras["clients"]`` order);
            ``extras``: ``"corrected"`` (before noise), ``"correction"``, ``"noise"`` and, from a history,
            ``"delta_norms"`` and ``"p"`` (Eqs. 7 and 8).

        References
        ----------
        .. [1] J. Qiao, Y. Liu, Z. Chen, M. Li, Y. Yuan, X. Zhang, D. Yu, "PDUDT: Provable Decentralized Unlearning
           under Dynamic Topologies", ICML 2025 (PMLR 267), Algorithm 2, lines 9-16, with the corrections of eqs. (7)
           and (8).
        """
        params, ex = state.params, state.extras
        cache, lr, mixing_rule, n, d, k, t1, es = _setup(state, request, config)
        rounds = cache.rounds
        keep = [i for i in range(n) if i != k]
        extras: dict[str, Any] = {"clients": keep, "leaver": k, "t_unlearn": t1}
        # the plan reads only the public schedule W^t (A3) and the config: it is computed before the request's
        # work and not timed with the unlearning (the paper times the unlearning operations only)
        plan, rho = _plan(state, request, config)
        cert, point = plan.certificate, plan.noise[0]
        if rho is not None:
            extras["measured_rho"] = rho
        with Stopwatch() as sw:
            if isinstance(cache, RunningSumCache):
                if config.correction_scale == "none":
                    corr = torch.zeros(n, d, dtype=cache.A.dtype, device=cache.A.device)
                else:
                    corr = cache.correction(k, scale=config.correction_scale)
                theta = params
            else:  # small N: the densified stack, vectorised; large N: round by round on the CSR history
                W, g = _history_W(cache, t1), cache.grads[:t1]
                if config.correction_scale == "none":  # the control reads nothing from the cache
                    corr = torch.zeros_like(g[0])
                elif cache.dense:
                    corr, delta, p = history_correction(W, g, k, lr, rule=config.retrain_rule, mixing_rule=mixing_rule,
                                                        scale=config.correction_scale, es_rounds=es)
                    extras["delta_norms"] = delta.norm(dim=-1)
                    extras["p"] = p
                else:
                    corr, extras["delta_norms"], extras["p"] = sparse_history_correction(
                        W, g, k, lr, rule=config.retrain_rule, mixing_rule=mixing_rule,
                        scale=config.correction_scale, es_rounds=es)
                if t1 == rounds:
                    theta = params
                else:
                    theta0 = ex.get("theta0")
                    if theta0 is None:
                        raise ValueError(f"t_unlearn={t1} < {rounds} needs state.extras['theta0']")
                    rebuild = reconstruct_models if cache.dense else sparse_reconstruct_models
                    theta = rebuild(theta0.to(g.dtype), W, g, lr).to(params.dtype)
            corr = corr.to(device=params.device, dtype=params.dtype)
            corrected = theta[keep] - corr[keep].to(params.dtype)
            z = client_noise(n - 1, d, cert.sigma or 0.0, generator=generator, dtype=params.dtype,
                             device=params.device)
            out = corrected + z
            _trace_release(corrected, z, point)
        extras.update(corrected=corrected, correction=corr[keep], noise=z)
        emit(callback, "noise", t1, None, sigma=cert.sigma or 0.0, correction_norm=float(corr[keep].norm()),
             noise_norm=float(z.norm()))
        history = [{"t_unlearn": t1, "sigma": float(cert.sigma or 0.0), "correction_norm": float(corr[keep].norm())}]
        extras["vector_ops"] = ops = self._vector_ops(cache, k, t1, es, config.correction_scale, config.retrain_rule,
                                                            mixing_rule)
        # no fresh gradient is computed; each model-sized multiply-add of a stored gradient is counted as one
        # gradient-evaluation equivalent (an upper bound for a linear model, whose per-sample gradient costs
        # about as much), so the cost column is not a flattering zero
        cost = Cost(grad_evals=ops, messages=0, seconds=sw.seconds, memory_bytes=int(cache.memory_bytes))
        return Result(out, cert, history, cost, extras)

    def certify(self, state: TrainedState, request: Request, config: PDUDTConfig) -> Plan:
        """The certificate and noise point of :meth:`unlearn` (:func:`pdudt_plan`), without a correction.

        Parameters
        ----------
        state : TrainedState
            What :func:`unlearnkit.decentral.run_gradient_gossip` returns.
        request : Request
            A client request.
        config : PDUDTConfig
            The run.

        Returns
        -------
        Plan
            As :func:`pdudt_plan`.

        References
        ----------
        .. [1] J. Qiao, Y. Liu, Z. Chen, M. Li, Y. Yuan, X. Zhang, D. Yu, "PDUDT: Provable Decentralized Unlearning
           under Dynamic Topologies", ICML 2025 (PMLR 267), Algorithm 2, Theorem 4.9 and Corollary 4.10.
        .. [2] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration
           and Optimal Denoising", ICML 2018, Theorem 8 (the sound calibration).
        """
        return pdudt_plan(state, request, config)

    @staticmethod
    def _vector_ops(cache: Any, k: int, t1: int, es: Optional[int], scale: str, rule: str, mixing_rule: str) -> int:
        """Model-sized multiply-adds of the correction: per round and remaining client, the nonzeros of its
        row of ``W^t`` (the weights of Eq. 8) and of ``W~^t - W^t`` (Eq. 7); for running sums, one combination
        per client and per accumulator read. A residual weight within round-off of zero (``W~_ij = W_ij`` computed
        two ways) is no operation."""
        if scale == "none":
            return 0
        if isinstance(cache, RunningSumCache):
            return 2 * int(cache.n)
        H = t1 if es is None else min(es, t1)
        if not cache.dense:
            nnz = 0
            for w in cache.W_sparse[:H]:
                diff = abs(sparse_retrain_matrix(w, k, retrain_rule=rule, rule=mixing_rule) - w).tocsr()
                diff.data[diff.data <= _ROUNDOFF] = 0.0
                diff.eliminate_zeros()
                rows_w, rows_d = np.diff(w.indptr), np.diff(diff.indptr)
                nnz += int(rows_w.sum() - rows_w[k] + rows_d.sum() - rows_d[k])
            return nnz
        W = cache.W[:H]
        Wt = retrain_mixing(W, k, rule, mixing_rule=mixing_rule)
        keep = [i for i in range(W.shape[-1]) if i != k]
        nnz = (W[:, keep] != 0).sum() + ((Wt - W)[:, keep].abs() > _ROUNDOFF).sum()
        return int(nnz)

    @staticmethod
    def _sound_certificate(state: TrainedState, cache: Any, config: PDUDTConfig, k: int, t1: int, lr: float,
                           mixing_rule: str) -> Any:
        # the premises of methods/pdudt/sound.py, checked on what the state says about its training
        cfg = state.config
        bad = []
        if isinstance(cache, RunningSumCache):
            bad.append("running sums keep no W^t to bound the kicks and drift with (train with cache='history')")
            W = None
        else:
            W = _history_W(cache, t1)
        if getattr(cfg, "local_steps", 1) != 1:
            bad.append(f"local_steps={cfg.local_steps}: the sensitivity needs one gradient per round (A1)")
        if getattr(cfg, "weight_decay", 0.0) != 0.0:
            bad.append(f"weight_decay={cfg.weight_decay}: not in A1/A2")
        if config.es_rounds is not None and config.correction_scale == "sum":
            bad.append("es_rounds with correction_scale='sum' leaves the kicks of later rounds: use es_rounds=None")
        if isinstance(W, list):  # the CSR history: the recursion reads rows and matrix-vector products only
            Wts = [sparse_retrain_matrix(w, k, retrain_rule=config.retrain_rule, rule=mixing_rule) for w in W]
            sens = gossip_sensitivity(W, Wts, k, lr, config.smoothness, config.correction_scale)
        else:
            if W is None:
                W = torch.zeros(1, state.params.shape[0], state.params.shape[0], device=state.params.device)
            Wt = retrain_mixing(W, k, config.retrain_rule, mixing_rule=mixing_rule)
            sens = gossip_sensitivity(W.double().cpu().numpy(), Wt.double().cpu().numpy(), k, lr, config.smoothness,
                                      config.correction_scale)
        return gossip_certificate(sensitivity=sens, smooth=config.smoothness, epsilon=config.epsilon,
                                  delta=config.delta, scope=config.scope, correction_scale=config.correction_scale,
                                  violations=tuple(bad))
