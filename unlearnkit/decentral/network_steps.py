"""Algorithm steps written once against :class:`~unlearnkit.decentral.network.Network`, for either runtime.

Every function takes the network first and works on **blocks** (first axis over ``net.clients``): on a
:class:`~unlearnkit.decentral.SimulatedNetwork` the block is every client's ``(N, d)`` stack, on a rank of
:class:`unlearnkit.distributed.ProcessGroupNetwork` it is the rank's own ``(1, d)`` row. Local computation is
vectorised over the block (:func:`~unlearnkit.decentral._engine.batched_loss_and_grad`); communication goes
through the network; randomness comes from the holding client's own generator.

- :func:`dpsgd_rounds`: D-PSGD with ``local_steps`` (digest 001 section 2.1; the maths of
  :func:`~unlearnkit.decentral.gossip_step`);
- :func:`gradient_gossip_rounds`: PDUDT's gradient gossip over per-round mixing matrices (digest 002, Eq. 2;
  the maths of :func:`~unlearnkit.decentral.run_gradient_gossip`), with each client's Eq. (8) normaliser
  ``A_i = sum_t ||sum_j W^t_ij g_j^t||^2`` computed from what it received;
- :func:`flooded_correction`: Newton/Fisher's Algorithm 1, lines 6-12: each requester adds Gaussian noise
  from its own generator to its correction and floods it; every client adds ``weight`` times every message;
- :func:`local_newton_step`: the requester's correction, Eq. (3) with the exact local Hessian.

With the simulators' one shared-generator sampler (``draw = lambda: sampler.sample()[:2]``) the first two
reproduce ``run_gossip`` / ``run_gradient_gossip`` number for number; with per-client minibatch streams
(:class:`LocalProblem`) a process group reproduces the simulated network. The ``*_task`` functions are what
:func:`unlearnkit.distributed.spawn` starts on each rank (``fn(net, ...)``, picklable by name).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import networkx as nx
import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from .._validate import check_choice, check_int, check_positive
from ..data import load, partition
from ..graphs.mixing import MIXING_RULES
from ..graphs.sparse import sparse_mixing_matrix
from ..models import FlatParams, make_model
from ._engine import MixingSource, batched_loss_and_grad
from .correction import retrain_matrices, sparse_retrain_matrix
from .network import flood_sources


Draw = Callable[[], tuple[Tensor, Tensor]]
# problem -> (flat, dataset in float64, client indices): loaded once per process
_LOADED: dict[Any, tuple[FlatParams, Any, list[np.ndarray]]] = {}
# (problem, client) pairs whose samples this process read: the tasks report it, the tests check locality
_READ: set[tuple[Any, int]] = set()


@dataclass(frozen=True)
class LocalProblem:
    """A classification task split among ``n_clients`` (``partition(..., seed=seed)``), float64 model
    ``model`` initialised from ``seed``; each client reads only its own samples (:meth:`client_data`) and
    draws minibatches of ``batch_size`` with replacement from its own ``"batches"`` stream."""

    seed: int
    n_clients: int
    dataset: str = "digits"
    model: str = "logreg"
    batch_size: int = 8
    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        check_int("seed", self.seed, low=0)
        check_int("n_clients", self.n_clients, low=2)
        check_int("batch_size", self.batch_size, low=1)
        check_positive("weight_decay", self.weight_decay, allow_zero=True)

    def _loaded(self) -> tuple[FlatParams, Any, list[np.ndarray]]:
        if self not in _LOADED:
            ds = load(self.dataset, device="cpu")
            gen = torch.Generator(device="cpu").manual_seed(self.seed)
            flat = FlatParams(make_model(self.model, ds.input_shape, ds.n_classes, generator=gen).double())
            idx = [np.asarray(ix) for ix in partition(ds, self.n_clients, seed=self.seed).client_indices]
            _LOADED[self] = (flat, ds, idx)
        return _LOADED[self]

    def flat(self) -> FlatParams:
        return self._loaded()[0]

    def init(self) -> Tensor:
        """``theta_0`` ``(d,)`` in float64, the same on every client."""
        return self.flat().init().detach()

    def client_data(self, client: int) -> tuple[Tensor, Tensor]:
        """Client ``client``'s training samples (float64 inputs) and labels."""
        _, ds, idx = self._loaded()
        client = check_int("client", client, low=0, high=self.n_clients - 1)
        _READ.add((self, client))
        ix = torch.as_tensor(idx[client], device="cpu")
        return ds.x_train[ix].double(), ds.y_train[ix]

    def sampler(self, net: Any) -> Draw:
        """``draw() -> (xs, ys)``: one minibatch per held client, ``(k, b, ...)``, each from its own data
        and its own ``"batches"`` generator."""
        data = [self.client_data(v) for v in net.clients]
        gens = [net.generator(v, "batches") for v in net.clients]
        b = self.batch_size

        def draw() -> tuple[Tensor, Tensor]:
            picks = [torch.randint(0, x.shape[0], (b,), generator=g, device=g.device) for (x, _), g in zip(data, gens)]
            return (torch.stack([x[p] for (x, _), p in zip(data, picks)]),
                    torch.stack([y[p] for (_, y), p in zip(data, picks)]))
        return draw


