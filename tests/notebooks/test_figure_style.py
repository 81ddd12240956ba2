"""Every figure and explorer the course notebooks build is readable: log axes labelled in powers of ten (no
``100n``, ``10f``, ``10B``), every legend entry named (no "trace 0"), and no bound plotted as a point far
above the data (a ``3e35`` marker flattened notebook 03's distance plot). The rules are
:func:`unlearnkit.viz._style.style_problems`'s.

The catalogue mirrors the notebooks' calls (quick-mode sizes) with small synthetic inputs where a notebook
feeds an experiment's output; the training-backed explorers (01's dashboard, 06's live world, 08's noise
explorer) are built from the same tiny fixtures as their own tests.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import pytest

from unlearnkit.viz._style import OFF_SCALE, mark_bound, readable, style_problems


def _figures_of(obj):
    if isinstance(obj, go.Figure):
        return [obj]
    return [v for v in vars(obj).values() if isinstance(v, go.FigureWidget)]


POINTS = [
    {"method": "retrain", "epsilon": 0.0, "test_acc": 0.9, "forget_acc": 0.8, "mia_auc": 0.5, "dist_to_retrain": 0.0,
     "grad_evals": 1000, "retrain_grad_evals": 1000},
    *[{"method": m, "epsilon": e, "test_acc": 0.5 + 0.05 * e, "forget_acc": 0.5, "mia_auc": 0.5,
       "dist_to_retrain": 10 / e, "grad_evals": 500, "retrain_grad_evals": 1000}
      for m in ("d2d", "output_perturbation") for e in (0.5, 1.0, 4.0)],
]


def _catalogue():
    """(notebook, what, builder) for every figure/explorer call in the notebooks that needs no training."""
    from unlearnkit import graphs as G
    from unlearnkit.viz import audit as va, capstone as vc, descend_rewind as vd, networks as vnw
    from unlearnkit.viz import newton as vn, noisy_finetune as vf, pdudt as vp, privacy as vpr, rrdu as vr

    rng = np.random.default_rng(0)
    yield "02", "gaussian", lambda: vpr.GaussianExplorer(epsilon=1.0, log10_delta=-5, sensitivity=1.0)
    yield "02", "renyi", lambda: vpr.RenyiExplorer(q=0.04, sigma=1.5, steps=100, log10_delta=-5)
    yield "02", "calibrator", lambda: vpr.CalibratorExplorer(epsilon=1.0, log10_delta=-5, q=0.01, steps=1000, n_grid=6)
    from unlearnkit.viz import pld as vpld
    yield "02", "pld_bracket", lambda: vpld.PLDBracketExplorer(q=1.0, sigma=10.0, steps=100, log10_delta=-5,
                                                                log10_grid=-2)
    yield "03", "trajectory", lambda: vd.TrajectoryExplorer(trials=4)
    yield "03", "sigma", lambda: vd.SigmaExplorer()
    for regime in ("strongly_convex", "nonconvex"):
        yield "03", f"bound_vs_simulated[{regime}]", (
            lambda regime=regime: vd.bound_vs_simulated_figure(vd.bound_vs_simulated(regime, [0, 120], trials=4)))
    yield "03", "frontier", lambda: vc.frontier_figure(POINTS, metric="test_acc", retrain=0.9)
    yield "03", "stall", lambda: vd.stall_figure(vd.stall_sweep("nonconvex", (0, 120, 240), trials=3))
    yield "03", "k_sweep", lambda: vd.k_sweep_figure(
        [{"method": m, "K": k, "dist_to_retrain": 1.0 / (k + 1)} for m in ("R2D", "D2D") for k in (0, 100)],
        "dist_to_retrain")
    yield "04", "calibration", lambda: vf.CalibrationExplorer(d=2410)
    yield "04", "noisy_phase", lambda: vf.noisy_phase_figure(
        [{"step": s, "test_acc": 0.5, "phase": int(s > 2)} for s in range(5)])
    yield "04", "race", lambda: vf.race_figure({"a": {"epoch": [0, 1], "test_acc": [0.5, 0.7]},
                                                "b": {"epoch": [0, 1], "test_acc": [0.4, 0.6]}})
    yield "05", "network", lambda: vnw.NetworkExplorer(topology="two_clusters", n=8, initial="halves", rounds=40)
    yield "05", "walk", lambda: vnw.WalkExplorer(topology="ring", n=10, routing="rrdu", p=0.1, u=0, hops=200)
    yield "05", "dynamic", lambda: vnw.DynamicExplorer(schedule="edge_churn", n=8, rate=0.2, base="ring", rounds=40)
    yield "06", "accountant_sigma", lambda: vr.accountant_sigma_figure(
        delta=1e-5, n_clients=10, p=0.1, T_unlearn=100, L=0.5, m=10, mark=1.0)
    yield "06", "capacity", lambda: vr.capacity_figure(
        epsilon=1.0, delta=1e-5, n_clients=10, d=100, T_unlearn=100, L=0.5, rho=0.5, p=0.1, s=4)
    yield "06", "rrdu(no world)", lambda: vr.RRDUExplorer(None, n_clients=6, seed=0)
    yield "07", "influence_animation", lambda: vn.influence_animation(
        G.mixing_matrix(G.topology.ring(8)), range(0, 41, 2))
    yield "07", "influence", lambda: vn.InfluenceExplorer(n=8, k=5)
    yield "07", "curvature", lambda: vn.CurvatureExplorer(alpha=1.0)
    yield "07", "newton_noise", lambda: vn.NewtonNoiseExplorer(epsilon=1.0, weight_decay=1.0)
    yield "08", "topology", lambda: vp.TopologyExplorer(n=6, leaver=5, rounds=30, churn=0.3, seed=0)
    yield "08", "correction", lambda: vp.correction_figure(rng.random((6, 4)), np.full((6, 4), 0.25), 0, leaver=3,
                                                           es_rounds=2)
    yield "08", "sigma_sweep", lambda: vp.sigma_sweep_figure(
        [0.0, 0.1, 10.0], {k: [0.9, 0.8, 0.1] for k in ("perturbed_retrain", "pdudt", "pdudt_es", "control")})
    yield "08", "pdudt_sigma", lambda: vp.pdudt_sigma_figure(0.01, {"paper": 213.7, "sound": 5000.0})
    yield "09", "capstone", lambda: vc.CapstoneExplorer(POINTS, retrain={"test_acc": 0.9})
    yield "09", "cost", lambda: vc.cost_figure(POINTS[:3])
    yield "09", "ceiling", lambda: va.AuditCeilingExplorer(certified_epsilon=1.0, n_trials=100, delta=1e-5)
    yield "09", "forgetting", lambda: va.forgetting_figure(
        [{"method": "r2d", "mode": "sound", "certified_epsilon": 1.0, "certificate_mode": "sound", "score": 0.8,
          "ci_low": 0.7, "ci_high": 0.9, "score_vs_certifier": 0.9, "ci_low_vs_certifier": 0.8,
          "ci_high_vs_certifier": 1.0}])


CATALOGUE = list(_catalogue())


@pytest.mark.parametrize("nb,what,build", CATALOGUE, ids=[f"{n}-{w}" for n, w, _ in CATALOGUE])
def test_notebook_figures_are_readable(nb, what, build):
    obj = build()
    figs = _figures_of(obj)
    assert figs, f"{nb} {what}: no figure"
    problems = [p for i, f in enumerate(figs) for p in style_problems(f, f"{nb} {what}[{i}]")]
    assert problems == []


def test_trajectory_explorer_annotates_the_nonconvex_bound():
    """Notebook 03's distance plot in the nonconvex regime: the ~3e35 bound is a note, not a point."""
    from unlearnkit.viz.descend_rewind import TrajectoryExplorer

    ex = TrajectoryExplorer(trials=4)
    ex.regime.value = "nonconvex"
    assert ex.last_error is None
    assert style_problems(ex.dist, "distance") == []
    notes = [a.text for a in ex.dist.layout.annotations]
    assert any("off the scale" in t and "10^35" in t for t in notes), notes
    assert all("bound" not in (t.name or "") for t in ex.dist.data)
    ex.regime.value = "strongly_convex"  # within scale: the bound is a marker again, and the note is gone
    assert any("bound" in (t.name or "") for t in ex.dist.data)
    assert not any("off the scale" in (a.text or "") for a in ex.dist.layout.annotations)


