"""Notebook 05's explorers scale their slider ranges with the device (issue: let the demos scale).

There is no GPU in CI, so the GPU ranges are tested by handing an explorer the CUDA
:class:`~unlearnkit.experiments.device_limits.DemoLimits` (or patching :func:`demo_limits` to return them)
while :func:`unlearnkit.device` stays the CPU: the sliders must reach 1,024 clients and the explorer must
still run, on CPU tensors, at a small size. The CPU ranges and defaults must be exactly today's (the
notebooks and the browser test depend on them). ``tests/test_gpu.py`` runs the scaled explorers on CUDA.
"""

from __future__ import annotations

import numpy as np
import pytest

from unlearnkit import graphs as _g
from unlearnkit.decentral.gossip import simulate_averaging
from unlearnkit.experiments.device_limits import demo_limits
from unlearnkit.viz import scaled
from unlearnkit.viz.networks import NetworkExplorer, WalkExplorer, initial_values

CUDA = demo_limits("cuda")


def test_cpu_ranges_and_defaults_are_unchanged():
    net = NetworkExplorer(topology="two_clusters", n=12)
    walk = WalkExplorer()
    assert (net.n.min, net.n.max, net.n.value) == (3, 40, 12)
    assert (walk.n.max, walk.n.value, walk.u.max, walk.hops.max, walk.hops.value) == (40, 10, 39, 2000, 200)


def test_gpu_limits_widen_the_sliders_and_still_run_on_cpu_tensors():
    net = NetworkExplorer(topology="ring", n=12, limits=CUDA)
    walk = WalkExplorer(limits=CUDA)
    assert net.n.max == 1024 and walk.n.max == 1024 and walk.u.max == 1023 and walk.hops.max == 20000
    assert net.n.value == 12 and walk.n.value == 10 and walk.hops.value == 200  # defaults stay the CPU's
    net.n.value = 64
    assert net.last_error is None
    assert net.current["traj"].shape == (41, 64)
    walk.n.value, walk.u.value = 50, 45
    assert walk.last_error is None and walk.current["n"] == 50 and walk.current["u"] == 45


def test_patched_device_limits_reach_the_default_explorer(monkeypatch):
    monkeypatch.setattr(scaled, "demo_limits", lambda device=None: CUDA)
    assert NetworkExplorer().n.max == 1024 and WalkExplorer().hops.max == 20000


def test_averaging_on_device_is_the_gossip_trajectory():
    G = _g.make_graph("two_clusters", 20, seed=0)
    W = _g.mixing_matrix(G)
    x0 = initial_values(G, "halves")
    got = scaled.averaging_on_device(W, x0, 30, device="cpu")
    np.testing.assert_allclose(got, simulate_averaging(W, x0, 30), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="N=20"):
        scaled.averaging_on_device(W, x0[:5], 3, device="cpu")


def test_edge_xy_matches_the_per_edge_loop():
    G = _g.make_graph("small_world", 30, seed=0)
    pos = _g.topology.positions(G)
    xs, ys = [], []
    for a, b in G.edges:
        xs += [pos[a, 0], pos[b, 0], None]
        ys += [pos[a, 1], pos[b, 1], None]
    assert scaled.edge_xy(pos, G.edges) == (xs, ys)
    assert scaled.edge_xy(pos, []) == ([], [])


def test_seeds_slider_follows_the_limits():
    assert scaled.seeds_slider(3, demo_limits("cpu")).max == 8
    s = scaled.seeds_slider(3, CUDA)
    assert (s.min, s.max, s.value) == (1, 64, 3)
    with pytest.raises(ValueError, match="seeds"):
        scaled.seeds_slider(9, demo_limits("cpu"))
    with pytest.raises(TypeError, match="limits"):
        scaled.explorer_limits("cuda")


def test_large_pictures_thin_only_beyond_the_cpu_ranges():
    small = _g.make_graph("complete", 40, seed=0)  # the densest graph the CPU ranges allow
    assert scaled.drawn_edges(small) == list(small.edges)
    W = _g.mixing_matrix(small)
    shown, title = scaled.heatmap_view(W, "W")
    assert np.array_equal(shown, W) and title == "W"
    big = _g.make_graph("complete", 300, seed=0)
    drawn = scaled.drawn_edges(big, cap=500)
    assert len(drawn) == 500 and set(drawn) <= set(big.edges) and drawn == scaled.drawn_edges(big, cap=500)
    Wb = _g.mixing_matrix(_g.make_graph("ring", 300, seed=0))
    shown, title = scaled.heatmap_view(Wb, "W")
    assert shown.shape == (100, 100) and "3 x 3 blocks" in title  # ceil(300/128) = 3
    np.testing.assert_allclose(shown.sum(axis=1), 1.0 / 3)  # block means of a doubly stochastic matrix


def test_a_gpu_sized_network_explorer_answers_on_the_cpu():
    net = NetworkExplorer(topology="ring", n=12, limits=CUDA)
    net.n.value = 300
    assert net.last_error is None and net.current["traj"].shape == (41, 300)
    assert len(net.heat_fig.data[0].z) == 100 and "blocks" in net.heat_fig.layout.title.text
