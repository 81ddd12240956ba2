"""The result contract of every registered method (``unlearnkit.experiments.registry``'s docstring).

Every row of ``METHODS`` runs once on a tiny setting; its released parameters are evaluated again, here,
without the package's ``report``, and must give ``result.json``'s headline metrics. The JSON the CLI would
write holds no parameters, and its guarantee says epsilon = infinity unless the certificate is certified.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from unlearnkit.experiments import get_method
from unlearnkit.experiments.registry import METHODS
from unlearnkit.experiments.contract import (COST_UNIT, INFINITY, NOT_CERTIFIED, RELEASED_KEY, Released,
                                             cost_saved, guarantee)

_DECENTRAL_TINY = dict(T_train=10, T_unlearn=10, n_clients=4, eval_every=5)


def _newton_tiny() -> dict:
    from unlearnkit.decentral.gossip import GossipConfig

    return dict(topologies=("ring",), partitions=("iid",), kinds=("samples",), n_clients=4,
                gossip=GossipConfig(rounds=40, lr=1.0, batch_size=64, local_steps=1, order="dpsgd", weight_decay=1e-2))


def _baseline_tiny() -> dict:
    """One small trained MLP shared by the three baselines (``setup=`` of ``run_centralized``)."""
    if "setup" not in _CACHE:
        from unlearnkit.experiments import centralized_setup
        from unlearnkit.experiments.centralized import CentralProfile
        from unlearnkit.train import SGDConfig

        prof = CentralProfile(train=SGDConfig(steps=150, lr=0.5, batch_size=32, weight_decay=1e-4,
                                              checkpoint_every=50))
        _CACHE["setup"] = centralized_setup(prof, seed=0)
    return {"setup": _CACHE["setup"]}


_CACHE: dict = {}

# name -> (overrides for the runner, or a function making them; slow?); the other centralized rows run their
# quick profiles (seconds each)
TINY = {
    "retrain": (_baseline_tiny, False), "finetune": (_baseline_tiny, False), "gradient_ascent": (_baseline_tiny, False),
    "d2d": ({}, False), "r2d": ({}, False),
    "gradient_clipping": ({}, False), "model_clipping": ({}, False), "output_perturbation": ({}, False),
    "dp_sgd": ({}, True),
    "rrdu": (_DECENTRAL_TINY, False), "ddp": (_DECENTRAL_TINY, True), "dp_sgd_walk": (_DECENTRAL_TINY, True),
    "newton": (_newton_tiny, False),
    "pdudt": (dict(t1=20, n_clients=4, leaver=3), False),
}


def test_every_registered_method_is_covered():
    assert {spec.name for spec in METHODS} == set(TINY)


def _acc(flat, params: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> float:
    """Top-1 accuracy of the client average, computed here (not with ``unlearnkit.evaluate``)."""
    theta = params.mean(0) if params.dim() == 2 else params
    with torch.no_grad():
        pred = flat.predict(theta, x)
    return float((pred.cpu() == y.cpu()).double().mean())


def _run(name: str) -> dict:
    """Run ``name`` once per test session (the Newton test reuses the contract test's run)."""
    if name not in _CACHE:
        kw, _ = TINY[name]
        kw = kw() if callable(kw) else kw
        _CACHE[name] = get_method(name).run("quick", seed=0, progress=False, return_released=True, **kw)
    return dict(_CACHE[name])


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if slow else n
                                  for n, (_, slow) in TINY.items()])
