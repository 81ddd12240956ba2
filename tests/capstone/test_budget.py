"""Equal-budget retraining: every registered method has an advantage over seeds, its interval and its label."""

from __future__ import annotations

import math

import pytest

from unlearnkit.experiments import budget as B
from unlearnkit.experiments import capstone_table as CT
from unlearnkit.experiments.registry import METHODS


@pytest.fixture(scope="module")
def data() -> dict:
    return B.load_budget()


def test_every_registered_method_has_an_advantage_row(data):
    names = [s.name for s in METHODS]
    assert set(B.FAMILY) == set(names)
    assert set(data["per_seed"]) == set(names), "regenerate data/budget_quick.json: budget.write_budget()"
    rows = B.budget_rows(data)
    for n in names:
        r = rows[n]
        assert r["n_seeds"] >= 5 and sorted(r["seeds"]) == sorted(set(r["seeds"]))
        adv = r["advantage"]
        assert adv["low"] <= adv["mean"] <= adv["high"]
        assert r["label"] == B.label(adv["low"], adv["high"]) and r["reading"] == B.LABELS[r["label"]]
        assert r["cost_saved"] is not None


def test_committed_summary_is_the_summary_of_the_committed_seeds(data):
    again = {r["method"]: r for r in B.summarize(data["per_seed"])}
    for r in data["summary"]:
        assert r["advantage"] == pytest.approx(again[r["method"]]["advantage"])
        assert r["label"] == again[r["method"]]["label"]


def test_per_seed_rows_spend_the_methods_budget(data):
    for name, runs in data["per_seed"].items():
        for r in runs:
            assert r["advantage"] == pytest.approx(r["test_acc"] - r["budget_test_acc"])
            assert r["cost_saved"] == pytest.approx(1 - r["grad_evals"] / r["retrain_grad_evals"])
            # rounded to whole steps: within one step's cost of the method's gradient evaluations
            per_step = r["retrain_grad_evals"] / r["full_steps"]
            assert abs(r["budget_grad_evals"] - r["grad_evals"]) <= per_step, name


def test_t_interval_and_label():
    mean, lo, hi = B.t_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    # t_{0.975, 4} = 2.776, sd = 1.581
    assert mean == 3.0 and hi - mean == pytest.approx(2.776 * 1.5811 / math.sqrt(5), rel=1e-3)
    assert B.label(0.01, 0.2) == "better" and B.label(-0.2, -0.01) == "worse" and B.label(-0.1, 0.1) == "same"
    with pytest.raises(ValueError, match="values"):
        B.t_interval([1.0])
    assert B.equal_steps(5120, 9600, 300) == 160 and B.equal_steps(1, 10**6, 100) == 1
    with pytest.raises(ValueError, match="retrain_grad_evals"):
        B.equal_steps(10, 0, 100)


def test_live_seed_matches_the_committed_measurement(data):
    row = B.measure_seed("output_perturbation", 0)
    committed = next(r for r in data["per_seed"]["output_perturbation"] if r["seed"] == 0)
    for key in ("test_acc", "budget_test_acc", "advantage", "budget_grad_evals"):
        assert row[key] == pytest.approx(committed[key], abs=1e-6), key


def test_capstone_rows_carry_the_advantage(data):
    rows = CT.capstone_rows(CT.load_measured()["results"])
    summary = B.budget_rows(data)
    for r in rows:
        s = summary[r["method"]]
        assert r["advantage"] == pytest.approx(s["advantage"]["mean"])
        assert r["advantage_low"] <= r["advantage"] <= r["advantage_high"]
        assert r["advantage_label"] == s["label"] and r["advantage_n_seeds"] >= 5
    missing = CT.capstone_rows(CT.load_measured()["results"], budget={})
    assert all(r["advantage"] is None and r["advantage_label"] == "not measured" for r in missing)


def test_docs_table_is_the_committed_summary(data):
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "frontiers" / "budget.md").read_text(encoding="utf-8")
    assert B.markdown_table(data["summary"]) in doc, "regenerate the table of docs/frontiers/budget.md"
