"""Ranks started by hand (``python -m unlearnkit.distributed.run`` with ``RANK``/``WORLD_SIZE`` set, no torchrun
agent): a rank that dies or never starts is reported by the survivor in one line naming the lost rank and its
host, within ``--timeout``, with exit code 1 and no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from unlearnkit.distributed.launch import free_port

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 4   # the process group's timeout (--timeout): small, so a silent peer is reported quickly

# rank 1 kills itself (SIGKILL: no clean-up, no message to its peers) at gossip round 3 or on receiving the token
_DIES = """
import os, signal, sys
from unlearnkit.distributed.network import ProcessGroupNetwork
from unlearnkit.distributed.tasks import QuadraticHop
gossip, hop = ProcessGroupNetwork.gossip_round, QuadraticHop.__call__
def dying_gossip(self, x, W, *, step=0):
    if step == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return gossip(self, x, W, step=step)
def dying_hop(self, t, node, theta, generator):
    if node == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return hop(self, t, node, theta, generator)
ProcessGroupNetwork.gossip_round, QuadraticHop.__call__ = dying_gossip, dying_hop
from unlearnkit.distributed.run import worker_main
sys.exit(worker_main(sys.argv[1:]))
"""


def _rank(rank: int, world: int, port: int, argv: list[str], *, dies: bool = False) -> subprocess.Popen:
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
           "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-c", _DIES] if dies else [sys.executable, "-m", "unlearnkit.distributed.run"]
    return subprocess.Popen(cmd + argv + ["--timeout", str(TIMEOUT)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _survivor_says(argv: list[str]) -> tuple[str, subprocess.Popen]:
    port = free_port()
    survivor, victim = _rank(0, 2, port, argv), _rank(1, 2, port, argv, dies=True)
    try:
        victim.wait(120)
        died = time.monotonic()
        _, err = survivor.communicate(timeout=120)
        assert time.monotonic() - died < TIMEOUT + 10   # within the timeout (plus exit), not a hang
    finally:
        for p in (survivor, victim):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert victim.returncode == -9
    return err, survivor


@pytest.mark.parametrize("argv, what", [
    (["gossip", "--rounds", "50", "--dim", "4"], r"(receive|send) of gossip round 3"),
    (["walk", "--route", "0,1,0", "--dim", "4"], r"receive of the walk token for hop 2"),
])
def test_a_killed_rank_is_named_by_its_peer_in_one_line(argv, what):
    err, survivor = _survivor_says(argv)
    assert survivor.returncode == 1 and "Traceback" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("error: rank 0 (host ") and " lost rank 1 (host " in line, line
    assert __import__("re").search(what, line), line


def test_a_rank_that_never_starts_is_reported_by_count():
    rank0 = _rank(0, 2, free_port(), ["gossip", "--rounds", "2"])
    _, err = rank0.communicate(timeout=120)
    assert rank0.returncode == 1 and "Traceback" not in err, err
    line = err.strip().splitlines()[-1]
    assert "rank 0 of 2" in line and "did not form within --timeout=4 s" in line and "only 1 of 2 ranks joined" in line
