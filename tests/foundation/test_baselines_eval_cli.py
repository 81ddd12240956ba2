import json

import numpy as np
import pytest

import unlearnkit as uk
from unlearnkit.evaluate import auc, mia_auc, report
from unlearnkit.experiments import available_methods, centralized_setup
from unlearnkit.experiments.centralized import CentralProfile
from unlearnkit.experiments.registry import registry_errors
from unlearnkit.methods.baselines import (Finetune, FinetuneConfig, GradientAscent, GradientAscentConfig, Retrain,
                                          RetrainConfig)
from unlearnkit.train import SGDConfig

SMALL = CentralProfile(train=SGDConfig(steps=250, lr=0.5, batch_size=32, weight_decay=1e-4, checkpoint_every=50))


@pytest.fixture(scope="module")
def setup():
    return centralized_setup(SMALL, seed=0, device="cpu")


def test_auc_matches_definition():
    rng = np.random.default_rng(0)
    pos, neg = rng.normal(1, 1, 50), rng.normal(0, 1, 60)
    brute = np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg])
    assert auc(pos, neg) == pytest.approx(brute)
    assert auc(np.ones(3), np.ones(4)) == 0.5


def test_retrain_forgets_a_class_and_finetune_does_not(setup):
    state, request = setup
    g = uk.make_generator(1)
    re = Retrain().unlearn(state, request, RetrainConfig(), generator=g)
    ft = Finetune().unlearn(state, request, FinetuneConfig(steps=50, lr=0.1), generator=g)
    m_re = report(state.flat, re.params, state.dataset, request, original=state.params)
    m_ft = report(state.flat, ft.params, state.dataset, request)
    assert m_re["forget_acc"] < 0.05 and m_re["original_forget_acc"] > 0.9
    assert m_ft["forget_acc"] > 0.5  # fine-tuning barely forgets a class it learned well
    assert re.certificate.epsilon == 0 and ft.certificate is None
    assert re.cost.grad_evals == state.cost.grad_evals and ft.cost.grad_evals == 50 * 32


def test_gradient_ascent_stops_by_rule_and_damages_less_than_cap(setup):
    state, request = setup
    res = GradientAscent().unlearn(state, request, GradientAscentConfig(max_steps=300, lr=0.05),
                                   generator=uk.make_generator(2))
    assert res.extras["stopped_at"] is not None and res.extras["stopped_at"] < 300
    assert res.history[-1]["forget_acc"] <= res.extras["target_forget_acc"]
    assert res.cost.grad_evals == res.extras["stopped_at"] * 32


def test_mia_detects_memorised_samples(digits):
    # a model trained on 60 samples for long memorises them: its MIA AUC is high; on unseen samples it is ~0.5
    g = uk.make_generator(0)
    from unlearnkit.models import FlatParams, make_model
    from unlearnkit.train import train_sgd

    fp = FlatParams(make_model("mlp", digits.input_shape, 10, generator=g, hidden=(64,)))
    # random members and non-members: sklearn's digits are ordered by writer, so contiguous ranges differ
    perm = np.random.default_rng(0).permutation(digits.n_train)
    idx = perm[:60]
    st_ = train_sgd(fp, digits, idx, SGDConfig(steps=400, lr=0.5, batch_size=30), generator=g)
    x, y = digits.train_subset(idx)
    xo, yo = digits.train_subset(perm[60:260])
    assert mia_auc(fp, st_.params, x, y, digits.x_test, digits.y_test) > 0.75
    assert abs(mia_auc(fp, st_.params, xo, yo, digits.x_test, digits.y_test) - 0.5) < 0.15


def test_baseline_config_validation():
    with pytest.raises(ValueError, match="lr"):
        FinetuneConfig(lr=0.0)
    with pytest.raises(ValueError, match="stop_forget_acc"):
        GradientAscentConfig(stop_forget_acc=1.5)


def test_every_method_module_imports():
    assert registry_errors() == {}
    assert {"retrain", "finetune", "gradient_ascent"} <= set(available_methods())


@pytest.mark.parametrize("method", ["retrain", "finetune", "gradient_ascent"])
def test_cli_run_writes_result_json(tmp_path, method, capsys):
    from unlearnkit.__main__ import main

    assert main(["run", method, "--profile", "quick", "--out", str(tmp_path), "--no-progress"]) == 0
    res = json.loads((tmp_path / "result.json").read_text())
    assert res["method"] == method and res["profile"] == "quick" and res["dataset"] == "digits"
    assert res["seed"] == 0 and res["unlearnkit_version"] == uk.__version__ and res["status"] == "complete"
    for key in uk.experiments.registry.RESULT_METRICS:
        assert isinstance(res["metrics"][key], float)
    for key in ("grad_evals", "seconds", "retrain_grad_evals", "retrain_seconds"):
        assert key in res["cost"]
    if method == "retrain":
        assert res["metrics"]["forget_acc"] < 0.05 and res["certificate"]["epsilon"] == 0.0
    if method == "finetune":
        assert res["metrics"]["forget_acc"] > 0.5 and res["certificate"] is None
    assert "forget accuracy" in capsys.readouterr().out


def test_cli_errors_are_clean(capsys):
    from unlearnkit.__main__ import main

    assert main(["run", "no_such_method", "--out", "/tmp/x"]) == 2
    assert "method='no_such_method'" in capsys.readouterr().err
    assert main(["run", "retrain", "--profile", "nope", "--out", "/tmp/x"]) == 2
    assert "profile='nope'" in capsys.readouterr().err


def test_cli_doctor_and_list(capsys):
    from unlearnkit.__main__ import main

    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "device:" in out and "digits=yes" in out and "torch" in out
    assert main(["list"]) == 0
    assert "retrain" in capsys.readouterr().out


def test_bench_harness_writes_json(tmp_path):
    from unlearnkit.benchmarks import format_table, machine_info, register_bench, run_benches

    @register_bench("_selftest", description="harness self-test")
    def _b(*, quick):
        return [{"n": 1, "seconds": 0.5}, {"n": 2, "seconds": 0.25, "extra": "x"}]

    out = tmp_path / "b.json"
    report_ = run_benches(["_selftest"], quick=True, out=out, echo=lambda s: None)
    data = json.loads(out.read_text())
    assert data["benchmarks"]["_selftest"]["rows"][1]["extra"] == "x"
    assert data["machine"]["device"] in ("cpu", "cuda", "cuda:0") and "torch" in machine_info()
    assert "extra" in format_table(report_["benchmarks"]["_selftest"]["rows"])
    with pytest.raises(ValueError, match="bench="):
        run_benches(["nope"], echo=lambda s: None)
