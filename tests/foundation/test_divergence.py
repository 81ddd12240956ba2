"""A diverged run stops with an error naming the step and the setting; no certificate (issue 18, finding 3)."""

from dataclasses import replace

import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit import data, methods
from unlearnkit.constants import logistic_constants
from unlearnkit.core import DivergenceError, Request
from unlearnkit.data import partition
from unlearnkit.decentral.gossip import GossipConfig, run_gossip
from unlearnkit.graphs import make_graph
from unlearnkit.methods import noisy_finetune as nf
from unlearnkit.models import FlatParams, make_model
from unlearnkit.train import SGDConfig, train_sgd

HUGE = 1e30
BLOW = nf.CleanFinetuneConfig(steps=5, lr=HUGE, batch_size=8, weight_decay=1.0)


@pytest.fixture(scope="module")
def setup():
    torch.set_num_threads(1)
    ds = data.load("synthetic", device="cpu", n_train=200, n_test=50, dim=5, seed=3)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, bias=False), loss="logistic")
    cfg = SGDConfig(steps=50, lr=0.5, batch_size=8, weight_decay=0.05, radius=5.0, checkpoint_every=25)
    state = train_sgd(flat, ds, None, cfg, generator=uk.make_generator(0), init=torch.zeros(flat.d))
    return ds, flat, state, Request("samples", np.arange(10))


def test_train_sgd_stops_at_divergence(setup):
    ds, flat, _, _ = setup
    cfg = SGDConfig(steps=40, lr=HUGE, batch_size=8, weight_decay=1.0)
    with pytest.raises(DivergenceError, match=r"training: the parameters became non-finite.*by step 40.*lr=1e\+30"):
        train_sgd(flat, ds, None, cfg, generator=uk.make_generator(0), init=torch.zeros(flat.d))
    with pytest.raises(DivergenceError, match=r"loss became non-finite.*by step \d+"):  # with a live view: per step
        train_sgd(flat, ds, None, replace(cfg, eval_every=1), generator=uk.make_generator(0),
                  init=torch.zeros(flat.d))


def test_run_gossip_stops_at_divergence(setup):
    ds, flat, _, _ = setup
    fed = partition(ds, 4, seed=0)
    cfg = GossipConfig(rounds=30, lr=HUGE, batch_size=8, weight_decay=1.0)
    with pytest.raises(DivergenceError, match=r"run_gossip: .*non-finite.*by step \d+.*lr=1e\+30"):
        run_gossip(flat, fed, make_graph("ring", 4), cfg, generator=uk.make_generator(0), init=torch.zeros(flat.d))


def test_d2d_on_a_diverging_step_size_returns_no_certificate(setup):
    _, _, state, req = setup
    bad = state.replace(config=replace(state.config, lr=HUGE, weight_decay=1.0, radius=float("inf")))
    conf = methods.D2DConfig(K=20, constants=logistic_constants(lam=0.05, radius=5.0))
    with pytest.raises(ValueError) as info:  # refused: either by the calibration or as diverged
        methods.D2D().unlearn(bad, req, conf, generator=uk.make_generator(0))
    if isinstance(info.value, DivergenceError):
        assert "D2D" in str(info.value)


def test_d2d_never_certifies_non_finite_parameters(setup):
    _, _, state, req = setup
    nan_state = state.replace(params=torch.full_like(state.params, float("nan")))
    conf = methods.D2DConfig(K=0, constants=logistic_constants(lam=0.05, radius=5.0))
    with pytest.raises(DivergenceError, match=r"D2D\.unlearn: the parameters became non-finite.*D2DConfig"):
        methods.D2D().unlearn(nan_state, req, conf, generator=uk.make_generator(0))


@pytest.mark.parametrize("method, conf", [
    (nf.GradientClipping, nf.GradientClippingConfig(C0=1, C1=1, gamma=0.1, lam=1, finetune=BLOW)),
    (nf.ModelClipping, nf.ModelClippingConfig(C2=1.0, sigma=1.0, gamma=0.1, T=3, finetune=BLOW)),
    (nf.OutputPerturbation, nf.OutputPerturbationConfig(C0=0.5, finetune=BLOW)),
])
def test_noisy_finetune_methods_never_certify_a_diverged_model(setup, method, conf):
    _, _, state, req = setup
    with pytest.raises(DivergenceError, match=r"fine-tune: the parameters became non-finite.*by step \d+.*1e\+30"):
        method().unlearn(state, req, conf, generator=uk.make_generator(0))
