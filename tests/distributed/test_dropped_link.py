"""A link that stops delivering (the peer is alive but silent) is reported by the waiting rank after the process
group's timeout: an error naming the rank and the timeout, never a hang."""

from __future__ import annotations

import time

import pytest

from unlearnkit.distributed import DistributedRunError, spawn
from unlearnkit.distributed.seeds import initial_vector
from unlearnkit.graphs import mixing_matrix
from unlearnkit.graphs.topology import ring


def _silent_peer(net):
    """Rank 1 never sends (its link is down); rank 0 runs a gossip round and waits for rank 1's vector."""
    if net.rank == 1:
        time.sleep(120)
        return None
    return net.gossip_round(initial_vector(0, 0, 4), mixing_matrix(ring(2)))


def test_a_silent_link_times_out_on_the_waiting_rank():
    start = time.monotonic()
    with pytest.raises(DistributedRunError, match=r"(?s)ranks \[0\].*(?i:timed out|timeout)"):
        spawn(_silent_peer, 2, timeout=100, comm_timeout=3)
    assert time.monotonic() - start < 90          # reported by rank 0's 3 s timeout, not the 100 s wall clock
