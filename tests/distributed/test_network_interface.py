"""The shared network interface: the same algorithm code on 4 gloo ranks and on the in-process network.

Each task of :mod:`unlearnkit.decentral.network_steps` runs twice under one seed: on a
:class:`~unlearnkit.decentral.SimulatedNetwork` (every client in one ``(N, d)`` block) and on 4 real ranks
(:class:`~unlearnkit.distributed.ProcessGroupNetwork`, each holding one client's data and model). One
process group runs every task, shared with ``test_equivalence.py`` (``_ranks.py``), so the start-up is paid once.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit.decentral import GossipConfig, GradientGossipConfig, SimulatedNetwork, run_gossip, run_gradient_gossip
from unlearnkit.decentral._engine import ClientSampler
from unlearnkit.decentral.network_steps import LocalProblem, dpsgd_rounds, gradient_gossip_rounds
from unlearnkit.decentral.network import Network
from unlearnkit.decentral.network_steps import (dpsgd_task, flooded_correction, gradient_gossip_task, local_newton_step,
                                               newton_flood_task)
from unlearnkit.distributed import ProcessGroupNetwork
from unlearnkit.distributed.seeds import STREAMS, initial_vector, rank_generator
from unlearnkit.distributed.tasks import QuadraticHop, flood_task, walk_reference
from unlearnkit.graphs import edge_list, flood, make_schedule, sparse_mixing_matrix
from unlearnkit.graphs.topology import ring

from _ranks import N, SEED, register, results

ROUNDS = 4
# the synthetic task keeps scikit-learn out of the ranks (digits would add seconds of imports per rank)
PROBLEM = LocalProblem(seed=SEED, n_clients=N, dataset="synthetic", batch_size=8)
PROBLEM_WD = LocalProblem(seed=SEED, n_clients=N, dataset="synthetic", batch_size=8, weight_decay=1e-2)
SCHEDULE = make_schedule("random_k_out", N, seed=SEED, k=1)      # PDUDT: new neighbour sets every round
CHORDED = ring(N)
CHORDED.add_edge(0, 2)                                            # a cycle, so the flood carries duplicates
SPARSE_RING = sparse_mixing_matrix(edge_list("ring", N), N)
REQUESTS = {1: [0, 1, 2], 3: [4, 7]}                              # client -> its own samples to forget

TASKS = {
    "dpsgd_local": (dpsgd_task, (PROBLEM, ring(N), ROUNDS, 0.2), {"local_steps": 3}),
    "dpsgd_atc": (dpsgd_task, (PROBLEM, CHORDED, ROUNDS, 0.2), {"local_steps": 2, "order": "atc"}),
    "pdudt": (gradient_gossip_task, (PROBLEM, SCHEDULE, ROUNDS, 0.1), {"leavers": (1, 2)}),
    "pdudt_local": (gradient_gossip_task, (PROBLEM, SCHEDULE, ROUNDS, 0.1), {"local_steps": 2}),
    # a scipy.sparse W: each rank reads its own row and column, never an N x N array
    "pdudt_sparse": (gradient_gossip_task, (PROBLEM, SPARSE_RING, ROUNDS, 0.1), {"leavers": (1, 2)}),
    "newton": (newton_flood_task, (PROBLEM_WD, CHORDED, 2, 0.2, REQUESTS), {"sigma": 0.05}),
}
NAMES = list(TASKS)
DIM = 5
FLOODS = [dict(sources=[2, 0], reduce="sum"), dict(sources=None, reduce="mean"), dict(sources=[3, 1], reduce="stack")]
register(__name__, list(TASKS.values()) + [(flood_task, (CHORDED, DIM), kw) for kw in FLOODS])


@pytest.fixture(scope="module")
def ranks():
    return results(__name__)


def _simulated(name: str, **override) -> dict:
    fn, args, kwargs = TASKS[name]
    return fn(SimulatedNetwork(N, seed=SEED), *args, **{**kwargs, **override})


def _stacked(ranks, name: str, key: str = "theta") -> torch.Tensor:
    i = NAMES.index(name)
    assert [r[i]["clients"] for r in ranks] == [(v,) for v in range(N)]
    return torch.cat([r[i][key] for r in ranks])


def _sends(ranks, name: str, kind: str) -> int:
    i = NAMES.index(name)
    return sum(1 for r in ranks for m in r[i]["log"] if m["direction"] == "send" and m["kind"] == kind)


def test_both_runtimes_satisfy_the_protocol():
    assert isinstance(SimulatedNetwork(N), Network)
    assert all(hasattr(ProcessGroupNetwork, m) for m in ("gossip_round", "walk", "flood", "generator", "clients"))


def test_simulated_generators_are_the_ranks_generators():
    net = SimulatedNetwork(N, seed=SEED)
    for v in range(N):
        for stream in STREAMS:
            a = torch.randn(4, generator=net.generator(v, stream), dtype=torch.float64)
            b = torch.randn(4, generator=rank_generator(SEED, v, stream), dtype=torch.float64)
            assert torch.equal(a, b), (v, stream)


@pytest.mark.parametrize("name", NAMES)
def test_ranks_equal_the_simulated_network(ranks, name):
    sim = _simulated(name)
    got = _stacked(ranks, name)
    assert got.dtype == torch.float64 and got.shape == sim["theta"].shape
    assert torch.abs(got - sim["theta"]).max() < 1e-10
    kind = "flood" if name == "newton" else "gossip"
    assert _sends(ranks, name, kind) == sim["counts"][kind]      # the same messages, counted alike
    if name.startswith("pdudt"):                                 # each client's Eq. (8) normaliser, from its inbox
        assert torch.abs(_stacked(ranks, name, "A") - sim["A"]).max() < 1e-10
    if name in ("pdudt", "pdudt_sparse"):                        # PDUDT's sums and Eq. (9) step, per client
        i = NAMES.index(name)
        for key in ("S", "D"):
            got_k = torch.cat([r[i][key] for r in ranks], dim=1)
            assert got_k.shape == sim[key].shape and torch.abs(got_k - sim[key]).max() < 1e-10
            assert sim[key].abs().max() > 1e-6
        assert torch.abs(_stacked(ranks, name, "unlearned") - sim["unlearned"]).max() < 1e-10


def test_each_rank_read_only_its_own_clients_samples(ranks):
    for i in range(len(TASKS)):
        assert [r[i]["data_read"] for r in ranks] == [[v] for v in range(N)]


def test_the_models_actually_moved(ranks):
    theta0 = PROBLEM.init()
    for name in NAMES:
        assert torch.abs(_stacked(ranks, name) - theta0).max() > 1e-3, name


def test_flood_messages_follow_algorithm_1(ranks):
    """Per requester, the sends over all ranks are 2|E| - (N - 1) (graphs.flood's count), and every client
    applied both corrections with weight 1/N: x_new - x_trained is the same vector on every client."""
    assert _sends(ranks, "newton", "flood") == sum(flood(CHORDED, c).messages for c in REQUESTS)
    assert sum(flood(CHORDED, c).duplicates for c in REQUESTS) > 0
    moved = _stacked(ranks, "newton") - _stacked(ranks, "newton", "trained")
    assert torch.abs(moved - moved[0]).max() < 1e-12 and moved.norm() > 0
    corr = _stacked(ranks, "newton", "corrections")
    assert [bool(corr[v].abs().sum() > 0) for v in range(N)] == [v in REQUESTS for v in range(N)]


@pytest.mark.parametrize("j", range(len(FLOODS)), ids=[f["reduce"] for f in FLOODS])
def test_flood_delivers_what_the_simulated_flood_delivers(ranks, j):
    kw = FLOODS[j]
    X0 = torch.stack([initial_vector(SEED, v, DIM) for v in range(N)])
    net = SimulatedNetwork(N, seed=SEED)
    ref = net.flood(X0, CHORDED, **kw)
    got = torch.stack([r[len(TASKS) + j]["x"] for r in ranks])
    assert got.shape == ref.shape and torch.abs(got - ref).max() < 1e-12
    sends = sum(1 for r in ranks for m in r[len(TASKS) + j]["log"] if m["direction"] == "send")
    assert sends == net.counts["flood"]


def test_flood_noise_is_drawn_at_the_requesters(ranks):
    quiet = _simulated("newton", sigma=0.0)
    noisy = _stacked(ranks, "newton")
    assert torch.abs(noisy - quiet["theta"]).max() > 1e-3
    # without noise the delivered total is exactly (1/N) * (sum of the requesters' own corrections)
    expect = quiet["trained"] + quiet["corrections"].sum(0) / N
    assert torch.abs(quiet["theta"] - expect).max() < 1e-12


def test_simulated_network_reproduces_todays_simulators():
    """With the simulators' shared-generator sampler the interface code gives run_gossip's and
    run_gradient_gossip's numbers exactly (the simulated runtime changes nothing)."""
    flat = PROBLEM.flat()
    _, ds, idx = PROBLEM._loaded()
    ds64 = ds.__class__(ds.name, ds.x_train.double(), ds.y_train, ds.x_test.double(), ds.y_test, ds.n_classes,
                        ds.input_shape, ds.info)
    fed = uk.data.Federation(ds64, tuple(idx), "iid")
    start = flat.init().expand(N, -1).clone()
    cfg = GossipConfig(rounds=3, lr=0.2, batch_size=8, local_steps=2)
    ref = run_gossip(flat, fed, ring(N), cfg, generator=uk.make_generator(1))
    smp = ClientSampler(ds64, idx, 8, generator=uk.make_generator(1))
    net = SimulatedNetwork(N)
    got = dpsgd_rounds(net, flat, start, lambda: smp.sample()[:2], ring(N), rounds=3, lr=0.2, local_steps=2)
    assert torch.equal(got, ref.params) and net.counts["gossip"] == ref.cost.messages
    gcfg = GradientGossipConfig(rounds=3, lr=0.1, batch_size=8, cache="running")
    ref = run_gradient_gossip(flat, fed, SCHEDULE, gcfg, generator=uk.make_generator(1))
    for leavers in ((), (0, 2)):
        smp = ClientSampler(ds64, idx, 8, generator=uk.make_generator(1))
        got, sums = gradient_gossip_rounds(SimulatedNetwork(N), flat, start, lambda: smp.sample()[:2], SCHEDULE,
                                           rounds=3, lr=0.1, leavers=leavers)
        assert torch.equal(got, ref.params) and torch.allclose(sums.A, ref.extras["running"].A, rtol=0, atol=1e-12)
        for k in leavers:                                    # the per-client sums give RunningSumCache's correction
            for scale in ("paper", "sum"):
                want = ref.extras["running"].correction(k, scale=scale)
                assert torch.abs(sums.correction(k, scale=scale) - want).max() < 1e-12
                assert want.abs().max() > 1e-6


def test_simulated_walk_is_the_reference_walk():
    hop = QuadraticHop(seed=SEED, dim=6, lr=0.3, sigma=0.5, noisy=(0, 2))
    route = [0, 1, 1, 2, 0, 3, 2]
    net = SimulatedNetwork(N, seed=SEED)
    res = net.walk(route, torch.zeros(6, dtype=torch.float64), hop)
    assert torch.equal(res.theta, walk_reference(route, hop, N, seed=SEED))
    assert res.hops == {0: [0, 4], 1: [1, 2], 2: [3, 6], 3: [5]} and net.counts["token"] == 5


def test_simulated_network_names_bad_arguments():
    net = SimulatedNetwork(N)
    with pytest.raises(ValueError, match="block"):
        net.gossip_round(torch.zeros(3, 2), np.eye(N))
    with pytest.raises(ValueError, match="W has shape"):
        net.gossip_round(torch.zeros(N, 2), np.eye(3))
    with pytest.raises(ValueError, match="reduce"):
        net.flood(torch.zeros(N, 2), ring(N), reduce="max")
    with pytest.raises(ValueError, match="sources"):
        net.flood(torch.zeros(N, 2), ring(N), sources=[7])
    with pytest.raises(ValueError, match="stream"):
        net.generator(0, "oops")
    with pytest.raises(ValueError, match="route"):
        net.walk([0, 9], torch.zeros(2), lambda t, v, th, g: th)
    stacked = net.flood(torch.arange(8.0).reshape(N, 2), ring(N), sources=[3, 1], reduce="stack")
    assert stacked.shape == (N, 2, 2) and torch.equal(stacked[2], torch.tensor([[2.0, 3.0], [6.0, 7.0]]))


def test_flooded_newton_correction_is_the_newton_methods_step():
    """Without noise, the interface's Algorithm 1 (each requester's local Hessian step, flooded, 1/N at every
    client) gives the parameters of ``methods.newton.Newton`` (scope local, exact Hessian, release local)."""
    from unlearnkit.core import Request
    from unlearnkit.methods.newton import Newton, NewtonConfig
    from unlearnkit.methods.newton.training import train_dpsgd

    flat = PROBLEM_WD.flat()
    _, ds, idx = PROBLEM_WD._loaded()
    ds64 = ds.__class__(ds.name, ds.x_train.double(), ds.y_train, ds.x_test.double(), ds.y_test, ds.n_classes,
                        ds.input_shape, ds.info)
    fed = uk.data.Federation(ds64, tuple(idx), "iid")
    state = train_dpsgd(flat, fed, CHORDED, GossipConfig(rounds=3, lr=0.2, batch_size=8, weight_decay=1e-2),
                        generator=uk.make_generator(2))
    forget = np.concatenate([idx[c][REQUESTS[c]] for c in sorted(REQUESTS)])
    res = Newton().unlearn(state, Request("samples", forget), NewtonConfig(mode="none", sigma=0.0),
                           generator=uk.make_generator(3))
    X = state.params
    corr = torch.zeros_like(X)
    for c, local in REQUESTS.items():
        x, y = PROBLEM_WD.client_data(c)
        corr[c] = local_newton_step(flat, X[c], x, y, local, weight_decay=1e-2)
    net = SimulatedNetwork(N)
    got = flooded_correction(net, X, corr, CHORDED, sources=sorted(REQUESTS), weight=1 / N)
    assert torch.abs(got - res.params).max() < 1e-10 and torch.abs(got - X).max() > 1e-4
    assert net.counts["flood"] == sum(f.messages for f in res.extras["floods"].values())
