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

Measured on the quick profile (digits, one seed; ``tests/rrdu/test_rrdu_backdoor.py``): without noise and
projection (the paper's Table 3 setting) RR-DU at p = 0.1 removes the backdoor (ASR 0.06, retraining 0.00)
and p = 1 collapses the model (clean 0.10, as the paper's 10.10); with the epsilon = 1 noise under Adam the
backdoor largely stays (ASR 0.66): the noise inflates Adam's second-moment estimate and slows every later
step, a side of pitfall P7 the paper's MNIST/CIFAR numbers do not show.
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
from ..core import Callback, Cost, Request, Result, Stopwatch, TrainedState, emit

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


# ----------------------------------------------------------------------------------------------------------
# Baselines of the paper's section 6 (digest 2.7), all on the substrate's token walk
# ----------------------------------------------------------------------------------------------------------

def _repeat(route: np.ndarray, k: int) -> np.ndarray:
    """``k`` consecutive local steps per hop (digest P2): the token stays ``k`` steps at each client."""
    return np.repeat(np.asarray(route, dtype=np.int64), k)


def _monitored_default(monitor: Optional[Callable[[Tensor], dict]], every: int, k: int, total: int):
    """A hop rule that takes the default step and evaluates ``monitor`` every ``every`` hops (of ``k`` steps)."""
    def rule(ctx: Any) -> Tensor:
        new = ctx.default()
        step = ctx.t + 1
        if monitor is not None and step % k == 0:
            hop = step // k
            if (every and hop % every == 0) or step == total:
                ctx.values.update(monitor(new))
        return new
    return rule


def _hop_rows(history: list[dict], k: int) -> list[dict]:
    """One row per hop (the last local step of each) with the hop number."""
    rows = []
    for i in range(k - 1, len(history), k):
        row = dict(history[i])
        row["hop"] = (i + 1) // k
        rows.append(row)
    return rows


def token_train(flat: Any, federation: Any, *, hops: int, local_steps: int, config: Any, generator: torch.Generator,
                rng: np.random.Generator, init: Optional[Tensor] = None, monitor: Optional[Callable] = None,
                eval_every: int = 0, callback: Optional[Callback] = None, progress: bool = False) -> TrainedState:
    """Algorithm 2 (Network-SGD) on the complete graph: a simple walk (uniform *other* client each hop) with
    ``local_steps`` steps per hop, via :func:`~unlearnkit.decentral.run_token`. Trains the original model
    and, on ``federation.without(request)`` from a fresh initialisation, the retrained reference."""
    from ..decentral.token import run_token
    from ..graphs.topology import complete
    from ..graphs.walks import simple_walk

    route = _repeat(simple_walk(complete(federation.n_clients), hops, rng=rng), local_steps)
    out = run_token(flat, federation, route, config, generator=generator, init=init, callback=callback,
                    hop_rule=_monitored_default(monitor, eval_every, local_steps, len(route)), progress=progress)
    out.history = _hop_rows(out.history, local_steps)
    return out


def finetune_walk(flat: Any, federation_retained: Any, theta0: Tensor, *, hops: int, local_steps: int, config: Any,
                  generator: torch.Generator, rng: np.random.Generator, monitor: Optional[Callable] = None,
                  eval_every: int = 0) -> TrainedState:
    """Fine-tuning (digest P18): the uniform walk over *all* clients on D minus D_f from ``theta0``, no noise
    and no projection (u trains on its retained data). RR-DU with ``p = 0`` is the other reading."""
    return token_train(flat, federation_retained, hops=hops, local_steps=local_steps, config=config,
                       generator=generator, rng=rng, init=theta0, monitor=monitor, eval_every=eval_every)


def ddp_walk(flat: Any, federation_retained: Any, theta0: Tensor, *, hops: int, local_steps: int, config: Any,
             sigma: float, L: float, R: float, generator: torch.Generator, rng: np.random.Generator,
             monitor: Optional[Callable] = None, eval_every: int = 0) -> TrainedState:
    """The DDP/NetDP baseline (paper Algorithm 3, digest 2.7): i.i.d. uniform clients, per-example clipping at
    ``L``, fresh ``N(0, sigma^2)`` on every step's gradient, projection onto ``B(theta0, R)``, continued from
    ``theta0`` on D minus D_f (otherwise nothing is forgotten)."""
    from dataclasses import replace as dc_replace

    from ..decentral.token import run_token
    from ..graphs.walks import uniform_route

    cfg = dc_replace(config, noise_sigma=float(sigma), clip=float(L), radius=float(R), center="init")
    route = _repeat(uniform_route(federation_retained.n_clients, hops, rng=rng), local_steps)
    out = run_token(flat, federation_retained, route, cfg, generator=generator, init=theta0,
                    hop_rule=_monitored_default(monitor, eval_every, local_steps, len(route)))
    out.history = _hop_rows(out.history, local_steps)
    return out


def dpsgd_walk(flat: Any, federation_retained: Any, theta0: Tensor, *, hops: int, local_steps: int, config: Any,
               epsilon: float, delta: float, C: float, generator: torch.Generator, rng: np.random.Generator,
               monitor: Optional[Callable] = None, eval_every: int = 0) -> tuple[TrainedState, float]:
    """DP-SGD (Abadi et al.) on the token walk from ``theta0`` on D minus D_f (digest 2.7): per-example
    clipping at ``C`` and Gaussian noise with multiplier ``z`` from the sampled-Gaussian RDP accountant
    (:func:`unlearnkit.privacy.get_noise_multiplier`), rate ``s b / n_v`` and, conservatively, every one of the
    ``hops * local_steps`` steps counted. Minibatches are drawn with replacement, not Poisson-sampled: the
    accounting is the usual approximation. Returns ``(state, z)``."""
    from dataclasses import replace as dc_replace

    from ..privacy import get_noise_multiplier

    batch = config.batch_size * config.local_batches
    n_min = int(min(len(ix) for ix in federation_retained.client_indices))
    z = get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=min(1.0, batch / n_min),
                             steps=hops * local_steps)
    cfg = dc_replace(config, noise_sigma=z * C / batch, clip=float(C))
    out = token_train(flat, federation_retained, hops=hops, local_steps=local_steps, config=cfg, generator=generator,
                      rng=rng, init=theta0, monitor=monitor, eval_every=eval_every)
    return out, z


# ----------------------------------------------------------------------------------------------------------
# The backdoor experiment (digest 000 sections 4-5; Figure 1, Table 3, Tables 14-16)
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class BackdoorSetup:
    """Settings of the backdoor experiment: BadNets poison at client ``u``, forget set = the poison.

    ``quick``: digits 8x8 (135 samples per client, 60 of u's poisoned with a 3x3 patch), an MLP, Adam as in
    the paper, 60 + 60 hops of 3 local steps: seconds on a CPU. ``paper_mnist`` / ``paper_cifar10``: the digest's
    appendix (N = 10, T = T_u = 100, p = 0.1, s = 4, Adam lr 0.005, batch 64, m = 1000, eps = 1,
    delta = 1e-5, rho 10.82 / 56.30, L 0.5 / 0.2, DDP R = 10 and L = 1, DP-SGD C = 5), with one local epoch
    per hop (digest P2: 100 single steps cannot train these models) and our GroupNorm CNN in place of
    FLNet/ResNet-18 (BatchNorm remembers the forget set, digest P10).
    """

    dataset: str = "digits"
    n_nodes: int = 10
    u: int = 0
    m: int = 60
    target: int = 0
    patch: int = 3
    model: str = "mlp"
    hidden: tuple[int, ...] = (64,)
    T_train: int = 60
    T_unlearn: int = 60
    local_steps: int = 3
    lr: float = 0.01
    optimizer: str = "adam"
    batch_size: int = 16
    s: int = 1
    p: float = 0.1
    epsilon: float = 1.0
    delta: float = 1e-5
    accountant: str = "A"
    clip_L: float = 0.5
    rho: float = 10.0
    mode: str = "lightweight"
    ddp_R: float = 10.0
    ddp_L: float = 1.0
    ddp_calibration: str = "alg3"
    dpsgd_C: float = 5.0
    eval_every: int = 10

    def __post_init__(self) -> None:
        check_int("n_nodes", self.n_nodes, low=2)
        check_int("u", self.u, low=0, high=self.n_nodes - 1)
        check_int("m", self.m, low=1)
        for name in ("T_train", "T_unlearn", "local_steps", "batch_size", "s"):
            check_int(name, getattr(self, name), low=1)
        check_probability("p", self.p)
        check_choice("ddp_calibration", self.ddp_calibration, ("alg3", "netdp_group_m", "netdp_rdp", "group_sound"))

    def rrdu_config(self, **changes: Any) -> RRDUConfig:
        base = dict(T_unlearn=self.T_unlearn, p=self.p, s=self.s, batch_size=self.batch_size,
                    lr=self.lr, epsilon=self.epsilon, delta=self.delta, accountant=self.accountant,
                    clip_L=self.clip_L, rho=self.rho, mode=self.mode, optimizer=self.optimizer,
                    local_steps=self.local_steps, eval_every=self.eval_every)
        base.update(changes)
        return RRDUConfig(**base)


PROFILES: dict[str, BackdoorSetup] = {
    "quick": BackdoorSetup(),
    "paper_mnist": BackdoorSetup(dataset="mnist", m=1000, model="cnn", hidden=(), T_train=100, T_unlearn=100,
                                 local_steps=94, lr=0.005, optimizer="adam", batch_size=64, s=4, rho=10.82,
                                 clip_L=0.5, eval_every=5),
    "paper_cifar10": BackdoorSetup(dataset="cifar10", m=1000, model="cnn", hidden=(), patch=4, T_train=100,
                                   T_unlearn=100, local_steps=78, lr=0.005, optimizer="adam", batch_size=64, s=4,
                                   rho=56.30, clip_L=0.2, eval_every=5),
}

BACKDOOR_METHODS = ("rrdu", "finetune", "ddp", "dp_sgd", "retrain")


@dataclass
class BackdoorWorld:
    """Everything the backdoor experiment shares between methods: data, poison, model, original, retrained."""

    setup: BackdoorSetup
    flat: Any
    backdoor: Any
    federation: Any
    request: Request
    original: TrainedState
    retrained: Optional[TrainedState]
    x_trig_all: Tensor
    seed: int

    @property
    def dataset(self) -> Any:
        return self.backdoor.dataset

    def metrics(self, theta: Tensor) -> dict[str, float]:
        """Clean accuracy, ASR on triggered non-target images, ASR on all triggered images (digest P17)."""
        from ..evaluate import accuracy, backdoor_success

        ds = self.dataset
        with torch.no_grad():
            asr_all = float((self.flat.predict(theta, self.x_trig_all) == self.backdoor.target).float().mean())
        return {"clean_acc": accuracy(self.flat, theta, ds.x_test, ds.y_test),
                "asr": backdoor_success(self.flat, theta, self.backdoor), "asr_all": asr_all}


def build_world(setup: BackdoorSetup, *, seed: int = 0, retrain: bool = True, progress: bool = False,
                device: Any = None, root: Any = None) -> BackdoorWorld:
    """Load data, plant the backdoor at ``u``, train the original model by token SGD and (optionally) the
    retrained reference on D minus D_f from the same initialisation."""
    from .. import data as D
    from .. import make_generator
    from ..decentral.token import TokenConfig
    from ..models import FlatParams, make_model

    ds = D.load(setup.dataset, device=device, seed=seed, root=root)
    fed = D.partition(ds, setup.n_nodes, seed=seed)
    own = np.asarray(fed.client_indices[setup.u])
    if setup.m >= own.size:
        raise ValueError(f"m={setup.m} is out of range: client u={setup.u} holds {own.size} samples")
    rng = np.random.default_rng(seed)
    poison = rng.choice(own, size=setup.m, replace=False)
    bd = D.add_backdoor(ds, poison, target=setup.target, patch=setup.patch)
    fed_p = D.Federation(bd.dataset, fed.client_indices, fed.scheme)
    request = bd.request(client=setup.u)
    gen = make_generator(seed)
    kwargs = {"hidden": setup.hidden} if setup.model == "mlp" else {}
    module = make_model(setup.model, ds.input_shape, ds.n_classes, generator=gen, **kwargs).to(ds.x_train.device)
    flat = FlatParams(module)
    init = flat.init()
    x_trig_all = D.stamp_trigger(ds.x_test, setup.patch, bd.value)
    world = BackdoorWorld(setup, flat, bd, fed_p, request, None, None, x_trig_all, seed)  # type: ignore[arg-type]
    tcfg = TokenConfig(lr=setup.lr, batch_size=setup.batch_size, local_batches=setup.s, optimizer=setup.optimizer)
    world.original = token_train(flat, fed_p, hops=setup.T_train, local_steps=setup.local_steps, config=tcfg,
                                 generator=make_generator(seed + 1), rng=np.random.default_rng(seed + 1), init=init,
                                 monitor=world.metrics, eval_every=setup.eval_every, progress=progress)
    if retrain:
        world.retrained = token_train(flat, fed_p.without(request), hops=setup.T_train, local_steps=setup.local_steps,
                                      config=tcfg, generator=make_generator(seed + 2),
                                      rng=np.random.default_rng(seed + 2), init=init, monitor=world.metrics,
                                      eval_every=setup.eval_every, progress=progress)
    return world


def _curve(history: list[dict], offset: int = 0) -> dict[str, list[float]]:
    rows = [r for r in history if "clean_acc" in r]
    return {"hop": [offset + int(r["hop"]) for r in rows], "clean_acc": [r["clean_acc"] for r in rows],
            "asr": [r["asr"] for r in rows], "asr_all": [r["asr_all"] for r in rows]}


def run_method(world: BackdoorWorld, method: str, *, seed: int = 0, callback: Optional[Callback] = None,
               **changes: Any) -> dict[str, Any]:
    """Run one unlearning method of the backdoor experiment from the original model.

    ``method`` in :data:`BACKDOOR_METHODS`; ``changes`` override :class:`RRDUConfig` fields for ``"rrdu"``
    (``p``, ``epsilon``, ``rho``, ``mode``, ``noise``, ``project``, ...). Returns ``{"method", "final":
    metrics, "curve": {hop, clean_acc, asr, asr_all}, "certificate", "sigma", "cost"}``.
    """
    from .. import make_generator
    from ..decentral.token import TokenConfig
    from .rrdu_certify import ddp_certify, ddp_sigma

    check_choice("method", method, BACKDOOR_METHODS)
    st = world.setup
    gen, rng = make_generator(1000 + seed), np.random.default_rng(1000 + seed)
    theta0 = world.original.params
    fed_r = world.federation.without(world.request)
    tcfg = TokenConfig(lr=st.lr, batch_size=st.batch_size, local_batches=st.s, optimizer=st.optimizer)
    common = dict(hops=st.T_unlearn, local_steps=st.local_steps, config=tcfg, generator=gen, rng=rng,
                  monitor=world.metrics, eval_every=st.eval_every)
    cert, sigma, extras = None, None, {}
    if method == "rrdu":
        cfg = st.rrdu_config(**changes)
        state = world.original.replace(federation=world.federation)
        res = RRDU().unlearn(state, world.request, cfg, generator=gen, callback=callback, monitor=world.metrics)
        theta, history, cost, cert, sigma = res.params, res.history, res.cost, res.certificate, res.extras["sigma"]
        extras = {"path": res.extras["path"], "u": res.extras["u"]}
    elif method == "finetune":
        out = finetune_walk(world.flat, fed_r, theta0, **common)
        theta, history, cost = out.params, out.history, out.cost
    elif method == "ddp":
        sigma = ddp_sigma(st.ddp_calibration, epsilon=st.epsilon, delta=st.delta, L=st.ddp_L, m=st.m,
                          T=st.T_unlearn, n_nodes=st.n_nodes)
        out = ddp_walk(world.flat, fed_r, theta0, sigma=sigma, L=st.ddp_L, R=st.ddp_R, **common)
        theta, history, cost = out.params, out.history, out.cost
        cert = ddp_certify(st.ddp_calibration, sigma=sigma, epsilon=st.epsilon, delta=st.delta, L=st.ddp_L, m=st.m,
                           T=st.T_unlearn, n_nodes=st.n_nodes)
    elif method == "dp_sgd":
        out, z = dpsgd_walk(world.flat, fed_r, theta0, epsilon=st.epsilon, delta=st.delta, C=st.dpsgd_C, **common)
        theta, history, cost, sigma = out.params, out.history, out.cost, z
    else:
        out = world.retrained
        if out is None:
            raise ValueError("the world was built with retrain=False; no retrained model to report")
        theta, history, cost = out.params, out.history, out.cost
    offset = 0 if method == "retrain" else st.T_train
    return {"method": method, "final": world.metrics(theta), "curve": _curve(history, offset), "params": theta,
            "certificate": None if cert is None else cert.to_dict(), "sigma": sigma, "cost": cost.to_dict(),
            **extras}


def sweep(world: BackdoorWorld, param: str, values: Sequence[Any], *, seed: int = 0, **fixed: Any) -> list[dict]:
    """RR-DU over one knob (the paper's Table 3 for ``param="p"`` with ``noise=False, project=False``;
    Tables 14 and 16 for ``"rho"`` and ``"epsilon"``): one row ``{param, clean_acc, asr, asr_all, sigma}`` per value."""
    rows = []
    for v in values:
        r = run_method(world, "rrdu", seed=seed, **{**fixed, param: v})
        rows.append({param: v, **r["final"], "sigma": r["sigma"]})
    return rows


def backdoor_experiment(profile: str = "quick", *, seed: int = 0, methods: Sequence[str] = BACKDOOR_METHODS,
                        progress: bool = False, setup: Optional[BackdoorSetup] = None, **changes: Any) -> dict:
    """The paper's Figure 1 on one profile: every method from the same original model; returns
    ``{"setup", "original": {final, curve}, "methods": {name: run}}`` (parameters dropped)."""
    if setup is None:
        check_choice("profile", profile, tuple(PROFILES))
        setup = PROFILES[profile]
    world = build_world(setup, seed=seed, retrain="retrain" in methods, progress=progress)
    out = {"setup": {k: getattr(setup, k) for k in setup.__dataclass_fields__},
           "original": {"final": world.metrics(world.original.params), "curve": _curve(world.original.history)},
           "methods": {}}
    for name in methods:
        run = run_method(world, name, seed=seed, **(changes if name == "rrdu" else {}))
        run.pop("params")
        out["methods"][name] = run
    return out


# ----------------------------------------------------------------------------------------------------------
# CLI runners: python -m unlearnkit run rrdu | ddp | dp_sgd_walk
# ----------------------------------------------------------------------------------------------------------

def _profile_setup(profile: str, dataset: Optional[str]) -> BackdoorSetup:
    if profile == "quick":
        return PROFILES["quick"]
    name = f"paper_{dataset or 'mnist'}"
    check_choice("dataset", name[6:], ("mnist", "cifar10"))
    return PROFILES[name]


def _cli_result(method: str, profile: str, seed: int, progress: bool, dataset: Optional[str]) -> dict:
    from ..data import DatasetUnavailableError
    from ..evaluate import report

    setup = _profile_setup(profile, dataset)
    try:
        world = build_world(setup, seed=seed, progress=progress)
    except DatasetUnavailableError as exc:
        raise DatasetUnavailableError(
            f"profile {profile!r} needs {setup.dataset} (the paper's data), which is not on this machine: {exc}. "
            "The 'quick' profile runs on the bundled digits instead.") from exc
    run = run_method(world, {"rrdu": "rrdu", "ddp": "ddp", "dp_sgd_walk": "dp_sgd"}[method], seed=seed)
    metrics = report(world.flat, run["params"], world.dataset, world.request, retrained=world.retrained.params,
                     original=world.original.params, backdoor=world.backdoor)
    metrics.update({"asr_all": run["final"]["asr_all"], "retrain_asr_all": world.metrics(world.retrained.params)["asr_all"],
                    "original_asr_all": world.metrics(world.original.params)["asr_all"]})
    return {"method": method, "profile": profile, "dataset": setup.dataset, "request": world.request.describe(),
            "metrics": metrics, "certificate": run["certificate"], "sigma": run["sigma"],
            "cost": {"grad_evals": run["cost"]["grad_evals"], "seconds": run["cost"]["seconds"],
                     "retrain_grad_evals": world.retrained.cost.grad_evals,
                     "retrain_seconds": world.retrained.cost.seconds},
            "curve": run["curve"], "original_curve": _curve(world.original.history),
            "retrain_curve": _curve(world.retrained.history),
            "setup": {k: getattr(setup, k) for k in setup.__dataclass_fields__}}
