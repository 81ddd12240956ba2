"""Random-walk token SGD: one model travels from client to client and is updated where it lands.

Digest 000 (RR-DU paper):

- **Algorithm 2, Network-SGD** (training): at the client ``v`` holding the token,
  ``theta <- theta - lr * g`` with ``g`` the gradient averaged over ``s`` local minibatches of ``D_v``
  (``local_batches``; Table 11 of the paper uses ``s = 4``), then the token moves on. No noise, no projection.
- **Algorithm 3, Network-Private SGD** (NetDP, the DDP baseline): clients drawn i.i.d. uniformly,
  ``theta <- Pi_Theta(theta - lr * (g + Z))`` with fresh ``Z ~ N(0, sigma^2 I_d)`` every hop and ``Pi_Theta``
  the projection onto a ball (the paper: radius ``R = 10``). :func:`netdp_sigma` is the calibration as printed,
  ``sigma^2 = 8 L^2 ln(1.25/delta) / eps^2`` (digest 000, pitfall P6: one-shot Gaussian mechanism with
  sensitivity ``2L``, *no* composition over hops; kept as printed, named here, not fixed).

Where the token goes is decided outside: pass a *route* (client per hop) from :mod:`unlearnkit.graphs.walks`
(``simple_walk``, ``rrdu_route``, ``uniform_route``...). What happens at a hop is the configured default step,
unless a ``hop_rule(ctx)`` returns something else: RR-DU uses it to run a noisy, trust-ball-projected
corrective step only at the unlearning client ``u`` (see :class:`HopContext`), e.g.::

    def at_u(ctx):
        if ctx.node != u:
            return None                                   # the default descent step elsewhere
        x, y = ctx.sample(indices=forget_idx)             # a minibatch of the forget set
        g = -(m / n_u) * ctx.gradient(x, y, clip=L)       # ascent on the forget loss
        return ctx.step(g + ctx.noise(sigma), center=theta_ref, radius=rho)

The model may be plain SGD or Adam (digest 000, P7: the paper's experiments use Adam); the optimizer state
travels with the token.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np
import torch
from torch import Tensor
from tqdm.auto import tqdm

from .._validate import check_choice, check_int, check_positive, check_range
from ..core import Callback, Cost, Stopwatch, TrainedState, emit
from ..graphs.walks import uniform_route
from ..models import project_l2_ball
from ..privacy.noise import gaussian_noise
from ..privacy.trace import flow, record_release, transcript
from ._engine import client_indices_of
from ._linear import linear_plan, plan_value_and_grad


@dataclass(frozen=True, kw_only=True)
class TokenConfig:
    """Settings of the default hop (Algorithms 2 and 3 of digest 000).

    Attributes
    ----------
    lr: step size.
    batch_size: minibatch size ``b``; each hop draws ``local_batches * b`` samples with replacement.
    local_batches: ``s``, minibatches averaged per hop.
    weight_decay: L2 weight in the loss.
    optimizer: ``"sgd"`` or ``"adam"`` (state carried with the token). ``betas``, ``adam_eps`` for Adam.
    noise_sigma: std of the Gaussian added to every default step's gradient (0 = Algorithm 2; > 0 = NetDP).
    clip: per-example gradient clipping norm of the default step (``inf`` = none). NetDP's sensitivity
        argument needs ``||grad|| <= L``: set ``clip = L``.
    radius: every default step is projected onto ``B(center, radius)`` (``inf`` = no projection).
    center: ``"origin"`` or ``"init"`` (the starting model); digest 000, P8.
    eval_every: test accuracy every this many hops (0 = never).
    """

    lr: float
    batch_size: int = 32
    local_batches: int = 1
    weight_decay: float = 0.0
    optimizer: str = "sgd"
    betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8
    noise_sigma: float = 0.0
    clip: float = math.inf
    radius: float = math.inf
    center: str = "origin"
    eval_every: int = 0

    def __post_init__(self) -> None:
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1)
        check_int("local_batches", self.local_batches, low=1)
        check_positive("weight_decay", self.weight_decay, allow_zero=True)
        check_choice("optimizer", self.optimizer, ("sgd", "adam"))
        for i, b in enumerate(self.betas):
            check_range(f"betas[{i}]", b, 0.0, 1.0, high_open=True)
        check_positive("adam_eps", self.adam_eps)
        check_positive("noise_sigma", self.noise_sigma, allow_zero=True)
        if not (isinstance(self.clip, (int, float)) and self.clip > 0):
            raise ValueError(f"clip={self.clip!r} is out of range: expected clip in (0, inf]")
        if not (isinstance(self.radius, (int, float)) and self.radius > 0):
            raise ValueError(f"radius={self.radius!r} is out of range: expected radius in (0, inf]")
        check_choice("center", self.center, ("origin", "init"))
        check_int("eval_every", self.eval_every, low=0)


class TokenOptimizer:
    """The optimizer that travels with the token: ``step(theta, g)`` descends along ``g`` (SGD or Adam)."""

    def __init__(self, config: TokenConfig, d: int, device: Any, dtype: torch.dtype) -> None:
        self.config = config
        self.kind = config.optimizer
        self.t = 0
        if self.kind == "adam":
            self.m = torch.zeros(d, device=device, dtype=dtype)
            self.v = torch.zeros(d, device=device, dtype=dtype)

    def step(self, theta: Tensor, g: Tensor, lr: Optional[float] = None) -> Tensor:
        lr = self.config.lr if lr is None else lr
        if self.kind == "sgd":
            return theta - lr * g
        b1, b2 = self.config.betas
        self.t += 1
        self.m = b1 * self.m + (1 - b1) * g
        self.v = b2 * self.v + (1 - b2) * g * g
        mhat = self.m / (1 - b1 ** self.t)
        vhat = self.v / (1 - b2 ** self.t)
        return theta - lr * mhat / (vhat.sqrt() + self.config.adam_eps)

    def reset(self) -> None:
        self.t = 0
        if self.kind == "adam":
            self.m.zero_()
            self.v.zero_()


@dataclass
class HopContext:
    """Everything a ``hop_rule`` may use at hop ``t`` at client ``node``.

    A rule returns the new parameters (usually via :meth:`step`) or ``None`` for the default step.
    Scalars put in ``values`` appear in the hop's :class:`~unlearnkit.core.Event` and history row; the
    default step stores its ``loss`` and ``step_norm`` as 0-d tensors, turned into floats together after the
    walk (or at each hop when a callback listens), so a hop never waits on a device-to-host copy.
    ``pools`` holds each client's training-set indices as a tensor on the generator's device; ``plan`` is the
    model's :func:`~unlearnkit.decentral._linear.linear_plan` (``None``: gradients through ``functional_call``).
    """

    t: int
    node: int
    theta: Tensor
    flat: Any
    config: TokenConfig
    generator: torch.Generator
    optimizer: TokenOptimizer
    client_indices: list[np.ndarray]
    dataset: Any
    center: Tensor
    values: dict[str, Any] = field(default_factory=dict)
    grad_evals: int = 0
    pools: Optional[list[Tensor]] = None
    plan: Optional[list] = None

    def sample(self, node: Optional[int] = None, *, indices: Any = None, size: Optional[int] = None
               ) -> tuple[Tensor, Tensor]:
        """``size`` samples (default ``local_batches * batch_size``) drawn with replacement from client
        ``node``'s data (default: the current client) or from explicit training-set ``indices``."""
        size = self.config.local_batches * self.config.batch_size if size is None else int(size)
        if indices is None and self.pools is not None:
            pool_t = self.pools[self.node if node is None else int(node)]
        else:
            pool = np.asarray(self.client_indices[self.node if node is None else int(node)] if indices is None
                              else indices, dtype=np.int64)
            pool_t = torch.as_tensor(pool, device=self.generator.device)
        if pool_t.numel() == 0:
            raise ValueError("cannot sample a minibatch from an empty index set")
        pick = torch.randint(0, pool_t.numel(), (size,), generator=self.generator, device=self.generator.device)
        idx = pool_t[pick].to(self.dataset.x_train.device)
        return self.dataset.x_train[idx], self.dataset.y_train[idx]

    def gradient(self, x: Tensor, y: Tensor, *, clip: float = math.inf, weight_decay: Optional[float] = None
                 ) -> Tensor:
        """Mean gradient on ``(x, y)``; with finite ``clip`` each per-example gradient is first clipped to
        norm ``clip`` (the regulariser's gradient ``weight_decay * theta`` is added after clipping)."""
        wd = self.config.weight_decay if weight_decay is None else weight_decay
        self.grad_evals += int(x.shape[0])
        if math.isinf(clip):
            loss, g = _value_and_grad(self.flat, self.theta, x, y, wd, self.plan)
            self.values.setdefault("loss", loss)
            return g
        per = self.flat.per_sample_grads(self.theta, x, y)
        norms = per.norm(dim=1, keepdim=True)
        g = (per * torch.clamp(clip / norms.clamp_min(1e-12), max=1.0)).mean(0)
        return g + wd * self.theta if wd else g

    def noise(self, sigma: float) -> Tensor:
        """Fresh ``N(0, sigma^2 I_d)`` (a new draw on every call)."""
        return gaussian_noise(self.theta, sigma, self.generator)

    def step(self, direction: Tensor, *, center: Optional[Tensor] = None, radius: float = math.inf,
             lr: Optional[float] = None) -> Tensor:
        """Descend along ``direction`` with the token's optimizer, then project onto ``B(center, radius)``
        (center defaults to the config's). Records ``step_norm`` (before projection)."""
        new = self.optimizer.step(self.theta, direction, lr)
        self.values["step_norm"] = (new - self.theta).norm()
        return project_l2_ball(new, self.center if center is None else center, radius)

    def default(self) -> Tensor:
        """The configured step: ``s`` local minibatches, optional clipping and noise, projection."""
        x, y = self.sample()
        sigma, clip = self.config.noise_sigma, self.config.clip
        if sigma > 0:  # a noisy step is computed at the model the token released (the replay's transcript)
            self.theta = transcript("walk.theta", self.theta)
        g = self.gradient(x, y, clip=clip)
        if sigma > 0:
            z = self.noise(sigma)
            self.values["noise_norm"] = float(z.norm())
            # two means of per-example gradients clipped at C differ by at most 2C, whatever the data
            record_release("walk.step", g, sigma, z / sigma, sensitivity=2 * clip if math.isfinite(clip) else None)
            g = g + z
        return self.step(g, radius=self.config.radius)


