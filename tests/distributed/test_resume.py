"""A walk that crashes mid-way resumes from its last checkpoint and ends where the uninterrupted walk ends; the
message logs feed RR-DU's per-client ledger with the same counts as the planned route.

Two process groups of two ranks (start-up dominates: a few seconds per rank): one that crashes at hop 13
(checkpoints every 5 hops), one that runs the resumed walk, the uninterrupted walk and the plain walk in turn.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unlearnkit.distributed import DistributedRunError, spawn
from unlearnkit.distributed.tasks import QuadraticHop, run_sequence, walk_reference, walk_task
from unlearnkit.distributed.ledger_feed import observer_visits, route_from_messages
from unlearnkit.distributed.resume import latest_checkpoint, resumable_walk_task
from unlearnkit.graphs import rrdu_route
from unlearnkit.methods.rrdu.ledger import SoundObserverLedger

N, DIM, SEED, U, CRASH_AT, EVERY = 2, 6, 11, 0, 13, 5
ROUTE = rrdu_route(N, U, 0.4, 24, rng=np.random.default_rng(SEED)).tolist()
HOP = QuadraticHop(seed=SEED, dim=DIM, lr=0.3, sigma=0.7, noisy=(0, 1))   # two ranks draw noise


class _CrashAt(QuadraticHop):
    def __call__(self, t, node, theta, generator):
        if t == CRASH_AT:
            raise RuntimeError(f"rank {node} dies at hop {t} on purpose")
        return super().__call__(t, node, theta, generator)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    crashed, fresh = tmp_path_factory.mktemp("crashed"), tmp_path_factory.mktemp("fresh")
    crash_hop = _CrashAt(seed=SEED, dim=DIM, lr=0.3, sigma=0.7, noisy=(0, 1))
    with pytest.raises(DistributedRunError, match=f"dies at hop {CRASH_AT}") as err:
        spawn(resumable_walk_task, N, ROUTE, crash_hop, str(crashed), EVERY, seed=SEED, timeout=120,
              comm_timeout=60)
    newest = [latest_checkpoint(crashed, r) for r in range(N)]
    torch.save({}, fresh / "rank0-hop00000099.pt")          # a stale file of an earlier run: a fresh walk drops it
    calls = [(resumable_walk_task, (ROUTE, HOP, str(crashed)), {"every": EVERY, "resume": True}),
             (resumable_walk_task, (ROUTE, HOP, str(fresh)), {"every": EVERY}),
             (walk_task, (ROUTE, HOP), {})]
    ranks = spawn(run_sequence, N, calls, seed=SEED, timeout=180, comm_timeout=60)
    return {"error": str(err.value), "newest": newest, "ranks": ranks,
            "fresh_newest": [latest_checkpoint(fresh, r) for r in range(N)]}


def _final(ranks, k):
    return next(r[k] for r in ranks if r[k]["final_holder"])


def test_the_crash_is_reported_with_the_rank_and_the_checkpoints_survive(runs):
    assert f"ranks [{ROUTE[CRASH_AT]}]" in runs["error"]
    assert runs["newest"] == [10] * N                   # the last multiple of 5 before hop 13
    assert runs["fresh_newest"] == [20] * N             # 24 hops: checkpoints 5, 10, 15, 20; only the last kept


def test_resumed_walk_ends_at_the_uninterrupted_parameters(runs):
    resumed, straight, plain = (_final(runs["ranks"], k)["theta"] for k in range(3))
    ref = walk_reference(ROUTE, HOP, N, seed=SEED)
    assert torch.abs(resumed - straight).max() < 1e-10
    assert torch.abs(resumed - ref).max() < 1e-10 and torch.abs(plain - ref).max() < 1e-10
    assert torch.abs(ref - walk_reference(ROUTE, QuadraticHop(seed=SEED, dim=DIM, lr=0.3), N, seed=SEED)).max() > 1e-3


def test_resumed_logs_and_hops_equal_the_uninterrupted_ones(runs):
    def strip(rows):
        return [{k: v for k, v in m.items() if k != "time"} for m in rows]

    for r in runs["ranks"]:
        assert strip(r[0]["log"]) == strip(r[1]["log"]) and r[0]["hops"] == r[1]["hops"]
        assert r[1]["hops"] == [t for t, v in enumerate(ROUTE) if v == r[1]["rank"]]


@pytest.mark.parametrize("k", [0, 2], ids=["resumed", "plain"])
def test_ledger_counts_from_the_messages_equal_the_routes(runs, k):
    logs = [r[k]["log"] for r in runs["ranks"]]
    planned = SoundObserverLedger(ROUTE, n_clients=N, u=U, sigma=0.7, sensitivity=1.0, train_rho=0.1)
    rebuilt = route_from_messages([m for rows in logs for m in rows])
    np.testing.assert_array_equal(rebuilt, ROUTE)
    from_msgs = SoundObserverLedger(rebuilt, n_clients=N, u=U, sigma=0.7, sensitivity=1.0, train_rho=0.1)
    np.testing.assert_array_equal(from_msgs.visits_seen, planned.visits_seen)
    np.testing.assert_array_equal(observer_visits(logs, U), planned.visits_seen)
    assert planned.visits_seen.max() > 0                    # the counts are not trivially zero


def test_route_from_messages_rejects_a_token_from_a_rank_that_did_not_hold_it():
    rows = [dict(kind="token", direction="send", src=0, dst=1, step=1, nbytes=8, time=0.0),
            dict(kind="token", direction="send", src=2, dst=0, step=2, nbytes=8, time=0.0),
            dict(kind="stop", direction="send", src=0, dst=1, step=2, nbytes=16, time=0.0)]
    with pytest.raises(ValueError, match="hop 2: rank 2 sent the token but rank 1 held it"):
        route_from_messages(rows)


def test_token_sgd_hop_state_round_trips_and_the_worker_takes_checkpoint_options():
    from unlearnkit.distributed.token_sgd import TokenSGDHop
    from unlearnkit.distributed.run import parse_args

    hop = TokenSGDHop(seed=5, n_clients=2, batch_size=4)
    assert hop.rank_state(1) is None                         # no hop at client 1 yet: nothing to keep
    theta = hop(0, 1, hop.init())
    saved = hop.rank_state(1)
    a = hop(1, 1, theta)
    hop.load_rank_state(1, saved)
    b = hop(1, 1, theta)
    assert torch.equal(a, b)                                 # the same minibatch after the restore
    args = parse_args(["walk", "--checkpoint-dir", "ck", "--every", "3", "--resume"])
    assert str(args.checkpoint_dir) == "ck" and args.every == 3 and args.resume


@pytest.mark.slow
def test_torchrun_walk_resumes_from_its_checkpoint_folder(tmp_path):
    """The shell form: a finished walk leaves its last checkpoint; ``--resume`` replays from it to the same end."""
    from unlearnkit.distributed import launch_torchrun

    base = ["walk", "--hops", "12", "--dim", "4", "--route-kind", "rrdu", "--u", "0", "--sigma", "0.5",
            "--checkpoint-dir", str(tmp_path / "ck"), "--every", "5"]
    launch_torchrun(2, [*base, "--out", str(tmp_path / "a")], timeout=180)
    assert latest_checkpoint(tmp_path / "ck", 0) == 10
    launch_torchrun(2, [*base, "--resume", "--out", str(tmp_path / "b")], timeout=180)

    def final(folder):
        res = [torch.load(folder / f"rank{r}.pt", weights_only=False) for r in range(2)]
        return next(x for x in res if x["final_holder"])

    a, b = final(tmp_path / "a"), final(tmp_path / "b")
    assert torch.abs(a["theta"] - b["theta"]).max() < 1e-10 and a["rank"] == b["rank"]
    assert b["hops"] == a["hops"]
