"""A failing or stuck rank is reported, never a hang: the launcher stops every rank and names the culprit."""

from __future__ import annotations

import time

import pytest

from unlearnkit.distributed import DistributedRunError, spawn
from unlearnkit.distributed.tasks import walk_task, QuadraticHop


class _CrashAtClient1(QuadraticHop):
    def __call__(self, t, node, theta, generator):
        if node == 1:
            raise RuntimeError("rank 1 crashed on purpose")
        return super().__call__(t, node, theta, generator)


def test_a_rank_that_dies_mid_walk_is_reported_quickly():
    """Rank 0 takes hop 0 and passes the token; rank 1 dies at hop 1 while rank 0 waits to receive."""
    start = time.monotonic()
    with pytest.raises(DistributedRunError, match=r"(?s)ranks \[1\].*crashed on purpose"):
        spawn(walk_task, 2, [0, 1, 0], _CrashAtClient1(seed=0, dim=4), timeout=120, comm_timeout=60)
    # stopped as soon as rank 1 failed, not after rank 0's 60 s communication timeout
    assert time.monotonic() - start < 100


def _sleeps(net):
    time.sleep(600)


@pytest.mark.slow
def test_a_stuck_run_hits_the_wall_clock_timeout():
    start = time.monotonic()
    with pytest.raises(DistributedRunError, match="timeout"):
        spawn(_sleeps, 2, timeout=40)
    assert time.monotonic() - start < 60
