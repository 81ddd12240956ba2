"""After every redraw, each explorer figure's synced widget state equals its Python figure.

A view built later than a redraw (a page reload, a second tab, a view that initialised late) draws the
``FigureWidget``'s synced state (``_widget_data``, ``_widget_layout``), not the messages sent before it existed.
Every explorer the notebooks show is built with small inputs, then each of its controls is moved once (and its
run button pressed where a run is cheap); after each move, ``get_state()`` (what the kernel hands a new view)
must hold the figure's current traces (count, types, names, x/y/z lengths, values) and layout title.
"""

from __future__ import annotations

import os

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
import pytest

os.environ.setdefault("UNLEARNKIT_QUICK", "1")

from unlearnkit.viz._explorer import _controls  # noqa: E402
from unlearnkit.viz._payload import plain  # noqa: E402

POINTS = [
    {"method": "retrain", "epsilon": 0.0, "test_acc": 0.9, "forget_acc": 0.8, "mia_auc": 0.5, "dist_to_retrain": 0.0,
     "grad_evals": 1000, "retrain_grad_evals": 1000},
    *[{"method": m, "epsilon": e, "test_acc": 0.5 + 0.05 * e, "forget_acc": 0.5, "mia_auc": 0.5,
       "dist_to_retrain": 10 / e, "grad_evals": 500, "retrain_grad_evals": 1000}
      for m in ("d2d", "output_perturbation") for e in (0.5, 1.0, 4.0)],
]


def _figures(ex) -> dict[str, go.FigureWidget]:
    return {k: v for k, v in vars(ex).items() if isinstance(v, go.FigureWidget)}


def _length(v) -> int | None:
    return None if v is None else len(v)


def _state_problems(fw: go.FigureWidget, where: str) -> list[str]:
    state = fw.get_state()
    data, layout = state["_widget_data"], state["_widget_layout"]
    out = []
    if len(data) != len(fw.data):
        out.append(f"{where}: {len(data)} traces synced, {len(fw.data)} in the figure")
    for i, (synced, tr) in enumerate(zip(data, fw.data)):
        if synced.get("type") != tr.type or synced.get("name") != tr.name:
            out.append(f"{where}.data[{i}]: synced {synced.get('type')} {synced.get('name')!r}, "
                       f"figure {tr.type} {tr.name!r}")
        for key in ("x", "y", "z"):
            if key in tr and _length(synced.get(key)) != _length(tr[key]):
                out.append(f"{where}.data[{i}].{key}: {_length(synced.get(key))} values synced, "
                           f"{_length(tr[key])} in the figure")
    title = fw.layout.title.text
    if (layout.get("title") or {}).get("text") != title:
        out.append(f"{where}: synced title {(layout.get('title') or {}).get('text')!r}, figure {title!r}")
    if not out and (data != plain(fw._data) or layout != plain(fw._layout_obj._props)):
        out.append(f"{where}: synced state differs from the figure's values")
    return out


def _other_value(w: W.Widget):
    """A valid value of control ``w`` other than its current one (None when it has no other)."""
    if isinstance(w, (W.Dropdown, W.ToggleButtons, W.RadioButtons, W.SelectionSlider, W.Select)):
        values = [o[1] if isinstance(o, tuple) else o for o in w.options]
        others = [v for v in values if v != w.value]
        return others[0] if others else None
    if isinstance(w, (W.Checkbox, W.ToggleButton)):
        return not w.value
    if isinstance(w, W.FloatLogSlider):
        exp = np.log(w.value) / np.log(w.base)
        new = exp + w.step if exp + w.step <= w.max else exp - w.step
        return float(w.base ** new)
    if isinstance(w, (W.IntSlider, W.FloatSlider, W.BoundedIntText, W.BoundedFloatText)):
        step = w.step or 1
        new = w.value + step if w.value + step <= w.max else w.value - step
        return type(w.value)(new) if isinstance(w, (W.IntSlider, W.BoundedIntText)) else float(new)
    return None


