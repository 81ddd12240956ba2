"""Experiments of notebook 05 (networks and walks): how the topology shapes mixing and decentralized training.

- :func:`topology_table`: one row per topology on ``n`` clients (edges, degree, diameter, spectral gap and
  mixing time of its mixing matrix), fastest mixing first;
- :func:`compare_topologies`: train the same federation by D-PSGD (Lian et al. 2017) over several
  topologies, each from the same seed, and report consensus and accuracy per topology;
- :func:`history_rows`: a run's per-round history read at a few rounds (first, middle, last), as table rows.

The graphs and mixing matrices come from :mod:`unlearnkit.graphs`, the training from
:mod:`unlearnkit.decentral`; the figures and explorers that show them are in :mod:`unlearnkit.viz.networks`.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import networkx as nx
import numpy as np

from ... import graphs as _g
from ...runtime import make_generator
from ..._validate import check_int
from ...decentral import GossipConfig, run_gossip
from ...graphs.sparse import MAX_SPARSE_CLIENTS


def topology_table(n: int, names: Optional[Sequence[str]] = None, *, rule: str = "metropolis", seed: int = 0,
                   tol: float = 1e-3) -> list[dict[str, Any]]:
    """One row per topology on ``n`` clients: edges, max degree, diameter, spectral gap, mixing time.

    The spectral gap is ``1 - slem(W)`` of the mixing matrix built by ``rule``; by Lemma 1 of the
    Newton/Fisher paper (Wu et al. 2026, arXiv 2601.06436), ``||W^k - J||_2 = slem(W)^k`` for symmetric
    ``W``, so the gap sets how many gossip rounds consensus takes (``mixing_time``: rounds until that
    distance is below ``tol``). Rows are sorted by decreasing gap.
    """
    rows = []
    for name in names or sorted(_g.TOPOLOGIES):
        G = _g.make_graph(name, n, seed=seed)
        W = _g.mixing_matrix(G, rule)
        rows.append({"topology": name, "edges": G.number_of_edges(), "max_degree": max(d for _, d in G.degree()),
                     "diameter": nx.diameter(G), "spectral_gap": round(_g.spectral_gap(W), 4),
                     "mixing_time": _g.mixing_time(W, tol)})
    return sorted(rows, key=lambda r: -r["spectral_gap"])


def compare_topologies(flat: Any, federation: Any, topologies: Sequence[str], config: GossipConfig, *,
                       seed: int = 1, progress: bool = False) -> list[dict[str, Any]]:
    """Train ``federation`` by D-PSGD over each topology in turn; one row of results per topology.

    Every run starts from the same initialisation and draws its minibatches from a fresh generator seeded
    with ``seed``, so the topologies differ only in who averages with whom. The graph of each run is
    ``graphs.make_graph(name, federation.n_clients)`` (its default layout seed).

    Returns
    -------
    list of dict
        In the order of ``topologies``: ``topology``; ``mean_consensus``, the consensus distance
        ``(1/N) sum_i ||theta_i - theta_bar||^2`` averaged over the rounds; ``accuracy`` (of the network
        average) and ``worst_client_accuracy`` at the last round (None unless it was an evaluation round);
        ``state``, the trained :class:`~unlearnkit.core.TrainedState`.
    """
    if not topologies:
        raise ValueError("topologies is empty: give at least one topology name")
    n = check_int("n_clients", federation.n_clients, low=2, high=MAX_SPARSE_CLIENTS)
    rows = []
    for name in topologies:
        state = run_gossip(flat, federation, _g.make_graph(name, n), config, generator=make_generator(seed),
                           progress=progress)
        last = state.history[-1]
        rows.append({"topology": name,
                     "mean_consensus": float(np.mean([r["consensus"] for r in state.history])),
                     "accuracy": last.get("accuracy"), "worst_client_accuracy": last.get("client_accuracy_min"),
                     "state": state})
    return rows


def history_rows(history: Sequence[dict[str, Any]], at: Sequence[int],
                 keys: Sequence[str] = ("round", "consensus")) -> list[dict[str, Any]]:
    """The rows of a run's per-round ``history`` at the positions ``at`` (negative counts from the end).

    Parameters
    ----------
    history : sequence of dict
        One dict per round, as the gossip runs of :mod:`unlearnkit.decentral` record it (``round`` counts
        from 1, ``consensus`` is ``(1/N) sum_i ||theta_i - theta_bar||^2``).
    at : sequence of int
        Positions in ``history``, e.g. ``(0, rounds // 2, -1)``.
    keys : sequence of str
        The entries of each row to keep, in this order.

    Returns
    -------
    list of dict
        One row per position, with ``keys``.
    """
    return [{k: history[t][k] for k in keys} for t in at]
