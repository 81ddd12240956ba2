"""The walk token with checkpoints every ``every`` hops, resumable after a crash from the last one.

:func:`resumable_walk` is :meth:`ProcessGroupNetwork.walk <unlearnkit.distributed.ProcessGroupNetwork.walk>`
plus a coordinated checkpoint: when hop ``h - 1`` is done and ``h`` is a multiple of ``every``, the holder sends
a ``checkpoint`` header to every other rank (they are all waiting to receive from any source), every rank
writes its own state and all meet at a barrier. A rank's state is what the rest of the walk depends on:

- the hop index ``h`` (the next hop to run) and the route (checked on resume);
- the token ``theta`` (on the holder of hop ``h - 1`` only);
- this rank's noise generator (``net.noise``: RR-DU draws its noise at ``u`` from it), and the hop's own
  per-rank random state when the hop has one (``hop.rank_state(rank)`` / ``hop.load_rank_state(rank, s)``);
- this rank's message log and the hops it ran.

Each rank writes ``rank<r>-hop<h>.pt`` atomically (temporary file, then rename; the file's layout, read back
with the safe loader and validated, is :mod:`unlearnkit.distributed.checkpoint_file`) and, once everyone has passed
the barrier, deletes its older files. On ``resume=DIR`` the ranks agree on the newest hop that every rank has
(an ``all_reduce`` of each rank's newest file, minimum), so a crash in the middle of writing a checkpoint falls
back to the previous one and no shared file system is needed (each rank reads only its own files). The
resumed walk then does exactly what the uninterrupted walk did after that hop: same messages, same draws,
same parameters.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import torch
import torch.distributed as dist
from torch import Tensor

from .._validate import check_int
from .checkpoint_file import RunIdentity, read_checkpoint, write_checkpoint
from .network import STOP, TAG_HEADER, TAG_PAYLOAD, TOKEN, RankHopFn, Message, ProcessGroupNetwork, WalkResult


_CHECKPOINT = 2                   # a third header kind beside the token and the stop
_FILE = re.compile(r"rank(\d+)-hop(\d+)\.pt$")


def _path(folder: Path, rank: int, hop: int) -> Path:
    return folder / f"rank{rank}-hop{hop:08d}.pt"


def latest_checkpoint(folder: str | os.PathLike, rank: int) -> int:
    """The newest hop index rank ``rank`` has a checkpoint for in ``folder`` (0: none)."""
    hops = [int(m.group(2)) for f in Path(folder).glob(f"rank{rank}-hop*.pt")
            if (m := _FILE.search(f.name)) and int(m.group(1)) == rank]
    return max(hops, default=0)


def _identity(net: ProcessGroupNetwork, route: list[int], template: Tensor) -> RunIdentity:
    return RunIdentity(tuple(route), net.n_clients, net.rank, net.seed, tuple(template.shape),
                       str(template.dtype).removeprefix("torch."))


def _save(net: ProcessGroupNetwork, folder: Path, hop_index: int, who: RunIdentity, theta: Optional[Tensor],
          hops: list[int], hop: Any) -> None:
    write_checkpoint(_path(folder, net.rank, hop_index), who, hop=hop_index, theta=theta,
                     noise=net.noise.get_state(),
                     hop_state=hop.rank_state(net.rank) if hasattr(hop, "rank_state") else None,
                     hops=hops, log=net.log.rows())


def _checkpoint(net: ProcessGroupNetwork, folder: Path, h: int, who: RunIdentity, theta: Optional[Tensor],
                hops: list[int], hop: Any) -> None:
    """Write this rank's state at hop ``h``, wait for every rank, then drop this rank's older files."""
    _save(net, folder, h, who, theta, hops, hop)
    dist.barrier()
    for f in folder.glob(f"rank{net.rank}-hop*.pt"):
        m = _FILE.search(f.name)
        if m and int(m.group(1)) == net.rank and int(m.group(2)) < h:
            f.unlink(missing_ok=True)


def _announce(net: ProcessGroupNetwork, h: int) -> None:
    header = torch.tensor([_CHECKPOINT, h], dtype=torch.int64, device="cpu")
    for j in range(net.n_clients):
        if j != net.rank:
            dist.send(header, dst=j, tag=TAG_HEADER)
            net.log.add("checkpoint", "send", net.rank, j, h, 16)


def _receive(net: ProcessGroupNetwork, template: Tensor) -> tuple[int, int, Optional[Tensor]]:
    """The next header from any rank: ``(kind, hop, theta)``; ``theta`` only with a token."""
    header = torch.empty(2, dtype=torch.int64, device="cpu")
    src = dist.recv(header, src=None, tag=TAG_HEADER)
    kind, h = int(header[0]), int(header[1])
    if kind == TOKEN:
        theta = torch.empty_like(template)
        dist.recv(theta, src=src, tag=TAG_PAYLOAD)
        net.log.add("token", "recv", src, net.rank, h, theta.numel() * theta.element_size() + 16)
        return kind, h, theta
    net.log.add("stop" if kind == STOP else "checkpoint", "recv", src, net.rank, h, 16)
    return kind, h, None


_Restored = tuple[int, Optional[Tensor], list[int]]   # (next hop, the token on its holder, this rank's hops)


def _restore(net: ProcessGroupNetwork, folder: Path, who: RunIdentity, hop: Any) -> _Restored:
    """Agree with every rank on the checkpoint to resume from and load this rank's part of it (safe loader,
    validated by :func:`~unlearnkit.distributed.checkpoint_file.read_checkpoint`)."""
    newest = torch.tensor([latest_checkpoint(folder, net.rank)], dtype=torch.int64, device="cpu")
    dist.all_reduce(newest, op=dist.ReduceOp.MIN)
    h = int(newest.item())
    if h == 0:
        return 0, None, []
    path = _path(folder, net.rank, h)
    if not path.exists():
        raise FileNotFoundError(f"resume: rank {net.rank} has no checkpoint {path.name} in {folder} although every "
                                f"rank reports hop >= {h}; was the folder changed by hand?")
    state = read_checkpoint(path, who, h, flag="--resume", noise_bytes=net.noise.get_state().numel())
    net.noise.set_state(state["noise"])
    if state["hop_state"] is not None:
        hop.load_rank_state(net.rank, state["hop_state"])
    net.log.messages = [Message(**m) for m in state["log"]]
    return h, state["theta"], list(state["hops"])


def resumable_walk(net: ProcessGroupNetwork, route: Sequence[int], theta0: Tensor, hop: RankHopFn, *,
                   checkpoint_dir: str | os.PathLike, every: int = 10, resume: bool = False) -> WalkResult:
    """Walk ``route`` as :meth:`ProcessGroupNetwork.walk` does, checkpointing every ``every`` hops.

    Parameters
    ----------
    net, route, theta0, hop: as in :meth:`ProcessGroupNetwork.walk` (every rank passes the same route).
    checkpoint_dir: the folder every rank writes its checkpoints to (created if missing; one per run).
    every: checkpoint after every ``every`` hops (>= 1).
    resume: start from the newest checkpoint all ranks have in ``checkpoint_dir`` (from hop 0 when none);
        without it, this rank's old files in ``checkpoint_dir`` are deleted first.
    """
    if net.backend != "gloo":
        raise RuntimeError(f"the walk needs receive-from-any, which backend={net.backend!r} lacks; use gloo")
    every = check_int("every", every, low=1)
    route = [int(v) for v in np.asarray(route, dtype=np.int64).reshape(-1)]
    if not route or min(route) < 0 or max(route) >= net.n_clients:
        raise ValueError(f"route must be a non-empty list of clients in [0, {net.n_clients - 1}]; got {route[:10]}")
    folder = Path(checkpoint_dir)
    folder.mkdir(parents=True, exist_ok=True)
    if not resume:   # a fresh walk: this rank's files from an earlier run must not be taken for this run's later
        for f in folder.glob(f"rank{net.rank}-hop*.pt"):
            f.unlink(missing_ok=True)
    template = theta0.detach()
    who = _identity(net, route, template)
    start = time.perf_counter()
    t, theta, hops = _restore(net, folder, who, hop) if resume else (0, None, [])
    if t == 0:
        holding, theta = route[0] == net.rank, template.clone()
    elif route[t - 1] == net.rank:        # this rank held the token at the checkpoint: pass it on, as it did then
        assert theta is not None
        theta = theta.to(template.device)
        holding = route[t] == net.rank
        if not holding:
            net._send_token(theta, route[t], t)
    else:
        holding = False
    while True:
        if not holding:
            kind, h, received = _receive(net, template)
            if kind == STOP:
                return WalkResult(net.rank, None, hops, False, time.perf_counter() - start)
            if kind == _CHECKPOINT:
                _checkpoint(net, folder, h, who, None, hops, hop)
                continue
            t, theta = h, received
        theta = hop(t, net.rank, theta, net.noise).detach()
        hops.append(t)
        if t + 1 == len(route):
            net._send_stop(t)
            return WalkResult(net.rank, theta, hops, True, time.perf_counter() - start)
        if (t + 1) % every == 0:
            _announce(net, t + 1)
            _checkpoint(net, folder, t + 1, who, theta, hops, hop)
        nxt = route[t + 1]
        t += 1
        holding = nxt == net.rank
        if not holding:
            net._send_token(theta, nxt, t)


def resumable_walk_task(net: ProcessGroupNetwork, route: Sequence[int], hop: Any, checkpoint_dir: str,
                        every: int = 10, resume: bool = False, dtype: torch.dtype = torch.float64) -> dict[str, Any]:
    """:func:`resumable_walk` from ``theta_0 = 0`` (or ``hop.init()`` when the hop has one), as a rank task for
    :func:`~unlearnkit.distributed.spawn` (which passes arguments by position); returns the same dict as
    :func:`~unlearnkit.distributed.walk_task`."""
    theta0 = hop.init() if hasattr(hop, "init") else torch.zeros(hop.dim, dtype=dtype, device=net.device)
    net.barrier()
    res = resumable_walk(net, route, theta0, hop, checkpoint_dir=checkpoint_dir, every=every, resume=resume)
    return {"rank": net.rank, "theta": None if res.theta is None else res.theta.cpu(), "hops": res.hops,
            "final_holder": res.final_holder, "seconds": res.seconds, "log": net.log.rows()}
