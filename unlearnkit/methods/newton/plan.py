"""What a Newton/Fisher request will certify, computed before the Newton step.

Everything the certificate of :class:`~unlearnkit.methods.newton.algorithm.Newton` reads is known before the
step is solved: the requesters and their fractions ``(m_c, n_c)`` (from the request and the federation), the
receivers' weight, and the constants ``L``, ``M``, ``lam`` (from the model, the training weight decay and the
feature bound). :func:`newton_plan` computes it; :meth:`Newton.unlearn` then checks the run (the measured
``||grad f(x_s)||`` against ``grad_tol``, the CG convergence, the clips) and recomputes the certificate with
what it measured (Wu et al. 2026, eq. (10); digest 001 section 3.7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping, Optional

import networkx as nx
import numpy as np
import scipy.sparse as sp

from ...core import NoisePoint, Plan, Request, TrainedState
from ...graphs.flood import check_flood_network
from .steps import is_linear_model, requesters_of, newton_model_constants
from .training import training_config
from .config import NewtonConfig


def _x_norm(ds) -> tuple[float, bool]:
    """``(bound on ||x||, public)``: 1 after ``data.scale_to_unit_ball`` (recorded in ``info``, public), else
    measured on the training data (``public=False``: it depends on the data, so it certifies nothing)."""
    info = getattr(ds, "info", {}) or {}
    if "max_norm" in info:
        return float(info["max_norm"]), True
    return float(ds.x_train.reshape(ds.n_train, -1).norm(dim=1).max()), False


def _unverified_constants(analytic: Mapping[str, float], config: NewtonConfig, x_norm: float,
                          public: bool) -> list[str]:
    """Why the constants a sound certificate would use are not bounds derived from public quantities."""
    why = []
    if not public:
        why.append(f"the feature bound ||x|| <= {x_norm:.4g} was measured on the training data (no public bound: "
                   "scale the data with data.scale_to_unit_ball)")
    for name, key in (("lipschitz", "L"), ("hessian_lipschitz", "M")):
        v = getattr(config, name)
        if v is not None and v < analytic[key] * (1 - 1e-12):
            why.append(f"{name}={v:g} is below the analytic {key}={analytic[key]:.4g}: not a valid bound")
    return why


@dataclass(frozen=True)
class NewtonTerms:
    """A request's plan and what :meth:`Newton.unlearn` reuses of it (requesters, constants, noise)."""

    plan: Plan
    sigmas: dict[int, float]
    constants: Optional[dict[str, float]]
    fractions: dict[int, tuple[int, int]]
    requesters: dict[int, np.ndarray]
    weight: float
    weight_decay: float


