"""The noise-free Newton step is solved once per (world, request, step settings) and changes no number.

The step (Wu et al. 2026, Algorithm 1, eqs. 2-3; section IV-C, eq. 6) draws no randomness, so a stored step
is bitwise a fresh solve, and the generator's stream (noise, then the fine-tuning round) is the same: the
released parameters, the certificate and the counted cost must be identical with and without the cache.
"""

import numpy as np
import pytest
import torch

from unlearnkit import data
from unlearnkit.core import TrainedState
from unlearnkit.decentral.gossip import GossipConfig
from unlearnkit.graphs import make_graph
from unlearnkit.methods.newton import Newton, NewtonConfig
from unlearnkit.methods.newton.training import exact_minimizer
from unlearnkit.methods.newton.step_cache import clear_step_cache, step_cache_stats
from unlearnkit.models import FlatParams, logreg

LAM = 0.5


@pytest.fixture(scope="module")
def problem():
    ds = data.load("synthetic", n_train=160, n_test=80, dim=3, seed=1)
    ds = ds.with_train(ds.x_train.double(), ds.y_train)
    fed = data.partition(ds, 4, "iid", seed=0)
    flat = FlatParams(logreg(ds.input_shape, 1), loss="logistic")
    flat.module.double()
    parts = [(x.double(), y) for x, y in (fed.client_data(i) for i in range(4))]
    x_star = exact_minimizer(flat, parts, weight_decay=LAM)
    cfg = GossipConfig(rounds=1, lr=0.1, batch_size=8, weight_decay=LAM)
    state = TrainedState(flat=flat, params=x_star.expand(4, -1).clone(), dataset=ds,
                         train_indices=np.arange(ds.n_train), config=cfg, federation=fed, network=make_graph("ring", 4))
    return state, data.forget_samples(fed, 0, m=3, seed=1)


def _run(state, req, cfg, seed):
    return Newton().unlearn(state, req, cfg, generator=torch.Generator().manual_seed(seed))


CONFIGS = [
    dict(mode="sound", curvature="cg_hessian", scope="global", center_gradient=True, release="average",
         grad_tol=1e-6, cg_tol=1e-10),
    dict(mode="paper", curvature="hessian"),
    dict(mode="paper", curvature="cg_hessian", finetune_rounds=1),  # the generator feeds fine-tuning after the noise
]


@pytest.mark.parametrize("base", CONFIGS)
def test_cached_and_uncached_release_the_same_parameters(problem, base, monkeypatch):
    state, req = problem
    cfgs = [NewtonConfig(epsilon=e, **base) for e in (0.5, 2.0, 8.0)]
    monkeypatch.setenv("UNLEARNKIT_MEMO", "0")
    fresh = [_run(state, req, c, seed=7) for c in cfgs]
    monkeypatch.setenv("UNLEARNKIT_MEMO", "1")
    clear_step_cache()
    cached = [_run(state, req, c, seed=7) for c in cfgs]
    assert step_cache_stats() == {"hits": 2, "misses": 1, "entries": 1}  # one solve for three epsilons
    assert [r.extras["step_cached"] for r in cached] == [False, True, True]
    for a, b in zip(fresh, cached):
        assert torch.equal(a.params, b.params)
        assert torch.equal(a.extras["x_delta"][0], b.extras["x_delta"][0])
        assert a.certificate.to_dict() == b.certificate.to_dict()
        assert (a.cost.grad_evals, a.cost.messages) == (b.cost.grad_evals, b.cost.messages)
        assert b.cost.seconds > 0 and b.extras["parallel_seconds"] <= b.cost.seconds


def test_the_key_separates_worlds_requests_and_step_settings(problem):
    state, req = problem
    clear_step_cache()
    base = NewtonConfig(mode="paper", curvature="cg_hessian")
    r0 = _run(state, req, base, 0)
    r0.extras["x_delta"][0].mul_(0)  # a caller mutating what it got cannot reach the next caller
    r1 = _run(state, req, NewtonConfig(mode="paper", curvature="cg_hessian", epsilon=3.0), 0)
    assert r1.extras["step_cached"] and r1.extras["x_delta"][0].abs().sum() > 0
    # a different step setting, different parameters (changed in place) or request: fresh solves
    assert not _run(state, req, NewtonConfig(mode="paper", curvature="hessian"), 0).extras["step_cached"]
    moved = state.replace(params=state.params.clone())
    moved.params[0, 0] += 1e-3
    assert not _run(moved, req, base, 0).extras["step_cached"]
    other = data.forget_samples(state.federation, 0, m=4, seed=2)
    assert not _run(state, other, base, 0).extras["step_cached"]
    assert _run(state.replace(params=state.params.clone()), req, base, 0).extras["step_cached"]  # same content


def test_newton_frontier_rows_are_unchanged_by_the_cache(monkeypatch):
    """The notebook's frontier (one solve per mode now) reports exactly the rows of the uncached loop."""
    from unlearnkit.experiments.newton.frontier import FrontierSetting, frontier_world, newton_frontier

    w = frontier_world(FrontierSetting(rounds=5, n_clients=4))
    monkeypatch.setenv("UNLEARNKIT_MEMO", "0")
    fresh = newton_frontier((1.0, 16.0), world=w, draws=2)
    monkeypatch.setenv("UNLEARNKIT_MEMO", "1")
    clear_step_cache()
    cached = newton_frontier((1.0, 16.0), world=w, draws=2)
    assert step_cache_stats()["misses"] == 1  # the step ignores mode and epsilon: one solve for all 8 runs
    assert fresh == cached