def is_edge_array(network: Any, n_clients: int) -> bool:
    """True when ``network`` is an ``(E, 2)`` integer edge array (:func:`~unlearnkit.graphs.edge_list`), not
    an ``(N, N)`` mixing matrix."""
    return (isinstance(network, np.ndarray) and network.ndim == 2 and network.shape[1:] == (2,)
            and np.issubdtype(network.dtype, np.integer) and network.shape != (n_clients, n_clients))


def _mixing(network: Any, rule: str, connected: bool, n_clients: int) -> MixingSource:
    check_choice("rule", rule, MIXING_RULES)
    if is_edge_array(network, n_clients):  # O(N + E): never an N x N array
        network = sparse_mixing_matrix(network, n_clients, rule, require_connected=connected)
    return MixingSource(network, rule=rule, dtype=torch.float64, require_connected=connected)


def dpsgd_rounds(net: Any, flat: Any, theta: Tensor, draw: Draw, network: Any, *, rounds: int, lr: float,
                 local_steps: int = 1, order: str = "dpsgd", weight_decay: float = 0.0,
                 rule: str = "metropolis") -> Tensor:
    """``rounds`` D-PSGD rounds on the block ``theta``: ``local_steps`` SGD steps ``Y`` on each client's
    minibatches, then ``W_t Theta - (Theta - Y)`` (``order="dpsgd"``) or ``W_t Y`` (``"atc"``).
    ``network``: anything :class:`~unlearnkit.decentral._engine.MixingSource` takes (graph, ``W``, schedule), a
    ``scipy.sparse`` ``W`` or an ``(E, 2)`` edge array (mixed sparse, ``O(nnz d)`` a round)."""
    rounds = check_int("rounds", rounds, low=0)
    check_positive("lr", lr)
    check_int("local_steps", local_steps, low=1)
    check_choice("order", order, ("dpsgd", "atc"))
    mixing = _mixing(network, rule, True, net.n_clients)
    for t in range(rounds):
        y = theta
        for _ in range(local_steps):
            xs, ys = draw()
            _, g = batched_loss_and_grad(flat, y, xs, ys, weight_decay=weight_decay)
            y = (y - lr * g).detach()
        W = mixing.numpy(t)
        theta = net.gossip_round(y, W, step=t) if order == "atc" else net.gossip_round(theta, W, step=t) - (theta - y)
        theta = theta.detach()
    return theta