def _drive(ex, label: str, press: tuple[str, ...] = ()) -> list[str]:
    """Move every control of ``ex`` once (then press the named buttons), checking the synced state each time."""
    problems = [p for k, fw in _figures(ex).items() for p in _state_problems(fw, f"{label}.{k} (built)")]
    moved = 0
    for name, w in _controls(ex):
        if getattr(w, "disabled", False):
            continue
        new = _other_value(w)
        if new is None:
            continue
        w.value = new
        moved += 1
        problems += [p for k, fw in _figures(ex).items() for p in _state_problems(fw, f"{label}.{k} ({name})")]
    for name in press:
        getattr(ex, name).click()
        moved += 1
        problems += [p for k, fw in _figures(ex).items() for p in _state_problems(fw, f"{label}.{k} ({name})")]
    assert moved, f"{label}: no control to move"
    return problems


def _catalogue():
    from unlearnkit import graphs as G  # noqa: F401
    from unlearnkit.viz import audit as va, capstone as vc, descend_rewind as vd, networks as vnw
    from unlearnkit.viz import newton as vn, noisy_finetune as vf, pdudt as vp, privacy as vpr, rrdu as vr

    yield "02-gaussian", lambda: vpr.GaussianExplorer(epsilon=1.0, log10_delta=-5, sensitivity=1.0), ()
    yield "02-renyi", lambda: vpr.RenyiExplorer(q=0.04, sigma=1.5, steps=100, log10_delta=-5), ()
    yield "02-calibrator", lambda: vpr.CalibratorExplorer(epsilon=1.0, log10_delta=-5, q=0.01, steps=1000,
                                                          n_grid=6), ()
    from unlearnkit.viz import pld as vpld
    yield "02-pld_bracket", lambda: vpld.PLDBracketExplorer(q=1.0, sigma=10.0, steps=100, log10_delta=-5,
                                                            log10_grid=-2), ()
    yield "03-trajectory", lambda: vd.TrajectoryExplorer(trials=4), ()
    yield "03-sigma", lambda: vd.SigmaExplorer(), ()
    yield "04-calibration", lambda: vf.CalibrationExplorer(d=2410), ()
    yield "05-network", lambda: vnw.NetworkExplorer(topology="two_clusters", n=8, initial="halves", rounds=40), ()
    yield "05-walk", lambda: vnw.WalkExplorer(topology="ring", n=10, routing="rrdu", p=0.1, u=0, hops=200), ()
    yield "05-dynamic", lambda: vnw.DynamicExplorer(schedule="edge_churn", n=8, rate=0.2, base="ring", rounds=40), ()
    yield "06-rrdu(no world)", lambda: vr.RRDUExplorer(None, n_clients=6, seed=0), ()
    yield "07-influence", lambda: vn.InfluenceExplorer(n=8, k=5), ()
    yield "07-curvature", lambda: vn.CurvatureExplorer(alpha=1.0), ()
    yield "07-newton_noise", lambda: vn.NewtonNoiseExplorer(epsilon=1.0, weight_decay=1.0), ()
    yield "08-topology", lambda: vp.TopologyExplorer(n=6, leaver=5, rounds=30, churn=0.3, seed=0), ()
    yield "09-capstone", lambda: vc.CapstoneExplorer(POINTS, retrain={"test_acc": 0.9}), ()
    yield "09-all_methods", lambda: __import__("unlearnkit.viz.all_methods", fromlist=["x"]).AllMethodsExplorer(), ()
    yield "09-ceiling", lambda: va.AuditCeilingExplorer(certified_epsilon=1.0, n_trials=100, delta=1e-5), ()


CATALOGUE = list(_catalogue())


