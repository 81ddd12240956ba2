"""Training and retraining for Newton/Fisher unlearning (Wu et al. 2026, section VI-A; digest 001).

- :func:`train_dpsgd`: D-PSGD from a common initialisation (digest 001 section 2.1), the training that
  Algorithm 1 unlearns from; it keeps the initialisation so that retraining can start from it.
- :class:`GossipRetrain`: the paper's RT baseline, D-PSGD from the same initialisation on the retained data
  (and, client-wise, on the network without the departing client), with the one ``unlearn`` calling shape.
- :func:`exact_minimizer`: the exact minimiser of the client-weighted objective (eq. 1) by damped Newton,
  the convex oracle of the theory's Lemmas 2-3 (digest P9).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

import networkx as nx
import scipy.sparse as sp
import torch
from torch import Tensor

from ... import curvature as cv
from ..._validate import check_int, check_positive
from ...core import MAX_STEPS, Callback, Certificate, Plan, Request, Result, TrainedState, checked_unlearn
from ...data.federated import Federation
from ...decentral.gossip import GossipConfig, run_gossip
from ...graphs.flood import check_flood_network, remove_client
from ...graphs.sparse import sparse_mixing_matrix
from .steps import requesters_of


#: the plan of a method that issues no certificate (epsilon = infinity)


def train_dpsgd(flat, federation, G: Any, config: GossipConfig, *, generator: torch.Generator,
                init: Optional[Tensor] = None, callback: Optional[Callback] = None,
                progress: bool = False) -> TrainedState:
    """D-PSGD training from a common initialisation (digest 001 section 2.1), by the substrate's gossip engine.

    A thin wrapper of :func:`unlearnkit.decentral.gossip.run_gossip` that checks the graph first and keeps
    the initialisation in ``extras["init"]``, so that retraining (the paper's RT baseline) starts from it.

    Parameters
    ----------
    flat : FlatParams
        The model as a function of its flat parameters.
    federation : Federation
        The clients' data.
    G : networkx.Graph, scipy.sparse matrix or numpy.ndarray
        The communication graph (checked first): a ``networkx`` graph (classroom sizes), a ``scipy.sparse``
        mixing matrix, or an ``(E, 2)`` edge array (:func:`~unlearnkit.graphs.edge_list`), mixed with
        ``config.rule`` into a sparse one. The last two never go through ``networkx`` nor build an ``N x N``
        array (``10^5`` clients and more); the state keeps the sparse mixing matrix as its ``network``.
    config : GossipConfig
        D-PSGD settings.
    generator : torch.Generator
        Passed to :func:`~unlearnkit.decentral.gossip.run_gossip`.
    init : torch.Tensor, optional
        The common initialisation; ``flat.init()`` when ``None``.
    callback : Callback, optional
        Receives the training events.
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    TrainedState
        The clients' models, with the initialisation in ``extras["init"]``.

    References
    ----------
    Wu et al., "Certified Unlearning in Decentralized Federated Learning" (2026, digest 001 section 2.1).
    """
    if not isinstance(G, nx.Graph) and not sp.issparse(G):  # an edge array: the sparse mixing matrix, O(N + E)
        G = sparse_mixing_matrix(G, federation.n_clients, config.rule)
    check_flood_network(G)
    theta0 = flat.init() if init is None else init.detach().clone()
    state = run_gossip(flat, federation, G, config, generator=generator, init=theta0, callback=callback,
                       progress=progress)
    state.extras["init"] = theta0
    return state


def training_config(state: TrainedState) -> GossipConfig:
    """The ``GossipConfig`` the clients trained with: fine-tuning and retraining reuse it (Remark 1; RT).

    Parameters
    ----------
    state : TrainedState
        From :func:`train_dpsgd`.

    Returns
    -------
    GossipConfig
        ``state.config`` (its ``weight_decay`` is the ``lam`` of the certificate).

    Raises
    ------
    ValueError
        When ``state.config`` is not a ``GossipConfig``.
    """
    if not isinstance(state.config, GossipConfig):
        raise ValueError("state.config must be the GossipConfig the clients trained with (use train_dpsgd)")
    return state.config


def exact_minimizer(flat, parts: Sequence[tuple[Tensor, Tensor]], *, weight_decay: float,
                    init: Optional[Tensor] = None, tol: float = 1e-10, max_iter: int = 50) -> Tensor:
    """Minimiser of the client-weighted objective ``(1/N) sum_i f_i`` (eq. 1) by damped Newton.

    The convex oracle of digest P9: the exact trained / retrained model that the theory's Lemmas 2-3 speak
    of. Dense Hessians, so small ``d`` only.

    Parameters
    ----------
    flat : FlatParams
        The model as a function of its flat parameters.
    parts : sequence of (torch.Tensor, torch.Tensor)
        ``(x_i, y_i)`` of every client; at least one.
    weight_decay : float
        Regularisation weight, ``> 0``.
    init : torch.Tensor, optional
        Start point (default zeros).
    tol : float, default 1e-10
        Stop when the gradient norm is at most ``tol``.
    max_iter : int, default 50
        Largest number of Newton steps.

    Returns
    -------
    torch.Tensor
        The minimiser (flat parameters).

    References
    ----------
    Wu et al., "Certified Unlearning in Decentralized Federated Learning" (2026, digest 001), eq. (1).
    """
    check_positive("weight_decay", weight_decay)
    if not parts:
        raise ValueError("parts is empty: the objective needs at least one client")
    theta = (torch.zeros(flat.d, dtype=parts[0][0].dtype, device=parts[0][0].device) if init is None
             else init.detach().clone())

    def value_grad(t: Tensor) -> tuple[float, Tensor]:
        vs, gs = zip(*(flat.value_and_grad(t, x, y, weight_decay=weight_decay) for x, y in parts))
        return float(sum(vs)) / len(parts), sum(gs) / len(parts)

    f, g = value_grad(theta)
    for _ in range(max_iter):
        if float(g.norm()) <= tol:
            break
        H = sum(cv.hessian(flat, theta, x, y, weight_decay=weight_decay) for x, y in parts) / len(parts)
        step = cv._dense_solve(H, g)
        t = 1.0
        while True:
            cand = theta - t * step
            fc, gc = value_grad(cand)
            if fc <= f - 1e-4 * t * float(g @ step) or t < 1e-10:
                break
            t *= 0.5
        theta, f, g = cand, fc, gc
    return theta


def _retrain(state: TrainedState, request: Request, *, generator: torch.Generator, rounds: Optional[int] = None,
             callback: Optional[Callback] = None, progress: bool = False) -> TrainedState:
    reqs = requesters_of(state, request)  # validates the request against the federation
    del reqs
    cfg = training_config(state)
    if rounds is not None:
        cfg = replace(cfg, rounds=check_int("rounds", rounds, low=1))
    fed = state.federation
    if request.kind == "client":
        G = remove_client(state.network, request.client, rule=cfg.rule)
        fed = Federation(fed.dataset, tuple(ix for i, ix in enumerate(fed.client_indices) if i != request.client),
                         fed.scheme)
    else:
        G = state.network
        fed = fed.without(request)
    init = state.extras.get("init")
    return train_dpsgd(state.flat, fed, G, cfg, generator=generator, init=init, callback=callback, progress=progress)


@dataclass(frozen=True, kw_only=True)
class GossipRetrainConfig:
    """``rounds``: D-PSGD rounds of the retraining (default: the training's own ``K``)."""

    rounds: Optional[int] = None

    def __post_init__(self) -> None:
        if self.rounds is not None:
            check_int("rounds", self.rounds, low=1, high=MAX_STEPS)


class GossipRetrain:
    """Exact unlearning by retraining, the paper's RT baseline (Wu et al. 2026, section VI-A): D-PSGD from
    the training's initialisation on the retained data (client-wise: on the network without the departing
    client). ``Result.params`` is the ``(n_clients, d)`` stack; no certificate is needed (``None``).

    Requests: samples, a class or a whole client (exact for all three)."""

    name = "gossip_retrain"
    request_kinds = ("samples", "class", "client")

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: GossipRetrainConfig = GossipRetrainConfig(),
                *, generator: torch.Generator, callback: Optional[Callback] = None,
                progress: bool = False) -> Result:
        """Retrain by gossip on the data left after ``request`` for ``config.rounds`` rounds.

        Parameters
        ----------
        state : TrainedState
            The gossip-trained models, with their federation and network.
        request : Request
            What to forget.
        config : GossipRetrainConfig, optional
            The run's settings (default ``GossipRetrainConfig()``).
        generator : torch.Generator
            Source of the run's randomness (noise, minibatches, routes).
        callback : Callback, optional
            Receives the run's events.
        progress : bool, default False
            Show a progress bar.

        Returns
        -------
        Result
            The retrained models, the exact certificate (``epsilon = delta = 0``), the history and the cost;
            ``extras["state"]`` is
            the retrained state.

        References
        ----------
        .. [1] H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, "Certified Unlearning in Decentralized Federated
           Learning", arXiv 2601.06436, 2026, Section III-A (decentralized training by gossip averaging) and Definition
           1 (retraining on the retained data is the reference of decentralized certified unlearning).
        """
        out = _retrain(state, request, generator=generator, rounds=config.rounds, callback=callback,
                       progress=progress)
        return Result(out.params, self.certify(state, request, config).certificate, list(out.history), out.cost,
                      extras={"state": out})

    def certify(self, state: TrainedState, request: Request,
                config: GossipRetrainConfig = GossipRetrainConfig()) -> Plan:
        """Exact by definition, so no certificate is issued: a ``mode="none"`` plan (``unlearn`` reports
        ``None``) with no noise point.

        Parameters
        ----------
        state : TrainedState
            The gossip-trained models, with their federation and network.
        request : Request
            What to forget.
        config : GossipRetrainConfig, optional
            The run's settings (default ``GossipRetrainConfig()``).

        Returns
        -------
        Plan
            An exact certificate (``epsilon = delta = 0``) and no noise point: the retrained network is the
            reference distribution.

        References
        ----------
        .. [1] H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, "Certified Unlearning in Decentralized Federated
           Learning", arXiv 2601.06436, 2026, Definition 1 (decentralized (epsilon, delta)-unlearning): retraining is
           its own reference.
        """
        requesters_of(state, request)  # the request must be one the federation can serve
        return Plan(Certificate.exact("the network retrained by gossip on D minus D_f is the reference itself"))
