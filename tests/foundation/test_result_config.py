"""``result.json`` records the full unlearning config (issue 18, "Deliver" 4): plain JSON, every field."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch

from unlearnkit.experiments import get_method
from unlearnkit.experiments.contract import INFINITY, json_safe
from unlearnkit.methods.baselines import FinetuneConfig, RetrainConfig


@pytest.mark.parametrize("name, config_cls", [("retrain", RetrainConfig), ("finetune", FinetuneConfig)])
def test_result_records_the_unlearning_config(name, config_cls):
    result = get_method(name).run("quick", seed=0, progress=False)
    text = json.dumps(result["config"], allow_nan=False)  # strict JSON: no NaN/Infinity tokens, no objects
    json.dumps(result, default=float)  # the whole result as the CLI writes it
    config = json.loads(text)
    assert set(config) == {f.name for f in dataclasses.fields(config_cls)}
    if name == "finetune":  # the registry's settings, not the defaults
        assert config["steps"] == 100 and config["lr"] == 0.1
    else:  # a nested dataclass becomes a dict of its fields
        assert isinstance(config["train"], (dict, type(None)))


def test_json_safe_handles_what_configs_hold():
    @dataclasses.dataclass(frozen=True)
    class Inner:
        radius: float = math.inf
        sizes: tuple = (1, np.int64(2))

    @dataclasses.dataclass(frozen=True)
    class Outer:
        inner: Inner = Inner()
        lr: object = None
        t: object = None
        fn: object = None
        table: object = None

    out = json_safe(Outer(lr=np.float32(0.5), t=torch.tensor(3), fn=len, table={1: (np.bool_(True),)}))
    assert out == {"inner": {"radius": INFINITY, "sizes": [1, 2]}, "lr": 0.5, "t": 3, "fn": repr(len),
                   "table": {"1": [True]}}
    json.dumps(out, allow_nan=False)
    assert float(out["inner"]["radius"]) == math.inf
    assert json_safe(-math.inf) == "-inf" and json_safe(math.nan) == "nan"
    assert json_safe(np.zeros(3)) == repr(np.zeros(3))