def test_metrics_are_the_released_models(name):
    result = _run(name)
    rel = result.pop(RELEASED_KEY)
    assert isinstance(rel, Released)
    result = json.loads(json.dumps(result, default=float))  # what result.json holds
    # the CLI's JSON: no parameters, no tensors, the contract's blocks
    text = json.dumps(result, default=float)
    assert "released" not in json.loads(text)
    for key in ("metrics", "certificate", "guarantee", "diagnostics", "cost"):
        assert key in result, key
    # the released model's unlearning config, as plain JSON (issue 18)
    assert isinstance(result["config"], dict) and json.dumps(result["config"], allow_nan=False)
    ds, flat = rel.dataset, rel.flat
    assert rel.params.shape[-1] == flat.d
    m = result["metrics"]
    assert _acc(flat, rel.params, ds.x_test, ds.y_test) == pytest.approx(m["test_acc"], abs=1e-6)
    xf, yf = ds.train_subset(rel.request.indices)
    assert _acc(flat, rel.params, xf, yf) == pytest.approx(m["forget_acc"], abs=1e-6)
    if rel.backdoor is not None:
        bd = rel.backdoor
        assert _acc(flat, rel.params, bd.x_test_triggered, bd.y_test_triggered) == pytest.approx(m["backdoor_asr"], abs=1e-6)
    # metrics hold the released model and the two references only; other models live in diagnostics
    for diag_key, block in result["diagnostics"].items():
        assert diag_key.endswith("_model") or diag_key in ("timing", "sound_certificate", "grid"), diag_key
        assert isinstance(block, dict)
    # the guarantee follows the certificate, which stays as the method reported it
    g, cert = result["guarantee"], result["certificate"]
    assert {k: v for k, v in g.items() if k not in ("relation", "public")} == guarantee(cert)
    assert ("relation" in g and g["public"] != "not stated") == bool(g["certified"])
    if cert is None or not cert.get("certified"):
        assert g["epsilon"] == INFINITY and g["certified"] is False and float(g["epsilon"]) == math.inf
    else:
        assert g["certified"] and g["epsilon"] == cert["epsilon"] and cert["mode"] == "sound"
    # one cost unit, one definition of saved
    c = result["cost"]
    assert c["unit"] == COST_UNIT and c["grad_evals"] >= 0 and c["seconds"] >= 0
    assert c["saved"]["grad_evals"] == cost_saved(c["grad_evals"], c["retrain_grad_evals"])
    assert c["saved"]["seconds"] == cost_saved(c["seconds"], c["retrain_seconds"])


def test_newton_headline_is_the_certified_run_not_the_noise_free_step():
    """The known offender: ``run newton`` used to show the noise-free model next to a noisy run's certificate."""
    result = _run("newton")
    rel = result.pop(RELEASED_KEY)
    noise_free = result["diagnostics"]["noise_free_model"]
    assert "test_acc" in noise_free  # the noise-free step is a labelled diagnostic, not the headline
    # the quick profile is the sound certified run (lam = 0.5, one sample): it certifies, and stays useful
    assert result["certificate"]["mode"] == "sound" and result["guarantee"]["certified"]
    assert result["guarantee"]["epsilon"] == result["certificate"]["epsilon"]
    # the released (noisy) model is not the noise-free one, and the headline is the released one's
    assert result["metrics"]["test_acc"] == pytest.approx(_acc(rel.flat, rel.params, rel.dataset.x_test,
                                                              rel.dataset.y_test))
    assert result["metrics"]["test_acc"] >= result["metrics"]["retrain_test_acc"] - 0.03
    assert all("test_acc" in r for r in result["diagnostics"]["grid"]["rows"])


# ----------------------------------------------------------------------------------------------------------
# the helpers: guarantee, cost_saved, the CLI line
# ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cert, certified", [
    (None, False),
    ({"epsilon": 1.0, "delta": 1e-5, "mode": "sound", "certified": True}, True),
    ({"epsilon": 1.0, "delta": 1e-5, "mode": "paper", "certified": False}, False),
    ({"epsilon": 2.0, "delta": 1e-5, "mode": "none", "certified": False}, False),
    ({"epsilon": math.inf, "delta": 1e-5, "mode": "sound", "certified": False}, False),
])
def test_guarantee_is_infinite_unless_certified(cert, certified):
    g = guarantee(cert)
    assert g["certified"] is certified
    assert (g["epsilon"] == cert["epsilon"]) if certified else (g["epsilon"] == INFINITY)
    assert json.loads(json.dumps(g)) == g  # plain JSON, no NaN/Infinity tokens
    if cert is not None:
        assert g["mode"] == cert["mode"] and g["delta"] == cert["delta"]


