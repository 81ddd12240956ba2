"""PDUDT correction maths against the special cases of digest 002, section 2.7."""


import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from unlearnkit.decentral import correction as C
from unlearnkit.methods import pdudt as P


def random_history(T=6, n=6, d=5, p_edge=0.5, seed=0, isolate=None):
    import networkx as nx

    from unlearnkit.graphs.mixing import mixing_matrix

    rng = np.random.default_rng(seed)
    Ws = []
    for _ in range(T):
        a = np.triu(rng.random((n, n)) < p_edge, 1)
        if isolate is not None:
            a[isolate, :] = a[:, isolate] = False
        G = nx.Graph()
        G.add_nodes_from(range(n))
        G.add_edges_from(zip(*np.nonzero(a)))
        Ws.append(torch.as_tensor(mixing_matrix(G, "metropolis", require_connected=False)))
    W = torch.stack(Ws)
    g = torch.as_tensor(rng.normal(size=(T, n, d)))
    return W, g


@pytest.mark.parametrize("rule", C.RETRAIN_RULES)
def test_retrain_mixing_is_doubly_stochastic_without_leaver(rule):
    W, _ = random_history(T=4, n=7, seed=3)
    Wt = C.retrain_mixing(W, 2, rule)
    keep = [i for i in range(7) if i != 2]
    for w in Wt:
        sub = w[keep][:, keep]
        assert torch.allclose(sub, sub.T)
        assert torch.allclose(sub.sum(0), torch.ones(6, dtype=sub.dtype))
        assert (sub >= 0).all()
        assert w[2].abs().sum() == 0 and w[:, 2].abs().sum() == 0


def test_complete_graph_uniform_weights_gives_federated_residual():
    # 2.7 (1): delta_i^t = eta/(n-1) (gbar - g_k), the same for every i
    n, d, T, k, eta = 5, 4, 3, 1, 0.1
    W = torch.full((T, n, n), 1.0 / n, dtype=torch.float64)
    g = torch.randn(T, n, d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    # Metropolis on K_{n-1} is the uniform 1/(n-1) matrix of the special case
    assert torch.allclose(C.retrain_mixing(W[0], k, "recompute")[0, 2], torch.tensor(1.0 / (n - 1), dtype=W.dtype))
    delta = C.residuals(W, g, k, eta, rule="recompute")
    expect = eta / (n - 1) * (g.mean(1) - g[:, k])
    for i in range(n):
        if i != k:
            assert torch.allclose(delta[:, i], expect)
    # the absorb rule is not uniform (W~_ii = 2/n): its residual is eta/n (g_i - g_k), client-specific
    delta_b = C.residuals(W, g, k, eta, rule="absorb")
    assert torch.allclose(delta_b[:, 0], eta / n * (g[:, 0] - g[:, k]))


def test_absorb_rule_closed_form_and_zero_without_edge():
    # 2.7 (2): delta_i^t = eta W_ik (g_i - g_k); zero in rounds where k is not a neighbour
    W, g = random_history(T=8, n=6, seed=1)
    k, eta = 4, 0.05
    delta = C.residuals(W, g, k, eta, rule="absorb")
    expect = eta * W[:, :, k, None] * (g - g[:, k:k + 1])
    expect[:, k] = 0
    assert torch.allclose(delta, expect)
    no_edge = W[:, :, k] == 0
    assert no_edge.any()
    assert (delta[no_edge].abs().sum(-1) == 0).all()


@pytest.mark.parametrize("rule", C.RETRAIN_RULES)
def test_eq15_invariant(rule):
    # 2.7 (3): sum_{i != k} delta_i^t = eta (sum_j W_kj g_j - g_k) for any doubly stochastic W~
    W, g = random_history(T=5, n=7, seed=2)
    k, eta = 3, 0.2
    delta = C.residuals(W, g, k, eta, rule=rule)
    lhs = delta.sum(1)
    rhs = eta * (torch.einsum("tj,tjd->td", W[:, k], g) - g[:, k])
    assert torch.allclose(lhs, rhs)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), T=st.integers(1, 6), n=st.integers(2, 6), es=st.integers(1, 6))
def test_weights_are_a_distribution(seed, T, n, es):
    # 2.7 (4): p >= 0 and sum_t p_i^t = 1, also for the ES horizon
    W, g = random_history(T=T, n=n, d=3, seed=seed)
    es = min(es, T)
    for H in (None, es):
        p = C.round_weights(W, g, H)
        assert (p >= 0).all()
        assert torch.allclose(p.sum(0), torch.ones(n, dtype=p.dtype))
        if H is not None:
            assert (p[H:] == 0).all()


