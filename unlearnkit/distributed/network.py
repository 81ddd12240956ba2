"""The network of clients as a ``torch.distributed`` process group: one rank per client, real messages.

Each rank holds only its own vector. Two communication patterns cover the decentralized algorithms:

- **Neighbour gossip** (:meth:`ProcessGroupNetwork.gossip_round`): one D-PSGD mixing round (Lian et al.
  2017; digest 001, section 2.1), ``x_i <- sum_j W_ij x_j``, with ``isend``/``irecv`` to and from the
  neighbours ``j`` with ``W_ij > 0``. The sum runs over ``j`` in increasing order, so the result equals row
  ``i`` of the matrix product ``W @ X`` up to floating-point rounding (tested to 1e-12 in float64).
- **The walk token** (:meth:`ProcessGroupNetwork.walk`): one model travels along a route (RR-DU's
  Algorithm 2/4, digest 000). The holder updates it, sends a header and the payload to the next client;
  everyone else waits to receive from any source; the last holder sends a stop message to every other rank.

- **Flooding** (:meth:`ProcessGroupNetwork.flood`): each source's message reaches every client along
  Newton/Fisher's Algorithm 1 (digest 001 section 2.2), hop by hop on the schedule of
  :func:`unlearnkit.graphs.flood`.

The class satisfies :class:`unlearnkit.decentral.network.Network` structurally (this room does not import
``decentral``, a room on the same floor): ``clients`` is ``(rank,)``, tensors passed to ``flood`` are this
rank's ``(1, ...)`` block, and ``generator(rank, stream)`` is this rank's generator. So the algorithm code of
:mod:`unlearnkit.decentral.network_steps` runs here unchanged. A dynamic topology (PDUDT) is a different
``W`` per ``gossip_round`` call: the neighbour sets are read off each round's matrix.

Every send and receive is recorded in the rank's :class:`MessageLog` (kind, source, destination, round or
hop, bytes, wall-clock time), the raw material for per-client privacy ledgers built from actual messages.
A dead peer surfaces as a :class:`PeerLostError` naming this rank, the peer it waited for or sent to, their
hosts and the operation: at once when the peer's process ended (its connection closes), after the process
group's timeout when it went silent; never as a hang.
"""

from __future__ import annotations

import os
import re
import socket
import time
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any, Callable, Optional, Sequence

import networkx as nx
import numpy as np
import scipy.sparse as sp
import torch
import torch.distributed as dist
from torch import Tensor

from .._validate import check_choice, check_int, check_positive
from ..graphs.flood import flood as flood_schedule
from .seeds import rank_generator


BACKENDS = ("gloo", "nccl")
# Tags keep the two patterns apart on the same pair of ranks.
_TAG_GOSSIP, TAG_HEADER, TAG_PAYLOAD, _TAG_FLOOD = 11, 12, 13, 14
_REDUCTIONS = ("stack", "sum", "mean")
TOKEN, STOP = 0, 1

RankHopFn = Callable[[int, int, Tensor, torch.Generator], Tensor]


class PeerLostError(RuntimeError):
    """A send to or receive from another rank failed: its process ended or it sent nothing within the
    timeout. The message names this rank and host, the peer rank (and host, where known) and the operation."""


def comm_failure(exc: BaseException) -> str:
    """The cause of a failed send or receive in a few words (gloo's first line, without its source path)."""
    text = (str(exc).strip().splitlines() or [repr(exc)])[0]
    text = re.sub(r"^\[[^\]]*\.(cc|cpp|h)(:\d+)?\]\s*", "", text)
    text = text.split(". This is typically")[0].rstrip(". ")
    if re.search(r"timed out|timeout", text, re.IGNORECASE):
        return f"nothing arrived within the timeout ({text})"
    if re.search(r"reset by peer|closed by peer|broken pipe|connection refused|EOF", text, re.IGNORECASE):
        return f"its connection closed: the process ended ({text})"
    return text


@dataclass(frozen=True)
class Message:
    """One message as one rank saw it: ``direction`` is ``"send"`` or ``"recv"``; ``step`` the gossip round or
    walk hop; ``time`` seconds since the epoch (comparable across ranks of one machine)."""

    kind: str
    direction: str
    src: int
    dst: int
    step: int
    nbytes: int
    time: float


