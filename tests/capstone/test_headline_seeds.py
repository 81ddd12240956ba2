"""No headline number without its seeds and interval: the generated tables, the documentation's tables and the
committed data files either carry means over at least five seeds with an interval or say they are a diagnostic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unlearnkit.experiments import budget as B
from unlearnkit.experiments import budget_tables as BT

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "unlearnkit" / "experiments" / "data"
DOCS = [ROOT / "docs" / "results.md", *sorted((ROOT / "docs" / "frontiers").glob("*.md"))]


def test_generated_blocks_are_what_the_writer_produces():
    for path, text in BT.generated_docs(ROOT).items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.relative_to(ROOT)} differs from its generated blocks: run "
            "unlearnkit.experiments.budget_tables.write_docs()")


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_accuracy_cell_has_an_interval_or_a_diagnostic_label(path):
    bad = BT.unlabelled_claims(path.read_text(encoding="utf-8"))
    assert not bad, f"{path.relative_to(ROOT)}: numbers without seeds and interval or a diagnostic label: {bad}"


def test_headline_rows_have_five_seeds_and_an_interval():
    rows = B.budget_rows()
    block = BT.headline_block()
    for name, title in BT.HEADLINE_METHODS.items():
        r = rows[name]
        assert r["n_seeds"] >= 5
        for key in ("test_acc", "retrain_test_acc", "budget_test_acc", "advantage"):
            assert r[key]["low"] <= r[key]["mean"] <= r[key]["high"], (name, key)
        line = next(ln for ln in block.splitlines() if ln.startswith(f"| {title} |"))
        assert line.count("[") == 4 and r["reading"] in line


def test_checker_flags_a_bare_number_and_accepts_intervals_and_labels():
    bare = "Caption.\n\n| method | test acc |\n|---|---|\n| op | 0.922 |\n"
    assert len(BT.unlabelled_claims(bare)) == 1
    assert not BT.unlabelled_claims(bare.replace("0.922", "0.919 [0.893, 0.945]"))
    assert not BT.unlabelled_claims(bare.replace("Caption.", "Seed 0, single draw."))
    assert not BT.unlabelled_claims(bare.replace("| op | 0.922 |", "| op | - |"))
    # a header that merely contains the letters (dp_accounting) is not an accuracy column
    assert not BT.unlabelled_claims("x\n\n| dp_accounting |\n|---|\n| 0.5 |\n")


def test_splice_needs_its_markers():
    begin, end = BT.block_markers("x")
    assert BT.splice(f"a\n{begin}\nold\n{end}\nb", "x", "new") == f"a\n{begin}\nnew\n{end}\nb"
    with pytest.raises(ValueError, match="markers"):
        BT.splice("no markers", "x", "new")


def _draws(d: dict) -> str:
    return str(d.get("draws") or (d.get("meta") or {}).get("draws") or (d.get("precomputed") or {}).get("draws")
               or "")


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json")), ids=lambda p: p.name)
def test_data_files_are_seeded_or_labelled(path):
    d = json.loads(path.read_text(encoding="utf-8"))
    if "summary" in d:  # seeded: every row over at least five seeds with its intervals
        for r in d["summary"]:
            assert r["n_seeds"] >= 5, (path.name, r["method"])
            assert r["advantage"]["low"] <= r["advantage"]["mean"] <= r["advantage"]["high"]
    else:
        label = _draws(d).lower()
        assert any(w in label for w in BT.DIAGNOSTIC_WORDS), (
            f"{path.name}: neither a per-seed summary nor a 'draws' label saying it is a diagnostic")


def test_regimes_summary_is_the_summary_of_their_seeds():
    d = json.loads(BT.REGIMES_PATH.read_text(encoding="utf-8"))
    assert set(d["per_seed"]) == set(BT.BUDGET_REGIMES)
    again = {r["method"]: r for r in B.summarize(d["per_seed"])}
    for r in d["summary"]:
        assert r["n_seeds"] >= 5 and r["advantage"] == pytest.approx(again[r["method"]]["advantage"])
    for lab, runs in d["per_seed"].items():
        method, profile, over = BT.BUDGET_REGIMES[lab]
        for r in runs:
            assert (r["registered"], r["profile"], r["overrides"]) == (method, profile, over)
            assert r["advantage"] == pytest.approx(r["test_acc"] - r["budget_test_acc"])


def test_measure_seed_refuses_settings_it_cannot_match():
    with pytest.raises(ValueError, match="overrides"):
        B.measure_seed("r2d", 0, lr=0.1)
    with pytest.raises(ValueError, match="profile"):
        B.measure_seed("rrdu", 0, profile="paper")
