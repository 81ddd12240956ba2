"""Start N local ranks from Python (a notebook, a test) and collect what each returns, never hanging.

- :func:`spawn`: ``fn(net, *args)`` in ``n_ranks`` fresh processes (``multiprocessing`` "spawn" context,
  so ``fn`` must live in an importable module, e.g. :mod:`unlearnkit.distributed.tasks`), on
  ``MASTER_ADDR=127.0.0.1`` and a free port. Each rank's return value comes back through a file.
- :func:`launch_torchrun`: ``torchrun ... -m unlearnkit.distributed.run ARGS`` in a subprocess, the same
  command a shell would run, with its rendezvous on ``127.0.0.1:<free port>``.

Both take a wall-clock ``timeout``: on expiry, or as soon as one rank fails, every rank still running is
terminated (then killed) and :class:`DistributedRunError` names the ranks and carries their tracebacks.
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import torch
import torch.multiprocessing as mp

from .._validate import Limit, check_choice, check_int, check_positive
from .network import BACKENDS, ProcessGroupNetwork, init_process_group


#: The most ranks one machine may start: each is a process of about 250 MB (512 of them take 128 GB).
MAX_LOCAL_RANKS = Limit("MAX_LOCAL_RANKS", 512)


class DistributedRunError(RuntimeError):
    """A multi-process run failed or timed out; the message names the ranks and quotes their errors."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _child(rank: int, n_ranks: int, port: int, backend: str, seed: int, timeout_s: float, outdir: str,
           fn: Callable[..., Any], args: tuple) -> None:
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
                       "LOCAL_RANK": str(rank), "WORLD_SIZE": str(n_ranks)})
    torch.set_num_threads(1)
    out = Path(outdir)
    try:
        init_process_group(backend=backend, timeout_s=timeout_s)
        device = f"cuda:{rank}" if backend == "nccl" else "cpu"
        net = ProcessGroupNetwork(seed=seed, device=device, hosts=[socket.gethostname()] * n_ranks)  # all local
        result = fn(net, *args)
        torch.save(result, out / f"rank{rank}.pt")
    except BaseException:
        (out / f"rank{rank}.err").write_text(traceback.format_exc())
        raise SystemExit(1)
    finally:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()


def _stop(procs: Sequence[Any]) -> None:
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 5.0
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(5.0)


def _errors(outdir: Path) -> str:
    parts = [f"--- rank {f.stem[4:]} ---\n{f.read_text()}" for f in sorted(outdir.glob("rank*.err"))]
    return "\n".join(parts)


def _result(path: Path, rank: int) -> Any:
    """Rank ``rank``'s return value, read with the safe loader (tensors, numbers, strings, containers)."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise DistributedRunError(f"rank {rank}'s result {path.name} holds objects the safe loader refuses; a "
                                  "task must return tensors, numbers, strings, None, lists, tuples and dicts "
                                  f"({str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r})") from None


def spawn(fn: Callable[..., Any], n_ranks: int, *args: Any, backend: str = "gloo", seed: int = 0,
          timeout: float = 120.0, comm_timeout: float = 30.0) -> list[Any]:
    """Run ``fn(net, *args)`` on ``n_ranks`` local processes; return the ranks' results in rank order.

    Parameters
    ----------
    fn: a module-level function (picklable by name) taking a
        :class:`~unlearnkit.distributed.ProcessGroupNetwork` first.
    n_ranks: number of processes (clients), in [1, MAX_LOCAL_RANKS]. Each costs about 250 MB and a second or
        more to start.
    backend: ``"gloo"`` (CPU) or ``"nccl"`` (one GPU per rank).
    seed: the run's seed (per-rank generators derive from it).
    timeout: wall-clock seconds for the whole run, start-up included.
    comm_timeout: the process group's timeout: a send or receive waiting longer raises on its rank.
    """
    n_ranks = check_int("n_ranks", n_ranks, low=1, high=MAX_LOCAL_RANKS)
    check_choice("backend", backend, BACKENDS)
    check_positive("timeout", timeout)
    check_positive("comm_timeout", comm_timeout)
    ctx = mp.get_context("spawn")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="unlearnkit-dist-") as tmp:
        outdir = Path(tmp)
        procs = [ctx.Process(target=_child, args=(r, n_ranks, port, backend, seed, comm_timeout, tmp, fn, args),
                             daemon=True) for r in range(n_ranks)]
        for p in procs:
            p.start()
        deadline = time.monotonic() + timeout
        try:
            while any(p.is_alive() for p in procs):
                failed = [r for r, p in enumerate(procs) if p.exitcode not in (None, 0)]
                if failed:
                    _stop(procs)
                    raise DistributedRunError(f"ranks {failed} of {n_ranks} failed; the others were stopped\n"
                                              + _errors(outdir))
                if time.monotonic() > deadline:
                    alive = [r for r, p in enumerate(procs) if p.is_alive()]
                    _stop(procs)
                    raise DistributedRunError(f"timeout={timeout} s expired with ranks {alive} of {n_ranks} still "
                                              "running; all were stopped\n" + _errors(outdir))
                time.sleep(0.05)
        finally:
            _stop(procs)
        failed = [r for r, p in enumerate(procs) if p.exitcode != 0]
        if failed:
            raise DistributedRunError(f"ranks {failed} of {n_ranks} failed (exit codes "
                                      f"{[procs[r].exitcode for r in failed]})\n" + _errors(outdir))
        return [_result(outdir / f"rank{r}.pt", r) for r in range(n_ranks)]


def torchrun_command(n_ranks: int, args: Sequence[str], *, port: Optional[int] = None) -> list[str]:
    """The ``torchrun`` command line (as ``python -m torch.distributed.run``) for ``n_ranks`` local ranks."""
    port = free_port() if port is None else check_int("port", port, low=1, high=65535)
    return [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", f"--nproc-per-node={n_ranks}",
            "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}", "-m", "unlearnkit.distributed.run",
            *map(str, args)]


def launch_torchrun(n_ranks: int, args: Sequence[str], *, timeout: float = 120.0,
                    env: Optional[dict[str, str]] = None) -> subprocess.CompletedProcess:
    """Run ``torchrun --nproc-per-node=n_ranks -m unlearnkit.distributed.run ARGS`` and wait for it.

    The subprocess gets its own session; on ``timeout`` its whole process group (torchrun and the ranks it
    started) is killed and :class:`DistributedRunError` is raised. A non-zero exit raises too, with the
    output's tail. Returns the completed process (``stdout`` holds rank 0's summary).
    """
    n_ranks = check_int("n_ranks", n_ranks, low=1, high=MAX_LOCAL_RANKS)
    check_positive("timeout", timeout)
    cmd = torchrun_command(n_ranks, args)
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=full_env,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise DistributedRunError(f"timeout={timeout} s expired; torchrun (pid {proc.pid}) and its ranks were "
                                  f"killed\n{out[-4000:]}") from None
    if proc.returncode != 0:
        raise DistributedRunError(f"torchrun exited with code {proc.returncode}\n{out[-4000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, "")