def newton_terms(state: TrainedState, request: Request, config: NewtonConfig, *,
                  measured_grad: Optional[float] = None, converged: bool = True, clipped: bool = False) -> NewtonTerms:
    """Validate the request against the state and compute its certificate; the run checks default to passed.

    What :func:`newton_plan` returns, with the pieces :meth:`Newton.unlearn` reuses: the requesters and their
    fractions ``(m_c, n_c)``, the receivers' weight (``1/N``; client-wise ``1`` or ``1/N`` by
    ``config.clientwise_weight``), the analytic constants ``L``, ``M``, ``lam`` (logistic regression with
    weight decay only; overridden by ``config.lipschitz`` / ``config.hessian_lipschitz``) and each requester's
    message noise. A sound certificate whose constants are not public bounds (a feature bound measured on the
    training data, an override below the analytic value) becomes ``mode="none"``.

    Parameters
    ----------
    state : TrainedState
        From :func:`~unlearnkit.methods.newton.training.train_dpsgd` (``params`` ``(N, d)``, ``federation``,
        ``network`` a networkx graph, ``config`` the training's ``GossipConfig``).
    request : Request
        Sample-wise, class-wise or client-wise.
    config : NewtonConfig
        The run's settings (target guarantee, mode, curvature, release).
    measured_grad : float, optional
        The measured ``||grad f(x_s)||`` at the average of the released models, checked against
        ``config.grad_tol``; ``None``: not measured yet (the check is taken as passed).
    converged : bool, default True
        Whether every conjugate-gradient solve converged.
    clipped : bool, default False
        Whether a correction was clipped.

    Returns
    -------
    NewtonTerms
        The plan (the certificate and the noise point ``"newton.average"``), the message noise std of every
        requester, the constants (``None`` for a model without analytic constants), the fractions, the
        requesters' forget indices, the receivers' weight and the training weight decay.

    Raises
    ------
    ValueError
        For a state without its network graph, federation or ``(N, d)`` parameters, a request no client can
        serve (:func:`~.steps.requesters_of`), or ``curvature="diag_fisher"`` with no weight decay and no damping.

    References
    ----------
    .. [1] H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, "Certified Unlearning in Decentralized Federated
       Learning", arXiv 2601.06436, 2026, Theorem 1 with eq. (10) and Lemma 3 (the certificate and the noise-free
       gap ``Delta F_c`` it calibrates to), Algorithm 1 (``sigma_c``), Remark 3 and Lemma 4 (the constants of a
       regularised convex loss).
    """
    G = state.network
    if not (isinstance(G, nx.Graph) or sp.issparse(G)):
        raise ValueError("state.network must be the network the clients trained on: a networkx graph or a "
                         f"scipy.sparse mixing matrix (train_dpsgd), got {type(G).__name__}")
    check_flood_network(G)
    reqs = requesters_of(state, request)
    flat, fed, ds, X = state.flat, state.federation, state.dataset, state.params
    if X.dim() != 2 or X.shape[0] != fed.n_clients:
        raise ValueError(f"state.params has shape {tuple(X.shape)}; expected ({fed.n_clients}, d)")
    N = int(X.shape[0])
    wd = training_config(state).weight_decay
    if config.curvature == "diag_fisher" and wd + config.damping == 0:
        raise ValueError("curvature='diag_fisher' with weight_decay=0 and damping=0 is singular: set damping > 0")
    client_kind = request.kind == "client"
    weight = (1.0 if config.clientwise_weight == "1" else 1.0 / N) if client_kind else 1.0 / N
    # (m_c, n_c) of every requester: a departing client forgets all its n_c samples
    fractions = {c: (int(np.asarray(U).size), int(np.asarray(fed.client_indices[c]).size)) for c, U in reqs.items()}
    constants, unverified = None, []
    if is_linear_model(flat) and wd > 0:
        x_norm, public = _x_norm(ds)
        constants = newton_model_constants(flat, weight_decay=wd, x_norm=x_norm)
        unverified = _unverified_constants(constants, config, x_norm, public)
        if config.lipschitz is not None:
            constants["L"] = config.lipschitz
        if config.hessian_lipschitz is not None:
            constants["M"] = config.hessian_lipschitz
    sigmas, cert = config.certificate(kind=request.kind, fractions=fractions, n_clients=N, constants=constants,
                                      weight=weight, measured_grad=measured_grad, converged=converged,
                                      clipped=clipped)
    if unverified and cert.mode == "sound":
        cert = replace(cert, epsilon=math.inf, mode="none",
                       constants={**cert.constants, "epsilon_target": cert.epsilon},
                       note="not certified: " + "; ".join(unverified) + f" (was: {cert.note})")
    # the released average carries weight * sum_c nu_c: std weight * sqrt(sum_c sigma_c^2) per coordinate
    model_sigma = weight * math.sqrt(sum(s ** 2 for s in sigmas.values()))
    sens = cert.constants.get("sensitivity") if cert.mode == "sound" else None
    plan = Plan(cert, (NoisePoint("newton.average", sens, model_sigma),))
    return NewtonTerms(plan=plan, sigmas=dict(sigmas), constants=constants, fractions=fractions, requesters=reqs,
                  weight=weight, weight_decay=wd)


def newton_plan(state: TrainedState, request: Request, config: NewtonConfig) -> Plan:
    """Newton's certificate for ``request`` and its noise point, before the Newton step is solved.

    The fractions ``(m_c, n_c)`` come from the request and the federation, the constants from the model, the
    training weight decay and the feature bound; the run checks are taken as passed (no measured gradient, every
    CG solve converged, no correction clipped).

    Parameters
    ----------
    state:
        From :func:`~unlearnkit.methods.newton.training.train_dpsgd` (``params`` ``(N, d)``, ``federation``,
        ``network``).
    request:
        Sample-wise, class-wise or client-wise.
    config:
        :class:`~unlearnkit.methods.newton.algorithm.NewtonConfig`.

    Returns
    -------
    Plan
        The certificate :meth:`Newton.unlearn` issues when the run checks pass, and the noise point
        ``"newton.average"``: the released average model, with the certificate's sensitivity (sound mode;
        ``None`` otherwise) and the model's noise std ``weight * sqrt(sum_c sigma_c^2)``.

    References
    ----------
    .. [1] H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, "Certified Unlearning in Decentralized Federated
       Learning", arXiv 2601.06436, 2026, Theorem 1 (the (epsilon, delta) certificate), Lemma 3 (the noise-free gap it
       calibrates to) and Algorithm 1.
    """
    return newton_terms(state, request, config).plan
