"""Graphs of clients: topologies, mixing matrices, random walks and dynamic (per-round) topologies.

- :mod:`~unlearnkit.graphs.topology`: ``make_graph(name, n)`` for ring, path, star, grid, torus, complete,
  Erdos-Renyi, random regular, small world, exponential and two-clusters-with-a-bridge; stable positions.
- :mod:`~unlearnkit.graphs.mixing`: ``mixing_matrix(G, rule)``, ``validate_mixing``, ``spectral_gap``,
  ``mixing_time`` and influence propagation ``W^k`` (digest 001, Lemma 1).
- :mod:`~unlearnkit.graphs.sparse`: edge lists generated in ``O(N + E)`` and sparse (CSR) mixing matrices,
  their validation and spectral gap, for networks of up to ``MAX_SPARSE_CLIENTS`` clients.
- :mod:`~unlearnkit.graphs.walks`: simple walk, RR-DU routing (digest 000, Algorithm 4), visit counts,
  first-observation delays, the segment view.
- :mod:`~unlearnkit.graphs.flood`: flooding one message through the clients (digest 001, Algorithm 1), the
  relay cost of collecting one vector per client at a sink, and removing a client from the network.
- :mod:`~unlearnkit.graphs.dynamic`: per-round graphs (i.i.d. Erdos-Renyi, edge churn, one-peer exponential,
  random k-out) with a mixing matrix per round and window-connectivity checks.
"""

from .dynamic import (DYNAMIC_TOPOLOGIES, DynamicTopology, EdgeChurnSchedule, ErdosRenyiSchedule,
                      OnePeerExponentialSchedule, RandomKOutSchedule, StaticSchedule, make_schedule, union_graph,
                      window_connected)
from .flood import Flood, check_flood_network, flood, relay_messages, remove_client
from .mixing import (MIXING_RULES, eigenvalues, influence, influence_distance, influence_from, mixing_matrix,
                     mixing_time, slem, spectral_gap, validate_mixing)
from .sparse import (DENSE_EIG_MAX, EDGE_FAMILIES, MAX_SPARSE_CLIENTS, edge_list, graph_edges, sparse_mixing_matrix,
                     sparse_slem, validate_sparse_mixing)
from .topology import (TOPOLOGIES, complete, erdos_renyi, exponential, from_networkx, grid, make_graph, path,
                       positions, random_regular, ring, small_world, star, torus, two_clusters, validate_graph)
from .walks import (Segments, crosses_only_edges, first_observation_delays, observer_probability, route_next,
                    rrdu_graph_walk, rrdu_route, segments, simple_walk, stationary_distribution, transition_matrix,
                    uniform_route, visit_counts)

__all__ = [
    "DYNAMIC_TOPOLOGIES", "DynamicTopology", "EdgeChurnSchedule", "ErdosRenyiSchedule", "OnePeerExponentialSchedule",
    "RandomKOutSchedule", "StaticSchedule", "make_schedule", "union_graph", "window_connected",
    "Flood", "check_flood_network", "flood", "relay_messages", "remove_client",
    "MIXING_RULES", "eigenvalues", "influence", "influence_distance", "influence_from", "mixing_matrix",
    "mixing_time", "slem", "spectral_gap", "validate_mixing",
    "DENSE_EIG_MAX", "EDGE_FAMILIES", "MAX_SPARSE_CLIENTS", "edge_list", "graph_edges", "sparse_mixing_matrix",
    "sparse_slem", "validate_sparse_mixing",
    "TOPOLOGIES", "complete", "erdos_renyi", "exponential", "from_networkx", "grid", "make_graph", "path",
    "positions", "random_regular", "ring", "small_world", "star", "torus", "two_clusters", "validate_graph",
    "Segments", "crosses_only_edges", "first_observation_delays", "observer_probability", "rrdu_graph_walk",
    "route_next", "rrdu_route", "segments", "simple_walk", "stationary_distribution", "transition_matrix",
    "uniform_route", "visit_counts",
]
