"""RR-DU: randomized-restart decentralized unlearning by a random walk (Lamri & Maniatakos; digest 000).

A single token carries the model around N clients. After a deletion request by client ``u`` the walk runs
``T_u`` more hops (paper Algorithm 4, main-text Algorithm 1):

- **routing** (digest section 2.3): at every hop, independently of where the token is, go to ``u`` with
  probability ``p``, else to a uniform client of ``V \\ {u}`` (``routing="rrdu_complete"``, the paper's rule,
  which jumps regardless of edges, pitfall P1). ``routing="walk_with_restart"`` is the graph-respecting
  variant: with probability ``p`` teleport to ``u``, else move to a uniform neighbour (its certificate is
  *not* proved in the paper).
- **at u**: one noisy corrective step, projected onto the trust ball ``B(theta_ref, rho)`` around the
  original model: ``theta <- Pi(theta + eta (g_u + Z))`` with ``Z ~ N(0, sigma^2 I_d)`` fresh each visit.
  Three alignment modes (digest 2.6 and pitfall P3):

  * ``"exact"``: ``g_u = -grad l_{u\\f}(theta)`` (full retained-data gradient at u). With ``p = 1/N`` the
    expected update is exactly ``-eta grad L_{\\f}`` (paper eq. 13): no bias.
  * ``"lightweight"``: ``g_u = (m/n_u) grad l(theta; B_f)``, gradient *ascent* on the forget set (the
    paper's experiments). Its expected update is off the retraining gradient by
    ``(1/N) ||(m/n_u) grad l_f + grad l_{u\\f}||``, i.e. O(L/N), *not* the O(L m/n_u) that eq. (14) and
    Lemma C.7 claim (the retained-data descent at u is missing).
  * ``"corrected"``: ``g_u = -grad l(theta; B_u) + (m/n_u) grad l(theta; B_f)`` with ``B_u`` drawn from
    all of D_u; its mean is ``-((n_u - m)/n_u) grad l_{u\\f}``, so the bias is at most ``L m/n_u``: the
    direction for which the paper's O(L m/n_u) claim does hold. Not in the paper.

- **elsewhere**: noiseless descent averaging ``s`` minibatches, projected onto Theta only (default R^d),
  so the iterate may leave the trust ball between visits (pitfall P9; ``project_all=True`` keeps it in).

The theory is for SGD; ``optimizer="adam"`` is the paper's *experimental* setting (Adam, lr 0.005, its
state travelling with the token, reset when unlearning starts; the noisy gradient enters as
``-(g_u + Z)``). The certificate does **not** cover it beyond post-processing of the noisy release
(pitfall P7). ``local_steps`` sets the work per hop (pitfall P2: one step per hop cannot train MNIST in 100
hops; the paper is silent).

The module also holds the baselines of the paper's section 6 (fine-tuning, DDP/NetDP, DP-SGD on the walk,
retraining by token SGD) and the backdoor experiment registered as ``python -m unlearnkit run rrdu``
(and ``ddp``, ``dp_sgd_walk``); see :mod:`unlearnkit.methods.rrdu_certify` for the accountants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from .._validate import (check_choice, check_int, check_positive, check_probability, check_range)
from ..models import project_l2_ball
from .base import Callback, Cost, Request, Result, Stopwatch, TrainedState, emit

__all__ = [
    "RRDUConfig",
    "WalkData",
    "rrdu_unlearn",
    "RRDU",
    "route_next",
    "expected_update",
    "AdamState",
]

MODES = ("exact", "lightweight", "corrected")
ROUTINGS = ("rrdu_complete", "walk_with_restart")
OPTIMIZERS = ("sgd", "adam")


# ----------------------------------------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class RRDUConfig:
    """Hyperparameters of RR-DU (paper Algorithm 4; defaults follow digest 000's appendix where they exist).

    Attributes
    ----------
    T_unlearn:
        Number of unlearning hops ``T_u`` (paper: 100).
    p:
        Routing probability towards ``u``; ``None`` means ``1/N`` (the paper's recommendation). ``p = 0`` is
        fine-tuning without u (Table 3's first row), ``p = 1`` is "continuous unlearning".
    s:
        Minibatches averaged per non-u step (paper: 4).
    batch_size:
        Minibatch size (paper: 64), also the size of ``B_f`` and ``B_u`` at u.
    u_batch:
        ``None``: the lightweight/corrected step uses a minibatch ``B_f`` (Algorithm 4); ``"full"``: the whole
        forget set (main-text Algorithm 1).
    lr:
        Step size ``eta`` (constant; paper: Adam with 0.005).
    sigma:
        Noise std added to the *gradient* at u. ``None`` means "calibrate from ``epsilon``, ``delta`` with
        ``accountant``" (:func:`unlearnkit.methods.rrdu_certify.calibrate`).
    epsilon, delta, accountant, C_A, sens_factor:
        Target guarantee and accountant (``"A"``..``"D"``, see :mod:`rrdu_certify`); the per-visit
        sensitivity is ``sens_factor * clip_L`` (pitfall P11; 2 for replace-one with clipping).
    clip_L:
        Per-example clipping norm at u (the paper's L; MNIST 0.5, CIFAR 0.2). ``inf`` disables clipping (no
        certificate then: the sensitivity is unbounded).
    rho:
        Trust radius around ``theta_ref`` (= the original model; MNIST 10.82, CIFAR 56.30).
    mode:
        ``"exact"``, ``"lightweight"`` (paper's experiments) or ``"corrected"``; see the module docstring.
    optimizer:
        ``"sgd"`` (what the theory assumes) or ``"adam"`` (the paper's experiments; not certified).
    local_steps:
        Descent steps per non-u hop (each averaging ``s`` minibatches).
    routing:
        ``"rrdu_complete"`` (paper) or ``"walk_with_restart"`` (graph-respecting; needs a network).
    noise, project:
        Switch the noise and the trust-ball projection off (Table 3's p-sweep runs "no projection, no noise").
    project_all:
        Also project non-u steps onto the trust ball (analysis-consistent, pitfall P9).
    theta_radius:
        Radius of the feasible set Theta (a ball around the origin); ``inf`` = R^d (digest P8).
    eval_every:
        Call the ``monitor`` every this many hops (0: only at the end).
    """

    T_unlearn: int = 100
    p: Optional[float] = None
    s: int = 4
    batch_size: int = 64
    u_batch: Optional[str] = None
    lr: float = 0.05
    sigma: Optional[float] = None
    epsilon: float = 1.0
    delta: float = 1e-5
    accountant: str = "C"
    C_A: float = 1.0
    sens_factor: float = 2.0
    clip_L: float = 0.5
    rho: float = 10.0
    mode: str = "lightweight"
    optimizer: str = "sgd"
    adam_betas: tuple[float, float] = (0.9, 0.999)
    local_steps: int = 1
    routing: str = "rrdu_complete"
    noise: bool = True
    project: bool = True
    project_all: bool = False
    theta_radius: float = math.inf
    eval_every: int = 0

    def __post_init__(self) -> None:
        check_int("T_unlearn", self.T_unlearn, low=1)
        if self.p is not None:
            check_probability("p", self.p)
        check_int("s", self.s, low=1)
        check_int("batch_size", self.batch_size, low=1)
        if self.u_batch is not None:
            check_choice("u_batch", self.u_batch, (None, "full"))
        check_positive("lr", self.lr)
        if self.sigma is not None:
            check_positive("sigma", self.sigma, allow_zero=True)
        check_positive("epsilon", self.epsilon)
        check_range("delta", self.delta, 0.0, 1.0, low_open=True, high_open=True)
        check_choice("accountant", self.accountant, ("A", "B", "C", "D"))
        check_positive("C_A", self.C_A)
        check_positive("sens_factor", self.sens_factor)
        if not (self.clip_L == math.inf):
            check_positive("clip_L", self.clip_L)
        check_positive("rho", self.rho) if self.rho != math.inf else None
        check_choice("mode", self.mode, MODES)
        check_choice("optimizer", self.optimizer, OPTIMIZERS)
        for i, b in enumerate(self.adam_betas):
            check_range(f"adam_betas[{i}]", b, 0.0, 1.0, high_open=True)
        check_int("local_steps", self.local_steps, low=1)
        check_choice("routing", self.routing, ROUTINGS)
        if self.theta_radius != math.inf:
            check_positive("theta_radius", self.theta_radius)
        check_int("eval_every", self.eval_every, low=0)

    def routing_p(self, n_nodes: int) -> float:
        """``p``, with the paper's default ``1/N``."""
        return 1.0 / n_nodes if self.p is None else float(self.p)


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
    neighbours: Optional[list[np.ndarray]] = None

    @property
    def n_nodes(self) -> int:
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
        as_t = lambda a: torch.as_tensor(np.asarray(a, dtype=np.int64), device=dev)  # noqa: E731
        local = [as_t(fed.client_indices[v]) for v in range(fed.n_clients)]
        retained = request.retain(own)
        if retained.size == 0:
            raise ValueError(f"client u={u} would keep no data after the deletion; use kind='client' retraining")
        neighbours = None
        if state.network is not None:
            neighbours = _neighbour_lists(state.network, fed.n_clients)
        return cls(x=ds.x_train.to(dev), y=ds.y_train.to(dev), local=local, u=int(u), forget=as_t(request.indices),
                   retained=as_t(retained), n_u=int(own.size), neighbours=neighbours)

    def node_data(self, v: int) -> Tensor:
        """Indices a non-deleting step at ``v`` may use (``u``'s retained data at ``u``)."""
        return self.retained if v == self.u else self.local[v]


def _neighbour_lists(network: Any, n: int) -> list[np.ndarray]:
    """Adjacency lists from a networkx graph or an object with ``.graph`` / ``.adjacency``."""
    g = getattr(network, "graph", network)
    if hasattr(g, "neighbors"):
        return [np.asarray(sorted(g.neighbors(v)), dtype=np.int64) for v in range(n)]
    adj = np.asarray(getattr(network, "adjacency", network))
    return [np.flatnonzero(adj[v]) for v in range(n)]


# ----------------------------------------------------------------------------------------------------------
# Routing
# ----------------------------------------------------------------------------------------------------------

def route_next(current: int, u: int, n_nodes: int, p: float, generator: torch.Generator, *,
               routing: str = "rrdu_complete", neighbours: Optional[Sequence[np.ndarray]] = None) -> int:
    """The next client (paper Algorithm 4, "Routing"; digest 2.3 and P1).

    ``"rrdu_complete"``: ``u`` with probability ``p``, else uniform on ``V \\ {u}`` (memoryless: the current
    client does not matter, and a non-u client may be drawn twice in a row). ``"walk_with_restart"``: ``u``
    with probability ``p``, else a uniform neighbour of ``current``.
    """
    if n_nodes < 2:
        raise ValueError(f"n_nodes={n_nodes} is out of range: a walk needs at least 2 clients")
    r = torch.rand((), generator=generator).item()
    if r < p:
        return u
    if routing == "rrdu_complete":
        k = int(torch.randint(n_nodes - 1, (), generator=generator).item())
        return k if k < u else k + 1
    if neighbours is None:
        raise ValueError("routing='walk_with_restart' needs the network (state.network is None)")
    nb = neighbours[current]
    if len(nb) == 0:
        raise ValueError(f"client {current} has no neighbour: the walk cannot move on this graph")
    return int(nb[int(torch.randint(len(nb), (), generator=generator).item())])


# ----------------------------------------------------------------------------------------------------------
# Gradients
# ----------------------------------------------------------------------------------------------------------

def _draw(idx: Tensor, b: int, generator: torch.Generator) -> Tensor:
    """``b`` indices drawn with replacement from ``idx`` (i.i.d. minibatches, as the analysis assumes)."""
    pos = torch.randint(idx.numel(), (b,), generator=generator).to(idx.device)
    return idx[pos]


def _grad(flat: Any, theta: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """Gradient of ``flat.loss`` by plain reverse mode (about twice as fast as ``torch.func.grad`` per call on
    the tiny models of the quick profile, where call overhead dominates)."""
    with torch.enable_grad():
        t = theta.detach().requires_grad_(True)
        return torch.autograd.grad(flat.loss(t, x, y), t)[0]


def _mean_grad(flat: Any, theta: Tensor, data: WalkData, idx: Tensor, clip: float) -> Tensor:
    """Mean gradient over ``idx``; per-example gradients clipped to norm ``clip`` first (digest P11)."""
    x, y = data.x[idx], data.y[idx]
    if clip == math.inf:
        return _grad(flat, theta, x, y)
    g = flat.per_sample_grads(theta, x, y)
    norms = g.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return (g * torch.clamp(clip / norms, max=1.0)).mean(0)


def u_direction(flat: Any, theta: Tensor, data: WalkData, cfg: RRDUConfig, generator: torch.Generator) -> tuple[Tensor, int]:
    """``g_u`` of the corrective step (paper Algorithm 4; sign: the update is ``theta + eta (g_u + Z)``).

    Returns the direction and the number of per-sample gradients it cost.
    """
    ratio = data.m / data.n_u
    full = cfg.u_batch == "full"
    if cfg.mode == "exact":
        return -_mean_grad(flat, theta, data, data.retained, cfg.clip_L), int(data.retained.numel())
    bf = data.forget if full else _draw(data.forget, cfg.batch_size, generator)
    g = ratio * _mean_grad(flat, theta, data, bf, cfg.clip_L)
    cost = int(bf.numel())
    if cfg.mode == "corrected":
        own = torch.cat([data.retained, data.forget])
        bu = own if full else _draw(own, cfg.batch_size, generator)
        g = g - _mean_grad(flat, theta, data, bu, cfg.clip_L)
        cost += int(bu.numel())
    return g, cost


def descent_direction(flat: Any, theta: Tensor, data: WalkData, v: int, s: int, b: int,
                      generator: torch.Generator) -> Tensor:
    """Average of ``s`` i.i.d. minibatch gradients at client ``v`` (paper Algorithm 4, non-u branch)."""
    idx = data.node_data(v)
    batches = _draw(idx, s * b, generator)
    # s minibatches of equal size averaged = one mean over s*b draws
    return _grad(flat, theta, data.x[batches], data.y[batches])


def expected_update(flat: Any, theta: Tensor, data: WalkData, mode: str, p: float) -> Tensor:
    """``E[Delta theta | theta] / eta`` without noise and projection (paper eq. 12), in full-batch form.

    ``-(1-p) g_{not u} + p g_u`` with ``g_{not u}`` the average of the other clients' mean gradients (the
    user-averaged objective, digest P19) and ``g_u`` the *expected* direction of ``mode`` (no clipping).
    """
    check_choice("mode", mode, MODES)
    others = [v for v in range(data.n_nodes) if v != data.u]
    g_not_u = torch.stack([flat.grad(theta, data.x[data.local[v]], data.y[data.local[v]]) for v in others]).mean(0)
    g_ret = flat.grad(theta, data.x[data.retained], data.y[data.retained])
    g_f = flat.grad(theta, data.x[data.forget], data.y[data.forget])
    ratio = data.m / data.n_u
    if mode == "exact":
        g_u = -g_ret
    elif mode == "lightweight":
        g_u = ratio * g_f
    else:
        g_u = -((1 - ratio) * g_ret + ratio * g_f) + ratio * g_f
    return -(1 - p) * g_not_u + p * g_u


def retrain_gradient(flat: Any, theta: Tensor, data: WalkData) -> Tensor:
    """``grad L_{\\f}(theta, V)``, the user-averaged retraining objective (paper eq. 10)."""
    gs = [flat.grad(theta, data.x[data.local[v]], data.y[data.local[v]])
          for v in range(data.n_nodes) if v != data.u]
    gs.append(flat.grad(theta, data.x[data.retained], data.y[data.retained]))
    return torch.stack(gs).mean(0)


# ----------------------------------------------------------------------------------------------------------
# Optimizer carried by the token
# ----------------------------------------------------------------------------------------------------------

@dataclass
class AdamState:
    """Adam moments on the flat vector; they travel with the token (digest P7)."""

    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    m: Optional[Tensor] = None
    v: Optional[Tensor] = None
    t: int = 0

    def step(self, theta: Tensor, grad: Tensor, lr: float) -> Tensor:
        """One Adam step on the *descent* gradient ``grad`` (returns the new theta)."""
        b1, b2 = self.betas
        if self.m is None:
            self.m = torch.zeros_like(theta)
            self.v = torch.zeros_like(theta)
        self.t += 1
        self.m = b1 * self.m + (1 - b1) * grad
        self.v = b2 * self.v + (1 - b2) * grad * grad
        mhat = self.m / (1 - b1 ** self.t)
        vhat = self.v / (1 - b2 ** self.t)
        return theta - lr * mhat / (vhat.sqrt() + self.eps)


def _apply(theta: Tensor, descent_grad: Tensor, lr: float, opt: Optional[AdamState]) -> Tensor:
    return theta - lr * descent_grad if opt is None else opt.step(theta, descent_grad, lr)


# ----------------------------------------------------------------------------------------------------------
# The algorithm
# ----------------------------------------------------------------------------------------------------------

def rrdu_unlearn(flat: Any, theta0: Tensor, data: WalkData, cfg: RRDUConfig, *, sigma: float,
                 generator: torch.Generator, theta_ref: Optional[Tensor] = None, start: Optional[int] = None,
                 callback: Optional[Callback] = None, monitor: Optional[Callable[[Tensor], dict]] = None,
                 progress: bool = False) -> tuple[Tensor, list[dict], Cost, list[int]]:
    """Run ``cfg.T_unlearn`` hops of RR-DU from ``theta0`` (paper Algorithm 4) and return
    ``(theta, history, cost, path)``.

    ``sigma`` is the gradient-noise std (already calibrated); ``path`` lists the client of every hop.
    Each hop emits an ``Event("hop", t, node, noisy=0|1, noise_norm, step_norm, dist_ref)`` where
    ``step_norm`` is the pre-projection step length and ``dist_ref = ||theta - theta_ref||`` after the hop;
    ``monitor(theta) -> dict`` (e.g. accuracies) is evaluated every ``cfg.eval_every`` hops and at the end,
    stored in the history and emitted as ``"eval"`` events.
    """
    N, u = data.n_nodes, data.u
    p = cfg.routing_p(N)
    theta_ref = theta0.clone() if theta_ref is None else theta_ref
    theta = theta0.clone()
    opt = AdamState(betas=cfg.adam_betas) if cfg.optimizer == "adam" else None
    rho = cfg.rho if cfg.project else math.inf
    at = int(torch.randint(N, (), generator=generator).item()) if start is None else int(start)
    history: list[dict] = []
    path: list[int] = []
    grad_evals = 0
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=cfg.T_unlearn, desc="RR-DU hops", leave=False)
    with Stopwatch() as sw:
        for t in range(1, cfg.T_unlearn + 1):
            at = route_next(at, u, N, p, generator, routing=cfg.routing, neighbours=data.neighbours)
            path.append(at)
            noise_norm = 0.0
            if at == u:
                g_u, c = u_direction(flat, theta, data, cfg, generator)
                grad_evals += c
                if cfg.noise and sigma > 0:
                    z = torch.randn(theta.shape, generator=generator, device=generator.device).to(theta) * sigma
                    noise_norm = float(z.norm())
                    g_u = g_u + z
                before = theta
                theta = _apply(theta, -g_u, cfg.lr, opt)
                step_norm = float((theta - before).norm())
                theta = project_l2_ball(theta, theta_ref, rho)
            else:
                before = theta
                for _ in range(cfg.local_steps):
                    g = descent_direction(flat, theta, data, at, cfg.s, cfg.batch_size, generator)
                    grad_evals += cfg.s * cfg.batch_size
                    theta = _apply(theta, g, cfg.lr, opt)
                step_norm = float((theta - before).norm())
                if cfg.project_all:
                    theta = project_l2_ball(theta, theta_ref, rho)
            theta = project_l2_ball(theta, None, cfg.theta_radius)
            dist = float((theta - theta_ref).norm())
            rec = {"hop": t, "node": at, "noisy": float(at == u), "noise_norm": noise_norm,
                   "step_norm": step_norm, "dist_ref": dist}
            if monitor is not None and ((cfg.eval_every and t % cfg.eval_every == 0) or t == cfg.T_unlearn):
                vals = monitor(theta)
                rec.update(vals)
                emit(callback, "eval", t, at, **vals)
            history.append(rec)
            emit(callback, "hop", t, at, noisy=float(at == u), noise_norm=noise_norm, step_norm=step_norm,
                 dist_ref=dist)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    cost = Cost(grad_evals=grad_evals, messages=cfg.T_unlearn, seconds=sw.seconds)
    return theta, history, cost, path


class RRDU:
    """RR-DU with the shared calling shape ``unlearn(state, request, config, *, generator, callback)``.

    ``state`` must carry ``federation`` (and ``network`` for ``walk_with_restart``); ``request.client`` is
    ``u``. The certificate comes from :func:`unlearnkit.methods.rrdu_certify.certify` with the accountant
    named in the config, for the realised ``sigma``; with ``optimizer="adam"``, ``clip_L = inf`` or
    ``noise=False`` the certificate is ``mode="none"`` (epsilon = inf) and its note says why.
    """

    name = "rrdu"

    def unlearn(self, state: TrainedState, request: Request, config: RRDUConfig, *, generator: torch.Generator,
                callback: Optional[Callback] = None, monitor: Optional[Callable[[Tensor], dict]] = None,
                progress: bool = False) -> Result:
        from .rrdu_certify import calibrate, certify

        data = WalkData.from_state(state, request)
        p = config.routing_p(data.n_nodes)
        sigma = config.sigma if config.sigma is not None else calibrate(
            config.accountant, epsilon=config.epsilon, delta=config.delta, n_nodes=data.n_nodes, p=p,
            T_u=config.T_unlearn, L=_finite_L(config), sens_factor=config.sens_factor, C_A=config.C_A)
        theta, history, cost, path = rrdu_unlearn(state.flat, state.params, data, config, sigma=sigma,
                                                  generator=generator, callback=callback, monitor=monitor,
                                                  progress=progress)
        cert = certify(config.accountant, sigma=sigma, delta=config.delta, n_nodes=data.n_nodes, p=p,
                       T_u=config.T_unlearn, L=_finite_L(config), sens_factor=config.sens_factor, C_A=config.C_A)
        reasons = []
        if config.optimizer == "adam":
            reasons.append("Adam (the paper's experimental setting) is not covered by the SGD analysis")
        if config.clip_L == math.inf:
            reasons.append("no per-example clipping: the sensitivity is unbounded")
        if not config.noise or sigma == 0:
            reasons.append("no noise was added")
        if config.routing != "rrdu_complete":
            reasons.append("the certificate is proved only for the complete-graph routing")
        if reasons:
            cert = replace(cert, epsilon=math.inf, mode="none", note="; ".join(reasons) + f" (was: {cert.note})")
        emit(callback, "done", config.T_unlearn, None, sigma=sigma)
        return Result(params=theta, certificate=cert, history=history, cost=cost,
                      extras={"path": path, "sigma": sigma, "u": data.u, "p": p})


def _finite_L(cfg: RRDUConfig) -> float:
    return 1.0 if cfg.clip_L == math.inf else float(cfg.clip_L)
