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
    "make_route",
    "expected_update",
    "retrain_gradient",
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
        return cls(x=ds.x_train.to(dev), y=ds.y_train.to(dev), local=local, u=int(u), forget=as_t(request.indices),
                   retained=as_t(retained), n_u=int(own.size))

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
    """
    from ..graphs.walks import rrdu_graph_walk, rrdu_route

    if routing == "rrdu_complete":
        return rrdu_route(data.n_nodes, data.u, p, hops, rng=rng)
    if network is None:
        raise ValueError("routing='walk_with_restart' needs the network (state.network is None)")
    import networkx as nx

    G = network if isinstance(network, nx.Graph) else getattr(network, "graph", network)
    return rrdu_graph_walk(G, data.u, p, hops, rng=rng)


def route_next(current: int, u: int, n_nodes: int, p: float, rng: np.random.Generator) -> int:
    """One RR-DU routing draw (for step-by-step animations): :func:`rrdu_route` with one hop."""
    from ..graphs.walks import rrdu_route

    return int(rrdu_route(n_nodes, u, p, 1, rng=rng)[0])


# ----------------------------------------------------------------------------------------------------------
# Gradients
# ----------------------------------------------------------------------------------------------------------

def u_direction(ctx: Any, data: WalkData, cfg: RRDUConfig) -> Tensor:
    """``g_u`` of the corrective step at u (paper Algorithm 4; the update is ``theta + eta (g_u + Z)``).

    Drawn through the token's :class:`~unlearnkit.decentral.HopContext` (per-example clipping at ``clip_L``).
    """
    ratio = data.m / data.n_u
    full = cfg.u_batch == "full"
    forget = data.forget.cpu().numpy()
    if cfg.mode == "exact":
        x, y = data.x[data.retained], data.y[data.retained]
        return -ctx.gradient(x, y, clip=cfg.clip_L)
    xf, yf = (data.x[data.forget], data.y[data.forget]) if full else ctx.sample(indices=forget, size=cfg.batch_size)
    g = ratio * ctx.gradient(xf, yf, clip=cfg.clip_L)
    if cfg.mode == "corrected":
        own = torch.cat([data.retained, data.forget])
        xu, yu = (data.x[own], data.y[own]) if full else ctx.sample(indices=own.cpu().numpy(), size=cfg.batch_size)
        g = g - ctx.gradient(xu, yu, clip=cfg.clip_L)
    return g


def _grad(flat: Any, theta: Tensor, x: Tensor, y: Tensor) -> Tensor:
    return flat.grad(theta, x, y)


def expected_update(flat: Any, theta: Tensor, data: WalkData, mode: str, p: float) -> Tensor:
    """``E[Delta theta | theta] / eta`` without noise and projection (paper eq. 12), in full-batch form.

    ``-(1-p) g_{not u} + p g_u`` with ``g_{not u}`` the average of the other clients' mean gradients (the
    user-averaged objective, digest P19) and ``g_u`` the *expected* direction of ``mode`` (no clipping).
    """
    check_choice("mode", mode, MODES)
    others = [v for v in range(data.n_nodes) if v != data.u]
    g_not_u = torch.stack([_grad(flat, theta, data.x[data.local[v]], data.y[data.local[v]]) for v in others]).mean(0)
    g_ret = _grad(flat, theta, data.x[data.retained], data.y[data.retained])
    g_f = _grad(flat, theta, data.x[data.forget], data.y[data.forget])
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
    gs = [_grad(flat, theta, data.x[data.local[v]], data.y[data.local[v]])
          for v in range(data.n_nodes) if v != data.u]
    gs.append(_grad(flat, theta, data.x[data.retained], data.y[data.retained]))
    return torch.stack(gs).mean(0)


# ----------------------------------------------------------------------------------------------------------
# The algorithm
# ----------------------------------------------------------------------------------------------------------

def token_config(cfg: RRDUConfig) -> Any:
    """The :class:`~unlearnkit.decentral.TokenConfig` of RR-DU's descent hops (s minibatches, Theta ball)."""
    from ..decentral.token import TokenConfig

    return TokenConfig(lr=cfg.lr, batch_size=cfg.batch_size, local_batches=cfg.s, optimizer=cfg.optimizer,
                       betas=cfg.adam_betas, radius=cfg.theta_radius, center="origin")


