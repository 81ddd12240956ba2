"""Every row of figures in an explorer fits a 1400 px Lab window with the file browser open: figures side by
side get a share of :data:`~unlearnkit.viz._explorer.ROW_PX` (a FigureWidget in an HBox otherwise falls back
to 700 px, and three of them were cut off), rows wrap in narrower windows, and redraws keep the widths."""

import ipywidgets as W
import plotly.graph_objects as go
import pytest

from unlearnkit.viz import networks as vn
from unlearnkit.viz import privacy as vpr
from unlearnkit.viz import rrdu as vr
from unlearnkit.viz._explorer import ROW_PX, fit_rows


def _rows(widget):
    kids = list(getattr(widget, "children", ()) or ())
    if isinstance(widget, W.HBox) and any(isinstance(c, go.FigureWidget) for c in kids):
        yield widget
    for c in kids:
        if not isinstance(c, go.FigureWidget):
            yield from _rows(c)


def _explorers():
    yield "network", lambda: vn.NetworkExplorer(n=8)
    yield "walk", lambda: vn.WalkExplorer(n=8)
    yield "rrdu", lambda: vr.RRDUExplorer(None, n_clients=6, seed=0)
    yield "renyi", lambda: vpr.RenyiExplorer(q=0.04, sigma=1.5, steps=100)


@pytest.mark.parametrize("name,make", list(_explorers()), ids=[n for n, _ in _explorers()])
def test_rows_of_figures_fit_the_window_and_wrap(name, make):
    ex = make()
    rows = list(_rows(ex.widget()))
    assert rows, f"{name}: expected at least one row of figures"
    for row in rows:
        figs = [c for c in row.children if isinstance(c, go.FigureWidget)]
        assert sum(f.layout.width for f in figs) <= ROW_PX
        assert row.layout.flex_flow == "row wrap"
    ex.refresh()
    assert all(f.layout.width for row in rows for f in row.children if isinstance(f, go.FigureWidget))


def test_fit_rows_keeps_narrower_figures_and_recurses():
    small = go.FigureWidget(layout={"width": 200})
    big = go.FigureWidget()
    box = W.VBox([W.HBox([W.IntSlider(), small, big])])
    fit_rows(box)
    assert small.layout.width == 200 and big.layout.width <= ROW_PX - 300