def test_weights_of_a_client_without_updates_are_zero_and_so_is_its_correction():
    W = torch.eye(3, dtype=torch.float64).expand(4, 3, 3).clone()
    g = torch.zeros(4, 3, 2, dtype=torch.float64)
    p = C.round_weights(W, g)
    assert (p == 0).all()
    assert C.correction(C.residuals(W, g, 0, 0.1), p).abs().max() == 0


@pytest.mark.parametrize("rule", C.RETRAIN_RULES)
def test_isolated_leaver_gives_zero_correction(rule):
    # 2.7 (5)
    W, g = random_history(T=6, n=6, seed=4, isolate=5)
    delta = C.residuals(W, g, 5, 0.1, rule=rule)
    assert delta.abs().max() == 0
    p = C.round_weights(W, g)
    for scale in C.CORRECTION_SCALES:
        assert C.correction(delta, p, scale).abs().max() == 0


def test_noise_average_has_variance_sigma_squared():
    # 2.7 (6): averaging n-1 draws of N(0, (n-1) sigma^2) gives variance sigma^2
    gen = torch.Generator().manual_seed(0)
    sigma, m, d = 0.3, 9, 20000
    z = P.algorithm.client_noise(m, d, sigma, generator=gen, dtype=torch.float64)
    assert abs(z.var().item() - m * sigma**2) / (m * sigma**2) < 0.03
    assert abs(z.mean(0).var().item() - sigma**2) / sigma**2 < 0.05
    z2 = P.algorithm.client_noise(m, d, sigma, generator=gen, dtype=torch.float64)
    assert not torch.equal(z, z2)  # fresh noise every call


def test_unrolled_models_match_step_by_step_gossip():
    # 2.7 (7): one gradient per round gives exactly Eq. (4)
    W, g = random_history(T=5, n=4, d=3, seed=6)
    theta0 = torch.randn(3, dtype=torch.float64)
    eta = 0.3
    th = theta0.expand(4, 3).clone()
    for t in range(5):
        th = th - eta * W[t] @ g[t]
    assert torch.allclose(C.reconstruct_models(theta0, W, g, eta), th)
    assert torch.allclose(C.reconstruct_models(theta0, W, g, eta, rounds=0), theta0.expand(4, 3))


def test_sum_scale_is_exact_when_gradients_do_not_depend_on_the_model():
    # gradients that do not depend on the model (linear losses): the retrain run sees the same g_j^t, so
    # the drift term of digest 2.8 vanishes and the "sum" correction is exactly theta - theta_retrain
    n, d, T, k = 5, 3, 7, 0
    rng = np.random.default_rng(0)
    W, _ = random_history(T=T, n=n, d=d, seed=9)
    g = torch.as_tensor(rng.normal(size=(T, n, d)))
    theta0 = torch.zeros(d, dtype=torch.float64)
    for rule in C.RETRAIN_RULES:
        Wt = C.retrain_mixing(W, k, rule)
        theta = C.reconstruct_models(theta0, W, g, 0.1)
        theta_rt = C.reconstruct_models(theta0, Wt, g, 0.1)
        delta = C.residuals(W, g, k, 0.1, rule=rule)
        corr = C.correction(delta, C.round_weights(W, g), "sum")
        keep = [i for i in range(n) if i != k]
        assert torch.allclose((theta - corr)[keep], theta_rt[keep])


def test_bad_leaver_and_round_raise_naming_them():
    W, g = random_history(T=3, n=4, d=2)
    with pytest.raises(ValueError, match="leaver"):
        C.residuals(W, g, 4, 0.1)
    with pytest.raises(ValueError, match="t_unlearn"):
        C.reconstruct_models(torch.zeros(2, dtype=torch.float64), W, g, 0.1, rounds=4)
    with pytest.raises(ValueError, match="es_rounds"):
        C.round_weights(W, g, 5)
    with pytest.raises(ValueError, match="retrain_rule"):
        C.retrain_mixing(W[0], 0, "drop")
    with pytest.raises(ValueError, match="correction_scale"):
        C.correction(C.residuals(W, g, 0, 0.1), C.round_weights(W, g), "half")
