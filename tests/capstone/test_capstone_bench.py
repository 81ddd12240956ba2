"""Benchmarks produce well-formed JSON (no timing thresholds)."""

import json

import nbformat
import pytest

from unlearnkit.benchmarks import available_benches, run_benches


def test_benches_are_registered():
    benches = available_benches()
    assert {"unlearning_cost", "notebooks"} <= set(benches)


def test_unlearning_cost_rows_are_well_formed(tmp_path, monkeypatch):
    from unlearnkit.benchmarks import unlearning_cost as uc

    from unlearnkit.experiments.centralized import CentralProfile
    from unlearnkit.train import SGDConfig

    tiny = CentralProfile(dataset="synthetic", dataset_kwargs={"n_train": 80, "n_test": 40, "dim": 4},
                          model="logreg", model_kwargs={}, request="samples", m=4,
                          train=SGDConfig(steps=15, lr=0.5, batch_size=16, checkpoint_every=5))
    rows = uc.unlearning_cost_rows(methods=["retrain", "gradient_ascent"], profile=tiny, task="tiny")
    assert [r["method"] for r in rows] == ["retrain", "gradient_ascent"]
    for r in rows:
        assert r["task"] == "tiny"
        assert r["grad_evals"] >= 0 and r["retrain_grad_evals"] > 0 and r["seconds"] >= 0
        assert 0 <= r["test_acc"] <= 1
    # retraining as the unlearning method costs what retraining costs
    rt = rows[0]
    assert rt["grad_evals_vs_retrain"] == pytest.approx(1.0)
    # through the harness: JSON with machine info
    monkeypatch.setattr(uc, "unlearning_cost_rows", lambda **kw: rows)
    out = tmp_path / "bench.json"
    run_benches(["unlearning_cost"], quick=True, out=out, echo=lambda s: None)
    data = json.loads(out.read_text())
    assert "machine" in data and data["benchmarks"]["unlearning_cost"]["rows"][0]["method"] == "retrain"


def test_notebook_bench_on_a_tiny_notebook(tmp_path):
    from unlearnkit.benchmarks.notebooks import notebook_rows

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import os\nassert os.environ['UNLEARNKIT_QUICK'] == '1'\nx = [0] * 10**6")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    good = tmp_path / "00_tiny.ipynb"
    nbformat.write(nb, good)
    bad_nb = nbformat.v4.new_notebook()
    bad_nb.cells = [nbformat.v4.new_code_cell("raise RuntimeError('boom')")]
    bad = tmp_path / "01_bad.ipynb"
    nbformat.write(bad_nb, bad)
    rows = notebook_rows([good, bad], timeout=120)
    json.dumps(rows)
    assert rows[0]["ok"] and rows[0]["seconds"] > 0 and rows[0]["peak_mb"] > 1
    assert not rows[1]["ok"] and "boom" in rows[1]["error"]
    assert nbformat.read(good, as_version=4).cells[-1].source.startswith("import os")  # file untouched
    assert rows[0]["mode"] == "quick" and rows[0]["meets_goal"] == (rows[0]["seconds"] < 10)
    assert not rows[1]["meets_goal"]


def test_notebook_bench_full_mode_and_bad_mode(tmp_path):
    from unlearnkit.benchmarks.notebooks import notebook_rows

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import os\nassert os.environ['UNLEARNKIT_QUICK'] == '0'")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "00_full.ipynb"
    nbformat.write(nb, path)
    (row,) = notebook_rows([path], timeout=120, modes=("full",))
    assert row["ok"] and row["mode"] == "full"
    with pytest.raises(ValueError, match="mode='fast' is out of range"):
        notebook_rows([path], modes=("fast",))


def test_rows_of_runners_with_their_own_profile_say_so():
    """A runner that ignores the common set-up (its **kw swallows setup=) gets its own task as the label."""
    from unlearnkit.benchmarks import unlearning_cost as uc

    common = (0.9, "forget class 3 (180 samples)")
    same = {"metrics": {"original_test_acc": 0.9}, "request": common[1], "profile": "quick", "dataset": "digits"}
    own = {"metrics": {"original_test_acc": 0.938}, "request": "forget 60 samples", "profile": "quick",
           "dataset": "digits"}
    assert uc._task_of(same, common, "digits MLP, forget class 3") == "digits MLP, forget class 3"
    label = uc._task_of(own, common, "digits MLP, forget class 3")
    assert label.startswith("own profile 'quick'") and "forget 60 samples" in label
