"""graphs.flood beyond what the Newton tests exercise: removing a client and the relay cost to a sink."""

import networkx as nx
import numpy as np
import pytest

from unlearnkit.graphs import make_graph
from unlearnkit.graphs.flood import relay_messages, remove_client


def test_remove_client_relabels_and_keeps_positions():
    G = make_graph("ring", 6)
    H = remove_client(G, 2)
    assert sorted(H.nodes) == list(range(5)) and H.number_of_edges() == 4 and nx.is_connected(H)
    assert np.array_equal(H.graph["pos"], np.asarray(G.graph["pos"])[[0, 1, 3, 4, 5]])
    with pytest.raises(ValueError, match="removing client 0 disconnects"):
        remove_client(make_graph("star", 5), 0)


def test_relay_messages_is_the_sum_of_hop_distances():
    assert relay_messages(make_graph("path", 5), 0) == 1 + 2 + 3 + 4
    assert relay_messages(make_graph("star", 5), 0) == 4