HopRule = Callable[[HopContext], Optional[Tensor]]


def _value_and_grad(flat: Any, theta: Tensor, x: Tensor, y: Tensor, wd: float, plan: Optional[list] = None
                    ) -> tuple[Tensor, Tensor]:
    """``flat.value_and_grad`` without recording the backward pass for a second derivative (a walk never
    differentiates its own step) and, with a ``plan``, without swapping the module's parameters: the same
    kernels, bitwise the same numbers, in about half the time per hop."""
    if torch._C._functorch.peek_interpreter_stack() is not None or theta.requires_grad:
        return flat.value_and_grad(theta, x, y, weight_decay=wd)
    if plan is not None:
        return plan_value_and_grad(flat, plan, theta, x, y, wd)
    t = theta.detach().requires_grad_(True)
    with torch.enable_grad():
        value = flat.loss(t, x, y, weight_decay=wd)
        (g,) = torch.autograd.grad(value, t)
    return value.detach(), g


def _as_floats(rows: list[dict[str, Any]]) -> None:
    """Turn every 0-d tensor in ``rows`` into a float, one device-to-host copy per dtype and device."""
    groups: dict[tuple, list[tuple[dict[str, Any], str]]] = {}
    for r in rows:
        for k, v in r.items():
            if isinstance(v, Tensor):
                groups.setdefault((v.dtype, v.device), []).append((r, k))
    for where in groups.values():
        vals = torch.stack([r[k].detach().reshape(()) for r, k in where]).tolist()
        for (r, k), v in zip(where, vals):
            r[k] = v


