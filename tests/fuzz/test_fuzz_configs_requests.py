"""Fuzz the method configs, forget requests and their validation: a clear error naming the field, or a
valid object; and never a certificate for a request that does not fit the data."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from fuzzkit import FUZZ, check_contract, junk, wild_floats, wild_ints
from hypothesis import given
from hypothesis import strategies as st

import unlearnkit as uk
from unlearnkit import audit, data, decentral, methods, train
from unlearnkit.constants import logistic_constants
from unlearnkit.core import Request, check_request_fits
from unlearnkit.methods import noisy_finetune as nf
from unlearnkit.methods import rrdu

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")

TOKEN = decentral.TokenConfig(lr=0.1)
REQUIRED = {"K": 5, "token": TOKEN, "rounds": 3, "lr": 0.1, "steps": 3}
CONFIGS = sorted({getattr(m, n) for m in (methods, nf, decentral, train, rrdu, audit) for n in dir(m)
                  if n.endswith("Config") and dataclasses.is_dataclass(getattr(m, n))}, key=lambda c: c.__name__)


def _numeric_fields(cls):
    return [f.name for f in dataclasses.fields(cls)
            if f.name in REQUIRED or isinstance(f.default, (int, float, type(None))) and not isinstance(f.default, bool)]


def _base(cls):
    base = {f.name: REQUIRED[f.name] for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    if cls in (methods.D2DConfig, methods.R2DConfig):  # certified by default: they need the loss constants
        base["constants"] = logistic_constants(lam=0.05, radius=5.0)
    return base


def test_every_config_is_fuzzed():
    assert len(CONFIGS) >= 20, [c.__name__ for c in CONFIGS]
    for cls in CONFIGS:
        cls(**_base(cls))  # the baseline every fuzzed config starts from is valid


@FUZZ
@given(data_=st.data(), value=st.one_of(wild_floats, wild_ints, junk))
def test_method_configs(data_, value):
    cls = data_.draw(st.sampled_from(CONFIGS), label="config")
    field = data_.draw(st.sampled_from(_numeric_fields(cls)), label="field")
    cfg = check_contract(lambda: cls(**{**_base(cls), field: value}), names=(field,), allow_inf=True)
    if cfg is not None and isinstance(value, float):  # inf is "none" for some fields (clip); NaN never is
        assert not np.isnan(value), f"{cls.__name__}({field}={value!r}) was accepted"


indices = st.one_of(st.lists(st.one_of(st.integers(-2, 45), st.sampled_from([2**63, 10**30])), max_size=6),
                    st.lists(st.floats(-1, 45), max_size=3), junk)


@FUZZ
@given(kind=st.one_of(st.sampled_from(["samples", "class", "client"]), junk), idx=indices,
       client=st.one_of(st.none(), wild_ints, junk), label=st.one_of(st.none(), wild_ints, junk))
def test_request_construction_and_fit(kind, idx, client, label):
    req = check_contract(Request, kind, idx, client=client, label=label,
                         names=("kind", "indices", "client", "label"))
    if req is None:
        return
    assert req.indices.dtype == np.int64 and np.all(req.indices >= 0) and np.unique(req.indices).size == req.m
    clients = (np.arange(0, 20), np.arange(20, 40))
    labels = np.arange(40) % 2
    ok = check_contract(check_request_fits, req, n_train=40, labels=labels, n_classes=2, client_indices=clients,
                        names=("request.indices", "request.label", "request.client"))
    if ok is not None:
        assert req.indices.max() < 40 and req.m < 40


@pytest.fixture(scope="module")
def tiny():
    torch.set_num_threads(1)
    from unlearnkit.models import FlatParams, make_model

    ds = data.load("synthetic", device="cpu", n_train=40, n_test=20, dim=3, seed=1)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, bias=False), loss="logistic")
    cfg = train.SGDConfig(steps=20, lr=0.5, batch_size=8, weight_decay=0.05, radius=5.0, checkpoint_every=10)
    state = train.train_sgd(flat, ds, None, cfg, generator=uk.make_generator(0), init=torch.zeros(flat.d))
    return ds, state


CERTIFIED = nf.OutputPerturbationConfig(C0=0.5, finetune=nf.CleanFinetuneConfig(steps=3, lr=0.5, batch_size=8))


@FUZZ
@given(kind=st.sampled_from(["samples", "class"]), idx=st.lists(st.integers(0, 45), min_size=1, max_size=5,
                                                                 unique=True), label=st.one_of(st.none(), wild_ints))
def test_no_certificate_for_a_bad_request(tiny, kind, idx, label):
    ds, state = tiny
    req = check_contract(Request, kind, idx, label=label, names=("label",))
    if req is None:
        return
    y = ds.y_train.numpy()
    valid = (max(idx) < ds.n_train and (kind == "samples" or (label is not None and 0 <= label < 2
                                                              and np.all(y[idx] == label))))
    res = check_contract(methods.OutputPerturbation().unlearn, state, req, CERTIFIED, generator=uk.make_generator(0),
                         names=("request.indices", "request.label"))
    assert (res is not None) == valid, f"valid={valid} but the method returned {res}"
    if res is not None:
        assert res.certificate is not None and np.isfinite(res.certificate.epsilon)


@pytest.mark.parametrize("make, names", [
    (lambda: methods.GradientAscentConfig(stop_forget_acc=[1.0, 2.0]), ("stop_forget_acc",)),  # a TypeError
    (lambda: rrdu.WalkConfig(token=None), ("token",)),  # accepted, then an AttributeError in the run
    (lambda: rrdu.noisy.NoisyWalkConfig(token="a"), ("token",)),  # an AttributeError in __post_init__ before
    (lambda: rrdu.WalkConfig(token=TOKEN, route_seed=float("nan")), ("route_seed",)),  # accepted before
    (lambda: methods.DDPWalkConfig(token=TOKEN, sigma=float("nan")), ("sigma",)),  # accepted before
    (lambda: methods.DDPWalkConfig(token=TOKEN, m=float("nan")), ("m",)),  # accepted before
    (lambda: nf.ModelClippingConfig(C0="a"), ("C0",)),  # a TypeError from a comparison before
    (lambda: methods.D2DConfig(K=5, constants=float("nan")), ("constants",)),  # accepted before
    (lambda: methods.R2DConfig(K=5, constants=float("nan")), ("constants",)),  # accepted before
    (lambda: methods.RetrainConfig(train=float("nan")), ("train",)),  # accepted before
    (lambda: Request("samples", None), ("indices",)),  # TypeError from int() before
    (lambda: Request("samples", [1.5]), ("indices",)),  # silently truncated to [1] before
    (lambda: Request("samples", [2**63]), ("indices",)),  # OverflowError before
    (lambda: Request("samples", [True, False]), ("indices",)),  # a mask read as indices [0, 1] before
    (lambda: Request("class", [0], label="a"), ("label",)),  # failed inside the validator before
    (lambda: Request("samples", [0], client=[1]), ("client",)),
])
def test_regressions_found_by_the_fuzzer(make, names):
    assert check_contract(make, names=names) is None
    assert Request("samples", np.array([3.0, 1.0])).indices.tolist() == [1, 3]  # integral floats still pass


METHOD_CLASSES = sorted((getattr(methods, n) for n in methods.__all__ if isinstance(getattr(methods, n), type)
                         and hasattr(getattr(methods, n), "unlearn") and n != "Unlearner"), key=lambda c: c.__name__)


@FUZZ
@given(method=st.sampled_from(METHOD_CLASSES), config_cls=st.sampled_from(CONFIGS))
def test_a_config_of_another_method_is_refused(tiny, method, config_cls):
    """A config of another method used to fail deep inside the algorithm (an AttributeError)."""
    import inspect

    hint = inspect.signature(method.unlearn).parameters["config"].annotation
    # the annotation names the config class, or a shared unlearn says Any and the class names it (config_type)
    expected = getattr(method, "config_type", None) or (
        getattr(inspect.getmodule(method), hint) if isinstance(hint, str) else hint)
    config = config_cls(**_base(config_cls))
    if isinstance(config, expected):
        return
    _, state = tiny
    with pytest.raises(TypeError, match=rf"config=.* is not a {expected.__name__}"):
        method().unlearn(state, Request("samples", [0, 1]), config, generator=uk.make_generator(0))


def test_float64_parameters_with_float32_data_are_refused(tiny):
    """Float64 parameters with float32 data failed 15 to 24 frames deep in torch."""
    _, state = tiny
    bad = dataclasses.replace(state, params=state.params.double())
    res = check_contract(methods.OutputPerturbation().unlearn, bad, Request("samples", [0]), CERTIFIED,
                         generator=uk.make_generator(0), names=("state.params",))
    assert res is None