@dataclass(frozen=True)
class CorrectionSums:
    """The held clients' running sums of PDUDT's correction (digest 002, P4 (iii); Eqs. 7 to 9), each built
    by its client from the gradients it received: ``A`` ``(k,)``, ``S`` and ``D`` ``(K, k, d)`` for the
    candidate ``leavers`` (rows follow ``clients``), as in :class:`~unlearnkit.decentral.RunningSumCache`."""

    clients: tuple[int, ...]
    leavers: tuple[int, ...]
    A: Tensor
    S: Tensor
    D: Tensor

    def correction(self, leaver: int, *, scale: str = "paper") -> Tensor:
        """``(k, d)``: ``S / A`` (``"paper"``, Eq. 9's convex weights) or ``D`` (``"sum"``); the leaver's row 0."""
        check_choice("scale", scale, ("paper", "sum"))
        if leaver not in self.leavers:
            raise ValueError(f"leaver={leaver} was not among the candidate leavers {list(self.leavers)}")
        s = self.leavers.index(leaver)
        if scale == "sum":
            out = self.D[s].clone()
        else:   # a client whose every update was zero has zero residuals: weight 0, not 0/0
            out = self.S[s] / self.A.clamp_min(torch.finfo(self.A.dtype).tiny)[:, None]
        out[[r for r, c in enumerate(self.clients) if c == leaver]] = 0.0
        return out


def gradient_gossip_rounds(net: Any, flat: Any, theta: Tensor, draw: Draw, network: Any, *, rounds: int,
                           lr: float, local_steps: int = 1, weight_decay: float = 0.0, rule: str = "metropolis",
                           leavers: Sequence[int] = (), retrain_rule: str = "recompute"
                           ) -> tuple[Tensor, CorrectionSums]:
    """``rounds`` of gradient gossip ``Theta <- Theta - lr W_t G_t`` (digest 002, Eq. 2): the gradients (or,
    with ``local_steps > 1``, pseudo-gradients ``(theta - sgd^s(theta)) / lr``) are what travels; ``W_t`` is
    round ``t``'s matrix of a :class:`~unlearnkit.graphs.DynamicTopology` (or a graph, ``W``, list).

    With candidate ``leavers`` each round's one exchange is mixed ``1 + K`` ways, ``W_t`` and
    ``W~_t^{(k)} - W_t`` (:func:`~unlearnkit.decentral.retrain_matrices`, ``retrain_rule``), so that every client
    accumulates its own Eq. (7) residuals with no extra message. Returns the block after the last round and
    the :class:`CorrectionSums` (``A``: each client's Eq. (8) normaliser).

    A ``scipy.sparse`` ``W`` (:func:`~unlearnkit.graphs.sparse_mixing_matrix`) or an ``(E, 2)`` edge array
    (mixed with ``rule``) takes the sparse path: the mixes are CSR matrices
    (:func:`~unlearnkit.decentral.correction.sparse_retrain_matrix` for ``W~``), memory ``O(K (N + E) + K N d)``,
    never an ``N x N`` array; the dense path's numbers to 1e-12 in float64."""
    rounds = check_int("rounds", rounds, low=0)
    check_positive("lr", lr)
    check_int("local_steps", local_steps, low=1)
    leavers = tuple(check_int("leavers", k, low=0, high=net.n_clients - 1) for k in leavers)
    # gradient gossip tolerates disconnected rounds (digest 002, P6)
    mixing = _mixing(network, rule, False, net.n_clients)
    k_held, K = theta.shape[0], len(leavers)
    rows = torch.as_tensor(net.clients, device="cpu")
    A = torch.zeros(k_held, dtype=theta.dtype, device=theta.device)
    S = torch.zeros(K, *theta.shape, dtype=theta.dtype, device=theta.device)
    D = torch.zeros_like(S)
    Wtil_sp: Any = None
    for t in range(rounds):
        phi = theta
        for _ in range(local_steps):
            xs, ys = draw()
            _, g = batched_loss_and_grad(flat, phi, xs, ys, weight_decay=weight_decay)
            if local_steps > 1:
                phi = phi - lr * g
        if local_steps > 1:
            g = (theta - phi) / lr
        W = mixing.numpy(t)
        if K and sp.issparse(W):  # O(K (N + nnz)) per round: the retrain matrices of a fixed W are built once
            if Wtil_sp is None or not mixing.static:
                Wtil_sp = [sparse_retrain_matrix(W, k, retrain_rule=retrain_rule, rule=rule) for k in leavers]
                diffs = [(Wk - W).tocsr() for Wk in Wtil_sp]
                alive_sp = torch.as_tensor(np.stack([np.diff(Wk.indptr)[list(net.clients)] > 0 for Wk in Wtil_sp]),
                                           device=theta.device)
            mixes = net.gossip_round(g.detach(), [W, *diffs], step=t)
            u = mixes[0]
            delta = torch.where(alive_sp[..., None], lr * mixes[1:], torch.zeros_like(mixes[1:]))
        elif K:
            Wt = torch.as_tensor(W, dtype=torch.float64, device="cpu")
            Wtil = retrain_matrices(Wt, leavers, retrain_rule=retrain_rule, rule=rule)
            mixes = net.gossip_round(g.detach(), torch.cat([Wt[None], Wtil - Wt[None]]).numpy(), step=t)
            u = mixes[0]
            alive = Wtil[:, rows, :].abs().sum(-1).gt(0).to(theta.device)  # a leaver's own row has nothing to correct
            delta = torch.where(alive[..., None], lr * mixes[1:], torch.zeros_like(mixes[1:]))
        else:
            u = net.gossip_round(g.detach(), W, step=t)
        a = u.pow(2).reshape(k_held, -1).sum(1)
        A = A + a
        if K:
            S = S + a[None, :, None] * delta
            D = D + delta
        theta = (theta - lr * u).detach()
    return theta, CorrectionSums(tuple(net.clients), leavers, A, S, D)


