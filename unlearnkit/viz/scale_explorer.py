"""Gossip on networks of 10^2 to 10^6 clients: consensus error against rounds, and the cost of a round.

:func:`consensus_run` builds a sparse topology from its edge list (never an ``N x N`` array), starts every
client at a random vector of ``d`` numbers and gossips ``x <- W x`` with :class:`~unlearnkit.decentral.GossipKernel`
on :func:`unlearnkit.device`, recording the consensus error ``||X_t - mean|| / ||X_0 - mean||`` per round and the
time of a round. :class:`ScaleExplorer` shows the error curve (log scale, with ``slem^t`` where the spectral gap
is known) and every run's time per round against ``N * d`` (log-log, with the fitted exponent): the learner picks
``N`` up to 10^4 on a CPU (10^6 on a GPU). No picture of the graph is drawn at these sizes; the pictures of the
small explorers stay thinned.
"""

from __future__ import annotations

import math
import time
from typing import Any, Optional

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
import torch

from .._validate import check_choice, check_int
from ..runtime import device as default_device, make_generator
from ._explorer import Explorer
from ._style import styled


#: the sparse families the explorer offers (``random_regular`` with degree 4)
SCALE_TOPOLOGIES = ("ring", "torus", "exponential", "random_regular", "small_world")
#: the most numbers ``N * d`` a run holds: 4 * 10^7 float32 (160 MB) on a CPU, 10^9 on a GPU
_MAX_ENTRIES = {"cpu": 4 * 10**7, "cuda": 10**9}


def scale_sizes(device: Any = None) -> list[int]:
    """The client counts offered on ``device``: 10^2 .. 10^4 on a CPU, up to 10^6 on a GPU."""

    kind = torch.device(device if device is not None else default_device()).type
    return [100, 1_000, 10_000] + ([100_000, 1_000_000] if kind == "cuda" else [])


def _closed_form_slem(topology: str, n: int) -> Optional[float]:
    if topology == "ring" and n >= 3:  # Metropolis weights 1/3: eigenvalues 1/3 + 2/3 cos(2 pi k / N)
        return 1 / 3 + 2 / 3 * math.cos(2 * math.pi / n)
    return None


def consensus_run(topology: str, n: int, d: int = 10, rounds: int = 100, *, seed: int = 0,
                  device: Any = None) -> dict[str, Any]:
    """Gossip averaging on a sparse network of ``n`` clients holding ``d`` numbers each.

    Parameters
    ----------
    topology: one of :data:`SCALE_TOPOLOGIES`.
    n, d: clients and numbers per client (``n * d`` at most 4 * 10^7 on a CPU, 10^9 on a GPU).
    rounds: gossip rounds.
    seed: the random graph (random regular, small world) and the starting vectors.
    device: where the rounds run (default :func:`unlearnkit.device`).

    Returns
    -------
    dict
        ``error`` (``rounds + 1`` relative consensus errors, 1 at round 0), ``mixing_rounds`` (first round with
        error <= 1/100, ``None`` if not reached), ``slem`` (closed form for the ring, ARPACK for N <= 10^4 on
        the others, else ``None``), ``round_ms``, ``build_s``, ``kernel``, ``params_mib`` and the inputs.
    """
    from ..decentral.mixer import GossipKernel  # deferred: imports scipy.sparse
    from ..graphs import edge_list, sparse_mixing_matrix  # deferred: imports networkx
    from ..graphs.sparse import sparse_slem  # deferred: imports networkx

    check_choice("topology", topology, SCALE_TOPOLOGIES)
    dev = torch.device(device if device is not None else default_device())
    n = check_int("N", n, low=4, high=10**7)
    d = check_int("d", d, low=1)
    rounds = check_int("rounds", rounds, low=1, high=10_000)
    cap = _MAX_ENTRIES["cuda" if dev.type == "cuda" else "cpu"]
    if n * d > cap:
        raise ValueError(f"N * d = {n * d:.3g} is too large on {dev.type}: expected N * d <= {cap:.0e} (lower d or N)")
    t0 = time.perf_counter()
    W = sparse_mixing_matrix(edge_list(topology, n, seed=seed, **({"degree": 4} if topology == "random_regular" else {})), n)
    build = time.perf_counter() - t0
    slem = _closed_form_slem(topology, n)
    if slem is None and n <= 10_000:
        try:
            slem = sparse_slem(W, maxiter=5_000)
        except ValueError:
            slem = None
    kernel = GossipKernel(W, device=dev)
    X = torch.randn((n, d), generator=make_generator(seed, dev), device=dev)
    X -= X.mean(0) - 0.5  # the average is 0.5 in every coordinate
    Y = torch.empty_like(X)
    e0 = float((X - 0.5).norm())
    err = torch.empty(rounds + 1, device=dev, dtype=torch.float64)
    err[0] = 1.0
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    t0 = time.perf_counter()
    for t in range(rounds):
        kernel(X, out=Y)
        X, Y = Y, X
        err[t + 1] = (X - 0.5).norm() / e0
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    round_ms = 1e3 * (time.perf_counter() - t0) / rounds
    error = err.cpu().numpy()
    hit = np.flatnonzero(error <= 1e-2)
    return {"topology": topology, "n": n, "d": d, "rounds": rounds, "device": str(dev), "error": error,
            "mixing_rounds": int(hit[0]) if hit.size else None, "slem": slem, "round_ms": round_ms,
            "build_s": build, "kernel": kernel.kind, "params_mib": n * d * 4 / 2**20}


