"""The coupled simulator (digest 003 Algorithm 6): the measured distance stays under the bound."""


import numpy as np
import pytest

from unlearnkit import toy
from unlearnkit.experiments.descend_rewind import coupled
from unlearnkit.constants import logistic_constants


def _digest_logistic(lam):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    s = np.where(X @ np.ones(5) + 0.3 * rng.standard_normal(200) > 0, 1.0, -1.0)
    return coupled.ArrayLogistic(X, s, lam)


@pytest.mark.parametrize("lam", [0.05, 0.0])
def test_monte_carlo_mean_below_psgd_bound(lam):
    prob = _digest_logistic(lam)
    c = logistic_constants(lam=lam, radius=5.0)
    for K in (0, 50, 150):
        run = coupled.simulate(prob, T=300, K=K, eta=0.5, b=8, forget=np.arange(10), w0=np.zeros(5), radius=5.0,
                               trials=60, seed=K, constants=c)
        assert run.mean_r2d_distance <= run.bound
    assert run.r2d.shape == (60, 151, 5)


def test_r2d_closer_to_retraining_than_original_strongly_convex():
    p = toy.make_toy("strongly_convex")
    run = coupled.simulate(p, T=300, K=100, eta=0.5, b=8, trials=50, constants=p.constants())
    assert run.mean_r2d_distance < 0.2 * run.mean_original_distance
    assert run.mean_r2d_distance <= run.bound
    full = coupled.simulate(p, T=100, K=100, eta=0.5, b=8, trials=5)
    assert np.all(full.r2d_gap[:, -1] == 0)  # K = T is exact retraining on the shared batches


def test_coupling_marginal_and_gap_shapes():
    rng = np.random.default_rng(0)
    idx, idx_r = coupled.coupled_batches(50, np.arange(5), steps=2000, b=4, trials=1, rng=rng)
    assert not np.isin(idx_r, np.arange(5)).any()
    same = idx == idx_r
    assert same.mean() == pytest.approx(0.9, abs=0.02)  # slots hit U with probability m/n
    counts = np.bincount(idx_r.ravel(), minlength=50)[5:]
    assert counts.min() > 0.75 * counts.mean()  # uniform on D'


def test_nonconvex_bound_is_vacuous_but_valid():
    p = toy.make_toy("nonconvex")
    run = coupled.simulate(p, T=200, K=50, eta=0.1, trials=20, constants=p.constants())
    assert run.bound > 1e6 * run.mean_r2d_distance


def test_bad_inputs():
    p = toy.make_toy("convex")
    with pytest.raises(ValueError, match="K"):
        coupled.simulate(p, T=10, K=11, eta=0.1)
    with pytest.raises(ValueError, match="regime"):
        toy.make_toy("concave")
