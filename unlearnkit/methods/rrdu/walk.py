"""The walk seen by RR-DU: each client's data split at ``u``, the routing, and the full-batch expectations.

:class:`WalkData` holds what the token finds at each client once client ``u`` asked to delete D_f;
:func:`make_route` draws the clients of the ``T_unlearn`` unlearning hops (Lamri & Maniatakos, Algorithm 4,
"Routing"; digest 000 section 2.3); :func:`expected_update` and :func:`retrain_gradient` are the noiseless
full-batch quantities of the bias analysis (paper eqs. (10), (12)-(14); digest section 2.6), used to check
the alignment variants of :class:`unlearnkit.methods.rrdu.RRDUConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ..._validate import check_choice, check_int
from ...core import Request, TrainedState


VARIANTS = ("exact", "lightweight", "corrected")


# ----------------------------------------------------------------------------------------------------------
# Data held by the clients, seen from the walk
# ----------------------------------------------------------------------------------------------------------

@dataclass
class WalkData:
    """Each client's training indices, split at ``u`` into forget and retained parts.

    Built by :meth:`from_state`; ``local[v]`` are the indices (into the training split) of client ``v``
    *after* the deletion for ``v != u``; at ``u`` there are ``retained`` (D_u minus D_f) and ``forget``
    (D_f), and ``n_u = |D_u|`` before the deletion (the ``m/n_u`` weight uses it).
    """

    x: Tensor
    y: Tensor
    local: list[Tensor]
    u: int
    forget: Tensor
    retained: Tensor
    n_u: int

    @property
    def n_clients(self) -> int:
        return len(self.local)

    @property
    def m(self) -> int:
        return int(self.forget.numel())

    @classmethod
    def from_state(cls, state: TrainedState, request: Request) -> "WalkData":
        fed = state.federation
        if fed is None:
            raise ValueError("state.federation is None: RR-DU needs the partition of data among clients")
        u = request.client
        if u is None:
            raise ValueError("request.client is None: RR-DU needs the client u that asks for the deletion")
        check_int("request.client", u, low=0, high=fed.n_clients - 1)
        own = np.asarray(fed.client_indices[u], dtype=np.int64)
        outside = np.setdiff1d(request.indices, own)
        if outside.size:
            raise ValueError(f"request.indices has {outside.size} samples that client u={u} does not hold "
                             "(RR-DU deletes data of one client)")
        ds = state.dataset
        dev = state.params.device
        as_t = lambda a: torch.as_tensor(np.array(a, dtype=np.int64), device=dev)  # noqa: E731
        local = [as_t(fed.client_indices[v]) for v in range(fed.n_clients)]
        retained = request.retain(own)
        if retained.size == 0:
            raise ValueError(f"client u={u} would keep no data after the deletion; use kind='client' retraining")
        return cls(x=ds.x_train.to(dev), y=ds.y_train.to(dev), local=local, u=int(u), forget=as_t(request.indices),
                   retained=as_t(retained), n_u=int(own.size))

    @classmethod
    def nothing_to_forget(cls, state: TrainedState, u: int) -> "WalkData":
        """The certifier's walk data: client ``u`` keeps all of its data and forgets nothing (``m = 0``)."""
        fed, dev = state.federation, state.params.device
        check_int("u", u, low=0, high=fed.n_clients - 1)
        as_t = lambda a: torch.as_tensor(np.array(a, dtype=np.int64), device=dev)  # noqa: E731
        local = [as_t(fed.client_indices[v]) for v in range(fed.n_clients)]
        return cls(x=state.dataset.x_train.to(dev), y=state.dataset.y_train.to(dev), local=local, u=int(u),
                   forget=as_t(np.zeros(0, dtype=np.int64)), retained=local[u], n_u=int(local[u].numel()))

    def node_data(self, v: int) -> Tensor:
        """Indices a non-deleting step at ``v`` may use (``u``'s retained data at ``u``)."""
        return self.retained if v == self.u else self.local[v]


# ----------------------------------------------------------------------------------------------------------
# Routing
# ----------------------------------------------------------------------------------------------------------

