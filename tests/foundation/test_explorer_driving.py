"""Check cells drive explorers inside ``driving(...)``: afterwards the student sees the documented default."""

import pytest

from unlearnkit.viz import driving
from unlearnkit.viz import networks as vn


def test_driving_restores_controls_and_figure():
    net = vn.NetworkExplorer(n=8)
    before = (net.topology.value, net.round.value, tuple(net.graph_fig.data[2].marker.color))
    with driving(net):
        net.round.value = 20
        net.topology.value = "exponential"
        assert tuple(net.graph_fig.data[2].marker.color) != before[2]
    assert (net.topology.value, net.round.value, tuple(net.graph_fig.data[2].marker.color)) == before
    assert net.last_error is None


def test_driving_restores_even_when_a_check_fails():
    walk = vn.WalkExplorer(n=8)
    hop = walk.hop.value
    with pytest.raises(AssertionError):
        with driving(walk):
            walk.hop.value = hop + 5
            raise AssertionError("a failed check")
    assert walk.hop.value == hop