@dataclass
class MessageLog:
    """The per-rank list of :class:`Message`; ``rows()`` gives plain dicts (a DataFrame's records)."""

    rank: int
    messages: list[Message] = field(default_factory=list)

    def add(self, kind: str, direction: str, src: int, dst: int, step: int, nbytes: int) -> None:
        self.messages.append(Message(kind, direction, src, dst, step, nbytes, time.time()))

    def rows(self) -> list[dict[str, Any]]:
        return [asdict(m) for m in self.messages]

    def sent(self, kind: Optional[str] = None) -> list[Message]:
        return [m for m in self.messages if m.direction == "send" and (kind is None or m.kind == kind)]

    def bytes_sent(self) -> int:
        return sum(m.nbytes for m in self.sent())

    def __len__(self) -> int:
        return len(self.messages)


@dataclass
class WalkResult:
    """What one rank knows after a walk: ``theta`` is the final model on the last holder, ``None`` elsewhere;
    ``hops`` the hop indices this rank processed; ``seconds`` the rank's wall time inside the walk."""

    rank: int
    theta: Optional[Tensor]
    hops: list[int]
    final_holder: bool
    seconds: float


def init_process_group(*, backend: str = "gloo", timeout_s: float = 60.0) -> None:
    """Join the process group described by the environment (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
    ``MASTER_PORT``, as ``torchrun`` and :func:`unlearnkit.distributed.spawn` set them). No-op if joined."""
    check_choice("backend", backend, BACKENDS)
    check_positive("timeout_s", timeout_s)
    if dist.is_initialized():
        return
    missing = [k for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if k not in os.environ]
    if missing:
        raise RuntimeError(f"environment variables {missing} are not set: launch with torchrun or "
                           "unlearnkit.distributed.spawn / launch_torchrun")
    dist.init_process_group(backend=backend, timeout=timedelta(seconds=timeout_s))