def test_the_checker_catches_what_students_saw():
    fig = go.Figure([go.Scatter(y=[1e-7, 1e-3]), go.Scatter(y=[1, 2], name="data"),
                     go.Scatter(y=[1e35], name="a bound")])
    fig.update_layout(yaxis_type="log")
    problems = style_problems(fig)
    assert any("exponentformat" in p for p in problems)
    assert any("no name" in p for p in problems)
    assert any("'a bound'" in p for p in problems)
    readable(fig)
    assert fig.layout.yaxis.exponentformat == "power"
    ok = go.Figure(go.Scatter(y=[1.0, 2.0], name="data"))
    assert mark_bound(ok, 0, 2.0 * OFF_SCALE, name="bound", data_max=2.0)
    assert not mark_bound(ok, 0, math.inf, name="bound", data_max=2.0)
    assert style_problems(ok) == []


def _inline_figure_problems(source: str) -> list[str]:
    """A notebook cell that builds its own plotly figure: a log axis needs ``readable(...)``, and every trace
    that can reach the legend needs a ``name``."""
    import ast
    import re

    out = []
    if re.search(r"""type\s*=\s*["']log["']|_type\s*=\s*["']log["']""", source) and "readable(" not in source:
        out.append("sets a log axis without readable(...)")
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if fn in ("Scatter", "Bar", "add_scatter", "add_bar"):
            kw = {k.arg: k.value for k in node.keywords}
            hidden = isinstance(kw.get("showlegend"), ast.Constant) and kw["showlegend"].value is False
            if "name" not in kw and not hidden:
                out.append(f"line {node.lineno}: {fn}(...) without name")
    return out


