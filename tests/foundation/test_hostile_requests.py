"""Hostile forget requests and missing generators are refused before any work (issue 18, findings 2 and 4)."""

from dataclasses import replace

import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit import data, evaluate, methods
from unlearnkit.constants import logistic_constants
from unlearnkit.core import Request, check_request_fits
from unlearnkit.methods import noisy_finetune as nf
from unlearnkit.models import FlatParams, make_model
from unlearnkit.train import SGDConfig, draw_batches, train_sgd

FT = nf.CleanFinetuneConfig(steps=5, lr=0.5, batch_size=8)
C = logistic_constants(lam=0.05, radius=5.0)
CENTRAL = {  # every centralized class exported by unlearnkit.methods, with a cheap config
    "Retrain": methods.RetrainConfig(), "Finetune": methods.FinetuneConfig(steps=5),
    "GradientAscent": methods.GradientAscentConfig(max_steps=3), "R2D": methods.R2DConfig(K=25, constants=C),
    "D2D": methods.D2DConfig(K=5, constants=C),
    "GradientClipping": nf.GradientClippingConfig(C0=1, C1=1, gamma=0.1, lam=1, finetune=FT),
    "ModelClipping": nf.ModelClippingConfig(C2=1.0, sigma=1.0, gamma=0.1, T=3, finetune=FT),
    "OutputPerturbation": nf.OutputPerturbationConfig(C0=0.5, finetune=FT),
}
DECENTRAL = {"RRDU", "RetrainWalk", "FinetuneWalk", "DDPWalk", "DPSGDWalk", "NoisyDDP", "Newton", "GossipRetrain", "PDUDT"}


@pytest.fixture(scope="module")
def setup():
    torch.set_num_threads(1)
    ds = data.load("synthetic", device="cpu", n_train=200, n_test=50, dim=5, seed=3)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, bias=False), loss="logistic")
    cfg = SGDConfig(steps=50, lr=0.5, batch_size=8, weight_decay=0.05, radius=5.0, checkpoint_every=25)
    state = train_sgd(flat, ds, None, cfg, generator=uk.make_generator(0), init=torch.zeros(flat.d))
    return ds, state


def test_every_method_class_is_covered():
    classes = {n for n in methods.__all__ if isinstance(getattr(methods, n), type) and hasattr(getattr(methods, n),
                                                                                             "unlearn")}
    assert classes - {"Unlearner"} == set(CENTRAL) | DECENTRAL


HOSTILE = [(lambda ds: Request("samples", [10**6]), r"request\.indices contains 1000000.*\[0, 199\]"),
           (lambda ds: Request("class", [0], label=42), r"request\.label=42 is out of range.*\[0, 1\]"),
           (lambda ds: Request("class", [0]), r"request\.label=None"),
           (lambda ds: Request("class", np.arange(10), label=1), r"carry another label"),
           (lambda ds: Request("samples", np.arange(200)), r"nothing is left to train on")]


@pytest.mark.parametrize("name", sorted(CENTRAL))
@pytest.mark.parametrize("make, match", HOSTILE)
def test_hostile_request_is_refused_by_every_method(setup, name, make, match):
    ds, state = setup
    with pytest.raises(ValueError, match=match):
        getattr(methods, name)().unlearn(state, make(ds), CENTRAL[name], generator=uk.make_generator(0))


@pytest.mark.parametrize("name", sorted(CENTRAL))
def test_generator_none_is_refused_by_every_method(setup, name):
    _, state = setup
    with pytest.raises(ValueError, match=r"generator=None.*make_generator\(seed\)"):
        getattr(methods, name)().unlearn(state, Request("samples", [0, 1]), CENTRAL[name], generator=None)


def test_a_request_outside_the_trained_samples_gets_no_certificate(setup):
    ds, state = setup
    sub = replace(state, train_indices=np.arange(100))
    with pytest.raises(ValueError, match="would remove nothing"):
        methods.D2D().unlearn(sub, Request("samples", [150, 160]), CENTRAL["D2D"], generator=uk.make_generator(0))


def test_report_and_train_sgd_refuse_bad_indices(setup):
    ds, state = setup
    with pytest.raises(ValueError, match=r"request\.indices contains 1000000"):
        evaluate.report(state.flat, state.params, ds, Request("samples", [10**6]))
    with pytest.raises(ValueError, match=r"request\.label=42"):
        evaluate.report(state.flat, state.params, ds, Request("class", [0], label=42))
    with pytest.raises(ValueError, match=r"train_sgd: indices .*\[0, 199\]"):
        train_sgd(state.flat, ds, [10**6], state.config, generator=uk.make_generator(0))
    with pytest.raises(ValueError, match=r"generator=None"):
        train_sgd(state.flat, ds, None, state.config, generator=None)
    with pytest.raises(ValueError, match=r"draw_batches: generator=None"):
        draw_batches(10, state.config, None)


def test_the_validator_checks_the_federation():
    """Decentralized methods run the same validator (client in range, client holds the samples)."""
    clients = (np.arange(0, 10), np.arange(10, 20))
    kw = dict(n_train=20, client_indices=clients)
    check_request_fits(Request("client", np.arange(10, 20), client=1), **kw)
    with pytest.raises(ValueError, match=r"request\.client=5 is out of range.*\[0, 1\]"):
        check_request_fits(Request("client", [3], client=5), **kw)
    with pytest.raises(ValueError, match=r"request\.client=None"):
        check_request_fits(Request("client", [3]), **kw)
    with pytest.raises(ValueError, match=r"request\.client=0 does not hold"):
        check_request_fits(Request("samples", [3, 15], client=0), **kw)
    assert Request("samples", [3]).validate(n_train=20) is not None


@pytest.mark.parametrize("indices", [[3, 3], [5, 1, 5, 1, 2], np.array([[0, 0]])])
def test_duplicate_indices_are_refused_not_dropped(indices):
    """Issue 18: ``Request`` silently dropped duplicates, so a request named fewer samples than it said."""
    with pytest.raises(ValueError, match=r"indices contains \d+ duplicate entries \(e\.g\. \[\d"):
        Request("samples", indices)
    assert Request("samples", [5, 1, 2]).indices.tolist() == [1, 2, 5]  # unique indices: sorted, as before
