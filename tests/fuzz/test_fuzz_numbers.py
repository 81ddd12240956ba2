"""Numbers that are not numbers and sizes no machine runs: ``epsilon='1'`` and ``delta=True`` are a
``TypeError`` naming the field, step counts and dimensions have a ceiling named in the message, a request
that is ``None`` is a ``TypeError`` from the method's entry check, and NaN never reaches a JSON file."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch
from fuzzkit import time_limit

import unlearnkit as uk
from unlearnkit import audit, data, decentral, methods, train
from unlearnkit._io import json_text
from unlearnkit.constants import logistic_constants
from unlearnkit.core import MAX_DIM, MAX_STEPS
from unlearnkit.distributed.tasks import QuadraticHop
from unlearnkit.methods import noisy_finetune as nf
from unlearnkit.methods import rrdu

TOKEN = decentral.TokenConfig(lr=0.1)
REQUIRED = {"K": 5, "token": TOKEN, "rounds": 3, "lr": 0.1, "steps": 3}
CONFIGS = sorted({getattr(m, n) for m in (methods, nf, decentral, train, rrdu, audit) for n in dir(m)
                  if n.endswith("Config") and dataclasses.is_dataclass(getattr(m, n))}, key=lambda c: c.__name__)
PRIVACY = [(c, f.name) for c in CONFIGS for f in dataclasses.fields(c) if f.name in ("epsilon", "delta")]


def _base(cls):
    base = {f.name: REQUIRED[f.name] for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    if cls in (methods.D2DConfig, methods.R2DConfig):
        base["constants"] = logistic_constants(lam=0.05, radius=5.0)
    return base


def test_there_are_privacy_fields_to_check():
    assert len(PRIVACY) >= 10, PRIVACY


@pytest.mark.parametrize("cls, field", PRIVACY, ids=[f"{c.__name__}.{f}" for c, f in PRIVACY])
@pytest.mark.parametrize("value", ["1", "0.5", True, False, np.bool_(True), b"1"], ids=repr)
def test_a_string_or_bool_epsilon_or_delta_is_a_type_error_naming_it(cls, field, value):
    with pytest.raises(TypeError, match=rf"{field}={value!r}"[:40].replace("(", r"\(").replace(")", r"\)")):
        cls(**{**_base(cls), field: value})


@pytest.mark.parametrize("make, name", [
    (lambda v: train.SGDConfig(steps=v, lr=0.1), "steps"),
    (lambda v: methods.D2DConfig(K=v, epsilon=None), "K"),
    (lambda v: methods.R2DConfig(K=v, epsilon=None), "K"),
    (lambda v: nf.CleanFinetuneConfig(steps=v, lr=0.1), "steps"),
    (lambda v: decentral.GossipConfig(rounds=v, lr=0.1), "rounds"),
])
def test_step_counts_beyond_the_ceiling_are_refused_naming_the_range(make, name):
    make(MAX_STEPS)                                   # the ceiling itself is accepted
    for v in (MAX_STEPS + 1, 10**30):
        with pytest.raises(ValueError, match=rf"{name}={v} is out of range: expected an integer in \[\d+, "
                                             rf"{MAX_STEPS}\]"), time_limit(1.0):
            make(v)


def test_a_dimension_beyond_the_ceiling_is_refused_naming_the_range():
    with pytest.raises(ValueError, match=rf"dim={MAX_DIM + 1} is out of range: expected an integer in \[1, "
                                         rf"{MAX_DIM}\]"):
        QuadraticHop(seed=0, dim=MAX_DIM + 1)


@pytest.fixture(scope="module")
def tiny():
    from unlearnkit.models import FlatParams, make_model

    ds = data.load("synthetic", device="cpu", n_train=40, n_test=20, dim=3, seed=1)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, bias=False), loss="logistic")
    cfg = train.SGDConfig(steps=10, lr=0.5, batch_size=8, weight_decay=0.05, radius=5.0)
    return train.train_sgd(flat, ds, None, cfg, generator=uk.make_generator(0), init=torch.zeros(flat.d))


@pytest.mark.parametrize("request_", [None, [0, 1], "samples", 3], ids=repr)
def test_a_request_that_is_not_a_request_is_a_type_error(tiny, request_):
    cfg = nf.OutputPerturbationConfig(C0=0.5, finetune=nf.CleanFinetuneConfig(steps=3, lr=0.5, batch_size=8))
    with pytest.raises(TypeError, match=r"OutputPerturbation.unlearn: request=.* is a \w+, not a Request"):
        methods.OutputPerturbation().unlearn(tiny, request_, cfg, generator=uk.make_generator(0))


def test_json_text_writes_null_with_a_reason_never_nan():
    text = json_text({"acc": float("nan"), "rows": [{"eps": math.inf}, 1.0], "x": np.float32("nan")}, default=float)
    assert "NaN" not in text and "Infinity" not in text
    got = json.loads(text)
    assert got["acc"] is None and got["rows"][0]["eps"] is None and got["x"] is None
    assert got["non_finite"] == ["acc: nan written as null", "rows[0].eps: inf written as null",
                                 "x: nan written as null"]
    assert json.loads(json_text([1.0, float("-inf")])) == [1.0, None]


def test_bench_json_never_holds_nan(tmp_path, monkeypatch):
    import unlearnkit.benchmarks as B

    B.available_benches()
    monkeypatch.setitem(B._BENCHES, "nan_bench", B.BenchSpec("nan_bench", lambda quick: [{"value": float("nan")}],
                                                             "a NaN row", False))
    out = tmp_path / "b.json"
    B.run_benches(["nan_bench"], quick=True, out=out, echo=lambda *a, **k: None)
    text = out.read_text()
    assert "NaN" not in text and json.loads(text)["non_finite"] == [
        "benchmarks.nan_bench.rows[0].value: nan written as null"]


# ---- budgets and numerics at the edges of floating point (each a listed repro)

@pytest.mark.parametrize("eps", [1e-300, 1e300, 1e7, 1e-7])
def test_configs_refuse_budgets_no_float_can_serve(eps):
    from unlearnkit.methods.noisy_finetune import OutputPerturbationConfig

    with pytest.raises(ValueError, match=r"epsilon=.* is out of range: expected epsilon in \[1e-06, 1e\+06\]"):
        OutputPerturbationConfig(epsilon=eps, delta=1e-5)


def test_gaussian_noise_without_a_generator_names_the_fix():
    import torch

    from unlearnkit.privacy.noise import gaussian_noise

    with pytest.raises(TypeError, match="generator=None is not a torch.Generator"):
        gaussian_noise(torch.zeros(3), 1.0, None)


def test_gaussian_delta_at_a_huge_epsilon_is_zero_not_nan():
    from unlearnkit.privacy.gaussian import gaussian_delta

    assert gaussian_delta(1e300, 1.0) == 0.0 and gaussian_delta(1e3, 1.0) == 0.0


def test_rdp_orders_beyond_the_numerics_give_inf_not_nan():
    from unlearnkit.privacy.rdp import subsampled_gaussian_rdp

    out = subsampled_gaussian_rdp(0.01, 1.0, [2.0, 1e300, float("inf")])
    assert np.isfinite(out[0]) and out[1] == math.inf and out[2] == math.inf