NOTEBOOKS = sorted(__import__("pathlib").Path(__file__).resolve().parents[2].joinpath("notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_figures_built_in_notebook_cells_are_readable(path):
    import json

    nb = json.loads(path.read_text())
    bad = [f"cell {i}: {p}" for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
           for p in _inline_figure_problems("".join(c["source"]))]
    assert bad == []


EXPLORERS = [(n, w, b) for n, w, b in CATALOGUE if not w.startswith(("bound_", "frontier", "k_sweep", "noisy_phase",
                                                                        "race", "accountant", "capacity",
                                                                        "influence_animation", "correction",
                                                                        "sigma_sweep", "pdudt_sigma", "cost",
                                                                        "forgetting", "stall"))]


@pytest.mark.parametrize("nb,what,build", EXPLORERS, ids=[f"{n}-{w}" for n, w, _ in EXPLORERS])
def test_a_typed_value_out_of_range_is_refused_in_place(nb, what, build):
    """Every slider's readout is a kernel-checked text box: a typed value out of range leaves the slider where
    it was and says so (parameter, value, range) in the explorer's red message box."""
    from unlearnkit.viz._typed import slider_range

    ex = build()
    sliders = {k: w for k, w in vars(ex).items() if k in ex._readouts}
    assert all(not w.readout for w in sliders.values())
    for key, box in ex._readouts.items():
        s = sliders.get(key) or next(w for w in vars(ex).values() if getattr(w, "description", None) == key)
        lo, hi = slider_range(s)
        before, updates = s.value, ex.n_updates
        for typed in (f"{hi + abs(hi) + 1:g}", f"{lo - abs(lo) - 1:g}", "abc"):
            box.value = typed
            assert ex.last_error is not None, f"{nb} {what}: {key}={typed} was accepted silently"
            assert (s.description or key) in ex.last_error and typed in ex.last_error and "expected" in ex.last_error
            assert s.value == before and ex.n_updates == updates
        box.value = box.value  # nothing changes


@pytest.mark.parametrize("nb,what,build", EXPLORERS, ids=[f"{n}-{w}" for n, w, _ in EXPLORERS])
def test_the_browser_has_no_reason_to_move_a_slider(nb, what, build):
    """The browser snaps a slider to its step grid and (with continuous_update) writes the snapped value back,
    which moved notebook 02's defaults (q 0.04 -> 0.0398) and undid a check cell's restore (epsilon 3.02).
    Log sliders report only on release; a linear slider's value is on its grid, and values set later are
    snapped to it in the kernel."""
    import ipywidgets as W

    ex = build()
    for key in ex._readouts:
        s = getattr(ex, key, None)
        if s is None:
            continue
        if isinstance(s, W.FloatLogSlider):
            assert s.continuous_update is False, f"{nb} {what}: log slider {key} echoes snapped values"
        elif s.continuous_update:
            k = (s.value - s.min) / s.step
            assert abs(k - round(k)) < 1e-6, f"{nb} {what}: {key}={s.value} is off its grid of {s.step}"


def test_typed_value_between_steps_is_rounded_and_says_so():
    from unlearnkit.viz import rrdu as vr

    ex = vr.RRDUExplorer(None, n_clients=6, seed=0)
    assert ex.p.value == 0.167 and ex._readouts["p"].value == "0.167"  # the default, exactly, on a finer grid
    ex._readouts["p"].value = "0.1234"
    assert ex.p.value == 0.123 and "between the slider's steps" in ex.last_error and "0.1234" in ex.last_error
    ex.p.value = 0.3333333  # set from code: snapped before it reaches the browser
    assert ex.p.value == 0.333 and ex._readouts["p"].value == "0.333"


def test_log_axes_tick_once_per_decade():
    """Between 2 and 8 decades a log axis is labelled at each power of ten only (plotly's default added small
    "2" and "5" labels); a narrower axis keeps plotly's ticks (an epsilon grid 0.5-8 would otherwise show the
    single label "1"), and a redraw that narrows it drops the rule."""
    fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[1e-3, 1e-1, 1.0], name="data")).update_yaxes(type="log")
    assert any("tick per decade" in p for p in style_problems(fig))
    readable(fig)
    assert fig.layout.yaxis.dtick == 1 and style_problems(fig) == []
    fig.data[0].y = [1.0, 3.0]
    readable(fig)
    assert fig.layout.yaxis.dtick is None and style_problems(fig) == []
    fig.data[0].y = [0.5, 8.0]  # 1.2 decades: plotly's own ticks
    readable(fig)
    assert fig.layout.yaxis.dtick is None and style_problems(fig) == []


def test_the_privacy_profile_shows_three_decades_below_the_target_delta():
    from unlearnkit.viz.privacy import privacy_profile_figure

    fig = privacy_profile_figure({"analytic": 1.0}, 1.0, (1.0, 1e-5))
    assert tuple(fig.layout.yaxis.range) == (-8, 0)