def flooded_correction(net: Any, x: Tensor, corrections: Tensor, graph: nx.Graph, *, sources: Sequence[int],
                       sigma: float = 0.0, weight: float = 1.0, step: int = 0) -> Tensor:
    """Newton/Fisher's Algorithm 1, lines 6-12, on the block ``x``.

    Each held requester ``c`` in ``sources`` releases ``m_c = corrections[row(c)] + sigma * Z_c`` with ``Z_c``
    standard normal from its own ``"noise"`` generator (no draw when ``sigma = 0``), and floods it; every
    client then adds ``weight * sum_c m_c`` (``weight = 1/N`` in the paper). Rows of non-requesters in
    ``corrections`` are ignored."""
    check_positive("sigma", sigma, allow_zero=True)
    srcs = flood_sources(sources, net.n_clients)
    msgs = corrections.detach().clone()
    for row, c in enumerate(net.clients):
        if c in srcs and sigma > 0:
            g = net.generator(c, "noise")
            z = torch.randn(msgs.shape[1:], generator=g, device=g.device, dtype=msgs.dtype).to(msgs.device)
            msgs[row] = msgs[row] + sigma * z
    return x + weight * net.flood(msgs, graph, sources=srcs, reduce="sum", step=step)


def local_newton_step(flat: Any, theta: Tensor, x: Tensor, y: Tensor, forget: Any, *, weight_decay: float,
                      damping: float = 0.0) -> Tensor:
    """Eq. (3) of Wu et al. 2026 at one client: ``(H_keep + damping I)^{-1} sum_{xi in U} grad F(theta, xi) /
    (n - m)``, ``H_keep`` the exact Hessian of the retained local loss with ``weight_decay``, ``F`` the
    regularised per-sample loss; ``forget`` indexes the client's own samples ``(x, y)``."""
    mask = torch.zeros(x.shape[0], dtype=torch.bool, device=x.device)
    mask[torch.as_tensor(np.array(forget, dtype=np.int64), device=x.device)] = True
    m, n = int(mask.sum()), x.shape[0]
    if not 0 < m < n:
        raise ValueError(f"forget holds {m} of the client's {n} samples: expected 1 <= m < n")
    g = flat.per_sample_grads(theta, x[mask], y[mask]).sum(0) + m * weight_decay * theta
    H = flat.hessian(theta, x[~mask], y[~mask], weight_decay=weight_decay)
    H = H + damping * torch.eye(H.shape[0], dtype=H.dtype, device=H.device)
    return torch.linalg.solve(H, g) / (n - m)