def make_route(data: WalkData, p: float, hops: int, *, routing: str, rng: np.random.Generator,
               network: Any = None) -> np.ndarray:
    """The client of every unlearning hop, from :mod:`unlearnkit.graphs.walks`.

    ``"rrdu_complete"``: :func:`~unlearnkit.graphs.walks.rrdu_route` (paper Algorithm 4: u w.p. p, else uniform
    on V minus u, memoryless). ``"walk_with_restart"``: :func:`~unlearnkit.graphs.walks.rrdu_graph_walk`, the
    substrate's edge-respecting walk with RR-DU's stationary distribution (not in the paper; its certificate
    is not proved).

    Parameters
    ----------
    data : WalkData
        Supplies ``n_clients`` and ``u``.
    p : float
        Probability that a hop goes to ``u``.
    hops : int
        Number of hops.
    routing : {"rrdu_complete", "walk_with_restart"}
        Which walk.
    rng : numpy.random.Generator
        Source of the route.
    network : object, optional
        A networkx graph, or an object with a ``graph`` attribute, for ``"walk_with_restart"``.

    Returns
    -------
    numpy.ndarray
        Integer array of length ``hops``: the client of every hop.

    Raises
    ------
    ValueError
        For ``"walk_with_restart"`` without a network.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000), Algorithm 4.
    """
    from ...graphs.walks import rrdu_graph_walk, rrdu_route  # deferred: imports networkx

    if routing == "rrdu_complete":
        return rrdu_route(data.n_clients, data.u, p, hops, rng=rng)
    if network is None:
        raise ValueError("routing='walk_with_restart' needs the network (state.network is None)")
    import networkx as nx  # deferred: imports networkx

    G = network if isinstance(network, nx.Graph) else getattr(network, "graph", network)
    return rrdu_graph_walk(G, data.u, p, hops, rng=rng)


def _grad(flat: Any, theta: Tensor, x: Tensor, y: Tensor) -> Tensor:
    return flat.grad(theta, x, y)


def expected_update(flat: Any, theta: Tensor, data: WalkData, variant: str, p: float) -> Tensor:
    """``E[Delta theta | theta] / eta`` without noise and projection (paper eq. 12), in full-batch form.

    ``-(1-p) g_{not u} + p g_u`` with ``g_{not u}`` the average of the other clients' mean gradients (the
    user-averaged objective, digest P19) and ``g_u`` the *expected* direction of ``variant`` (no clipping).

    Parameters
    ----------
    flat : FlatParams
        The model as a function of its flat parameters.
    theta : torch.Tensor
        Flat parameters.
    data : WalkData
        The walk's data split.
    variant : {"exact", "lightweight", "corrected"}
        The RR-DU variant.
    p : float
        Probability that a hop visits ``u``.

    Returns
    -------
    torch.Tensor
        The expected direction, shaped like ``theta``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000), eq. (12).
    """
    check_choice("variant", variant, VARIANTS)
    others = [v for v in range(data.n_clients) if v != data.u]
    g_not_u = torch.stack([_grad(flat, theta, data.x[data.local[v]], data.y[data.local[v]]) for v in others]).mean(0)
    g_ret = _grad(flat, theta, data.x[data.retained], data.y[data.retained])
    g_f = _grad(flat, theta, data.x[data.forget], data.y[data.forget])
    ratio = data.m / data.n_u
    if variant == "exact":
        g_u = -g_ret
    elif variant == "lightweight":
        g_u = ratio * g_f
    else:
        g_u = -((1 - ratio) * g_ret + ratio * g_f) + ratio * g_f
    return -(1 - p) * g_not_u + p * g_u


def retrain_gradient(flat: Any, theta: Tensor, data: WalkData) -> Tensor:
    """``grad L_{\\f}(theta, V)``, the user-averaged retraining objective (paper eq. 10).

    Parameters
    ----------
    flat : FlatParams
        The model as a function of its flat parameters.
    theta : torch.Tensor
        Flat parameters.
    data : WalkData
        The walk's data split (after the deletion).

    Returns
    -------
    torch.Tensor
        The mean over clients of their mean gradients, shaped like ``theta``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000), eq. (10).
    """
    gs = [_grad(flat, theta, data.x[data.local[v]], data.y[data.local[v]])
          for v in range(data.n_clients) if v != data.u]
    gs.append(_grad(flat, theta, data.x[data.retained], data.y[data.retained]))
    return torch.stack(gs).mean(0)
