"""Four real ranks (gloo) against the one-process simulator, under the same seed.

One process group runs every check's task (:func:`unlearnkit.distributed.run_sequence`), shared with the
other modules of this folder (``_ranks.py``), so the start-up (a few seconds per rank on an idle machine) is
paid once.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unlearnkit.decentral.gossip import simulate_averaging
import unlearnkit as uk
from unlearnkit.data import load, partition
from unlearnkit.decentral import TokenConfig, run_token
from unlearnkit.distributed.tasks import QuadraticHop, gossip_averaging, walk_reference, walk_task
from unlearnkit.distributed.token_sgd import TokenSGDHop, token_sgd_task
from unlearnkit.distributed.seeds import initial_vector
from unlearnkit.graphs import make_schedule, rrdu_route
from unlearnkit.graphs.topology import ring

from _ranks import N, SEED, register, results

DIM, ROUNDS = 16, 6
FIXED_ROUTE = [0, 1, 1, 3, 0, 0, 1, 3, 3, 0]            # stays, returns, and client 2 never visited
NOISY_HOP = QuadraticHop(seed=SEED, dim=DIM, lr=0.3, sigma=0.5, noisy=(0,))
RRDU_ROUTE = rrdu_route(N, 0, 0.4, 25, rng=np.random.default_rng(SEED)).tolist()
SCHEDULE = make_schedule("random_k_out", N, seed=SEED, k=1)
SGD_HOP = TokenSGDHop(seed=SEED, n_clients=N, lr=0.3, batch_size=8)
SGD_ROUTE = [2, 0, 0, 1, 2, 3, 0]


register(__name__, [(gossip_averaging, (ring(N), ROUNDS, DIM), {}),
                     (gossip_averaging, (SCHEDULE, ROUNDS, DIM), {}),
                     (walk_task, (FIXED_ROUTE, NOISY_HOP), {}),
                     (walk_task, (RRDU_ROUTE, NOISY_HOP), {}),
                     (token_sgd_task, (SGD_ROUTE, SGD_HOP), {})])


@pytest.fixture(scope="module")
def ranks():
    return results(__name__)


def _X0() -> np.ndarray:
    return torch.stack([initial_vector(SEED, r, DIM) for r in range(N)]).numpy()


def test_each_rank_starts_from_its_own_seeded_vector(ranks):
    got = np.stack([r[0]["x0"].numpy() for r in ranks])
    np.testing.assert_array_equal(got, _X0())


@pytest.mark.parametrize("which, network", [(0, ring(N)), (1, SCHEDULE)], ids=["ring", "dynamic"])
def test_gossip_equals_W_power_R_times_X(ranks, which, network):
    ref = simulate_averaging(network, _X0(), ROUNDS)[-1]
    got = np.stack([r[which]["x"].numpy() for r in ranks])
    assert np.abs(got - ref).max() < 1e-12
    assert got.mean(0) == pytest.approx(_X0().mean(0), abs=1e-12)   # W doubly stochastic: mean kept


def test_gossip_log_has_one_message_per_edge_direction_and_round(ranks):
    for r in ranks:
        sent = [m for m in r[0]["log"] if m["direction"] == "send"]
        assert len(sent) == 2 * ROUNDS                     # a ring: two neighbours, every round
        assert {m["dst"] for m in sent} == {(r[0]["rank"] + 1) % N, (r[0]["rank"] - 1) % N}
        assert all(m["nbytes"] == DIM * 8 and m["kind"] == "gossip" for m in sent)


@pytest.mark.parametrize("which, route", [(2, FIXED_ROUTE), (3, RRDU_ROUTE)], ids=["fixed", "rrdu"])
def test_walk_matches_the_one_process_walk(ranks, which, route):
    results = [r[which] for r in ranks]
    final = [res for res in results if res["final_holder"]]
    assert len(final) == 1 and final[0]["rank"] == route[-1]
    ref = walk_reference(route, NOISY_HOP, N, seed=SEED)
    assert torch.abs(final[0]["theta"] - ref).max() < 1e-12
    for res in results:                                    # every rank handled exactly its own hops
        assert res["hops"] == [t for t, v in enumerate(route) if v == res["rank"]]
        assert (res["theta"] is None) == (not res["final_holder"])


def test_walk_log_sends_one_token_per_move_and_stops_everyone(ranks):
    logs = [m for r in ranks for m in r[2]["log"] if m["direction"] == "send"]
    moves = [(a, b) for a, b in zip(FIXED_ROUTE, FIXED_ROUTE[1:]) if a != b]
    tokens = sorted((m["src"], m["dst"]) for m in logs if m["kind"] == "token")
    assert tokens == sorted(moves)
    stops = [m for m in logs if m["kind"] == "stop"]
    assert sorted(m["dst"] for m in stops) == [v for v in range(N) if v != FIXED_ROUTE[-1]]
    assert {m["src"] for m in stops} == {FIXED_ROUTE[-1]}


def test_noise_comes_from_the_holders_generator(ranks):
    """Without noise the walk is a different model: the noise really is drawn, and drawn identically."""
    quiet = QuadraticHop(seed=SEED, dim=DIM, lr=0.3, sigma=0.0)
    final = next(r[2] for r in ranks if r[2]["final_holder"])
    assert torch.abs(final["theta"] - walk_reference(FIXED_ROUTE, quiet, N, seed=SEED)).max() > 1e-3


def test_token_sgd_on_real_data_equals_the_simulators_run_token(ranks):
    """Algorithm 2 on digits: each rank loads only its own client's data; the simulator's ``run_token`` with
    the same hop rule (per-client minibatch streams) ends at the same parameters."""
    final = next(r[4] for r in ranks if r[4]["final_holder"])
    ds = load("digits", device="cpu")
    st = run_token(SGD_HOP._flat()[0], partition(ds, N, seed=SEED), SGD_ROUTE, TokenConfig(lr=0.3),
                   generator=uk.make_generator(0), init=SGD_HOP.init(), hop_rule=SGD_HOP.as_hop_rule())
    assert torch.abs(final["theta"] - st.params).max() < 1e-10
    assert [row["node"] for row in st.history] == SGD_ROUTE
    for r in ranks:
        assert r[4]["clients_loaded"] == ([r[4]["rank"]] if r[4]["rank"] in SGD_ROUTE else [])