# ---------------------------------------------------------------------------------------------- rank tasks
def _out(net: Any, problem: LocalProblem, start: float, **kw: Any) -> dict[str, Any]:
    log = getattr(net, "log", None)
    return {"clients": tuple(net.clients), **kw, "seconds": time.perf_counter() - start,
            "data_read": sorted(c for p, c in _READ if p == problem),
            "log": log.rows() if log is not None else None, "counts": dict(getattr(net, "counts", {}))}


def _start(net: Any, problem: LocalProblem) -> Tensor:
    return problem.init().expand(len(net.clients), -1).clone()


def dpsgd_task(net: Any, problem: LocalProblem, network: Any, rounds: int, lr: float, local_steps: int = 1,
               order: str = "dpsgd") -> dict[str, Any]:
    """D-PSGD from ``problem.init()`` with per-client minibatch streams; ``{"clients", "theta", "log", ...}``."""
    net.barrier()
    start = time.perf_counter()
    theta = dpsgd_rounds(net, problem.flat(), _start(net, problem), problem.sampler(net), network, rounds=rounds,
                         lr=lr, local_steps=local_steps, order=order, weight_decay=problem.weight_decay)
    return _out(net, problem, start, theta=theta.cpu())


def gradient_gossip_task(net: Any, problem: LocalProblem, network: Any, rounds: int, lr: float,
                         local_steps: int = 1, leavers: Sequence[int] = ()) -> dict[str, Any]:
    """Gradient gossip (PDUDT's training) from ``problem.init()``; adds ``"A"``, ``"S"``, ``"D"`` (the
    correction sums) and, with ``leavers``, ``"unlearned"``: Eq. (9)'s ``theta - S/A`` for the first leaver."""
    net.barrier()
    start = time.perf_counter()
    theta, sums = gradient_gossip_rounds(net, problem.flat(), _start(net, problem), problem.sampler(net), network,
                                         rounds=rounds, lr=lr, local_steps=local_steps,
                                         weight_decay=problem.weight_decay, leavers=leavers)
    extra = {"unlearned": (theta - sums.correction(leavers[0])).cpu()} if leavers else {}
    return _out(net, problem, start, theta=theta.cpu(), A=sums.A.cpu(), S=sums.S.cpu(), D=sums.D.cpu(), **extra)


def newton_flood_task(net: Any, problem: LocalProblem, graph: nx.Graph, rounds: int, lr: float,
                      requests: dict[int, Sequence[int]], *, sigma: float = 0.0, damping: float = 0.0,
                      weight: Optional[float] = None) -> dict[str, Any]:
    """D-PSGD for ``rounds`` on ``graph``, then Newton/Fisher's flooded correction: each requester ``c`` in
    ``requests`` (client -> indices of its own samples to forget) computes :func:`local_newton_step` from its
    own data and floods it with noise ``sigma``; every client adds ``weight`` (default ``1/N``) of each."""
    net.barrier()
    start = time.perf_counter()
    flat, wd = problem.flat(), problem.weight_decay
    trained = dpsgd_rounds(net, flat, _start(net, problem), problem.sampler(net), graph, rounds=rounds, lr=lr,
                           weight_decay=wd)
    corr = torch.zeros_like(trained)
    for row, c in enumerate(net.clients):
        if c in requests:
            x, y = problem.client_data(c)
            corr[row] = local_newton_step(flat, trained[row], x, y, requests[c], weight_decay=wd, damping=damping)
    w = 1.0 / net.n_clients if weight is None else weight
    new = flooded_correction(net, trained, corr, graph, sources=sorted(requests), sigma=sigma, weight=w,
                             step=rounds)
    return _out(net, problem, start, trained=trained.cpu(), corrections=corr.cpu(), theta=new.cpu())
