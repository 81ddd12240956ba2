"""The capstone's comparison table: every registered method, the released model's contract fields, the audit join."""

from __future__ import annotations

import copy
import json
import math

import pytest

from unlearnkit.experiments import capstone_table as CT
from unlearnkit.experiments.registry import METHODS

AUDIT_KEYS = {"method", "mode", "observer", "certified_epsilon", "lower_bound", "point_estimate", "verdict",
              "n_trials", "statistic"}


@pytest.fixture(scope="module")
def measured() -> dict:
    return CT.load_measured()


def test_every_registered_method_has_a_row(measured):
    names = [s.name for s in METHODS]
    assert set(measured["results"]) == set(names), \
        "regenerate data/capstone_quick.json: capstone_table.write_measured()"
    rows = CT.capstone_rows(measured["results"])
    assert sorted(r["method"] for r in rows) == sorted(names)
    assert set(CT.SETTING) == set(names)
    # grouped: each (setting, task) appears as one contiguous block, centralized first
    groups = [r["group"] for r in rows]
    assert all(groups.index(g) + groups.count(g) - 1 == max(i for i, x in enumerate(groups) if x == g) for g in groups)
    settings = [r["setting"] for r in rows]
    assert settings == sorted(settings, key=lambda s: s != "centralized")


def test_rows_carry_the_released_models_metrics_and_the_contract_guarantee(measured):
    for r in CT.capstone_rows(measured["results"]):
        res = measured["results"][r["method"]]
        m, g = res["metrics"], res["guarantee"]
        assert r["test_acc"] == pytest.approx(m["test_acc"])
        assert r["retrain_test_acc"] == pytest.approx(m["retrain_test_acc"])
        key = "backdoor_asr" if m.get("backdoor_asr") is not None else "forget_acc"
        assert r["forget"] == pytest.approx(m[key]) and r["retrain_forget"] == pytest.approx(m[f"retrain_{key}"])
        assert r["certified"] == g["certified"]
        if g["certified"]:
            assert r["epsilon"] == pytest.approx(float(g["epsilon"])) and r["guarantee"].endswith("sound")
        else:
            assert math.isinf(r["epsilon"]) and r["guarantee"].startswith("not certified (epsilon = inf")
        assert r["cost_ratio"] == pytest.approx(res["cost"]["grad_evals"] / res["cost"]["retrain_grad_evals"])


def test_diagnostics_never_leak_into_the_row(measured):
    res = copy.deepcopy(measured["results"]["output_perturbation"])
    res["diagnostics"]["noisy_phase_model"] = {"test_acc": 0.123, "backdoor_asr": 0.987}
    row = CT.method_row("output_perturbation", res)
    assert row["test_acc"] == pytest.approx(res["metrics"]["test_acc"])
    assert row["forget"] == res["metrics"]["backdoor_asr"]
    # a paper-mode certificate is not certified: epsilon is infinity and the claim is kept as text
    res["guarantee"] = {"epsilon": "inf", "delta": 1e-5, "certified": False, "mode": "paper", "claimed_epsilon": 1.0}
    row = CT.method_row("output_perturbation", res)
    assert math.isinf(row["epsilon"]) and row["guarantee"] == "not certified (epsilon = inf; paper mode claims 1)"
    assert row["reading"].startswith("no certificate")


def test_live_run_matches_the_committed_measurement(measured):
    live = CT.measure(["rrdu"])["results"]["rrdu"]  # about 1 s; cached for the rest of the process
    assert CT.measure(["rrdu"])["results"]["rrdu"] is live
    ref = measured["results"]["rrdu"]
    assert live["guarantee"] == ref["guarantee"]
    assert live["metrics"]["test_acc"] == pytest.approx(ref["metrics"]["test_acc"], abs=0.02)
    assert "released" not in live and json.dumps(live)


def test_audit_join_on_method_and_mode(measured):
    audit = [dict(method="r2d", mode="sound", observer="final model", certified_epsilon=1.0, lower_bound=0.3,
                  point_estimate=0.5, verdict="not refuted", n_trials=1000, statistic="cp_split"),
             dict(method="r2d", mode="sound", observer="checkpoint", certified_epsilon=1.0, lower_bound=1.4,
                  point_estimate=2.0, verdict="refuted", n_trials=1000, statistic="gdp"),
             dict(method="d2d", mode="paper", observer="final model", certified_epsilon=1.0, lower_bound=0.7,
                  point_estimate=None, verdict="not refuted", n_trials=100, statistic="cp_split")]
    rows = {r["method"]: r for r in CT.capstone_rows(measured["results"], audit_rows=audit)}
    # two rows for one key: the highest lower bound wins (one refutation rejects a certificate)
    assert rows["r2d"]["audit"] == "lower bound 1.4 (refuted, observer: checkpoint)"
    assert rows["r2d"]["audit_row"]["statistic"] == "gdp"
    assert rows["d2d"]["audit"] == "not audited"  # d2d's quick profile is sound, the row is paper mode
    assert CT.audit_cell("d2d", "paper", audit)[0] == "lower bound 0.7 (not refuted, observer: final model)"


