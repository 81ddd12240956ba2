"""The shared style keeps titles, legends and labels readable: a title below plotly's mode bar and wrapped
inside the figure, one colour per legend group, a narrow figure's legend below its plot, labels and buttons
wide enough for their text, and the capstone frontier's levels as legend entries rather than stacked
annotations. Every explorer of the course is checked with :func:`style_problems` after it is built."""

from __future__ import annotations

import ipywidgets as W
import plotly.graph_objects as go
import pytest
from _explorers import EXPLORERS, POINTS
from plotly.subplots import make_subplots

from unlearnkit.viz._style import MODEBAR_PX, readable, style_problems, title_lines


def test_a_long_title_wraps_and_sits_below_the_mode_bar():
    fig = go.Figure(go.Bar(x=[0, 1], y=[1, 2]), layout=dict(width=340, height=300, margin=dict(t=40),
                                                             title="per-client privacy ledger (epsilon of each view)"))
    assert any("runs past" in p for p in style_problems(fig)) and any("mode bar" in p for p in style_problems(fig))
    readable(fig)
    assert style_problems(fig) == []
    assert fig.layout.title.text == "per-client privacy ledger<br >(epsilon of each view)"
    assert fig.layout.title.yref == "container" and fig.layout.title.y < 1 - MODEBAR_PX / 300
    assert fig.layout.margin.t >= MODEBAR_PX + 2 * 17
    fig.layout.width = 980  # wider: the wrap made earlier is undone
    readable(fig)
    assert "<br" not in fig.layout.title.text
    assert title_lines("a<br>b", 900) == ["a", "b"]  # an author's break stays


def test_one_colour_per_legend_group_across_subplots():
    fig = make_subplots(rows=1, cols=2)
    for name in ("a", "b", "c"):
        for col in (1, 2):
            fig.add_trace(go.Scatter(x=[1, 2], y=[1, 2], name=name, legendgroup=name, showlegend=col == 1),
                          row=1, col=col)
    assert any("colours" in p for p in style_problems(fig))
    readable(fig)
    colours = [t.line.color for t in fig.data]
    assert colours[0::2] == colours[1::2] and len(set(colours)) == 3 and style_problems(fig) == []


def test_a_narrow_figure_puts_its_legend_below_once():
    fig = go.Figure([go.Scatter(y=[1, 2], name="a long legend entry number one"),
                     go.Scatter(y=[2, 1], name="a long legend entry number two")],
                    layout=dict(width=490, height=360))
    readable(fig)
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.yref == "container"
    height, bottom = fig.layout.height, fig.layout.margin.b
    assert height > 360 and height - 360 == bottom - 80
    readable(fig)
    assert (fig.layout.height, fig.layout.margin.b) == (height, bottom)  # idempotent


def test_capstone_frontier_levels_are_legend_entries():
    from unlearnkit.viz.capstone import frontier_figure

    pts = [*POINTS, {"method": "finetune", "epsilon": None, "test_acc": 0.7},
           {"method": "gradient_ascent", "epsilon": None, "test_acc": 0.71}]
    fig = frontier_figure(pts, metric="test_acc", retrain=0.72)
    assert not fig.layout.annotations
    names = [t.name for t in fig.data]
    assert {"finetune (no certificate)", "gradient_ascent (no certificate)", "retrain (exact, eps = 0)"} <= set(names)


@pytest.mark.parametrize("label,name,build", EXPLORERS, ids=[c[0] for c in EXPLORERS])
def test_explorers_figures_and_labels(label, name, build, digits):
    ex = build(digits)
    figs = {k: v for k, v in vars(ex).items() if isinstance(v, go.FigureWidget)}
    assert [p for k, f in figs.items() for p in style_problems(f, f"{label}.{k}")] == []
    for k, w in vars(ex).items():
        if isinstance(w, W.Button) and len(w.description) > 16:
            assert w.layout.width == "max-content", f"{label}.{k}: button text cut"
        elif isinstance(w, W.ValueWidget) and len(getattr(w, "description", "") or "") > 11:
            assert w.style.description_width == "initial", f"{label}.{k}: label {w.description!r} cut"


@pytest.mark.parametrize("label,name,build", EXPLORERS[:4], ids=[c[0] for c in EXPLORERS[:4]])
def test_rows_of_controls_wrap_and_sliders_stay_with_their_box(label, name, build, digits):
    ex = build(digits)

    def walk(w):
        kids = list(getattr(w, "children", ()) or ())
        if type(w).__name__ == "FigureWidget" or not kids:
            return
        pair = len(kids) == 2 and isinstance(kids[1], W.Text) and isinstance(kids[0], W.ValueWidget)
        if isinstance(w, W.HBox) and len(kids) > 1:
            assert (w.layout.flex_flow == "row wrap") != pair, f"{label}: a row of controls does not wrap"
        for c in kids:
            walk(c)
    walk(ex.widget())


def test_a_narrow_log_axis_is_labelled_at_1_2_5_and_drops_them_when_widened():
    fig = go.Figure(go.Scatter(x=[0.5, 2.0, 8.0], y=[1, 2, 3], name="a")).update_xaxes(type="log")
    readable(fig)
    assert list(fig.layout.xaxis.tickvals) == [0.5, 1, 2, 5] and list(fig.layout.xaxis.ticktext) == ["0.5", "1", "2", "5"]
    fig.data[0].x = [1e-3, 1e-1, 1.0]  # three decades: a tick per decade, ours dropped
    readable(fig)
    assert fig.layout.xaxis.tickvals is None and fig.layout.xaxis.dtick == 1 and style_problems(fig) == []
    mine = go.Figure(go.Scatter(x=[0.5, 8.0], y=[1, 2], name="a")).update_xaxes(type="log", tickvals=[0.5, 8])
    readable(mine)
    assert list(mine.layout.xaxis.tickvals) == [0.5, 8]  # an author's ticks stay