def run_token(flat: Any, federation: Any, route: Any, config: TokenConfig, *, generator: torch.Generator,
              init: Optional[Tensor] = None, hop_rule: Optional[HopRule] = None, optimizer: Optional[TokenOptimizer] = None,
              callback: Optional[Callback] = None, progress: bool = False, hop_offset: int = 0) -> TrainedState:
    """Walk the token along ``route`` (client per hop), updating the model at each hop.

    Parameters
    ----------
    flat, federation: the model view and the clients' data.
    route: 1-D integer array of clients, one per hop (:mod:`unlearnkit.graphs.walks`).
    config: :class:`TokenConfig` for the default step.
    generator: ``torch.Generator`` for minibatches and noise.
    init: starting parameters ``(d,)`` (default ``flat.init()``).
    hop_rule: ``ctx -> new theta or None`` (:class:`HopContext`), to customise chosen hops.
    optimizer: continue with an existing :class:`TokenOptimizer` (e.g. Adam state from training).
    callback: receives ``Event("hop", t, node, values={loss, step_norm, ...})`` per hop and ``"eval"`` events.
    hop_offset: added to hop numbers in events and history (to continue a walk).

    Returns
    -------
    TrainedState
        ``params`` ``(d,)``; ``history`` one row per hop (``hop``, ``node``, ``loss``, ``step_norm``,
        rule values, ``accuracy`` at evaluations); ``extras``: ``route``, ``visits``, ``optimizer``.
    """
    if not isinstance(config, TokenConfig):
        raise ValueError(f"config must be a TokenConfig, got {type(config).__name__}")
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    dataset, client_idx = client_indices_of(federation)
    n = len(client_idx)
    route = np.asarray(route, dtype=np.int64).reshape(-1)
    if route.size and (route.min() < 0 or route.max() >= n):
        raise ValueError(f"route visits clients outside [0, {n - 1}]")
    flow("walk.route", zlib.crc32(route.tobytes()))  # the hops and their clients, as one number
    device = dataset.x_train.device
    theta = (flat.init() if init is None else init).detach().to(device).clone()
    if theta.shape != (flat.d,):
        raise ValueError(f"init has shape {tuple(theta.shape)}; expected ({flat.d},)")
    center = theta.clone() if config.center == "init" else torch.zeros_like(theta)
    opt = optimizer or TokenOptimizer(config, flat.d, device, theta.dtype)

    history: list[dict[str, Any]] = []
    grad_evals = 0
    pools = [torch.as_tensor(ix, device=generator.device) for ix in client_idx]
    plan = linear_plan(flat)
    iterator = range(route.size)
    if progress:
        iterator = tqdm(iterator, desc="token walk", leave=False)
    with Stopwatch() as sw:
        for t in iterator:
            node = int(route[t])
            ctx = HopContext(t=hop_offset + t, node=node, theta=theta, flat=flat, config=config, generator=generator,
                             optimizer=opt, client_indices=client_idx, dataset=dataset, center=center, pools=pools,
                             plan=plan)
            new = hop_rule(ctx) if hop_rule is not None else None
            if new is None:
                new = ctx.default()
            if new.shape != theta.shape:
                raise ValueError(f"hop_rule returned shape {tuple(new.shape)} at hop {t}; expected ({flat.d},)")
            theta = new.detach()
            grad_evals += ctx.grad_evals
            row = {"hop": hop_offset + t + 1, "node": node, **ctx.values}
            if config.eval_every and ((t + 1) % config.eval_every == 0 or t + 1 == route.size):
                with torch.no_grad():
                    row["accuracy"] = float((flat.predict(theta, dataset.x_test) == dataset.y_test).float().mean())
                emit(callback, "eval", hop_offset + t + 1, node, accuracy=row["accuracy"])
            history.append(row)
            if callback is not None:
                _as_floats([row])
                emit(callback, "hop", hop_offset + t + 1, node, **{k: v for k, v in row.items() if k not in ("hop", "node")})
    _as_floats(history)
    messages = int(np.count_nonzero(route[1:] != route[:-1])) if route.size else 0
    cost = Cost(grad_evals=grad_evals, messages=messages, seconds=sw.seconds)
    return TrainedState(flat=flat, params=theta, dataset=dataset, train_indices=np.sort(np.concatenate(client_idx)),
                        config=config, federation=federation, network=None, cost=cost, history=history,
                        extras={"route": route, "visits": np.bincount(route, minlength=n), "optimizer": opt})