def test_not_audited_fallback(tmp_path, measured):
    assert CT.load_audit_rows(tmp_path / "missing.json") == [] and CT.load_audit_rows(None) == []
    for r in CT.capstone_rows(measured["results"], audit_rows=None):
        assert r["audit"] == "not audited" and r["audit_row"] is None
    with pytest.raises(KeyError, match="pdudt"):
        CT.capstone_rows({k: v for k, v in measured["results"].items() if k != "pdudt"})
    with pytest.raises(FileNotFoundError, match="write_measured"):
        CT.load_measured(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="methods"):
        CT.measure(["no_such_method"])


def test_committed_audit_rows_are_well_formed(measured):
    rows = CT.load_audit_rows()
    assert rows, "data/capstone_audit.json is committed"
    names = {s.name for s in METHODS}
    for r in rows:
        assert AUDIT_KEYS <= set(r) and r["method"] in names and r["mode"] in ("paper", "sound", "none")
        assert r.get("source"), f"{r['method']}/{r['mode']}: say which run the numbers come from"
        assert r["verdict"] in ("refuted", "not refuted", "no certificate") or r["verdict"].startswith("not supported: ")
        if r["verdict"] in ("refuted", "not refuted"):
            assert (r["verdict"] == "refuted") == (r["lower_bound"] > float(r["certified_epsilon"]))
    table = {r["method"]: r for r in CT.capstone_rows(measured["results"], audit_rows=rows)}
    assert table["retrain"]["audit"].startswith("lower bound 0 (not refuted")
    # the registry-wide audit covers every registered method in the mode its quick profile runs
    assert all(table[m]["audit"] != "not audited" for m in table if m != "dp_sgd_walk")
    assert table["ddp"]["audit"].startswith("lower bound 1.02 (refuted")


def test_table_html_and_frontier_cover_every_method(measured):
    from unlearnkit.viz.all_methods import certified_frontier_figure, method_table_html

    rows = CT.capstone_rows(measured["results"], audit_rows=CT.load_audit_rows())
    html = method_table_html(rows)
    assert "table-layout:fixed" in html and "max-width:1400px" in html
    assert all(f"<b>{r['method']}</b>" in html for r in rows)
    assert html.count("not certified (epsilon = inf") == sum(not r["certified"] for r in rows)
    # the advantage over equal-budget retraining: its interval, seeds and label in every measured row
    assert "advantage over equal-budget retraining" in html and "(one draw)" in html
    for r in rows:
        if r.get("advantage") is not None:
            cell = f"{r['advantage']:+.3f} [{r['advantage_low']:+.3f}, {r['advantage_high']:+.3f}], " \
                   f"{r['advantage_n_seeds']} seeds"
            assert cell in html, r["method"]
    assert html.count(">better</b>") == sum(r.get("advantage_label") == "better" for r in rows)
    fig = certified_frontier_figure(rows)
    # every method is a legend entry with its own symbol, not a text label (labels overlapped at epsilon 1)
    points = [tr for tr in fig.data if tr.showlegend is not False and tr.legendgroup
              and tr.legendgroup.startswith("method ")]
    assert sorted(tr.name for tr in points) == sorted(r["method"] for r in rows)
    assert len({tr.marker.symbol for tr in points}) == len(points)
    assert not [a for a in fig.layout.annotations if a.text in {r["method"] for r in rows}]
    # no two points overlap: 0.14 decades apart in a column, and nearly equal epsilons share one column
    xy = [(math.log10(tr.x[0]), tr.y[0]) for tr in points if tr.y[0] is not None]
    assert all(abs(a[0] - b[0]) >= 0.13 or abs(a[1] - b[1]) >= 0.05 for i, a in enumerate(xy) for b in xy[:i])
    by_name = {tr.name: tr for tr in points}
    if "rrdu" in by_name and "d2d" in by_name:  # RR-DU's epsilon is 1 - 1e-15: the epsilon-1 column
        assert abs(math.log10(by_name["rrdu"].x[0])) < 0.5
    ticks = list(fig.layout.xaxis.ticktext)
    assert ticks[0] == "0 (exact)" and ticks[-1] == "inf (not certified)"
    # a seed band (the released accuracy's interval over seeds) beside every measured point
    bands = [tr for tr in fig.data if tr.hovertext and "seeds" in str(tr.hovertext[0]) and tr.mode == "lines"]
    assert len(bands) == sum(bool(r.get("seeded_test_acc")) for r in rows) > 0
    assert all("95 % t-interval over" in tr.hovertext[0] for tr in bands)  # which interval, in the hover
    assert any((tr.name or "").startswith("95 % t-interval over") for tr in fig.data)  # and in the legend


def test_explorer_filters_by_setting_and_reruns(measured, monkeypatch):
    from unlearnkit.viz import driving
    from unlearnkit.viz.all_methods import AllMethodsExplorer

    ex = AllMethodsExplorer()
    assert ex.last_error is None and all(f"<b>{s.name}</b>" in ex.table.value for s in METHODS)
    with driving(ex):
        ex.setting.value = "decentralized"
        assert "<b>pdudt</b>" in ex.table.value and "<b>r2d</b>" not in ex.table.value
    assert ex.setting.value == "all" and "<b>r2d</b>" in ex.table.value
    # the button's re-run, without running fourteen profiles here: measure() replaced by the committed runs
    monkeypatch.setattr(CT, "measure", lambda **kw: {"meta": {}, "results": measured["results"]})
    ex.button.click()
    assert ex.last_error is None and ex.source == "live run" and "live run" in ex.status.value
