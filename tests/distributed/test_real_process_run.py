"""Notebook 05's real-process section runs off Run All's critical path (:class:`RealProcessRun`).

Pressing the button must show progress at once and return (the processes start in a background thread, so
Run All never waits for them); the comparison and the message view are filled in when the run finishes, and a
failure is shown in place. The last test runs it for real on two small processes and checks that the two
runtimes agree (the equivalence itself is tested in ``test_equivalence.py``).
"""

from __future__ import annotations

import threading
import time

from unlearnkit.viz.real_processes import RealProcessRun

FAKE = {"route": [0, 1, 0], "gossip_gap": 0.0, "walk_gap": 0.0,
        "timings": [{"runtime": "2 processes (gloo)", "wall s": 3.0}],
        "gossip_logs": [[], []], "walk_logs": [[], []],
        "visits": {"from the route": [0, 1], "from the messages": [0, 1]}}


def test_start_returns_at_once_and_fills_in_when_done():
    gate = threading.Event()

    def slow_runner(n, **kw):
        gate.wait(10)
        return FAKE

    run = RealProcessRun(2, runner=slow_runner)
    assert "not started" in run.status.value and run.result is None   # Run All starts nothing
    t0 = time.perf_counter()
    run.run_button.click()
    assert time.perf_counter() - t0 < 0.1                              # progress in place within 100 ms
    assert run.running and run.status.value.startswith("starting 2 processes")
    assert run.run_button.disabled
    run.run_button.click()                                             # a second press while running: no-op
    gate.set()
    assert run.wait(10) is FAKE and not run.running
    assert "same numbers" in run.summary.value and "route: [0, 1, 0]" in run.messages.value
    assert run.status.value.startswith("done in") and not run.run_button.disabled and run.last_error is None


def test_a_failure_is_shown_in_place():
    def broken(n, **kw):
        raise RuntimeError("rank 1 died")

    run = RealProcessRun(2, runner=broken)
    run.start()
    assert run.wait(10) is None
    assert "rank 1 died" in run.last_error and "failed" in run.status.value and not run.run_button.disabled


def test_two_real_processes_agree_with_the_simulator():
    run = RealProcessRun(2, dim=8, rounds=3, hops=6, u=0, p=0.3, sigma=0.5, seed=0)
    run.start()
    res = run.wait(240)
    assert run.last_error is None and res is not None
    assert res["gossip_gap"] < 1e-10 and res["walk_gap"] < 1e-10
    assert res["visits"]["from the route"] == res["visits"]["from the messages"]
    assert "same numbers" in run.summary.value