class ProcessGroupNetwork:
    """This rank's view of the client network over an initialised ``torch.distributed`` process group.

    Parameters
    ----------
    seed: the run's seed; this rank's generators come from :func:`~unlearnkit.distributed.rank_generator`.
    device: where tensors live for communication (``"cpu"`` for gloo; ``"cuda:<local rank>"`` for NCCL).
    hosts: each rank's host name, for the message of a :class:`PeerLostError` (default: only this rank's).
    """

    def __init__(self, *, seed: int = 0, device: str | torch.device = "cpu",
                 hosts: Optional[Sequence[str]] = None) -> None:
        if not dist.is_initialized():
            raise RuntimeError("no process group: call unlearnkit.distributed.init_process_group first")
        self.rank = dist.get_rank()
        self.n_clients = dist.get_world_size()
        self.backend = dist.get_backend()
        self.seed = check_int("seed", seed, low=0)
        self.device = torch.device(device)
        self.hosts = None if hosts is None else [str(h) for h in hosts]
        if self.hosts is not None and len(self.hosts) != self.n_clients:
            raise ValueError(f"hosts has {len(self.hosts)} names; expected one per rank ({self.n_clients})")
        self.reset()

    def reset(self) -> None:
        """Empty the message log and restart this rank's noise generator from the seed (a fresh run)."""
        self.log = MessageLog(self.rank)
        self.noise = rank_generator(self.seed, self.rank, "noise")
        self._gens: dict[str, torch.Generator] = {"noise": self.noise}

    @property
    def clients(self) -> tuple[int, ...]:
        """The clients this rank holds: its own (the first axis of a block has length 1)."""
        return (self.rank,)

    def generator(self, client: int, stream: str = "noise") -> torch.Generator:
        """This rank's generator for ``stream`` (:func:`~unlearnkit.distributed.rank_generator`); ``client`` must
        be this rank: a rank draws no other client's randomness."""
        if int(client) != self.rank:
            raise ValueError(f"client={client}: rank {self.rank} holds only client {self.rank}'s generators")
        if stream not in self._gens:
            self._gens[stream] = rank_generator(self.seed, self.rank, stream)
        return self._gens[stream]

    def _where(self, rank: int) -> str:
        if rank == self.rank:
            return f"rank {rank} (host {socket.gethostname()})"
        return f"rank {rank}" + (f" (host {self.hosts[rank]})" if self.hosts is not None else "")

    def lost(self, peer: Optional[int], what: str, exc: BaseException) -> PeerLostError:
        """The :class:`PeerLostError` for a failed ``what`` (e.g. ``"receive of gossip round 3"``) with
        ``peer`` (``None``: not known)."""
        who = "a peer" if peer is None else self._where(peer)
        return PeerLostError(f"{self._where(self.rank)} lost {who} during the {what}: {comm_failure(exc)}")

    def _wait(self, pending: Sequence[tuple[int, str, Any]], what: str) -> None:
        """Wait for each ``(peer, "send"|"receive", work)``; a failure raises :class:`PeerLostError` naming it."""
        for peer, kind, work in pending:
            try:
                work.wait()
            except RuntimeError as exc:
                raise self.lost(peer, f"{kind} of {what}", exc) from None

    # ------------------------------------------------------------------ gossip
    def _check_matrix(self, W: Any) -> np.ndarray:
        W = np.asarray(W, dtype=float)
        if W.shape[-2:] != (self.n_clients, self.n_clients) or W.ndim not in (2, 3):
            raise ValueError(f"W has shape {W.shape}; expected ({self.n_clients}, {self.n_clients}) "
                             f"(one row and column per rank) or a stack (K, {self.n_clients}, {self.n_clients})")
        return W

    def _row_and_column(self, W: Any) -> tuple[np.ndarray, np.ndarray, bool]:
        """``(rows, cols, stacked)``: this rank's row ``W_k[i, :]`` and column ``W_k[:, i]`` of each mix, ``(K, N)``;
        a ``scipy.sparse`` ``W`` (or a list of them for a stack) is read in ``O(nnz)``, never densified."""
        i = self.rank
        mats = [W] if sp.issparse(W) else (list(W) if isinstance(W, (list, tuple)) and W and
                                           all(sp.issparse(w) for w in W) else None)
        if mats is None:
            Wd = self._check_matrix(W)
            Ws = Wd[None] if Wd.ndim == 2 else Wd
            return Ws[:, i, :], Ws[:, :, i], Wd.ndim == 3
        rows, cols = [], []
        for w in mats:
            if w.shape != (self.n_clients, self.n_clients):
                raise ValueError(f"W has shape {w.shape}; expected ({self.n_clients}, {self.n_clients})")
            rows.append(sp.csr_matrix(w, dtype=np.float64)[[i]].toarray().ravel())
            cols.append(sp.csc_matrix(w, dtype=np.float64)[:, [i]].toarray().ravel())
        return np.stack(rows), np.stack(cols), not sp.issparse(W)

    def gossip_round(self, x: Tensor, W: Any, *, step: int = 0) -> Tensor:
        """One mixing round ``x_i <- sum_j W_ij x_j`` (D-PSGD; digest 001, section 2.1).

        ``W`` is the round's full ``(N, N)`` mixing matrix (every rank builds the same one); this rank sends
        ``x`` to every ``j`` with ``W_ji != 0`` and receives from every ``j`` with ``W_ij != 0``. A stack
        ``(K, N, N)`` mixes the same messages ``K`` ways (one exchange; PDUDT's residuals ``(W~ - W) g``
        beside ``W g``) and returns ``(K, *x.shape)``. A ``scipy.sparse`` ``W`` (a list of them for a stack) is
        read for this rank's row and column only.
        """
        rows, cols, stacked = self._row_and_column(W)
        i = self.rank
        others = [j for j in range(self.n_clients) if j != i]
        send_to = [j for j in others if np.any(cols[:, j] != 0)]
        recv_from = [j for j in others if np.any(rows[:, j] != 0)]
        x = x.detach().contiguous()
        nbytes = x.numel() * x.element_size()
        bufs = {j: torch.empty_like(x) for j in recv_from}
        reqs = [(j, "receive", dist.irecv(bufs[j], src=j, tag=_TAG_GOSSIP)) for j in recv_from]
        for j in send_to:
            reqs.append((j, "send", dist.isend(x, dst=j, tag=_TAG_GOSSIP)))
            self.log.add("gossip", "send", i, j, step, nbytes)
        self._wait(reqs, f"gossip round {step}")
        for j in recv_from:
            self.log.add("gossip", "recv", j, i, step, nbytes)
        outs = []
        for row in rows:
            out = torch.zeros_like(x)
            for j in range(self.n_clients):
                if j == i:
                    out = out + row[i] * x
                elif j in bufs:
                    out = out + row[j] * bufs[j]
            outs.append(out)
        return torch.stack(outs) if stacked else outs[0]

    # ------------------------------------------------------------------ walk token
    def _send_token(self, theta: Tensor, dst: int, hop: int) -> None:
        header = torch.tensor([TOKEN, hop], dtype=torch.int64, device="cpu")  # gloo headers live on the host
        try:
            dist.send(header, dst=dst, tag=TAG_HEADER)
            dist.send(theta.detach().contiguous(), dst=dst, tag=TAG_PAYLOAD)
        except RuntimeError as exc:
            raise self.lost(dst, f"send of the walk token for hop {hop}", exc) from None
        self.log.add("token", "send", self.rank, dst, hop, theta.numel() * theta.element_size() + 16)

    def _send_stop(self, hop: int) -> None:
        header = torch.tensor([STOP, hop], dtype=torch.int64, device="cpu")
        for j in range(self.n_clients):
            if j != self.rank:
                try:
                    dist.send(header, dst=j, tag=TAG_HEADER)
                except RuntimeError as exc:
                    raise self.lost(j, f"send of the walk's stop after hop {hop}", exc) from None
                self.log.add("stop", "send", self.rank, j, hop, 16)

    def _expected(self, route: Sequence[int], after: int) -> tuple[int, str]:
        """Who sends this rank its next walk message after hop ``after``, and what it is, by the route."""
        for t in range(after + 1, len(route)):
            if route[t] == self.rank and route[t - 1] != self.rank:
                return route[t - 1], f"walk token for hop {t}"
        return route[-1], "walk's stop"

    def _recv_any(self, template: Tensor, route: Sequence[int] = (), after: int = 0
                  ) -> tuple[int, int, Optional[Tensor]]:
        """Wait for the next header from any rank: ``(src, hop, theta)``, ``theta`` ``None`` on stop. A failure
        names the rank the route says sends next (the holder before it may be the one lost)."""
        header = torch.empty(2, dtype=torch.int64, device="cpu")
        try:
            src = dist.recv(header, src=None, tag=TAG_HEADER)
        except RuntimeError as exc:
            peer, what = self._expected(route, after) if len(route) else (None, "walk token")
            raise self.lost(peer, f"receive of the {what}", exc) from None
        kind, hop = int(header[0]), int(header[1])
        if kind == STOP:
            self.log.add("stop", "recv", src, self.rank, hop, 16)
            return src, hop, None
        theta = torch.empty_like(template)
        try:
            dist.recv(theta, src=src, tag=TAG_PAYLOAD)
        except RuntimeError as exc:
            raise self.lost(src, f"receive of the walk token for hop {hop}", exc) from None
        self.log.add("token", "recv", src, self.rank, hop, theta.numel() * theta.element_size() + 16)
        return src, hop, theta

    def walk(self, route: Sequence[int], theta0: Tensor, hop: RankHopFn) -> WalkResult:
        """Walk the token along a fixed ``route`` (client per hop), every rank calling with the same route.

        At hop ``t`` the holder ``route[t]`` replaces ``theta`` by ``hop(t, route[t], theta, self.noise)``
        (noise, where the algorithm adds it, comes from this rank's generator) and passes the token to
        ``route[t + 1]`` (no message when the token stays). ``theta0`` is the model at ``route[0]``; other
        ranks use it only as a shape/dtype template. The last holder sends stop to every other rank.
        Receive-from-any needs gloo (NCCL has no any-source receive).
        """
        if self.backend != "gloo":
            raise RuntimeError(f"walk needs receive-from-any, which backend={self.backend!r} lacks; use gloo")
        route = [int(v) for v in np.asarray(route, dtype=np.int64).reshape(-1)]
        if not route:
            raise ValueError("route is empty: expected at least one hop")
        bad = [v for v in route if not 0 <= v < self.n_clients]
        if bad:
            raise ValueError(f"route visits clients {sorted(set(bad))} outside [0, {self.n_clients - 1}]")
        template = theta0.detach()
        hops: list[int] = []
        start = time.perf_counter()
        holding, t, theta = route[0] == self.rank, 0, template.clone()
        while True:
            if not holding:
                _, t, theta = self._recv_any(template, route, t)
                if theta is None:
                    return WalkResult(self.rank, None, hops, False, time.perf_counter() - start)
            theta = hop(t, self.rank, theta, self.noise).detach()
            hops.append(t)
            if t + 1 == len(route):
                self._send_stop(t)
                return WalkResult(self.rank, theta, hops, True, time.perf_counter() - start)
            nxt = route[t + 1]
            if nxt == self.rank:
                t, holding = t + 1, True
                continue
            self._send_token(theta, nxt, t + 1)
            holding = False

    # ------------------------------------------------------------------ flooding
    def flood(self, values: Tensor, graph: nx.Graph, *, sources: Optional[Sequence[int]] = None,
              reduce: str = "sum", step: int = 0) -> Tensor:
        """Flood each source's message to every client (Newton/Fisher's Algorithm 1, lines 6-12).

        ``values`` is this rank's block ``(1, ...)``: its row is the message when this rank is a source, a
        shape/dtype template otherwise. For each source in increasing order the flood runs in synchronous
        hops, on the schedule :func:`unlearnkit.graphs.flood` computes (every rank computes the same one): at
        hop ``h`` the clients first reached at hop ``h - 1`` send to every neighbour but the one they first
        heard from, with ``isend``/``irecv``; a client keeps the copy from its parent and drops duplicates.
        Each rank's sends add up to :attr:`~unlearnkit.graphs.Flood.messages` per source over the ranks.
        Returns ``(1, S, ...)`` (``reduce="stack"``) or the ``(1, ...)`` sum or mean over sources, summed
        in increasing source order.
        """
        check_choice("reduce", reduce, _REDUCTIONS)
        if values.dim() < 1 or values.shape[0] != 1:
            raise ValueError(f"values has shape {tuple(values.shape)}: expected this rank's block (1, ...)")
        if graph.number_of_nodes() != self.n_clients:
            raise ValueError(f"graph has {graph.number_of_nodes()} clients; the process group has {self.n_clients}")
        srcs = sorted({int(v) for v in np.asarray(range(self.n_clients) if sources is None else sources,
                                                      dtype=np.int64).reshape(-1)})
        if any(not 0 <= v < self.n_clients for v in srcs):
            raise ValueError(f"sources={srcs} must be clients in [0, {self.n_clients - 1}]")
        template = values[0].detach().contiguous()
        got = [self._flood_one(template, graph, s, step) for s in srcs]
        if reduce == "stack":
            return (torch.stack(got) if got else values[:0]).unsqueeze(0)
        acc = torch.zeros_like(template)
        for m in got:
            acc = acc + m
        if reduce == "mean" and got:
            acc = acc / len(got)
        return acc.unsqueeze(0)

    def _flood_one(self, msg: Tensor, graph: nx.Graph, source: int, step: int) -> Tensor:
        fl = flood_schedule(graph, source)
        hops, parent, r = fl.hops, fl.parent, self.rank
        nbrs = sorted(int(v) for v in graph.neighbors(r))
        held = msg if r == source else None
        nbytes = msg.numel() * msg.element_size()
        for h in range(1, max(hops.values()) + 2):
            bufs = {u: torch.empty_like(msg) for u in nbrs if hops[u] == h - 1 and parent[u] != r}
            reqs = [(u, "receive", dist.irecv(b, src=u, tag=_TAG_FLOOD)) for u, b in bufs.items()]
            if hops[r] == h - 1:
                for v in nbrs:
                    if v != parent[r]:
                        reqs.append((v, "send", dist.isend(held, dst=v, tag=_TAG_FLOOD)))
                        self.log.add("flood", "send", r, v, step, nbytes)
            self._wait(reqs, f"flood from client {source}, hop {h}")
            for u in bufs:
                self.log.add("flood", "recv", u, r, step, nbytes)
            if hops[r] == h:
                held = bufs[parent[r]]
        return held

    def barrier(self) -> None:
        dist.barrier()

    def __repr__(self) -> str:
        return (f"ProcessGroupNetwork(rank={self.rank}, n_clients={self.n_clients}, backend={self.backend!r}, "
                f"seed={self.seed})")
