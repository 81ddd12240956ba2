"""``bench distributed`` on a tiny configuration: two ranks, small d (one process-group start-up)."""

from __future__ import annotations

import math

import pytest

from unlearnkit.benchmarks import available_benches
from unlearnkit.distributed.timing import compare_runtimes, message_table, pick_backend, ring_route


def test_the_bench_is_registered():
    assert "distributed" in available_benches()


def test_compare_runtimes_two_ranks_small_d():
    rows = compare_runtimes(2, (8, 64), rounds=3, hops=4, seed=3, backend="gloo", timeout=120)
    assert [r["d"] for r in rows] == [8, 64]
    for r in rows:
        assert r["ranks"] == 2 and r["backend"] == "gloo"
        for k in ("gossip_ms", "sim_gossip_ms", "hop_ms", "sim_hop_ms"):
            assert r[k] > 0 and math.isfinite(r[k]), k
        assert 50 < r["peak_rss_mb"] < 4000                  # a rank is torch in a fresh process
        assert r["max_abs_diff"] < 1e-12                     # the ranks computed W^R X


def test_helpers():
    assert ring_route(3, 5) == [0, 1, 2, 0, 1]
    assert pick_backend(10**6) == "gloo"                     # never a GPU per rank for a million ranks
    with pytest.raises(ValueError, match="n_ranks"):
        compare_runtimes(1)
    rows = [{"kind": "token", "time": 10.0}, {"kind": "stop", "time": 10.002}]
    assert [r["t_ms"] for r in message_table(rows)] == [0.0, 2.0]


def test_raw_probe_rows_beside_the_runtime():
    from unlearnkit.benchmarks.distributed import probe_rows

    rows = probe_rows(2, (8, 64), rounds=3, hops=4, seed=3, timeout=120)
    for r in rows:
        for k in ("gossip_ms", "probe_gossip_ms", "hop_ms", "probe_hop_ms", "gossip_over_probe", "hop_over_probe",
                  "synced_gossip_ms", "synced_over_probe"):
            assert r[k] > 0 and math.isfinite(r[k]), k
        assert r["max_abs_diff"] < 1e-12
