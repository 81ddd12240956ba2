"""Issue 19, finding 1: every graph figure and explorer reaches the browser as plain JSON (no numpy buffers, no
object arrays, no NaN), and an explorer's synced widget state matches its figure when it is displayed."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from unlearnkit import graphs as G
from unlearnkit.viz import networks as vn, pdudt as vp, rrdu as vr
from unlearnkit.viz._payload import payload_problems, plain, sync_widget


def _figures():
    g = G.topology.ring(6)
    yield "graph", vn.graph_figure(g, np.linspace(0, 1, 6), token=2, highlight=[(0, 1)])
    yield "mixing", vn.mixing_heatmap_figure(G.mixing_matrix(g))
    yield "averaging", vn.averaging_figure(np.random.default_rng(0).random((5, 6)), 0.5, current=2)
    yield "visits", vn.visits_figure(np.arange(6), np.full(6, 2.5))
    z = np.linspace(1, 0.1, 8)
    yield "dynamic", vn.dynamic_figure(z, z, z, current=3)
    yield "walk", vr.walk_figure(6, 0, [1, 2, 0, 3, 0])
    yield "ledger", vr.ledger_figure(np.array([np.nan, 1.0, 2.0]), 0, target=1.0)
    yield "topology", vp.topology_figure(np.full((5, 5), 0.2), 4, round_index=1)
    yield "correction", vp.correction_figure(np.random.default_rng(0).random((6, 4)), np.full((6, 4), 0.25), 0, leaver=3)


@pytest.mark.parametrize("name,fig", list(_figures()), ids=[n for n, _ in _figures()])
def test_builders_send_plain_json(name, fig):
    assert payload_problems(fig, name) == []
    assert go.FigureWidget(fig) is not None


def _explorers():
    yield "network", vn.NetworkExplorer(n=8)
    yield "walk", vn.WalkExplorer(n=8)
    yield "dynamic", vn.DynamicExplorer(n=8)
    yield "rrdu", vr.RRDUExplorer(None, n_clients=6, seed=0)
    yield "topology", vp.TopologyExplorer(n=6, leaver=5, rounds=6, seed=0)


@pytest.mark.parametrize("name,ex", list(_explorers()), ids=[n for n, _ in _explorers()])
def test_explorer_widget_state_is_plain_and_current(name, ex):
    figs = [v for v in vars(ex).values() if isinstance(v, go.FigureWidget)]
    assert figs
    for fw in figs:
        sync_widget(fw)
        assert payload_problems(fw, name) == []
        for tr in fw._widget_data:
            if tr.get("name") == "clients":  # the node trace: one finite x per node
                assert len(tr["x"]) >= 2 and all(isinstance(v, float) for v in tr["x"])


def test_plain_and_the_checker():
    assert plain(np.array([1.0, np.nan])) == [1.0, None]
    assert plain((np.int64(2), [np.float32(0.5)])) == [2, [0.5]]
    bad = go.Figure(go.Scatter(x=np.array([0.0, 1.0]), y=np.array([0.0, None], dtype=object)))
    assert len(payload_problems(bad)) == 2