@given(u=st.floats(0, 1e9), r=st.floats(1e-6, 1e9))
def test_cost_saved_is_one_minus_the_ratio(u, r):
    s = cost_saved(u, r)
    assert s == pytest.approx(1 - u / r) and s <= 1
    assert (s >= 0) == (u <= r) or u == pytest.approx(r)


@pytest.mark.parametrize("u, r", [(None, 1.0), (1.0, None), (1.0, 0.0), (1.0, -2.0), (float("nan"), 1.0)])
def test_cost_saved_is_none_when_undefined(u, r):
    assert cost_saved(u, r) is None


def test_cli_prints_not_certified(capsys):
    from unlearnkit.__main__ import _print_result

    base = {"method": "m", "profile": "quick", "dataset": "digits", "request": "r",
            "metrics": {"test_acc": 0.5, "retrain_test_acc": 0.6},
            "cost": {"grad_evals": 10, "seconds": 1.0, "retrain_grad_evals": 40, "retrain_seconds": 4.0}}
    paper = {"epsilon": 1.0, "delta": 1e-5, "sigma": 2.0, "mode": "paper", "certified": False}
    for cert in (None, paper):
        _print_result({**base, "certificate": cert, "guarantee": guarantee(cert)})
        out = capsys.readouterr().out
        assert NOT_CERTIFIED in out and "saved 75.0 %" in out
    sound = {**paper, "mode": "sound", "certified": True}
    _print_result({**base, "certificate": sound, "guarantee": guarantee(sound)})
    out = capsys.readouterr().out
    assert NOT_CERTIFIED not in out and "certified (1, 1e-05)" in out


def test_cli_prints_the_membership_auc_with_its_interval(capsys):
    from unlearnkit.__main__ import _print_result

    metrics = {"test_acc": 0.5, "retrain_test_acc": 0.6, "mia_auc": 0.5312, "mia_auc_low": 0.451,
               "mia_auc_high": 0.6123, "retrain_mia_auc": 0.5, "retrain_mia_auc_low": 0.42,
               "retrain_mia_auc_high": 0.58, "original_mia_auc": 0.71}  # the original's interval missing: its value alone
    _print_result({"method": "m", "profile": "quick", "dataset": "digits", "request": "r", "metrics": metrics,
                   "cost": {"grad_evals": 1, "seconds": 1.0, "retrain_grad_evals": 2, "retrain_seconds": 2.0},
                   "certificate": None, "guarantee": guarantee(None)})
    lines = capsys.readouterr().out.splitlines()
    auc = next(line for line in lines if "membership-inference AUC" in line)
    assert "0.5312 [0.451, 0.612]" in auc and "0.5000 [0.420, 0.580]" in auc and auc.rstrip().endswith("0.7100")
    head, acc = next(i for i in lines if "unlearned" in i), next(i for i in lines if "test accuracy" in i)
    assert len(head) == len(acc) == len(auc)  # the columns stay aligned
    assert any("value [95 % interval]" in line for line in lines)


def test_reproduction_saved_uses_the_one_helper():
    from unlearnkit.reproduce.reference import EXTRACTORS

    r = {"cost": {"seconds": 1.0, "retrain_seconds": 8.0, "grad_evals": 3, "retrain_grad_evals": 4}}
    assert EXTRACTORS["time_saved_pct"](r) == pytest.approx(100 * cost_saved(1.0, 8.0))
    assert EXTRACTORS["grad_evals_saved_pct"](r) == pytest.approx(100 * cost_saved(3, 4))
    assert EXTRACTORS["time_saved_pct"]({"cost": {"seconds": 1.0, "retrain_seconds": 0.0}}) is None
    assert np.isclose(cost_saved(1, 4), 0.75)