@pytest.mark.parametrize("label,build,press", CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_every_redraw_leaves_the_synced_state_current(label, build, press):
    assert _drive(build(), label, press) == []


def test_a_redraw_after_display_reaches_a_later_view():
    """The defect in miniature: clear and re-add traces after the widget exists; the synced state follows."""
    fw = go.FigureWidget(data=[go.Scatter(x=[0, 1], y=[0, 1], name="first")])
    fw.data = ()
    fw.add_trace(go.Scatter(x=np.arange(3.0), y=[1, 2, 3], name="a"))
    fw.add_trace(go.Bar(x=[1, 2], y=[3, 4], name="b"))
    assert _state_problems(fw, "plain") == []
    with fw.batch_update():
        fw.data = ()
        fw.add_trace(go.Scatter(y=[1, 2], name="c"))
        fw.data[0].y = [5, 6, 7]
        fw.layout.title.text = "after"
    state = fw.get_state()
    assert [t["name"] for t in state["_widget_data"]] == ["c"] and state["_widget_data"][0]["y"] == [5, 6, 7]
    assert state["_widget_layout"]["title"]["text"] == "after"
    assert _state_problems(fw, "batch") == []


def test_the_state_is_sent_once_per_batch_and_after_the_messages():
    """Live views apply the messages; the full state follows them once (a view ignores a new ``_widget_data``,
    so nothing is drawn twice), and an unchanged figure sends no state."""
    fw = go.FigureWidget(data=[go.Scatter(x=[0, 1], y=[0, 1], name="first")])
    sent: list[str] = []
    send = fw.send_state
    fw.send_state = lambda key=None: (sent.append(key), send(key))[1]
    with fw.batch_update():
        fw.data = ()
        fw.add_trace(go.Scatter(y=[1, 2], name="a"))
        fw.add_trace(go.Scatter(y=[3, 4], name="b"))
        fw.data[1].y = [7, 8]
    assert sent.count("_widget_data") == 1 and sent[-1] == "_widget_data"
    assert sent.index("_py2js_deleteTraces") < sent.index("_py2js_addTraces") < sent.index("_widget_data")
    sent.clear()
    fw.data[1].y = [7, 8]  # no change: plotly sends nothing, and neither does the sync
    assert "_widget_data" not in sent


@pytest.fixture(scope="module")
def central_setup():
    from unlearnkit.experiments import centralized_setup
    from unlearnkit.experiments.centralized import CentralProfile
    from unlearnkit.train import SGDConfig

    prof = CentralProfile(train=SGDConfig(steps=200, lr=0.5, batch_size=32, weight_decay=1e-4))
    return centralized_setup(prof, seed=0, device="cpu")


def test_01_dashboard_after_unlearning(central_setup):
    """Notebook 01's "after unlearning" bars and curves: drawn by the run button after display."""
    from unlearnkit.viz.dashboard import ForgettingDashboard

    dash = ForgettingDashboard(setup=central_setup, chunks=2)
    dash.steps.value = 16
    dash.method.value = "finetune"
    dash.run_button.click()
    assert dash.last_error is None and len(dash.bars.data) > 0
    problems = [p for k, fw in _figures(dash).items() for p in _state_problems(fw, f"dashboard.{k}")]
    assert problems == []


def test_00_partition_explorer(digits):
    from unlearnkit.viz.dashboard import PartitionExplorer

    assert _drive(PartitionExplorer(digits, n_clients=5), "00-partition") == []


@pytest.fixture(scope="module")
def tiny_world():
    from unlearnkit.experiments.rrdu.lab import BackdoorSetup, build_world

    return build_world(BackdoorSetup(m=50, T_train=12, T_unlearn=12, local_steps=2, hidden=(16,), eval_every=4),
                       seed=0)


def test_06_live_walk_and_frontier(tiny_world):
    """Notebook 06's accuracy/backdoor curves (redrawn by a live run) and the frontier (redrawn in full)."""
    from unlearnkit.experiments.rrdu.frontier import load_precomputed_frontier
    from unlearnkit.viz.rrdu import RRDUExplorer
    from unlearnkit.viz.rrdu_frontier import FrontierExplorer

    ex = RRDUExplorer(tiny_world)
    ex.run()
    assert ex.last_error is None and len(ex.curve_fig.data) > 0
    assert [p for k, fw in _figures(ex).items() for p in _state_problems(fw, f"rrdu.{k}")] == []
    fr = load_precomputed_frontier(seeds=(0, 1, 2))  # as notebook 06 draws it: a band over seeds
    front = FrontierExplorer(fr, tiny_world, epsilons=(1.0,), seed=0)
    assert "seeds 0, 1, 2" in front.fig.layout.title.text and _state_problems(front.fig, "frontier") == []
    front._redraw(load_precomputed_frontier(), "redrawn")  # a live run: one seed, no band
    assert front.fig.layout.title.text.startswith("redrawn") and "no band" in front.fig.layout.title.text
    assert _state_problems(front.fig, "frontier") == []


def test_figure_widgets_leave_plotlys_bundle_to_one_carrier_per_kernel():
    """A FigureWidget's front-end module is a few kilobytes under a key naming the bundle's hash; plotly's
    bundle travels once, in the kernel's one bundle carrier (a new one only after it was closed); installing
    twice changes nothing."""
    import json

    from plotly.basewidget import BaseFigureWidget

    from unlearnkit.viz._widget_esm import bundle_carrier, use_shared_bundle

    first, second = go.FigureWidget(), go.FigureWidget()
    carrier = bundle_carrier()
    esm = first.get_state()["_esm"]
    assert esm.startswith('const KEY = Symbol.for("unlearnkit.plotly-widget.') and len(esm) < 10_000
    assert second.get_state()["_esm"] == esm and esm.splitlines()[0] in carrier._esm
    source = next(line for line in carrier._esm.splitlines() if line.startswith("const SOURCE = "))
    bundle = json.loads(source[len("const SOURCE = "):-1])
    assert "FigureModel" in bundle and len(bundle) > 1_000_000
    assert bundle_carrier() is carrier
    carrier.close()
    go.FigureWidget()
    assert bundle_carrier() is not carrier and bundle_carrier().comm is not None
    assert use_shared_bundle() is False and BaseFigureWidget._esm == esm


NODE_DRIVER = r"""
const fake = 'export default () => ({ initialize(c) { globalThis.inits = (globalThis.inits || 0) + 1; c.model.ok = 1; },'
           + ' render(c) { return "drawn " + c.el; } });';
let blobs = 0;
URL.createObjectURL = () => { blobs += 1; return 'data:text/javascript,' + encodeURIComponent(fake); };
URL.revokeObjectURL = () => {};
const fs = require('fs');
const load = (path) => import('data:text/javascript;base64,' + Buffer.from(fs.readFileSync(path, 'utf8')).toString('base64'));
Promise.all([load(process.argv[1]), load(process.argv[2])]).then(async ([carrier, figure]) => {
  const views = [figure.default(), figure.default(), figure.default()];
  const models = views.map(() => ({ on() {} }));
  const t0 = Date.now();
  const returned = views.map((w, i) => w.initialize({ model: models[i] }));  // before any carrier: they wait
  const pending = views.map((w, i) => w.render({ el: i }));
  await new Promise((r) => setTimeout(r, 100));
  const initsBeforeCarrier = globalThis.inits || 0;
  carrier.default().initialize({ model: { on() {} } });  // two kernels' carriers: one import
  carrier.default().initialize({ model: { on() {} } });
  const initMs = Date.now() - t0;
  const drawn = await Promise.all(pending);
  console.log(JSON.stringify({ returned: returned.map(String), initMs, drawn, blobs, inits: globalThis.inits,
                               initsBeforeCarrier, ok: models.map(m => m.ok) }));
});
"""


def _run_in_node(driver: str, tmp_path):
    """Run a Node ``driver`` on the carrier and figure modules (stand-in bundle); its JSON output."""
    import json
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed")
    out = subprocess.run([node, "-e", driver, *_modules(tmp_path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _modules(tmp_path, bundle="export default () => ({});"):
    from unlearnkit.viz._widget_esm import carrier_module, figure_module

    (tmp_path / "carrier.mjs").write_text(carrier_module(bundle))
    (tmp_path / "figure.mjs").write_text(figure_module(bundle))
    return [str(tmp_path / "carrier.mjs"), str(tmp_path / "figure.mjs")]


def test_figures_initialise_at_once_and_draw_when_the_carrier_has_imported_the_bundle(tmp_path):
    """Driven as anywidget drives it (in Node, with a stand-in bundle): three figure models' ``initialize``
    return at once (anywidget's 2 s window closes on it) even before any carrier exists; the bundle is imported
    once although two carriers initialise; then each figure gets plotly's own ``initialize`` and ``render``."""
    got = _run_in_node(NODE_DRIVER, tmp_path)
    assert got["returned"] == ["undefined"] * 3 and got["initsBeforeCarrier"] == 0
    assert got["blobs"] == 1 and got["inits"] == 3 and got["ok"] == [1, 1, 1]
    assert got["drawn"] == ["drawn 0", "drawn 1", "drawn 2"]


LOST_MESSAGE_DRIVER = r"""
const fake = 'export default () => ({ initialize(c) {}, render(c) { return "drawn"; } });';
URL.createObjectURL = () => 'data:text/javascript,' + encodeURIComponent(fake);
URL.revokeObjectURL = () => {};
const fs = require('fs');
const load = (path) => import('data:text/javascript;base64,' + Buffer.from(fs.readFileSync(path, 'utf8')).toString('base64'));
function model() {
  const handlers = {};
  return { on(ev, f) { (handlers[ev] = handlers[ev] || []).push(f); },
           emit(ev) { (handlers[ev] || []).forEach((f) => f()); } };
}
async function view(mod, lostBefore, syncAfter) {
  const w = mod.default(), m = model(), t0 = Date.now();
  w.initialize({ model: m });
  lostBefore.forEach((ev) => m.emit(ev));  // before the bundle has loaded: plotly's model never sees these
  let drawnAt = null;
  const done = w.render({ el: 0 }).then(() => { drawnAt = Date.now() - t0; });
  await new Promise((r) => setTimeout(r, 200));
  const before = drawnAt;
  syncAfter.forEach((ev) => m.emit(ev));
  await done;
  return { drawnBeforeSync: before !== null, drawnAt };
}
Promise.all([load(process.argv[1]), load(process.argv[2])]).then(async ([carrier, mod]) => {
  carrier.default().initialize({ model: { on() {} } });
  console.log(JSON.stringify({
    quiet: await view(mod, [], []),
    lostThenSynced: await view(mod, ['change:_py2js_deleteTraces'], ['change:_widget_data']),
    lostAndSyncedBefore: await view(mod, ['change:_py2js_addTraces', 'change:_widget_data'], []),
    layoutStillLost: await view(mod, ['change:_py2js_relayout'], ['change:_widget_data']),
  }));
});
"""


def test_a_view_waits_for_the_full_state_after_a_lost_message(tmp_path):
    """A change message that reaches a model before plotly's bundle has loaded is lost to plotly's model; the
    view is then drawn only once the full state of the part that message edits has arrived (or after 3 s), never
    from the state before the lost message. Without a lost message, or when the full state came before the bundle
    loaded, the view is drawn at once. Driven in Node with a stand-in bundle."""
    got = _run_in_node(LOST_MESSAGE_DRIVER, tmp_path)
    assert got["quiet"]["drawnBeforeSync"] and got["lostAndSyncedBefore"]["drawnBeforeSync"]
    assert not got["lostThenSynced"]["drawnBeforeSync"] and got["lostThenSynced"]["drawnAt"] < 1000
    # a lost relayout is not superseded by a new data state: the view waits for the layout, at most 3 s
    assert not got["layoutStillLost"]["drawnBeforeSync"] and got["layoutStillLost"]["drawnAt"] >= 2900


def test_a_value_a_view_reports_stays_in_the_figure():
    """A view reports the values it drew (plotly's trace deltas); plotly removed each reported property from the
    figure, so a trace could lose its ``y`` and a reloaded page drew it from the indices. It stays now."""
    fw = go.FigureWidget(data=[go.Scatter(x=[0, 3072], y=[0.86, 0.86], name="retrain: test accuracy")])
    fw.data[0].x = [0, 4096]  # an edit, so the view's report below answers the latest one
    uid = fw.data[0].uid
    fw._js2py_traceDeltas = {"trace_deltas": [{"uid": uid, "y": [0.86, 0.86], "visible": True}],
                             "trace_edit_id": fw._last_trace_edit_id}
    assert fw._data[0]["y"] == [0.86, 0.86] and fw._data_defaults[0].get("visible") is True
    fw.layout.title.text = "moved"  # any later change re-syncs the state from the figure
    assert fw.get_state()["_widget_data"][0]["y"] == [0.86, 0.86]
    assert _state_problems(fw, "reported") == []


def test_no_carrier_without_the_installed_figure_module(monkeypatch):
    from unlearnkit.viz import _widget_esm

    monkeypatch.setattr(_widget_esm, "_BUNDLE", [])
    with pytest.raises(RuntimeError, match="UNLEARNKIT_WIDGET_BUNDLE=plotly"):
        _widget_esm.bundle_carrier()
