"""PDUDT.unlearn on real gradient-gossip training (small synthetic data), and the CLI runner."""

import math

import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit.data import load, partition
from unlearnkit.decentral.gradient_gossip import GradientGossipConfig, run_gradient_gossip
from unlearnkit.evaluate import mia_precision
from unlearnkit.experiments.pdudt import lab as L
from unlearnkit.graphs.dynamic import ErdosRenyiSchedule
from unlearnkit.decentral import correction as C
from unlearnkit.methods import pdudt as P
from unlearnkit.core import Request
from unlearnkit.models import FlatParams, make_model

N, ROUNDS, LR = 6, 12, 0.5


@pytest.fixture(scope="module")
def setup():
    torch.set_num_threads(1)
    ds = load("synthetic", n_train=240, n_test=60, dim=5, seed=0, device="cpu")
    fed = partition(ds, N, "dirichlet", alpha=0.3, seed=0)  # non-IID: the leaver matters
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, generator=uk.make_generator(0)), loss="logistic")
    sched = ErdosRenyiSchedule(N, 0.5, seed=1)
    states = {}
    for cache in ("history", "running"):
        for rule in C.RETRAIN_RULES:
            cfg = GradientGossipConfig(rounds=ROUNDS, lr=LR, batch_size=8, cache=cache, retrain_rule=rule)
            states[cache, rule] = run_gradient_gossip(flat, fed, sched, cfg, generator=uk.make_generator(3))
    es_cfg = GradientGossipConfig(rounds=ROUNDS, lr=LR, batch_size=8, cache="running", es_rounds=8)
    states["running_es"] = run_gradient_gossip(flat, fed, sched, es_cfg, generator=uk.make_generator(3))
    retrain = run_gradient_gossip(flat, fed, sched, GradientGossipConfig(rounds=ROUNDS, lr=LR, batch_size=8),
                                  generator=uk.make_generator(3), exclude=2)
    return ds, fed, flat, sched, states, retrain


def req(fed, k):
    return Request("client", np.asarray(fed.client_indices[k]), client=k)


@pytest.mark.parametrize("rule", C.RETRAIN_RULES)
@pytest.mark.parametrize("scale", C.CORRECTION_SCALES)
def test_history_and_running_sums_give_the_same_unlearned_models(setup, rule, scale):
    ds, fed, flat, sched, states, _ = setup
    cfg = P.PDUDTConfig(retrain_rule=rule, correction_scale=scale, sigma=0.0)
    a = P.PDUDT().unlearn(states["history", rule], req(fed, 2), cfg, generator=uk.make_generator(0))
    b = P.PDUDT().unlearn(states["running", rule], req(fed, 2), cfg, generator=uk.make_generator(0))
    assert a.params.shape == (N - 1, flat.d) and a.extras["clients"] == [0, 1, 3, 4, 5]
    assert torch.allclose(a.params, b.params, atol=1e-5)
    # memory: running sums do not grow with the rounds, the history does
    assert b.cost.memory_bytes < a.cost.memory_bytes
    # no communication; the correction's model-sized multiply-adds are counted (none for the control), and the
    # running sums need fewer of them than replaying the history
    assert a.cost.messages == 0 and b.cost.messages == 0
    assert (a.cost.grad_evals == 0) == (scale == "none") and b.cost.grad_evals <= a.cost.grad_evals


def test_es_from_history_matches_es_running_sums(setup):
    ds, fed, flat, sched, states, _ = setup
    cfg = P.PDUDTConfig(es_rounds=8, sigma=0.0)
    a = P.PDUDT().unlearn(states["history", "recompute"], req(fed, 2), cfg, generator=uk.make_generator(0))
    b = P.PDUDT().unlearn(states["running_es"], req(fed, 2), cfg, generator=uk.make_generator(0))
    assert torch.allclose(a.params, b.params, atol=1e-5)
    full = P.PDUDT().unlearn(states["history", "recompute"], req(fed, 2), P.PDUDTConfig(sigma=0.0),
                             generator=uk.make_generator(0))
    assert not torch.allclose(a.params, full.params)
    assert a.extras["p"].shape[0] == 8 and torch.allclose(a.extras["p"].sum(0), torch.ones(N, dtype=a.extras["p"].dtype))