def netdp_sigma(L: float, epsilon: float, delta: float) -> float:
    """NetDP's per-hop noise as printed in digest 000, Algorithm 3: ``sqrt(8 L^2 ln(1.25/delta)) / epsilon``.

    This is the one-shot Gaussian mechanism with sensitivity ``2L``; it does **not** compose over hops
    and has no group-privacy factor for ``m`` deletions (digest 000, pitfall P6). Kept as printed so the
    baseline reproduces the paper; sound calibrations belong to the privacy accountants.
    """
    check_positive("L", L)
    check_positive("epsilon", epsilon)
    check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    return math.sqrt(8.0 * L * L * math.log(1.25 / delta)) / epsilon


def run_netdp(flat: Any, federation: Any, config: TokenConfig, *, hops: int, generator: torch.Generator,
              rng: np.random.Generator, init: Optional[Tensor] = None, callback: Optional[Callback] = None,
              progress: bool = False) -> TrainedState:
    """Algorithm 3 (digest 000): i.i.d. uniform clients, noisy, clipped, projected steps.

    ``config`` must carry ``noise_sigma > 0`` (e.g. :func:`netdp_sigma`), and usually ``clip = L`` and
    ``radius = R``; the route is drawn from ``rng``.
    """

    if config.noise_sigma <= 0:
        raise ValueError(f"noise_sigma={config.noise_sigma} must be > 0 for NetDP (Algorithm 3 adds noise every hop)")
    _, client_idx = client_indices_of(federation)
    route = uniform_route(len(client_idx), hops, rng=rng)
    return run_token(flat, federation, route, config, generator=generator, init=init, callback=callback,
                     progress=progress)
