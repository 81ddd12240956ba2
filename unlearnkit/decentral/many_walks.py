"""Many independent token walks as one tensor: ``K`` models, each on its own route, stepped together.

An audit of a walk (the distribution of its output over seeds) or a lesson comparing routings needs many walks
that never interact. :func:`run_token` runs one, hop by hop; :func:`run_walks` keeps the ``K`` models in one
``(K, d)`` tensor and makes every hop one batched gradient for all of them:

- for a ``torch.nn.Sequential`` of ``Flatten``, ``Linear`` and elementwise activations (``logreg``, ``mlp``,
  ``tiny_mlp`` of :mod:`unlearnkit.models`) the forward pass is a chain of batched matrix products
  (``baddbmm``) and one backward pass gives all ``K`` gradients;
- any other model goes through ``torch.func.vmap`` of :meth:`~unlearnkit.models.FlatParams.grad`.

The hop is :class:`~unlearnkit.decentral.TokenConfig`'s default step (Algorithms 2 and 3 of digest 000): ``s * b``
samples with replacement from the current client, optional per-example clipping (through ``vmap``) and
Gaussian noise, SGD or Adam (one state per walk), projection onto ``B(center, radius)``. The minibatch indices
are drawn in blocks of hops from one ``torch.rand`` (``floor(u * |D_v|)``), so the draws differ from
:func:`run_token`'s; each walk computes the same maths as :func:`run_token` would with those samples (tested
against a per-walk loop to float32 rounding). The bookkeeping stays on the device: the per-hop losses fill a
``(T, K)`` tensor. There is no ``hop_rule`` and the noisy steps are not recorded by :mod:`unlearnkit.privacy.trace`
(a replayed or audited release goes through :func:`run_token`).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch.func import vmap

from ..core import Cost, Stopwatch
from ..models import project_l2_ball
from ..privacy.trace import flow
from ._engine import client_indices_of
from ._linear import linear_plan, plan_value_and_grad
from .token import TokenConfig, TokenOptimizer


#: Hops whose minibatch indices are drawn together (``torch.rand((block, K, s * b))``).
DRAW_BLOCK = 256


@dataclass
class Walks:
    """The outcome of :func:`run_walks`.

    Attributes
    ----------
    params: ``(K, d)``, the last model of every walk.
    losses: ``(T, K)`` minibatch loss of each walk at each hop (NaN with finite ``clip``, whose step never
        evaluates the plain mean loss).
    routes: ``(K, T)`` the clients visited.
    visits: ``(K, N)`` hops per client, per walk.
    cost: gradient evaluations (all walks), messages (token moves, all walks) and wall seconds.
    kernel: ``"batched_linear"`` or ``"vmap"``, how the gradients were computed.
    """

    params: Tensor
    losses: Tensor
    routes: np.ndarray
    visits: np.ndarray
    cost: Cost
    kernel: str


def _batched_linear_grad(flat: Any, plan: list[tuple[str, Any]], thetas: Tensor, x: Tensor, y: Tensor,
                         wd: float, sgd_lr: Optional[float] = None) -> tuple[Tensor, Optional[Tensor]]:
    """Per-walk mean loss ``(K,)`` and gradient ``(K, d)``: ``x`` is ``(K, B, ...)``, ``y`` is ``(K, B)``.

    With ``sgd_lr`` the gradient is not returned: each parameter slot of ``thetas`` takes its SGD step in place
    (``theta <- theta - lr * g``), which spares the gradient's concatenation and two passes over ``(K, d)``."""
    K, B = x.shape[0], x.shape[1]
    # one leaf per parameter slot (not slices of one leaf: each slice's backward would zero-fill a (K, d) array)
    leaves = [thetas[:, s.start:s.stop].detach().requires_grad_(True) for s in flat._slots]
    leaf = {s.name: v for s, v in zip(flat._slots, leaves)}
    with torch.enable_grad():
        h = x
        for kind, arg in plan:
            if kind == "flatten":
                h = h.reshape(K, B, -1)
            elif kind == "act":
                h = arg(h)
            else:
                ws, bs = arg
                w = leaf[ws.name].view(K, *ws.shape).transpose(1, 2)
                h = torch.bmm(h, w) if bs is None else torch.baddbmm(leaf[bs.name].view(K, 1, -1), h, w)
        if flat.loss_name == "cross_entropy":
            per = F.cross_entropy(h.reshape(K * B, -1), y.reshape(-1).long(), reduction="none")
        else:
            per = F.binary_cross_entropy_with_logits(h.reshape(-1), y.reshape(-1).to(h.dtype), reduction="none")
        loss = per.view(K, B).mean(1)
        if wd:
            loss = loss + 0.5 * wd * thetas.pow(2).sum(1)
        grads = torch.autograd.grad(loss.sum(), leaves)
    if sgd_lr is not None:
        for s, gs in zip(flat._slots, grads):
            part = thetas[:, s.start:s.stop]
            step = gs.reshape(K, -1) + wd * part if wd else gs.reshape(K, -1)
            part.sub_(sgd_lr * step)
        return loss.detach(), None
    g = torch.cat(grads, dim=1)
    if wd:
        g = g + wd * thetas
    return loss.detach(), g