def test_earlier_request_round_rebuilds_the_model_from_eq4(setup):
    ds, fed, flat, sched, states, _ = setup
    st = states["history", "recompute"]
    short = run_gradient_gossip(flat, fed, sched, GradientGossipConfig(rounds=7, lr=LR, batch_size=8),
                                generator=uk.make_generator(3))
    none = P.PDUDTConfig(t_unlearn=7, correction_scale="none", sigma=0.0)
    res = P.PDUDT().unlearn(st, req(fed, 2), none, generator=uk.make_generator(0))
    assert torch.allclose(res.params, short.params[[0, 1, 3, 4, 5]], atol=1e-5)


def test_sum_correction_moves_towards_retraining_more_than_nothing(setup):
    ds, fed, flat, sched, states, retrain = setup
    st = states["history", "recompute"]
    keep = [0, 1, 3, 4, 5]
    target = retrain.params[keep].mean(0)
    dist = {}
    for scale in C.CORRECTION_SCALES:
        r = P.PDUDT().unlearn(st, req(fed, 2), P.PDUDTConfig(correction_scale=scale, sigma=0.0),
                              generator=uk.make_generator(0))
        dist[scale] = float((r.params.mean(0) - target).norm())
    assert dist["sum"] < dist["none"]
    assert dist["paper"] <= dist["none"] + 1e-6
    # the paper's convex combination is about one round's worth: it moves far less than the sum (pitfall P2)
    assert abs(dist["paper"] - dist["none"]) < abs(dist["sum"] - dist["none"])


def test_noise_is_fresh_and_its_average_has_std_sigma(setup):
    ds, fed, flat, sched, states, _ = setup
    st = states["history", "recompute"]
    gen = uk.make_generator(5)
    cfg = P.PDUDTConfig(sigma=0.2)
    a = P.PDUDT().unlearn(st, req(fed, 2), cfg, generator=gen)
    b = P.PDUDT().unlearn(st, req(fed, 2), cfg, generator=gen)
    assert not torch.equal(a.extras["noise"], b.extras["noise"])
    assert torch.allclose(a.extras["corrected"], b.extras["corrected"])
    assert a.certificate.mode == "none" and not a.certificate.certified
    z = P.algorithm.client_noise(N - 1, 40000, 0.2, generator=gen, dtype=torch.float64)
    assert z.mean(0).std().item() == pytest.approx(0.2, rel=0.02)
    assert z.std().item() == pytest.approx(0.2 * math.sqrt(N - 1), rel=0.02)


def test_certified_noise_uses_the_gap_bound(setup):
    ds, fed, flat, sched, states, _ = setup
    C = P.certify.GapConstants(L=0.25, sgd_var=1.0, het_var=1.0, delta_f=0.7, delta_f_tilde=0.7, rho1=0.9, rho2=0.9)
    with pytest.raises(ValueError, match="lr=0.5"):
        P.PDUDT().unlearn(states["history", "recompute"], req(fed, 2),
                          P.PDUDTConfig(noise="certified", constants=C), generator=uk.make_generator(0))
    cert = P.certify.pdudt_certificate(lr=0.01, t1=ROUNDS, n=N, constants=C, mode="sound", epsilon=1.0, delta=1e-5)
    assert not cert.certified and cert.mode == "none" and cert.sigma > 0  # hand-set constants: not verified


def test_bad_requests_name_the_problem(setup):
    ds, fed, flat, sched, states, _ = setup
    st = states["history", "recompute"]
    gen = uk.make_generator(0)
    with pytest.raises(ValueError, match=r"request\.client=6 is out of range"):
        P.PDUDT().unlearn(st, Request("client", np.arange(3), client=6), P.PDUDTConfig(), generator=gen)
    with pytest.raises(ValueError, match="t_unlearn=13 is after training ended"):
        P.PDUDT().unlearn(st, req(fed, 1), P.PDUDTConfig(t_unlearn=13), generator=gen)
    with pytest.raises(ValueError, match="without a client"):
        P.PDUDT().unlearn(st, Request("samples", np.arange(3)), P.PDUDTConfig(), generator=gen)
    with pytest.raises(ValueError, match="running sums"):
        P.PDUDT().unlearn(states["running", "recompute"], req(fed, 1), P.PDUDTConfig(t_unlearn=5), generator=gen)
    with pytest.raises(ValueError, match="es_rounds"):
        P.PDUDTConfig(es_rounds=9, t_unlearn=5)
    with pytest.raises(ValueError, match="constants"):
        P.PDUDTConfig(noise="certified")