def rrdu_unlearn(flat: Any, theta0: Tensor, data: WalkData, cfg: RRDUConfig, *, sigma: float,
                 generator: torch.Generator, federation: Any, theta_ref: Optional[Tensor] = None,
                 route: Optional[np.ndarray] = None, network: Any = None, callback: Optional[Callback] = None,
                 monitor: Optional[Callable[[Tensor], dict]] = None, optimizer: Any = None,
                 progress: bool = False) -> tuple[Tensor, list[dict], Cost, np.ndarray]:
    """Run ``cfg.T_unlearn`` hops of RR-DU from ``theta0`` (paper Algorithm 4) and return
    ``(theta, history, cost, route)``.

    The token is the substrate's :func:`~unlearnkit.decentral.run_token` walking ``route`` (default: drawn
    by :func:`make_route` from a numpy generator seeded from ``generator``), with a hop rule that makes the
    noisy, trust-ball-projected corrective step at ``u`` and ``cfg.local_steps`` descent steps (each
    averaging ``s`` minibatches) elsewhere. ``federation`` is the partition *after* the deletion (u keeps
    its retained data). ``sigma`` is the gradient-noise std (already calibrated).

    Each hop emits ``Event("hop", t, node, noisy=0|1, noise_norm, step_norm, dist_ref, ...)``:
    ``step_norm`` is the pre-projection step length and ``dist_ref = ||theta - theta_ref||`` after the hop;
    ``monitor(theta) -> dict`` (e.g. accuracies) is evaluated every ``cfg.eval_every`` hops and at the end,
    stored in that hop's history row and event.
    """
    from ..decentral.token import run_token

    u = data.u
    p = cfg.routing_p(data.n_nodes)
    theta_ref = theta0.detach().clone() if theta_ref is None else theta_ref
    rho = cfg.rho if cfg.project else math.inf
    if route is None:
        seed = int(torch.randint(2**62, (), generator=generator).item())
        route = make_route(data, p, cfg.T_unlearn, routing=cfg.routing, rng=np.random.default_rng(seed),
                           network=network)

    def rule(ctx: Any) -> Tensor:
        if ctx.node == u:
            g = u_direction(ctx, data, cfg)
            noise_norm = 0.0
            if cfg.noise and sigma > 0:
                z = ctx.noise(sigma)
                noise_norm = float(z.norm())
                g = g + z
            new = ctx.step(-g, center=theta_ref, radius=rho)
            ctx.values.update(noisy=1.0, noise_norm=noise_norm)
        else:
            start = ctx.theta
            for _ in range(cfg.local_steps):
                x, y = ctx.sample()
                ctx.theta = ctx.optimizer.step(ctx.theta, ctx.gradient(x, y))
            new = ctx.theta
            ctx.values.update(noisy=0.0, noise_norm=0.0, step_norm=float((new - start).norm()))
            if cfg.project_all:
                new = project_l2_ball(new, theta_ref, rho)
        new = project_l2_ball(new, None, cfg.theta_radius)
        ctx.values["dist_ref"] = float((new - theta_ref).norm())
        t = ctx.t + 1
        if monitor is not None and ((cfg.eval_every and t % cfg.eval_every == 0) or t == len(route)):
            ctx.values.update(monitor(new))
        return new

    out = run_token(flat, federation, route, token_config(cfg), generator=generator, init=theta0, hop_rule=rule,
                    optimizer=optimizer, callback=callback, progress=progress)
    cost = Cost(grad_evals=out.cost.grad_evals, messages=len(route), seconds=out.cost.seconds)
    return out.params, out.history, cost, np.asarray(route)


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
                                                  generator=generator, federation=state.federation.without(request),
                                                  network=state.network, callback=callback, monitor=monitor,
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
                      extras={"path": path.tolist(), "sigma": sigma, "u": data.u, "p": p})


def _finite_L(cfg: RRDUConfig) -> float:
    return 1.0 if cfg.clip_L == math.inf else float(cfg.clip_L)
