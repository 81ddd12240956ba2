"""Seed bands on the course's frontier figures: the interval, the pooling of per-seed runs, and every builder
that draws them (a band trace per method, the interval named in legend and hover)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from unlearnkit.experiments.seed_pool import pool_rows
from unlearnkit.viz._style import style_problems
from unlearnkit.viz.bands import add_seed_band, interval_label, per_seed, seed_interval, seeds_text

SEEDS = (0, 1, 2)


def _bands(fig):
    return [t for t in fig.data if t.fill == "toself"]


# ---------------------------------------------------------------------------------------------------------
# the interval and the pooling
# ---------------------------------------------------------------------------------------------------------

def test_t_interval_matches_scipy_and_minmax_is_the_range():
    v = [0.81, 0.84, 0.79]
    m, lo, hi = seed_interval(v)
    half = stats.t.ppf(0.975, 2) * np.std(v, ddof=1) / math.sqrt(3)
    assert m == pytest.approx(np.mean(v)) and lo == pytest.approx(m - half) and hi == pytest.approx(m + half)
    assert seed_interval(v, "minmax") == pytest.approx((np.mean(v), 0.79, 0.84))
    assert seed_interval([0.5]) == (0.5, 0.5, 0.5)
    assert seed_interval([0.5, None, float("nan"), 0.7], "minmax") == pytest.approx((0.6, 0.5, 0.7))
    with pytest.raises(ValueError, match="interval"):
        seed_interval(v, "sd")
    with pytest.raises(ValueError, match="finite"):
        seed_interval([None])
    assert interval_label(3) == "95 % t-interval over 3 seeds"
    assert interval_label(8, "minmax", "trial") == "min-max range over 8 trials"
    assert "seeds 0, 1, 2" in seeds_text(SEEDS) and "no band" in seeds_text([0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=8))
def test_intervals_hold_the_mean_and_the_range_holds_every_seed(v):
    m, lo, hi = seed_interval(v)
    assert lo - 1e-9 <= m <= hi + 1e-9
    m2, lo2, hi2 = seed_interval(v, "minmax")
    assert m2 == pytest.approx(m) and lo2 == min(v) and hi2 == max(v)


def test_pool_rows_means_each_metric_and_keeps_the_per_seed_values():
    runs = [[{"method": "a", "epsilon": 1.0, "acc": 0.5 + s / 10, "sigma": 2.0},
             {"method": "ref", "epsilon": None, "acc": 0.9}] for s in SEEDS]
    runs[2] = runs[2][:1]  # seed 2 has no reference row
    out = pool_rows(runs, SEEDS, by=("method", "epsilon"), metrics=("acc",))
    assert out[0]["acc"] == pytest.approx(0.6) and out[0]["acc_seeds"] == pytest.approx([0.5, 0.6, 0.7])
    assert out[0]["sigma"] == 2.0 and out[0]["seeds"] == [0, 1, 2]
    assert out[1]["seeds"] == [0, 1] and out[1]["acc_seeds"] == [0.9, 0.9, None] and out[1]["acc"] == 0.9
    assert per_seed(out[1], "acc") == [0.9, 0.9] and per_seed({"acc": 0.3}, "acc") == [0.3]
    with pytest.raises(ValueError, match="one run per seed"):
        pool_rows(runs[:2], SEEDS, by=("method",), metrics=("acc",))
    with pytest.raises(ValueError, match="repeats"):
        pool_rows(runs, (0, 0, 1), by=("method",), metrics=("acc",))


def test_add_seed_band_names_the_interval_in_legend_and_hover():
    import plotly.graph_objects as go

    fig = go.Figure()
    add_seed_band(fig, [1, 4], [[0.8, 0.82, 0.84], [0.9, 0.9, 0.93]], name="m", color="#1f77b4")
    band, line = fig.data
    assert band.fill == "toself" and band.name == "m: 95 % t-interval over 3 seeds" and band.legendgroup == "m"
    assert line.legendgroup == "m" and list(line.y) == pytest.approx([0.82, 0.91])
    assert "95 % t-interval over 3 seeds: [" in line.hovertext[0] and "epsilon = 1" in line.hovertext[0]
    lo, hi = seed_interval([0.8, 0.82, 0.84])[1:]
    assert band.y[0] == pytest.approx(hi) and band.y[-1] == pytest.approx(lo)  # upper edge out, lower edge back


# ---------------------------------------------------------------------------------------------------------
# the builders: one band per method, the interval named
# ---------------------------------------------------------------------------------------------------------

def _pooled(points, keys):
    rng = np.random.default_rng(0)
    out = []
    for p in points:
        q = dict(p, seeds=list(SEEDS))
        for k in keys:
            vals = list(p[k] + rng.normal(0, 0.01, len(SEEDS)))
            q[k], q[f"{k}_seeds"] = float(np.mean(vals)), vals
        out.append(q)
    return out


def test_nf_frontier_figure_draws_a_band_per_method_and_mode():
    from unlearnkit.viz.noisy_finetune import nf_frontier_figure

    pts = _pooled([{"method": m, "mode": mode, "epsilon": e, "test_acc": 0.8, "asr_gap": 0.1}
                   for m in ("gradient_clipping", "output_perturbation") for mode in ("sound", "paper")
                   for e in (1.0, 4.0)], ("test_acc", "asr_gap"))
    fig = nf_frontier_figure({"points": pts, "retrain": {"test_acc": 0.9, "asr_gap": 0.0},
                              "finetune": {"test_acc": 0.85, "asr_gap": 0.3}, "seeds": list(SEEDS)})
    bands = _bands(fig)
    assert len(bands) == 8  # 2 methods x 2 modes x 2 panels
    assert {b.name for b in bands} == {f"{m} ({mode}): 95 % t-interval over 3 seeds"
                                       for m in ("gradient_clipping", "output_perturbation")
                                       for mode in ("sound", "paper")}
    lines = [t for t in fig.data if t.fill != "toself"]
    assert all("95 % t-interval over 3 seeds: [" in t.hovertext[0] for t in lines)
    assert "seeds 0, 1, 2" in fig.layout.title.text and not style_problems(fig)


def test_newton_frontier_figure_draws_a_band_per_mode():
    from unlearnkit.viz.newton import newton_frontier_figure

    rows = _pooled([{"mode": m, "epsilon": e, "test_acc": a, "retrain_test_acc": 0.9}
                    for m, e, a in (("sound", 1, 0.5), ("sound", 4, 0.8), ("paper", 1, 0.85), ("paper", 4, 0.88))],
                   ("test_acc",))
    fig = newton_frontier_figure(rows, interval="minmax")
    assert [b.name for b in _bands(fig)] == ["sound calibration: min-max range over 3 seeds",
                                             "paper calibration: min-max range over 3 seeds"]
    assert "min-max range over 3 seeds: [" in fig.data[1].hovertext[0] and not style_problems(fig)


def test_rrdu_frontier_figure_draws_the_precomputed_seeds_as_bands():
    from unlearnkit.experiments.rrdu.frontier import load_precomputed_frontier
    from unlearnkit.viz.rrdu_frontier import rrdu_frontier_figure

    one = load_precomputed_frontier()
    fr = load_precomputed_frontier(seeds=SEEDS)
    row = fr["sound"]["rrdu_exact"][0]
    assert row["clean_acc_seeds"][0] == one["sound"]["rrdu_exact"][0]["clean_acc"]  # seed 0 is the committed run
    assert row["clean_acc"] == pytest.approx(np.mean(row["clean_acc_seeds"])) and len(row["clean_acc_seeds"]) == 3
    assert fr["precomputed"]["seeds"] == [0, 1, 2] and fr["precomputed"]["setup"] == one["precomputed"]["setup"]
    fig = rrdu_frontier_figure(fr)
    methods = [(fam, m) for fam in ("sound", "paper") for m, rows in fr[fam].items() if rows]
    assert len(_bands(fig)) == 2 * len(methods)
    assert all(b.name.endswith("95 % t-interval over 3 seeds") for b in _bands(fig)) and not style_problems(fig)
    assert not _bands(rrdu_frontier_figure(one))  # one seed: lines only
    with pytest.raises(ValueError, match="not precomputed"):
        load_precomputed_frontier(seeds=(0, 9))


def test_capstone_frontier_figure_draws_pooled_points_with_a_band():
    from unlearnkit.viz.capstone import frontier_figure

    pts = _pooled([{"method": m, "epsilon": e, "test_acc": 0.8} for m in ("R2D (sound)", "D2D (sound)")
                   for e in (0.25, 1.0, 4.0)], ("test_acc",))
    fig = frontier_figure(pts + [{"method": "finetune", "epsilon": None, "test_acc": 0.9}], retrain=0.91)
    assert [b.name for b in _bands(fig)] == ["R2D (sound): 95 % t-interval over 3 seeds",
                                             "D2D (sound): 95 % t-interval over 3 seeds"]
    assert not style_problems(fig)


def test_descend_rewind_frontier_pools_its_seeds():
    from unlearnkit.experiments.descend_rewind.frontier import descend_rewind_frontier

    one = [descend_rewind_frontier("psgd", epsilons=(1.0,), modes=("sound",), seed=s) for s in (0, 1)]
    pooled = descend_rewind_frontier("psgd", epsilons=(1.0,), modes=("sound",), seeds=(0, 1))
    r2d = [r for r in pooled if r["method"] == "R2D"][0]
    each = [[r for r in run if r["method"] == "R2D"][0]["test_acc"] for run in one]
    assert r2d["test_acc_seeds"] == pytest.approx(each) and r2d["test_acc"] == pytest.approx(np.mean(each))


# ---------------------------------------------------------------------------------------------------------
# D2D's stall in the nonconvex regime (notebook 03)
# ---------------------------------------------------------------------------------------------------------

def test_stall_figure_shows_d2d_stalling_where_r2d_reaches_retraining():
    from unlearnkit.viz.descend_rewind import TOY_SETTINGS, stall_figure, stall_sweep

    T = TOY_SETTINGS["nonconvex"]["T"]
    rows = stall_sweep("nonconvex", (0, 120, 180, T), trials=4)
    d2d = {r["K"]: r["distance"] for r in rows if r["method"] == "D2D"}
    r2d = {r["K"]: r["distance"] for r in rows if r["method"] == "R2D"}
    assert d2d[T] == pytest.approx(d2d[120], rel=0.05) and d2d[T] > rows[0]["original"]  # stalled, in the other basin
    assert r2d[T] < 1e-9 < r2d[180]  # rewound to the fork: R2D replays retraining
    fig = stall_figure(rows)
    assert [b.name for b in _bands(fig)] == ["R2D: 95 % t-interval over 4 trials", "D2D: 95 % t-interval over 4 trials"]
    assert any("original" in (t.name or "") for t in fig.data)
    assert "K = 120" in fig.data[1].hovertext[1] and not style_problems(fig)
    with pytest.raises(ValueError, match="empty"):
        stall_figure([])


def test_nf_frontier_pools_points_and_references_over_seeds():
    from unlearnkit.experiments.noisy_finetune.lab import nf_frontier

    fr = nf_frontier(epsilons=(4.0,), modes=("sound",), methods=("output_perturbation",), seeds=(0, 1))
    assert fr["seeds"] == [0, 1] and len(fr["points"]) == 1
    p = fr["points"][0]
    assert len(p["test_acc_seeds"]) == 2 and p["test_acc"] == pytest.approx(np.mean(p["test_acc_seeds"]))
    assert fr["retrain"]["test_acc"] == pytest.approx(np.mean(fr["retrain"]["test_acc_seeds"]))


def test_pdudt_frontier_figure_draws_a_band_per_row_in_each_panel():
    from unlearnkit.viz.pdudt import pdudt_frontier_figure

    keys = ("test_acc", "backdoor_asr", "dist_to_retrain")
    rows = {r: _pooled([{"epsilon": e, "test_acc": 0.8, "backdoor_asr": 0.05, "dist_to_retrain": 0.02 / e}
                        for e in (0.5, 2.0, 8.0)], keys) for r in ("sound / sum", "sound / paper")}
    ref = {k: 0.5 for k in keys}
    fig = pdudt_frontier_figure({"rows": rows, "references": {"retrain": ref, "original": ref}, "seeds": [0, 1, 2]})
    bands = _bands(fig)
    assert len(bands) == 6 and {b.name for b in bands} == {"sound / sum: 95 % t-interval over 3 seeds",
                                                           "sound / paper: 95 % t-interval over 3 seeds"}
    assert min(min(b.y) for b in bands if b.xaxis == "x3") > 0  # the log panel's band stays positive
    assert fig.layout.yaxis3.type == "log" and not style_problems(fig)


def test_notebook_03_draws_the_stall_in_one_call_with_its_lesson():
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[2] / "notebooks" / "03_descend_or_rewind.ipynb").read_text())
    cells = ["".join(c["source"]) for c in nb["cells"]]
    i = next(i for i, c in enumerate(cells) if "stall_figure(stall_sweep(" in c)
    assert nb["cells"][i]["cell_type"] == "code" and len(cells[i].strip().splitlines()) == 1
    assert nb["cells"][i + 1]["cell_type"] == "markdown" and cells[i + 1].startswith("**D2D stalls")
