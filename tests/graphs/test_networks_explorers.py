"""Notebook 05's figures and explorers, driven headlessly (no browser, no kernel)."""

import numpy as np
import pytest

from unlearnkit import graphs as g
from unlearnkit.viz.networks import (DynamicExplorer, NetworkExplorer, WalkExplorer, averaging_figure, graph_figure,
                                     initial_values)


def test_pure_figures_have_fixed_traces():
    G = g.topology.two_clusters(8)
    fig = graph_figure(G, np.arange(8.0), highlight=[G.graph["bridge"]], token=3)
    assert len(fig.data) == 4
    assert fig.data[3].x == (G.graph["pos"][3, 0],)
    assert list(fig.data[2].marker.color) == list(range(8))
    traj = np.stack([initial_values(G, "spike"), initial_values(G, "ramp")])
    assert len(averaging_figure(traj, 0.5).data) == 3
    with pytest.raises(ValueError, match="initial"):
        initial_values(G, "noise")


def test_network_explorer_reacts_and_reports_errors():
    ex = NetworkExplorer(topology="ring", n=10, initial="halves", rounds=30)
    assert ex.last_error is None
    before = tuple(ex.graph_fig.data[2].marker.color)
    ex.round.value = 12
    assert tuple(ex.graph_fig.data[2].marker.color) != before
    assert ex.avg_fig.data[2].x == (12,)
    ring_gap = ex.current["gap"]
    ex.topology.value = "two_clusters"
    assert ex.current["gap"] < ring_gap and "bridge" in ex.info.value
    assert len(ex.graph_fig.data[1].x) == 3  # the bridge drawn in red
    heat = np.asarray(ex.heat_fig.data[0].z)
    np.testing.assert_allclose(heat.sum(1), 1)
    ex.n.value = 3  # two cliques need >= 4 clients
    assert ex.last_error is not None and "n=3" in ex.last_error
    ex.n.value = 12
    assert ex.last_error is None
    ex.rule.value = "lazy"
    assert "lazy" in ex.heat_fig.layout.title.text


def test_walk_explorer_visits_and_jumps():
    ex = WalkExplorer(topology="ring", n=10, routing="rrdu", p=0.2, hops=300)
    assert ex.last_error is None and "jumped" in ex.info.value
    ex.hop.value = 100
    assert sum(ex.visit_fig.data[0].y) == 100
    assert ex.graph_fig.layout.title.text.startswith("hop 100")
    ex.routing.value = "simple"
    assert "<b>0</b> hops jumped" in ex.info.value  # a simple walk only crosses edges
    ex.routing.value = "rrdu_graph"
    assert "<b>0</b> hops jumped" in ex.info.value
    ex.p.value = 0.0
    assert "p=0.0" in ex.last_error
    ex.p.value = 0.3
    ex.n.value = 5
    ex.u.value = 7
    assert "u=7" in ex.last_error


def test_dynamic_explorer_churn_slider():
    ex = DynamicExplorer(schedule="edge_churn", n=12, rate=0.0, base="ring", rounds=20)
    assert ex.last_error is None
    static = ex.current["contraction"][-1]
    assert static == pytest.approx(ex.current["static"][-1])  # rate 0 is the static ring
    ex.rate.value = 0.5
    assert ex.current["contraction"][-1] < static
    before = tuple(ex.graph_fig.data[0].x)
    ex.round.value = 7
    assert tuple(ex.graph_fig.data[0].x) != before and ex.graph_fig.layout.title.text.startswith("round 7")
    ex.schedule.value = "one_peer_exponential"
    assert "window of <b>4</b>" in ex.info.value  # ceil(log2 12) = 4
    ex.schedule.value = "erdos_renyi"
    ex.p_edge.value = 0.0
    assert "p_edge" in ex.last_error


def test_node_labels_stay_readable_on_the_colour_scale():
    """Labels on the light (yellow-green) part of Viridis are black, on the dark part white; an explorer's
    redraw carries the new colours."""
    fig = graph_figure(g.topology.ring(4), [0.0, 0.3, 0.7, 1.0])
    assert tuple(fig.data[2].textfont.color) == ("white", "white", "black", "black")
    net = NetworkExplorer(topology="ring", n=8, initial="spike", rounds=10)
    first = tuple(net.graph_fig.data[2].textfont.color)
    assert first.count("black") == 1  # the spike: one light node
    net.round.value = 10
    assert tuple(net.graph_fig.data[2].textfont.color) != first