def _vmap_grad(flat: Any, thetas: Tensor, x: Tensor, y: Tensor, wd: float, clip: float) -> Tensor:
    if math.isinf(clip):
        return flat.batched_grad(thetas, x, y, weight_decay=wd)

    def one(theta: Tensor, xb: Tensor, yb: Tensor) -> Tensor:
        per = flat.per_sample_grads(theta, xb, yb)
        norms = per.norm(dim=1, keepdim=True)
        g = (per * torch.clamp(clip / norms.clamp_min(1e-12), max=1.0)).mean(0)
        return g + wd * theta if wd else g

    return vmap(one)(thetas, x, y)


def run_walks(flat: Any, federation: Any, routes: Any, config: TokenConfig, *, generator: torch.Generator,
              init: Optional[Tensor] = None) -> Walks:
    """Run ``K`` independent token walks, one per row of ``routes``, as one ``(K, d)`` tensor.

    Parameters
    ----------
    flat, federation:
        The model view (:class:`~unlearnkit.models.FlatParams`) and the clients' data.
    routes:
        ``(K, T)`` integer array, walk ``k`` at client ``routes[k, t]`` at hop ``t`` (a 1-D route is one walk).
    config:
        :class:`~unlearnkit.decentral.TokenConfig` of the default step; ``eval_every`` is ignored.
    generator:
        ``torch.Generator`` for the minibatches and the noise of all walks.
    init:
        Starting parameters, ``(d,)`` (every walk starts there) or ``(K, d)``; default ``flat.init()``.

    Returns
    -------
    Walks
        ``params (K, d)``, ``losses (T, K)``, the routes, per-walk visit counts, the cost and the kernel used.
    """
    if not isinstance(config, TokenConfig):
        raise ValueError(f"config must be a TokenConfig, got {type(config).__name__}")
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    dataset, client_idx = client_indices_of(federation)
    n = len(client_idx)
    routes = np.atleast_2d(np.asarray(routes, dtype=np.int64))
    if routes.ndim != 2 or routes.shape[0] < 1:
        raise ValueError(f"routes must be a (K, T) integer array, got shape {routes.shape}")
    if routes.size and (routes.min() < 0 or routes.max() >= n):
        raise ValueError(f"routes visit clients outside [0, {n - 1}]")
    flow("walk.route", zlib.crc32(routes.tobytes()))
    K, T = routes.shape
    device = dataset.x_train.device
    start = (flat.init() if init is None else init).detach().to(device)
    if start.shape not in ((flat.d,), (K, flat.d)):
        raise ValueError(f"init has shape {tuple(start.shape)}; expected ({flat.d},) or ({K}, {flat.d})")
    thetas = start.expand(K, flat.d).clone()
    center = thetas.clone() if config.center == "init" else torch.zeros_like(thetas)
    opt = TokenOptimizer(config, flat.d, device, thetas.dtype)
    size = config.local_batches * config.batch_size
    sizes = torch.as_tensor([len(ix) for ix in client_idx], device=device)
    offsets = torch.cumsum(sizes, 0) - sizes
    pool = torch.as_tensor(np.concatenate(client_idx), device=device)
    route_t = torch.as_tensor(routes, device=device)
    plan = linear_plan(flat) if math.isinf(config.clip) else None
    wd, sigma = config.weight_decay, config.noise_sigma
    losses = torch.full((T, K), math.nan, device=device, dtype=thetas.dtype)
    plain = config.optimizer == "sgd" and sigma == 0 and math.isinf(config.radius)
    lr_in_place = config.lr if plain else None  # plain SGD: each slot steps in place
    with Stopwatch() as sw:
        for b0 in range(0, T, DRAW_BLOCK):
            nodes = route_t[:, b0:b0 + DRAW_BLOCK].T  # (c, K)
            u = torch.rand((nodes.shape[0], K, size), generator=generator, device=generator.device).to(device)
            rows = offsets[nodes].unsqueeze(-1) + (u * sizes[nodes].unsqueeze(-1)).long().clamp_max_(
                sizes[nodes].unsqueeze(-1) - 1)
            idx = pool[rows]  # (c, K, size) training-set rows
            for c in range(nodes.shape[0]):
                x, y = dataset.x_train[idx[c]], dataset.y_train[idx[c]]
                if plan is not None and K == 1:  # one walk: plain matrix products, no batch dimension
                    loss, g = plan_value_and_grad(flat, plan, thetas[0], x[0], y[0], wd)
                    losses[b0 + c] = loss
                    g = g.unsqueeze(0)
                elif plan is not None:
                    loss, g = _batched_linear_grad(flat, plan, thetas, x, y, wd, sgd_lr=lr_in_place)
                    losses[b0 + c] = loss
                    if g is None:
                        continue
                else:
                    g = _vmap_grad(flat, thetas, x, y, wd, config.clip)
                if sigma > 0:
                    g = g + sigma * torch.randn(g.shape, generator=generator, device=generator.device).to(device)
                thetas = project_l2_ball(opt.step(thetas, g), center, config.radius)
    messages = int(np.count_nonzero(routes[:, 1:] != routes[:, :-1]))
    visits = np.stack([np.bincount(r, minlength=n) for r in routes])
    return Walks(params=thetas, losses=losses, routes=routes, visits=visits,
                 cost=Cost(grad_evals=K * T * size, messages=messages, seconds=sw.seconds),
                 kernel="batched_linear" if plan is not None else "vmap")
