"""Flooding one message through a network of clients, and the graph checks that flooding needs.

Algorithm 1 of Wu et al. 2026 ("Certified Unlearning in Decentralized Federated Learning", lines 6-12;
digest 001 section 2.2) delivers the requester's Newton correction to every client by flooding: the source
sends it to every neighbour, and every other client forwards it once to all neighbours but the one it first
heard it from. Section IV-C (client-wise removal) has the departing client collect one statistic from every
other client along shortest paths, and the network then carries on without it.

- :func:`flood` simulates the synchronous flood and counts its messages (:class:`Flood`);
- :func:`relay_messages` counts the transmissions that bring one vector from every client to a sink;
- :func:`remove_client` is the network after a client leaves (relabelled, checked to stay connected);
- :func:`check_flood_network` rejects a graph that a flood cannot cover.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

import networkx as nx
import numpy as np

from .._validate import check_int
from .topology import validate_graph

__all__ = ["Flood", "flood", "relay_messages", "remove_client", "check_flood_network"]


@dataclass(frozen=True)
class Flood:
    """How one message spread: the hop at which each client first got it and what it cost.

    ``messages`` counts point-to-point transmissions of the ``d``-vector: the source sends to every
    neighbour, every other client forwards once to all neighbours but the one it first heard from, so
    ``messages = 2|E| - (N - 1)`` and ``duplicates = messages - (N - 1)`` are discarded (Wu et al. 2026,
    Algorithm 1, lines 9-12). The flood takes ``ecc(source)`` hops.
    """

    source: int
    hops: Mapping[int, int]
    parent: Mapping[int, Optional[int]]
    messages: int
    duplicates: int

    @property
    def rounds(self) -> int:
        return max(self.hops.values())


def check_flood_network(G: nx.Graph, what: str = "network") -> nx.Graph:
    """``G`` if it is a valid connected client graph; ``ValueError`` saying why a flood would miss clients."""
    try:
        return validate_graph(G, name=what)
    except ValueError as exc:
        raise ValueError(f"{exc}; flooding the Newton correction cannot reach every client") from None


def flood(G: nx.Graph, source: int) -> Flood:
    """Simulate Algorithm 1's flooding of one message from ``source`` (synchronous hops).

    Raises ``ValueError`` naming the problem when ``G`` is disconnected (the flood would miss clients) or
    ``source`` is not a client.
    """
    check_flood_network(G)
    n = G.number_of_nodes()
    source = check_int("source", source, low=0, high=n - 1)
    hops: dict[int, int] = {source: 0}
    parent: dict[int, Optional[int]] = {source: None}
    frontier = [source]
    messages = 0
    hop = 0
    while frontier:
        hop += 1
        arrivals: dict[int, int] = {}
        for u in frontier:
            for v in G.neighbors(u):
                if v == parent[u]:
                    continue  # never echo back to whoever we first heard it from
                messages += 1
                if v not in hops and v not in arrivals:
                    arrivals[v] = u
                elif v in arrivals:
                    arrivals[v] = min(arrivals[v], u)
        for v, u in arrivals.items():
            hops[v] = hop
            parent[v] = u
        frontier = sorted(arrivals)
    return Flood(source, hops, parent, messages, messages - (n - 1))


def relay_messages(G: nx.Graph, sink: int) -> int:
    """Point-to-point transmissions to bring one vector from every other client to ``sink`` (shortest paths).

    The cost of section IV-C of Wu et al. 2026, where the departing client collects every other client's
    curvature statistic ``T_i``.
    """
    return int(sum(nx.single_source_shortest_path_length(G, sink).values()))


def remove_client(G: nx.Graph, c: int) -> nx.Graph:
    """``G`` without client ``c``, relabelled ``0 .. N-2``; ``ValueError`` if that disconnects the network.

    Graph attributes are kept; stored positions (``G.graph["pos"]``) lose the departing client's row.
    """
    others = [v for v in sorted(G.nodes) if v != c]
    H = nx.relabel_nodes(G.subgraph(others).copy(), {v: i for i, v in enumerate(others)})
    if H.number_of_nodes() >= 2 and not nx.is_connected(H):
        sizes = sorted((len(s) for s in nx.connected_components(H)), reverse=True)
        raise ValueError(f"removing client {c} disconnects the network into components of sizes {sizes}: "
                         "the remaining clients could not keep training by gossip")
    H.graph.update({k: v for k, v in G.graph.items() if k != "pos"})
    if "pos" in G.graph:
        H.graph["pos"] = np.asarray(G.graph["pos"])[others]
    return H
