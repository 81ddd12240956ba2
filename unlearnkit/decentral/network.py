"""One network interface, two runtimes: the same algorithm code in one process or on a process group.

A decentralized algorithm talks to the network through four operations (:class:`Network`):

- ``gossip_round(x, W, step=t)``: one mixing round ``x_i <- sum_j W_ij x_j`` (D-PSGD, digest 001 section 2.1;
  PDUDT's gradient gossip, digest 002 Eq. 2). ``W`` is passed every round, so a dynamic topology (PDUDT's
  per-round neighbour sets) is a different ``W_t`` per call; its support is the round's neighbour sets.
- ``walk(route, theta0, hop)``: one model travels along ``route`` and the holder of hop ``t`` replaces it
  by ``hop(t, client, theta, generator)`` (RR-DU, token SGD; digest 000).
- ``flood(values, graph, sources=..., reduce=...)``: each source's message reaches every client by
  flooding (Newton/Fisher's Algorithm 1, lines 6-12; :func:`unlearnkit.graphs.flood`): every client ends up
  with every source's message (``reduce="stack"``), their sum or their mean.
- ``generator(client, stream)``: client ``client``'s own ``torch.Generator`` for ``stream`` (``"noise"``,
  ``"batches"``, ...), all derived from the run's one seed.

Tensors are **blocks**: their first axis runs over ``net.clients``, the clients this process holds. The
in-process :class:`SimulatedNetwork` holds every client (a block is the simulators' ``(N, d)`` stack and
mixing is one matmul, :meth:`~unlearnkit.decentral._engine.MixingSource.mix`); a rank of
:class:`unlearnkit.distributed.ProcessGroupNetwork` holds one client (a ``(1, d)`` block) and exchanges real
messages. Code written against the blocks (local steps on ``x[row]``, noise from
``net.generator(net.clients[row])``) is the same in both runtimes; :mod:`unlearnkit.decentral.network_steps`
holds D-PSGD with local steps, gradient gossip and the flooded Newton correction written that way.

The two runtimes do not import each other (they sit on the same floor): the process group satisfies the
protocol structurally. The per-client seeds of :class:`SimulatedNetwork` are those of
:func:`unlearnkit.distributed.rank_generator` (``numpy.random.SeedSequence([seed, stream, client])``), a
correspondence the distributed tests pin.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol, Sequence, runtime_checkable

import networkx as nx
import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from .._validate import check_choice, check_int
from ..graphs.flood import flood as flood_schedule
from ._engine import MixingSource
from .mixer import GossipKernel


FLOOD_REDUCTIONS = ("stack", "sum", "mean")
# Stream name -> the middle word of the seed sequence; the same words as unlearnkit.distributed.seeds.STREAMS
# (a test pins the draws equal). Never renumber: it would change every run's draws.
_STREAM_WORDS = {"init": 0, "noise": 1, "batches": 2, "route": 3}

HopFn = Callable[[int, int, Tensor, torch.Generator], Tensor]


@runtime_checkable
class Network(Protocol):
    """What an algorithm may ask of the network (module docstring). ``clients`` is the tuple of clients this
    process holds: the first axis of every block passed in or returned."""

    n_clients: int

    @property
    def clients(self) -> tuple[int, ...]: ...

    def generator(self, client: int, stream: str = "noise") -> torch.Generator: ...

    def gossip_round(self, x: Tensor, W: Any, *, step: int = 0) -> Tensor: ...

    def walk(self, route: Sequence[int], theta0: Tensor, hop: HopFn) -> Any: ...

    def flood(self, values: Tensor, graph: nx.Graph, *, sources: Optional[Sequence[int]] = None,
              reduce: str = "sum", step: int = 0) -> Tensor: ...

    def barrier(self) -> None: ...


def flood_sources(sources: Optional[Sequence[int]], n_clients: int) -> list[int]:
    """The sorted, de-duplicated sources of a flood (default: every client), checked to be clients."""
    if sources is None:
        return list(range(n_clients))
    out = sorted({int(s) for s in np.asarray(sources, dtype=np.int64).reshape(-1)})
    bad = [s for s in out if not 0 <= s < n_clients]
    if bad:
        raise ValueError(f"sources={bad} are not clients: expected ids in [0, {n_clients - 1}]")
    return out


def _client_generator(seed: int, client: int, stream: str) -> torch.Generator:
    word = np.random.SeedSequence([seed, _STREAM_WORDS[stream], client]).generate_state(1, np.uint64)[0]
    g = torch.Generator(device="cpu")
    g.manual_seed(int(word) & ((1 << 63) - 1))
    return g


def sparse_mixes(W: Any, n_clients: int) -> Optional[list[sp.csr_matrix]]:
    """The mixes of a gossip round as float64 CSR matrices when ``W`` is ``scipy.sparse`` or a non-empty
    list/tuple of them (one exchange mixed ``K`` ways), else ``None`` (a dense matrix or stack)."""
    mats = [W] if sp.issparse(W) else (list(W) if isinstance(W, (list, tuple)) and W and
                                       all(sp.issparse(w) for w in W) else None)
    if mats is None:
        return None
    out = [sp.csr_matrix(w, dtype=np.float64) for w in mats]
    for w in out:
        if w.shape != (n_clients, n_clients):
            raise ValueError(f"W has shape {w.shape}; expected ({n_clients}, {n_clients})")
    return out


def sparse_gossip_messages(mats: Sequence[Any]) -> int:
    """Messages of one exchange mixed by the sparse ``mats``: one per ordered pair ``i != j`` that any mix uses
    (a nonzero entry), counted on the stored entries in ``O(nnz)``."""
    union = sum((abs(sp.csr_matrix(w)) for w in mats[1:]), abs(sp.csr_matrix(mats[0]))).tocsr()
    union.eliminate_zeros()
    return int(union.nnz - np.count_nonzero(union.diagonal()))


@dataclass(frozen=True)
class SimulatedWalk:
    """A walk in one process: ``theta`` the final model, ``hops[v]`` the hops client ``v`` processed."""

    theta: Tensor
    hops: dict[int, list[int]]
    final_holder: bool = True


class SimulatedNetwork:
    """Every client in one process: blocks are ``(N, ...)`` stacks, gossip is one matmul.

    Parameters
    ----------
    n_clients: number of clients ``N`` (>= 1).
    seed: the run's seed; client ``v``'s stream ``s`` generator is seeded from ``SeedSequence([seed, s, v])``,
        as on rank ``v`` of a process group.
    generators: optional ``(client, stream) -> torch.Generator`` replacing that derivation.

    ``counts`` tallies the messages a real network would carry (``"gossip"``: one per ordered pair with
    ``W_ij > 0``; ``"token"``: one per move of the walk; ``"flood"``: :attr:`unlearnkit.graphs.Flood.messages`
    per source) so that a simulated run can be compared with a process group's message logs.
    """

    def __init__(self, n_clients: int, *, seed: int = 0,
                 generators: Optional[Callable[[int, str], torch.Generator]] = None) -> None:
        self.n_clients = check_int("n_clients", n_clients, low=1)
        self.seed = check_int("seed", seed, low=0)
        self._factory = generators
        self.reset()

    @property
    def clients(self) -> tuple[int, ...]:
        return tuple(range(self.n_clients))

    def reset(self) -> None:
        """Restart every client's generators from the seed and zero the message counts (a fresh run)."""
        self._gens: dict[tuple[int, str], torch.Generator] = {}
        self.counts: Counter = Counter()

    def generator(self, client: int, stream: str = "noise") -> torch.Generator:
        """Client ``client``'s generator for ``stream`` (created on first use, then advanced by each draw)."""
        client = check_int("client", client, low=0, high=self.n_clients - 1)
        check_choice("stream", stream, tuple(_STREAM_WORDS))
        key = (client, stream)
        if key not in self._gens:
            self._gens[key] = (self._factory(client, stream) if self._factory is not None
                               else _client_generator(self.seed, client, stream))
        return self._gens[key]

    def _block(self, x: Tensor, what: str) -> Tensor:
        if x.dim() < 1 or x.shape[0] != self.n_clients:
            raise ValueError(f"{what} has shape {tuple(x.shape)}: expected a block of ({self.n_clients}, ...) "
                             "rows, one per client")
        return x

    def gossip_round(self, x: Tensor, W: Any, *, step: int = 0) -> Tensor:
        """``W @ x`` over the client axis (the simulators' mixing); ``W`` the round's ``(N, N)`` matrix, or a
        stack ``(K, N, N)`` of mixes of the same messages (returns ``(K, *x.shape)``).

        A ``scipy.sparse`` ``W``, or a list of them in place of the stack, is mixed by a
        :class:`~unlearnkit.decentral.mixer.GossipKernel` in ``O(nnz d)`` and counted on its stored entries:
        no ``N x N`` array (:func:`sparse_mixes`)."""
        self._block(x, "x")
        sparse = sparse_mixes(W, self.n_clients)
        flat = x.reshape(self.n_clients, -1)
        if sparse is not None:
            self.counts["gossip"] += sparse_gossip_messages(sparse)
            outs = [GossipKernel(Wk, device=x.device, dtype=x.dtype)(flat).reshape(x.shape) for Wk in sparse]
            return outs[0] if sp.issparse(W) else torch.stack(outs)
        Wt = torch.as_tensor(np.asarray(W, dtype=float) if not torch.is_tensor(W) else W, dtype=x.dtype,
                             device=x.device)
        if Wt.dim() not in (2, 3) or Wt.shape[-2:] != (self.n_clients, self.n_clients):
            raise ValueError(f"W has shape {tuple(Wt.shape)}; expected ({self.n_clients}, {self.n_clients}) or "
                             f"(K, {self.n_clients}, {self.n_clients})")
        # one message per ordered pair i != j that any of the mixes uses
        support = (Wt != 0).reshape(-1, self.n_clients, self.n_clients).any(0)
        self.counts["gossip"] += int(support.sum() - support.diagonal().sum())
        if Wt.dim() == 2:
            return MixingSource.mix(Wt, flat).reshape(x.shape)
        return torch.einsum("kij,jd->kid", Wt, flat).reshape(Wt.shape[0], *x.shape)

    def walk(self, route: Sequence[int], theta0: Tensor, hop: HopFn) -> SimulatedWalk:
        """The token walk in one loop: hop ``t`` at ``v = route[t]`` with client ``v``'s noise generator."""
        route = [int(v) for v in np.asarray(route, dtype=np.int64).reshape(-1)]
        if not route:
            raise ValueError("route is empty: expected at least one hop")
        bad = sorted({v for v in route if not 0 <= v < self.n_clients})
        if bad:
            raise ValueError(f"route visits clients {bad} outside [0, {self.n_clients - 1}]")
        theta = theta0.detach().clone()
        hops: dict[int, list[int]] = {}
        for t, v in enumerate(route):
            theta = hop(t, v, theta, self.generator(v, "noise")).detach()
            hops.setdefault(v, []).append(t)
        self.counts["token"] += sum(a != b for a, b in zip(route, route[1:]))
        return SimulatedWalk(theta, hops)

    def flood(self, values: Tensor, graph: nx.Graph, *, sources: Optional[Sequence[int]] = None,
              reduce: str = "sum", step: int = 0) -> Tensor:
        """Every source's row of ``values`` delivered to every client (Algorithm 1's flood, counted).

        ``graph`` is a ``networkx.Graph``, a ``scipy.sparse`` adjacency or mixing matrix, or an ``(E, 2)`` edge
        array on the network's clients (the latter two counted without an ``N x N`` array).

        Returns ``(N, S, ...)`` for ``reduce="stack"`` (sources in increasing order), else the ``(N, ...)``
        sum or mean over sources, accumulated in increasing source order as the ranks do.
        """
        self._block(values, "values")
        check_choice("reduce", reduce, FLOOD_REDUCTIONS)
        srcs = flood_sources(sources, self.n_clients)
        size = graph.number_of_nodes() if isinstance(graph, nx.Graph) else \
            (graph.shape[0] if sp.issparse(graph) else self.n_clients)
        if size != self.n_clients:
            raise ValueError(f"graph has {size} clients; the network has {self.n_clients}")
        for s in srcs:
            self.counts["flood"] += flood_schedule(graph, s, n=size).messages
        if reduce == "stack":
            got = values[srcs] if srcs else values[:0]
            return got.unsqueeze(0).expand(self.n_clients, *got.shape).clone()
        acc = torch.zeros_like(values[0])
        for s in srcs:
            acc = acc + values[s]
        if reduce == "mean" and srcs:
            acc = acc / len(srcs)
        return acc.unsqueeze(0).expand_as(values).clone()

    def barrier(self) -> None:
        """Nothing to wait for in one process."""

    def __repr__(self) -> str:
        return f"SimulatedNetwork(n_clients={self.n_clients}, seed={self.seed})"
