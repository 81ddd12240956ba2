"""docs/frontiers/reproduction.md is written from the committed runs, and its rows compare like with like."""

from __future__ import annotations

import pytest

from unlearnkit.reproduce import report as RP
from unlearnkit.reproduce import runner as R
from unlearnkit.reproduce.reference import REFERENCES


@pytest.fixture(scope="module")
def data() -> dict:
    return RP.load_reproduction()


def test_committed_page_is_what_the_writer_produces(data):
    assert RP.REPRODUCTION_DOC.read_text(encoding="utf-8") == RP.reproduction_markdown(data), (
        "docs/frontiers/reproduction.md differs from the writer's output: run "
        "unlearnkit.reproduce.report.write_reproduction_doc()")


def _rows(data: dict, paper: str) -> dict:
    return {r["id"]: r for r in R.compare(paper, data["papers"][paper]["methods"])}


def test_rows_that_measure_another_quantity_show_no_number_and_say_what_they_need(data):
    rrdu, d2d, pdudt = _rows(data, "rrdu"), _rows(data, "d2d_r2d"), _rows(data, "pdudt")
    for row in (rrdu["t3_mnist_rrdu_asr"], rrdu["fig1_mnist_ddp_asr"], rrdu["fig1_mnist_dpsgd_asr"],
                d2d["t3_r2d14_mia"]):
        assert row["ours"] is None and row["closest"] is None, row["id"]
        assert "a comparable run needs" in row["closest_differs"], row["id"]
    assert "all triggered test images" in rrdu["t3_mnist_rrdu_asr"]["closest_differs"]
    assert "backdoor" in d2d["t3_r2d14_mia"]["closest_differs"]
    # the quick PDUDT run records no attack precision: nothing is printed beside the paper's 49.9 / 65.3 / 49.4
    for rid in ("t3_mnist_pdudt_mia", "t3_mnist_origin_mia", "t3_mnist_retrain_mia"):
        assert pdudt[rid]["closest"] is None and "records no such number" in pdudt[rid]["closest_differs"]
    page = RP.REPRODUCTION_DOC.read_text(encoding="utf-8")
    assert "53.25" not in page and "0.013" not in page and "65.76" not in page


def test_a_number_beside_the_papers_measures_the_papers_quantity(data):
    refs = {r.id: r for r in REFERENCES}
    for paper in data["papers"]:
        for row in _rows(data, paper).values():
            if row["paper"] is None or (row["ours"] is None and row["closest"] is None):
                continue
            ref = refs[row["id"]]
            assert ref.same_metric and ref.comparable_offline, row["id"]


def test_compact_result_keeps_what_compare_reads():
    full = {"method": "rrdu", "profile": "quick", "dataset": "digits", "request": "forget 60 samples of client 0",
            "metrics": {"test_acc": 0.9, "retrain_test_acc": 0.91, "backdoor_asr": 0.0, "mia_auc": 0.5},
            "cost": {"grad_evals": 10, "retrain_grad_evals": 20, "seconds": 1.0, "retrain_seconds": 2.0},
            "certificate": {"epsilon": 1.0, "delta": 1e-5, "sigma": 0.0, "constants": {"train_rho": 0.03}},
            "diagnostics": {"budget_retrain_model": {"test_acc": 0.8}, "large": list(range(100))},
            "params": [1.0] * 100}
    small = RP.compact_result(full)
    assert "params" not in small and small["diagnostics"] == {"budget_retrain_model": {"test_acc": 0.8}}
    runs = lambda res: {"rrdu": {"status": "ok", "result": res}}  # noqa: E731
    assert R.compare("rrdu", runs(small)) == R.compare("rrdu", runs(full))
    # a noisily trained start is not the paper's noise-free Table 3 run
    row = next(r for r in R.compare("rrdu", runs(small)) if r["id"] == "t3_mnist_rrdu_acc")
    assert "train_rho" in row["closest_differs"]
