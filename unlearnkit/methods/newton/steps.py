"""The pieces every Newton/Fisher request goes through: who requests, the curvature solve, the constants.

- :func:`requesters_of` splits a request among the clients that hold its samples (Wu et al. 2026, Algorithm 1:
  every holder is a requester; class-wise removal is simultaneous sample-wise requests, Remark 2) and
  rejects what no client, or not the named client, holds.
- :class:`CurvatureSolver` solves ``C^{-1} b`` (Algorithm 1, eqs. 2-3; section IV-C, eq. 6) for one client's
  retained-data curvature (``scope="local"``) or the average of several clients' curvatures
  (``scope="global"``, client-wise removal), for every curvature of :data:`unlearnkit.curvature.CURVATURES`
  (dense, diagonal or matrix-free CG), and counts the gradient evaluations.
- :func:`newton_model_constants` reads ``L``, ``M``, ``lam`` off a logistic-regression model for the
  certificate (:mod:`unlearnkit.methods.newton.certify`).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from torch import Tensor, nn

from ... import curvature as cv
from ..._validate import check_int, check_positive
from ...core import Request, TrainedState
from .certify import logistic_newton_constants
from .config import NewtonConfig


def is_linear_model(flat) -> bool:
    """Whether the model is a single ``Linear`` layer (logistic or softmax regression), the one model with
    analytic constants (:func:`newton_model_constants`).

    Parameters
    ----------
    flat : FlatParams
        The model as a function of its flat parameters.

    Returns
    -------
    bool
        ``True`` when exactly one submodule owns parameters and it is a ``torch.nn.Linear``.
    """
    mods = [m for m in flat.module.modules() if len(list(m.parameters(recurse=False)))]
    return len(mods) == 1 and isinstance(mods[0], nn.Linear)


def newton_model_constants(flat, *, weight_decay: float, x_norm: float = 1.0) -> dict[str, float]:
    """``L``, ``M``, ``lam`` of a logistic-regression model (a single ``Linear`` layer).

    Reads the loss, the bias and the number of outputs off ``flat`` and calls
    :func:`~unlearnkit.methods.newton.certify.logistic_newton_constants` (Wu et al. 2026, Remark 3 and
    Lemma 4; digest 001 section 3.5). ``ValueError`` for any other model: networks have no certified constants.

    Parameters
    ----------
    flat : FlatParams
        The model; must be a single ``Linear`` layer (logistic or softmax regression).
    weight_decay : float
        ``lam > 0`` of the regulariser.
    x_norm : float, default 1.0
        Public bound on the feature norm.

    Returns
    -------
    dict of str to float
        As :func:`~unlearnkit.methods.newton.certify.logistic_newton_constants`.

    Raises
    ------
    ValueError
        For any other model.

    References
    ----------
    Wu et al., "Certified Unlearning in Decentralized Federated Learning" (2026, digest 001), Remark 3 and Lemma 4.
    """
    if not is_linear_model(flat):
        raise ValueError("newton_model_constants: the model is not logistic regression (a single Linear "
                         "layer); networks have no certified constants")
    lam = check_positive("weight_decay", weight_decay)
    lin = [m for m in flat.module.modules() if isinstance(m, nn.Linear)][0]
    loss = "logistic" if flat.loss_name == "logistic" else "softmax"
    return logistic_newton_constants(weight_decay=lam, x_norm=x_norm, bias=lin.bias is not None, loss=loss,
                                     n_classes=lin.out_features)


def requesters_of(state: TrainedState, request: Request) -> dict[int, np.ndarray]:
    """``{client: forget indices it holds}``; raises ``ValueError`` naming indices nobody (or not ``c``) holds.

    Every client holding samples of the request is a requester. A client-wise request names its departing
    client; a sample-wise request with ``request.client`` must lie in that client's data, one without it may
    span several clients (simultaneous requests); a class-wise request keeps each client's samples of the class
    (with ``request.client``, that client's only).

    Parameters
    ----------
    state : TrainedState
        Its ``federation`` gives each client's training indices.
    request : Request
        Sample-wise, class-wise or client-wise.

    Returns
    -------
    dict of int to numpy.ndarray
        The forget indices of every requester (client-wise: all the departing client's indices).

    Raises
    ------
    ValueError
        For a state without a federation, a client-wise request without its client, indices no client (or not
        the named client) holds, a request no client holds any sample of, or a sample- or class-wise request that
        would empty a client (use a client-wise request).

    References
    ----------
    .. [1] H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, "Certified Unlearning in Decentralized Federated
       Learning", arXiv 2601.06436, 2026, Algorithm 1 (the requesters ``c in [C]`` and their ``U_c``), Remark 2
       (simultaneous requests) and Section IV-C (client-wise removal).
    """
    fed = state.federation
    if fed is None:
        raise ValueError("state.federation is None: decentralized unlearning needs the partition among clients")
    N = fed.n_clients
    held = {c: np.asarray(ix) for c, ix in enumerate(fed.client_indices)}
    if request.kind == "client":
        c = check_int("request.client", request.client, low=0, high=N - 1) if request.client is not None else None
        if c is None:
            raise ValueError("request.client is None: a client-wise request must name the departing client")
        return {c: held[c]}
    out: dict[int, np.ndarray] = {}
    if request.client is not None:
        c = check_int("request.client", request.client, low=0, high=N - 1)
        missing = request.indices[~np.isin(request.indices, held[c])]
        if request.kind == "samples" and missing.size:
            raise ValueError(f"indices {missing[:8].tolist()}{'...' if missing.size > 8 else ''} are not held by "
                             f"client {c} (it holds {held[c].size} samples); a client can only forget its own data")
        out[c] = request.indices[np.isin(request.indices, held[c])]
    else:
        owner = fed.owners()
        if owner is None:  # a sample held twice: search every client
            for c, ix in held.items():
                mine = request.indices[np.isin(request.indices, ix)]
                if mine.size:
                    out[c] = mine
        else:  # one lookup per forgotten sample, in client order as the search gives
            ids = np.asarray(request.indices, dtype=np.int64)
            own = np.where((ids >= 0) & (ids < owner.size), owner[np.clip(ids, 0, max(owner.size - 1, 0))], -1)
            for c in np.unique(own[own >= 0]).tolist():
                out[c] = request.indices[own == c]
        if request.kind == "samples":
            covered = np.concatenate(list(out.values())) if out else np.empty(0, dtype=np.int64)
            missing = np.setdiff1d(request.indices, covered)
            if missing.size:
                raise ValueError(f"indices {missing[:8].tolist()} are not held by any client (already forgotten, "
                                 "or never assigned)")
    if not out:
        raise ValueError(f"{request.describe()}: none of its samples is held by a client")
    for c, U in out.items():
        if U.size >= held[c].size:
            raise ValueError(f"client {c} would forget all its {held[c].size} samples; use a client-wise request "
                             f"(Request(kind='client', client={c})) instead")
    return out


class CurvatureSolver:
    """Builds ``C^{-1} b`` for one curvature choice over one or several clients' data (averaged)."""

    def __init__(self, flat, config: NewtonConfig, weight_decay: float, parts: list[tuple[Tensor, Tensor, Tensor]]):
        self.flat, self.cfg, self.wd, self.parts = flat, config, weight_decay, parts
        self.evals = 0
        self.iterations = 0
        self.converged = True
        self._dense: Optional[Tensor] = None

    def solve(self, b: Tensor) -> Tensor:
        cfg, flat, wd = self.cfg, self.flat, self.wd
        kw = dict(weight_decay=wd, damping=cfg.damping)
        if len(self.parts) == 1 and self._dense is None:
            at, x, y = self.parts[0]
            s = cv.solve(cfg.curvature, flat, at, x, y, b, cg_tol=cfg.cg_tol, cg_max_iter=cfg.cg_max_iter,
                         chunk_size=cfg.chunk_size, **kw)
            self.evals += s.grad_evals
            self.iterations += s.iterations
            self.converged &= s.converged
            return s.z
        if cfg.curvature.startswith("cg_"):
            maker = cv.hessian_operator if cfg.curvature == "cg_hessian" else cv.fisher_operator
            ops = [maker(flat, at, x, y, **kw) for at, x, y in self.parts]
            res = cv.conjugate_gradient(lambda v: sum(op(v) for op in ops) / len(ops), b, tol=cfg.cg_tol,
                                        max_iter=cfg.cg_max_iter)
            self.evals += sum(x.shape[0] for _, x, _ in self.parts) * res.iterations  # one per sample per product
            self.iterations += res.iterations
            self.converged &= res.converged
            return res.x
        if self._dense is None:
            mats = []
            for at, x, y in self.parts:
                C, e = cv.curvature_matrix(cfg.curvature, flat, at, x, y, chunk_size=cfg.chunk_size, **kw)
                mats.append(C)
                self.evals += e
            self._dense = sum(mats) / len(mats)
        if cfg.curvature == "diag_fisher":
            return b / self._dense
        return cv._dense_solve(self._dense, b)


def statistic_size(config: NewtonConfig, d: int) -> int:
    """Model-sized vectors one client's curvature statistic ``T_i`` takes on the wire.

    A dense curvature is ``d`` vectors (``O(d^2)`` numbers), the diagonal Fisher one (``O(d)``).

    Parameters
    ----------
    config : NewtonConfig
        Its ``curvature`` (a dense or diagonal one; matrix-free CG curvatures are counted per iteration by the
        caller).
    d : int
        Number of model parameters.

    Returns
    -------
    int
        ``1`` for ``curvature="diag_fisher"``, else ``d``.

    References
    ----------
    .. [1] H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, "Certified Unlearning in Decentralized Federated
       Learning", arXiv 2601.06436, 2026, Algorithm 1 (the statistic ``T_i(S_i)``), eq. (5) and Section IV-D
       (the Fisher approximation cuts ``O(d^2)`` to ``O(d)``).
    """
    return 1 if config.curvature == "diag_fisher" else d