def test_mia_precision_is_half_for_identical_sets_and_high_for_separated_losses(setup):
    ds, fed, flat, sched, states, _ = setup
    theta = states["history", "recompute"].params
    x, y = ds.x_train[:40], ds.y_train[:40]
    mean, std = mia_precision(flat, theta, x, y, x, y, repeats=50)
    assert 40 <= mean <= 60
    # members with the true labels against non-members with flipped labels: low loss vs high loss
    fitted = flat.init()
    for _ in range(300):  # a well-fitted model: true labels get low loss, flipped labels high loss
        fitted = fitted - flat.grad(fitted, ds.x_train, ds.y_train)
    mean, _ = mia_precision(flat, fitted[None], x, y, x, 1 - y, repeats=20)
    assert mean > 80


def test_cli_runner_tiny():
    out = L.run_profile(profile="quick", seed=0, t1=6, es_rounds=4, T=3, n_clients=4, leaver=3, local_steps=1,
                        hidden=8, eval_every=3, mia_repeats=5)
    assert out["method"] == "pdudt" and out["dataset"] == "digits"
    m = out["metrics"]
    for key in ("test_acc", "forget_acc", "mia_auc", "dist_to_retrain", "retrain_test_acc", "retrain_forget_acc",
                "original_dist_to_retrain", "mia_precision"):
        assert key in m and np.isfinite(m[key]), key
    assert np.isfinite(out["diagnostics"]["timing"]["time_ratio_retrain_over_pdudt"])
    assert out["certificate"]["mode"] == "none"
    assert set(out["methods"]) >= {"origin", "retrain", "perturbed_retrain", "pdudt", "pdudt_es", "control"}
    assert out["paper"]["table2_seconds"]["MNIST"]["Retrain"] == 1322.2
    with pytest.raises(ValueError, match="profile"):
        L.run_profile(profile="huge")


def test_paper_profile_says_when_mnist_is_missing(tmp_path, monkeypatch):
    from unlearnkit.data import DatasetUnavailableError, available

    if available().get("mnist"):
        pytest.skip("MNIST is on disk here")
    with pytest.raises(DatasetUnavailableError, match="paper' profile of pdudt needs the mnist files"):
        L.run_profile(profile="paper")


def test_memory_is_bounded_as_stated(setup):
    from unlearnkit.decentral.gradient_gossip import paper_storage_bytes

    ds, fed, flat, sched, states, _ = setup
    d = flat.d
    cfg = P.PDUDTConfig(sigma=0.0)
    run = P.PDUDT().unlearn(states["running", "recompute"], req(fed, 2), cfg, generator=uk.make_generator(0))
    hist = P.PDUDT().unlearn(states["history", "recompute"], req(fed, 2), cfg, generator=uk.make_generator(0))
    # running sums: A (n) + S, D (n leavers x n x d) in float64, whatever the number of rounds: O(n d) per client
    assert run.cost.memory_bytes == 8 * (N + 2 * N * N * d)
    # full history: every round's W as CSR (float64 values, int32 column indices and row pointers: its nonzeros
    # only, O(N + E) a round) and the gradients (n x d), stored once in the simulator
    cache = states["history", "recompute"].extras["history"]
    nnz = [int((w != 0).sum()) for w in cache.W]
    assert [w.nnz for w in cache.W_sparse] == nnz
    assert hist.cost.memory_bytes == 8 * ROUNDS * N * d + sum(12 * z + 4 * (N + 1) for z in nnz)
    # a real client keeps its own and its neighbours' gradients: at most t1 (1 + N_max) d floats
    n_max = int(((cache.W > 0).sum(-1) - 1).max())
    assert (cache.per_client_bytes() <= paper_storage_bytes(ROUNDS, n_max, d)).all()


def test_config_names_delta_for_the_old_beta_keyword():
    assert P.PDUDTConfig(delta=1e-6).delta == 1e-6
    with pytest.raises(TypeError, match="beta was renamed delta"):
        P.PDUDTConfig(beta=1e-5)
