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

from ..runtime import lazy_exports
from .flood import flood  # also the name of its module: bound here, before that module loads

__all__ = [
    "make_graph", "TOPOLOGIES", "mixing_matrix", "sparse_mixing_matrix", "edge_list", "spectral_gap", "mixing_time",
    "make_schedule", "flood", "rrdu_route", "simple_walk",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "make_graph": ".topology", "TOPOLOGIES": ".topology", "mixing_matrix": ".mixing",
    "sparse_mixing_matrix": ".sparse", "edge_list": ".sparse", "spectral_gap": ".mixing", "mixing_time": ".mixing",
    "make_schedule": ".dynamic", "rrdu_route": ".walks", "simple_walk": ".walks",
})
