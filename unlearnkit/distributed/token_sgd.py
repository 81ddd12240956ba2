"""Token SGD on real data with each rank holding only its own client's samples (digest 000, Algorithm 2).

:class:`TokenSGDHop` is the hop of Network-SGD: at the client ``v`` holding the token,
``theta <- theta - lr * grad f_v(theta; B)`` with ``B`` a minibatch of ``batch_size`` samples drawn with
replacement from ``D_v`` only. The minibatch comes from client ``v``'s own ``"batches"`` stream
(:func:`~unlearnkit.distributed.rank_generator`), so a rank needs nothing but its data to take its hops, and
the one-process simulator (:func:`unlearnkit.decentral.run_token` with ``hop_rule=hop.as_hop_rule()``)
draws the same minibatches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch
from torch import Tensor

from .._validate import check_int, check_positive
from ..data import load, partition
from ..models import FlatParams, make_model
from .seeds import rank_generator, rank_seed


# (hop, client) -> (flat, x_v, y_v, batches generator): built once per process, at the client's first hop.
_CLIENTS: dict[tuple[Any, int], tuple[FlatParams, Tensor, Tensor, torch.Generator]] = {}


@dataclass(frozen=True)
class TokenSGDHop:
    """Algorithm 2's hop on ``dataset`` split i.i.d. among ``n_clients`` (``partition(..., seed=seed)``),
    model ``model`` initialised from ``seed``; see the module docstring."""

    seed: int
    n_clients: int
    dataset: str = "digits"
    model: str = "logreg"
    lr: float = 0.3
    batch_size: int = 8

    def __post_init__(self) -> None:
        check_int("seed", self.seed, low=0)
        check_int("n_clients", self.n_clients, low=2)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1)

    def _flat(self) -> tuple[FlatParams, Any]:
        ds = load(self.dataset, device="cpu")
        gen = torch.Generator().manual_seed(rank_seed(self.seed, 0, "init"))
        return FlatParams(make_model(self.model, ds.input_shape, ds.n_classes, generator=gen)), ds

    def client(self, v: int) -> tuple[FlatParams, Tensor, Tensor, torch.Generator]:
        """Client ``v``'s model view, its own training samples and its minibatch generator (cached)."""
        key = (self, int(v))
        if key not in _CLIENTS:
            flat, ds = self._flat()
            idx = torch.as_tensor(partition(ds, self.n_clients, seed=self.seed).client_indices[v], device=ds.device)
            _CLIENTS[key] = (flat, ds.x_train[idx], ds.y_train[idx], rank_generator(self.seed, v, "batches"))
        return _CLIENTS[key]

    def init(self) -> Tensor:
        """The starting model ``theta_0`` (the same on every rank)."""
        return self._flat()[0].init().detach()

    def __call__(self, t: int, node: int, theta: Tensor, generator: Optional[torch.Generator] = None) -> Tensor:
        flat, x, y, batches = self.client(node)
        pick = torch.randint(0, x.shape[0], (self.batch_size,), generator=batches, device=batches.device).to(x.device)
        _, g = flat.value_and_grad(theta, x[pick], y[pick])
        return (theta - self.lr * g).detach()

    def rank_state(self, v: int) -> Optional[Tensor]:
        """Client ``v``'s minibatch-generator state (``None`` before its first hop): what a checkpoint of a
        resumable walk (:mod:`unlearnkit.distributed.resume`) must keep beside the noise generator."""
        key = (self, int(v))
        return _CLIENTS[key][3].get_state() if key in _CLIENTS else None

    def load_rank_state(self, v: int, state: Tensor) -> None:
        """Restore :meth:`rank_state` (loads client ``v``'s data if this process has not yet)."""
        self.client(v)[3].set_state(state)

    def as_hop_rule(self) -> Callable[[Any], Tensor]:
        """The same hop for :func:`unlearnkit.decentral.run_token` (``ctx -> new theta``)."""
        return lambda ctx: self(ctx.t, ctx.node, ctx.theta)


def token_sgd_task(net: Any, route: Any, hop: TokenSGDHop) -> dict[str, Any]:
    """Walk ``route`` with :class:`TokenSGDHop` from ``hop.init()``; like
    :func:`~unlearnkit.distributed.walk_task`, plus ``"clients_loaded"``: whose data this rank touched."""
    net.barrier()
    res = net.walk(route, hop.init(), hop)
    return {"rank": net.rank, "theta": res.theta, "hops": res.hops, "final_holder": res.final_holder,
            "seconds": res.seconds, "log": net.log.rows(),
            "clients_loaded": sorted(v for h, v in _CLIENTS if h == hop)}