@styled
def error_figure(run: Optional[dict] = None) -> go.Figure:
    """Relative consensus error against rounds (log scale), with ``slem^t`` when known."""
    fig = go.Figure()
    if run is not None:
        t = np.arange(run["error"].size)
        fig.add_scatter(x=t, y=np.maximum(run["error"], 1e-16), mode="lines", name="consensus error")
        if run["slem"] is not None:
            fig.add_scatter(x=t, y=np.maximum(run["slem"] ** t, 1e-16), mode="lines", name="slem^t",
                            line={"dash": "dash"})
    title = "" if run is None else f"{run['topology']}, N = {run['n']:,}, d = {run['d']}"
    fig.update_layout(title=title, xaxis_title="round t", yaxis_title="||X_t - mean|| / ||X_0 - mean||",
                      yaxis_type="log", height=360, legend={"x": 0.02, "y": 0.02})
    return fig


@styled
def scale_cost_figure(runs: list[dict]) -> go.Figure:
    """Milliseconds per round against ``N * d`` for every run so far, one trace per topology (log-log)."""
    fig = go.Figure()
    for topo in sorted({r["topology"] for r in runs}):
        rs = sorted((r for r in runs if r["topology"] == topo), key=lambda r: r["n"] * r["d"])
        fig.add_scatter(x=[r["n"] * r["d"] for r in rs], y=[r["round_ms"] for r in rs], mode="lines+markers",
                        name=topo)
    fig.update_layout(title="cost of one round", xaxis_title="N * d (numbers held by the network)",
                      yaxis_title="ms per round", xaxis_type="log", yaxis_type="log", height=360)
    return fig


def fitted_exponent(runs: list[dict]) -> Optional[float]:
    """The slope of log(ms per round) against log(N * d) over ``runs`` (None with fewer than two sizes)."""
    x = np.log([r["n"] * r["d"] for r in runs])
    if len(set(x.round(6))) < 2:
        return None
    return float(np.polyfit(x, np.log([r["round_ms"] for r in runs]), 1)[0])


class ScaleExplorer(Explorer):
    """Pick a sparse topology, ``N`` (10^2 .. 10^4 on a CPU, to 10^6 on a GPU), ``d`` and a number of rounds;
    press **run**: the consensus error curve, and the time per round of every run so far against ``N * d``."""

    def __init__(self, topology: str = "random_regular", n: int = 1_000, d: int = 10, rounds: int = 100,
                 seed: int = 0, device: Any = None) -> None:
        super().__init__()

        self.device = device
        sizes = scale_sizes(device)
        self.topology = W.Dropdown(options=list(SCALE_TOPOLOGIES), value=topology, description="topology")
        self.n = W.SelectionSlider(options=sizes, value=n if n in sizes else sizes[1], description="N")
        self.d = W.Dropdown(options=[1, 10, 100, 1000], value=d, description="d")
        self.rounds = W.IntSlider(value=rounds, min=10, max=500, step=10, description="rounds")
        self.seed = seed
        self.run_button = W.Button(description="run gossip", button_style="primary")
        self.info = W.HTML()
        self.runs: list[dict] = []
        self.current: Optional[dict] = None
        self.error_fig = go.FigureWidget(error_figure())
        self.cost_fig = go.FigureWidget(scale_cost_figure([]))
        self.run_button.on_click(lambda _b: self.guard(self._counted, self.run))
        self._layout(W.HBox([self.topology, self.n]), W.HBox([self.d, self.rounds, self.run_button]), self.info,
                     W.HBox([self.error_fig, self.cost_fig]))
        self.guard(self._counted, self.run)

    def run(self) -> dict:
        """Run the chosen configuration, redraw both figures and the summary; returns the run."""
        r = consensus_run(self.topology.value, int(self.n.value), int(self.d.value), int(self.rounds.value),
                          seed=self.seed, device=self.device)
        self.current = r
        self.runs = [x for x in self.runs if (x["topology"], x["n"], x["d"]) != (r["topology"], r["n"], r["d"])]
        self.runs.append(r)
        for fw, fig in ((self.error_fig, error_figure(r)), (self.cost_fig, scale_cost_figure(self.runs))):
            with fw.batch_update():
                fw.data = ()
                fw.add_traces(list(fig.data))
                fw.layout = fig.layout
        mix = (f"error below 1/100 after <b>{r['mixing_rounds']}</b> rounds" if r["mixing_rounds"] is not None
               else f"error still {r['error'][-1]:.2g} after {r['rounds']} rounds")
        gap = "" if r["slem"] is None else (f"; spectral gap {1 - r['slem']:.2e}, so about "
                                            f"{math.log(100) / max(1 - r['slem'], 1e-300):.3g} rounds to 1/100")
        slope = fitted_exponent(self.runs)
        fit = "" if slope is None else f"; time ~ (N d)^{slope:.2f} over the runs so far"
        self.info.value = (f"{mix}{gap}. One round: {r['round_ms']:.3g} ms ({r['kernel']} kernel on {r['device']}, "
                           f"{r['params_mib']:.3g} MiB of parameters; W built in {r['build_s']:.2g} s){fit}")
        return r
