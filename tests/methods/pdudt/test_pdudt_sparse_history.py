"""PDUDT's history as CSR matrices: the round-by-round sparse correction gives the dense stack's numbers to 1e-12,
and a network of 2 x 10^5 clients trains, caches its history and unlearns without an N x N array."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from unlearnkit import graphs
from unlearnkit.core import Request
from unlearnkit.data.datasets import load
from unlearnkit.data.federated import partition
from unlearnkit.decentral.correction import (CORRECTION_SCALES, RETRAIN_RULES, history_correction,
                                             sparse_history_correction)
from unlearnkit.decentral.gradient_gossip import GradientGossipConfig, HistoryCache, run_gradient_gossip
from unlearnkit.graphs.dynamic import ErdosRenyiSchedule
from unlearnkit.methods.pdudt.algorithm import PDUDT, PDUDTConfig, measured_rho
from unlearnkit.methods.pdudt.sound import GossipSmoothness
from unlearnkit.models import FlatParams, make_model
from unlearnkit.runtime import make_generator

N, ROUNDS, LR = 8, 10, 0.3


def _float64_run(n: int, network, rounds: int, *, n_train: int, cache: str = "history"):
    ds = load("synthetic", n_train=n_train, n_test=20, dim=4, seed=0, device="cpu")
    ds = ds.__class__(ds.name, ds.x_train.double(), ds.y_train, ds.x_test.double(), ds.y_test, ds.n_classes,
                      ds.input_shape, ds.info)   # float64 end to end: the paths agree to 1e-12
    fed = partition(ds, n, seed=0)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, generator=make_generator(0)).double(),
                      loss="logistic")
    cfg = GradientGossipConfig(rounds=rounds, lr=LR, batch_size=4, cache=cache)
    return fed, run_gradient_gossip(flat, fed, network, cfg, generator=make_generator(3),
                                    init=flat.init().double())


@pytest.fixture(scope="module")
def state():
    return _float64_run(N, ErdosRenyiSchedule(N, 0.5, seed=1), ROUNDS, n_train=160)


def _both(st, fed, cfg, k=2):
    req = Request("client", np.asarray(fed.client_indices[k]), client=k)
    cache = st.extras["history"]
    out = []
    for dense_max in (HistoryCache.dense_max, 0):
        cache.dense_max = dense_max
        out.append(PDUDT().unlearn(st, req, cfg, generator=make_generator(0)))
    del cache.dense_max  # back to the class default
    return out


def test_history_is_stored_sparse_and_densifies_back(state):
    _, st = state
    cache = st.extras["history"]
    assert cache.dense and all(sp.issparse(w) for w in cache.W_sparse) and cache.W.shape == (ROUNDS, N, N)
    for w, Wd in zip(cache.W_sparse, cache.W):
        assert np.array_equal(w.toarray(), Wd.numpy())


@pytest.mark.parametrize("rule", RETRAIN_RULES)
@pytest.mark.parametrize("scale", CORRECTION_SCALES)
@pytest.mark.parametrize("when", [{}, {"t_unlearn": 7}, {"es_rounds": 4}])
def test_sparse_history_unlearns_like_the_dense_stack(state, rule, scale, when):
    fed, st = state
    a, b = _both(st, fed, PDUDTConfig(retrain_rule=rule, correction_scale=scale, sigma=0.0, **when))
    assert a.params.dtype == torch.float64
    assert torch.abs(a.params - b.params).max() < 1e-12
    assert torch.abs(a.extras["correction"] - b.extras["correction"]).max() < 1e-12
    if scale != "none":
        assert a.extras["correction"].abs().max() > 1e-4
        for key in ("delta_norms", "p"):
            assert torch.abs(a.extras[key] - b.extras[key]).max() < 1e-12
    assert a.extras["vector_ops"] == b.extras["vector_ops"]


@pytest.mark.parametrize("rule", RETRAIN_RULES)
def test_sparse_history_certificates_match_dense(state, rule):
    fed, st = state
    smooth = GossipSmoothness.softmax_regression(3.0)
    for scale in ("sum", "paper"):
        cfg = PDUDTConfig(retrain_rule=rule, correction_scale=scale, noise="certified", mode="sound",
                            smoothness=smooth, epsilon=2.0)
        a, b = _both(st, fed, cfg)
        assert a.certificate.sigma > 0
        assert a.certificate.sigma == pytest.approx(b.certificate.sigma, rel=1e-12, abs=0)
    cache = st.extras["history"]
    dense = measured_rho(cache.W, 2, rule)
    assert np.allclose(measured_rho(cache.W_sparse, 2, rule), dense, rtol=0, atol=1e-12) and dense[1] > 0


def test_sparse_history_correction_equals_dense_function(state):
    _, st = state
    cache = st.extras["history"]
    for scale in ("paper", "sum"):
        want, delta, p = history_correction(cache.W, cache.grads, 5, LR, scale=scale, es_rounds=6)
        got, norms, p2 = sparse_history_correction(cache.W_sparse, cache.grads, 5, LR, scale=scale, es_rounds=6)
        assert torch.abs(got - want).max() < 1e-12 and torch.abs(p2 - p).max() < 1e-12
        assert torch.abs(norms - delta.norm(dim=-1)).max() < 1e-12


def test_200k_clients_train_cache_and_unlearn_without_an_n_by_n_array():
    n, rounds = 200_000, 2
    tracemalloc.start()
    W = graphs.sparse_mixing_matrix(graphs.edge_list("ring", n), n)
    fed, st = _float64_run(n, W, rounds, n_train=2 * n)
    cache = st.extras["history"]
    assert not cache.dense and cache.rounds == rounds
    res = PDUDT().unlearn(st, Request("client", np.asarray(fed.client_indices[7]), client=7),
                            PDUDTConfig(correction_scale="sum", sigma=0.0), generator=make_generator(0))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert res.params.shape == (n - 1, st.params.shape[1])
    moved = torch.nonzero(res.extras["correction"].abs().sum(1) > 0).ravel().tolist()
    # rows of the n - 1 remaining clients: the leaver's ring neighbours 6 and 8 (rows 6 and 7) and theirs
    assert {6, 7} <= set(moved) <= {4, 5, 6, 7, 8, 9}
    # the history's CSR arrays: about 3 entries a client a round, 12 bytes each (a dense W: 320 GB a round)
    assert cache.memory_bytes < rounds * (n * st.params.shape[1] * 8 + 3 * n * 12 + 4 * (n + 1)) + 1
    assert peak < 600 * 2**20, f"traced peak {peak / 2**20:.0f} MiB"
    with pytest.raises(ValueError, match="W_sparse"):
        cache.W
