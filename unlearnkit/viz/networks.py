"""Figures and explorers for notebook 05 (networks and walks): topologies, mixing matrices and their spectral
gap, gossip averaging round by round, a token's random walk with visit counts, and dynamic topologies.

Figure builders are pure (graph/matrix/arrays in, ``go.Figure`` out) and keep a fixed list of traces, so an
explorer redraws by copying arrays into its ``FigureWidget`` inside ``batch_update``. Everything shown is
computed by :mod:`unlearnkit.graphs` and :mod:`unlearnkit.decentral`; the notebook's tables and training runs
over several topologies are in :mod:`unlearnkit.experiments.labs.networks`.
"""

from __future__ import annotations

import html
from typing import Iterable, Optional, Sequence

import ipywidgets as W
import networkx as nx
import numpy as np
import plotly.graph_objects as go

from .. import graphs as _g
from .._validate import check_choice, check_int, check_probability
from ..experiments.device_limits import DemoLimits
from ._explorer import Explorer
from ._payload import plain_figure
from ._style import styled
from .scaled import averaging_on_device, drawn_edges, edge_xy as _edge_xy, explorer_limits, heatmap_view


_GRAPH_KW = dict(seed=0)


# -- pure figure builders ---------------------------------------------------------------------------------

def label_colors(values: Sequence[float], cmin: Optional[float] = None, cmax: Optional[float] = None) -> list[str]:
    """A readable colour for the label on each Viridis-coloured node: black on the light upper part of the scale
    (green to yellow), white on the dark lower part."""
    vals = np.asarray(values, dtype=float)
    lo = float(np.nanmin(vals)) if cmin is None and vals.size else (0.0 if cmin is None else cmin)
    hi = float(np.nanmax(vals)) if cmax is None and vals.size else (1.0 if cmax is None else cmax)
    t = (vals - lo) / (hi - lo) if hi > lo else np.full(vals.shape, 0.5)
    return ["black" if x > 0.55 else "white" for x in t]


@styled
def graph_figure(G: nx.Graph, values: Optional[Sequence[float]] = None, *, pos: Optional[np.ndarray] = None,
                 title: str = "", highlight: Iterable[tuple[int, int]] = (), token: Optional[int] = None,
                 sizes: Optional[Sequence[float]] = None, cmin: Optional[float] = None, cmax: Optional[float] = None,
                 colorbar_title: str = "") -> go.Figure:
    """The graph with nodes coloured by ``values``, ``highlight`` edges in red and an optional token marker.

    Traces (always four, in this order): edges, highlighted edges, nodes, token.
    """
    n = G.number_of_nodes()
    pos = _g.topology.positions(G) if pos is None else np.asarray(pos)
    vals = np.zeros(n) if values is None else np.asarray(values, dtype=float)
    sz = np.full(n, 16.0) if sizes is None else np.asarray(sizes, dtype=float)
    ex, ey = _edge_xy(pos, drawn_edges(G))  # every edge up to 20,000: all of them in the CPU ranges
    hx, hy = _edge_xy(pos, highlight)
    fig = go.Figure([
        go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#bbb", width=1), hoverinfo="skip", name="edges"),
        go.Scatter(x=hx, y=hy, mode="lines", line=dict(color="#d62728", width=4), hoverinfo="skip", name="highlight"),
        go.Scatter(x=pos[:, 0], y=pos[:, 1], mode="markers+text", text=[str(i) for i in range(n)],
                   textposition="middle center", textfont=dict(size=9, color=label_colors(vals, cmin, cmax)),
                   hovertext=[f"client {i}: {v:.4g}" for i, v in enumerate(vals)], hoverinfo="text",
                   marker=dict(size=sz, color=vals, colorscale="Viridis", cmin=cmin, cmax=cmax, showscale=True,
                               colorbar=dict(title=colorbar_title, thickness=12),
                               line=dict(color="#333", width=1)), name="clients"),
        go.Scatter(x=[] if token is None else [pos[token, 0]], y=[] if token is None else [pos[token, 1]],
                   mode="markers", marker=dict(symbol="star", size=26, color="#ff7f0e", line=dict(color="black", width=1)),
                   name="token", hoverinfo="skip"),
    ])
    fig.update_layout(title=title, showlegend=False, height=380, width=430, margin=dict(l=10, r=10, t=40, b=10),
                      xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x"),
                      plot_bgcolor="white")
    return plain_figure(fig)


@styled
def mixing_heatmap_figure(W: np.ndarray, title: str = "mixing matrix W") -> go.Figure:
    """Heatmap of ``W`` (row i = the weights client i gives to everyone)."""
    W = np.asarray(W)
    fig = go.Figure(go.Heatmap(z=W, colorscale="Blues", zmin=0, zmax=max(float(W.max()), 1e-9),
                               colorbar=dict(thickness=12)))
    fig.update_layout(title=title, height=380, width=400, margin=dict(l=40, r=10, t=40, b=30),
                      yaxis=dict(autorange="reversed", title="client i"), xaxis=dict(title="client j"))
    return plain_figure(fig)


@styled
def averaging_figure(traj: np.ndarray, slem: Optional[float] = None, *, current: Optional[int] = None,
                     title: str = "") -> go.Figure:
    """Distance to the average ``||x_t - mean||`` over rounds (log scale), with ``slem^t`` times the start
    distance as the Lemma 1 rate, and a marker at round ``current``. Traces: distance, rate, marker."""
    traj = np.asarray(traj, dtype=float)
    t = np.arange(traj.shape[0])
    dist = np.linalg.norm(traj - traj.mean(axis=1, keepdims=True), axis=1)
    dist = np.maximum(dist, 1e-16)
    rate = dist[0] * (slem ** t if slem is not None else np.full_like(dist, np.nan))
    c = 0 if current is None else int(current)
    fig = go.Figure([
        go.Scatter(x=t, y=dist, mode="lines", name="distance to the average", line=dict(width=3)),
        go.Scatter(x=t, y=np.maximum(rate, 1e-16), mode="lines", name="slem(W)^t (Lemma 1)", line=dict(dash="dash")),
        go.Scatter(x=[c], y=[dist[min(c, len(dist) - 1)]], mode="markers", marker=dict(size=12, color="#d62728"),
                   name="now"),
    ])
    fig.update_layout(title=title, yaxis_type="log", xaxis_title="gossip round t", yaxis_title="||x_t - mean||",
                      height=380, width=430, margin=dict(l=50, r=10, t=40, b=40), legend=dict(orientation="h", y=-0.3))
    return plain_figure(fig)


@styled
def visits_figure(counts: np.ndarray, expected: np.ndarray, *, title: str = "") -> go.Figure:
    """Observed visit counts per client against the expected (stationary) counts. Traces: observed, expected."""
    n = len(counts)
    fig = go.Figure([
        go.Bar(x=list(range(n)), y=np.asarray(counts), name="visits so far", marker_color="#1f77b4"),
        go.Scatter(x=list(range(n)), y=np.asarray(expected), mode="markers", name="expected",
                   marker=dict(symbol="line-ew", size=18, line=dict(width=3, color="#d62728"))),
    ])
    fig.update_layout(title=title, xaxis_title="client", yaxis_title="hops holding the token", height=380, width=430,
                      margin=dict(l=50, r=10, t=40, b=40), legend=dict(orientation="h", y=-0.3))
    return plain_figure(fig)


@styled
def dynamic_figure(gaps: np.ndarray, contraction: np.ndarray, static_contraction: np.ndarray, *,
                   current: int = 0, title: str = "") -> go.Figure:
    """Per-round spectral gap and the product contraction ``||W_t...W_0 - J||`` against the static graph.
    Traces: gap, contraction, static contraction, marker."""
    t = np.arange(1, len(gaps) + 1)
    fig = go.Figure([
        go.Bar(x=t, y=gaps, name="spectral gap of round t", marker_color="#aec7e8", yaxis="y2"),
        go.Scatter(x=t, y=np.maximum(contraction, 1e-16), mode="lines", name="||W_t...W_1 - J|| (dynamic)",
                   line=dict(width=3, color="#1f77b4")),
        go.Scatter(x=t, y=np.maximum(static_contraction, 1e-16), mode="lines", name="same, static base graph",
                   line=dict(dash="dash", color="#7f7f7f")),
        go.Scatter(x=[current + 1], y=[max(float(contraction[current]), 1e-16)], mode="markers",
                   marker=dict(size=12, color="#d62728"), name="now"),
    ])
    fig.update_layout(title=title, xaxis_title="round", yaxis=dict(type="log", title="distance to averaging"),
                      yaxis2=dict(overlaying="y", side="right", range=[0, 1], title="gap", showgrid=False),
                      height=380, width=470, margin=dict(l=50, r=50, t=40, b=40), legend=dict(orientation="h", y=-0.3))
    return plain_figure(fig)


# -- small computations the explorers share ----------------------------------------------------------------

def initial_values(G: nx.Graph, kind: str = "spike") -> np.ndarray:
    """Starting values for a gossip-averaging picture: ``"spike"`` (1 at client 0), ``"halves"`` (1 on the
    first half of the clients, 0 on the rest: the two sides of the bridge) or ``"ramp"`` (0..1 by id)."""
    check_choice("initial", kind, ("spike", "halves", "ramp"))
    n = G.number_of_nodes()
    if kind == "spike":
        x = np.zeros(n)
        x[0] = 1.0
    elif kind == "halves":
        x = (np.arange(n) < n // 2).astype(float)
    else:
        x = np.linspace(0.0, 1.0, n)
    return x


def _sync(fw: go.FigureWidget, fig: go.Figure, attrs: Sequence[str] = ("x", "y")) -> None:
    with fw.batch_update():
        for tr, new in zip(fw.data, fig.data):
            for a in attrs:
                setattr(tr, a, getattr(new, a))
            if isinstance(new, go.Scatter) and new.marker is not None:
                tr.marker.color = new.marker.color
                tr.marker.size = new.marker.size
                if new.marker.cmin is not None or new.marker.cmax is not None:
                    tr.marker.cmin, tr.marker.cmax = new.marker.cmin, new.marker.cmax
            if isinstance(new, go.Scatter):
                tr.text, tr.hovertext = new.text, new.hovertext
                if new.textfont is not None and new.textfont.color is not None:
                    tr.textfont.color = new.textfont.color
            if isinstance(new, go.Heatmap):
                tr.z, tr.zmax = new.z, new.zmax
        fw.layout.title.text = fig.layout.title.text


# -- explorers --------------------------------------------------------------------------------------------

class NetworkExplorer(Explorer):
    """Pick a topology, N and a mixing rule; see the graph coloured by gossip values at round ``t`` (press play
    to watch them diffuse), the mixing matrix, and the distance to consensus against ``slem(W)^t``."""

    def __init__(self, topology: str = "ring", n: int = 12, rule: str = "metropolis", initial: str = "halves",
                 rounds: int = 40, limits: Optional[DemoLimits] = None) -> None:
        super().__init__()

        self.limits = explorer_limits(limits)  # slider ranges follow the device; the defaults do not

        self.topology = W.Dropdown(options=sorted(_g.TOPOLOGIES), value=topology, description="topology")
        self.n = W.IntSlider(value=n, min=3, max=self.limits.max_clients, description="N")
        self.rule = W.Dropdown(options=list(_g.mixing.MIXING_RULES), value=rule, description="rule")
        self.initial = W.Dropdown(options=["spike", "halves", "ramp"], value=initial, description="start")
        self.rounds = check_int("rounds", rounds, low=1)
        self.round = W.IntSlider(value=0, min=0, max=self.rounds, description="round t")
        self.play = W.Play(value=0, min=0, max=self.rounds, interval=300, description="play")
        W.jslink((self.play, "value"), (self.round, "value"))
        self.info = W.HTML()
        G0 = _g.topology.ring(4)
        self.graph_fig = go.FigureWidget(graph_figure(G0, cmin=0, cmax=1, colorbar_title="value"))
        self.heat_fig = go.FigureWidget(mixing_heatmap_figure(_g.mixing_matrix(G0)))
        self.avg_fig = go.FigureWidget(averaging_figure(np.zeros((2, 4)) + [[1, 0, 0, 0], [0.5, 0.5, 0, 0]], 0.5))
        for w in (self.topology, self.n, self.rule, self.initial):
            self.observe(w, self.update)
        self.observe(self.round, self.redraw_round)
        self._layout(W.HBox([self.topology, self.n, self.rule]), W.HBox([self.initial, self.play, self.round]),
                     self.info, W.HBox([self.graph_fig, self.heat_fig, self.avg_fig]))
        self.refresh()

    def compute(self) -> dict:
        n = check_int("N", self.n.value, low=2)
        G = _g.make_graph(self.topology.value, n, **_GRAPH_KW)
        W = _g.mixing_matrix(G, self.rule.value)
        traj = averaging_on_device(W, initial_values(G, self.initial.value), self.rounds)  # one matmul a round
        return {"G": G, "W": W, "traj": traj, "gap": _g.spectral_gap(W), "slem": _g.mixing.slem(W),
                "mixing_time": _g.mixing_time(W, 1e-3)}

    def update(self) -> None:
        v = self.compute()
        self.current = v
        G = v["G"]
        _sync(self.heat_fig, mixing_heatmap_figure(*heatmap_view(v["W"], f"W ({self.rule.value})")), attrs=())
        _sync(self.avg_fig, averaging_figure(v["traj"], v["slem"], current=self.round.value,
                                             title=f"consensus: gap {v['gap']:.3f}"))
        bridge = G.graph.get("bridge")
        self.info.value = (f"<b>{html.escape(self.topology.value)}</b>, N = {G.number_of_nodes()}: "
                           f"{G.number_of_edges()} edges, spectral gap <b>{v['gap']:.4f}</b>, slem {v['slem']:.4f}, "
                           f"about <b>{v['mixing_time']}</b> rounds to agree within 0.1%"
                           + (f"; the bridge is edge {bridge} (red)" if bridge else ""))
        self.redraw_round()

    def redraw_round(self) -> None:
        v = self.current
        t = min(int(self.round.value), self.rounds)
        G = v["G"]
        lo, hi = float(v["traj"][0].min()), float(v["traj"][0].max())
        fig = graph_figure(G, v["traj"][t], title=f"gossip values after {t} rounds", cmin=lo, cmax=hi,
                           highlight=[G.graph["bridge"]] if "bridge" in G.graph else ())
        _sync(self.graph_fig, fig)
        with self.avg_fig.batch_update():
            d = self.avg_fig.data[0].y
            self.avg_fig.data[2].x, self.avg_fig.data[2].y = [t], [d[t]]


class WalkExplorer(Explorer):
    """A token's walk, hop by hop: ``simple`` (uniform neighbour), ``rrdu`` (RR-DU routing: u with
    probability p, else uniform elsewhere; it jumps) or ``rrdu_graph`` (our edge-respecting variant).
    Node colour = visits so far; the bars compare them with the stationary expectation."""

    def __init__(self, topology: str = "ring", n: int = 10, routing: str = "rrdu", p: float = 0.1, u: int = 0,
                 hops: int = 200, seed: int = 0, limits: Optional[DemoLimits] = None) -> None:
        super().__init__()

        self.limits = lim = explorer_limits(limits)  # slider ranges follow the device; the defaults do not

        self.topology = W.Dropdown(options=sorted(_g.TOPOLOGIES), value=topology, description="topology")
        self.n = W.IntSlider(value=n, min=3, max=lim.max_clients, description="N")
        self.routing = W.Dropdown(options=["simple", "rrdu", "rrdu_graph"], value=routing, description="routing")
        self.p = W.FloatSlider(value=p, min=0.0, max=1.0, step=0.01, description="p")
        self.u = W.IntSlider(value=u, min=0, max=lim.max_clients - 1, description="u")
        self.hops = W.IntSlider(value=hops, min=10, max=lim.max_hops, step=10, description="hops T")
        self.seed = seed
        self.hop = W.IntSlider(value=hops, min=0, max=hops, description="hop t")
        # at the end like hop t (play restarts from 0): value=0 made the browser link pull hop t to 0
        self.play = W.Play(value=hops, min=0, max=hops, interval=150, description="play")
        W.jslink((self.play, "value"), (self.hop, "value"))
        self.info = W.HTML()
        G0 = _g.topology.ring(4)
        self.graph_fig = go.FigureWidget(graph_figure(G0, colorbar_title="visits", token=0))
        self.visit_fig = go.FigureWidget(visits_figure(np.zeros(4), np.zeros(4)))
        for w in (self.topology, self.n, self.routing, self.p, self.u, self.hops):
            self.observe(w, self.update)
        self.observe(self.hop, self.redraw_hop)
        self._layout(W.HBox([self.topology, self.n, self.routing]), W.HBox([self.p, self.u, self.hops]),
                     W.HBox([self.play, self.hop]), self.info, W.HBox([self.graph_fig, self.visit_fig]))
        self.refresh()

    def compute(self) -> dict:
        n = check_int("N", self.n.value, low=2)
        G = _g.make_graph(self.topology.value, n, **_GRAPH_KW)
        u = check_int("u", self.u.value, low=0, high=n - 1)
        T = check_int("hops", self.hops.value, low=1)
        rng = np.random.default_rng(self.seed)
        kind = self.routing.value
        if kind == "simple":
            route = _g.simple_walk(G, T, start=u, rng=rng)
            pi = _g.walks.stationary_distribution(_g.walks.transition_matrix(G, kind="simple"))
        elif kind == "rrdu":
            p = check_probability("p", self.p.value)
            route = _g.rrdu_route(n, u, p, T, rng=rng)
            pi = _g.walks.transition_matrix(kind="rrdu", n=n, u=u, p=p)[0]
        else:
            p = check_probability("p", self.p.value, allow_zero=False, allow_one=False)
            route = _g.walks.rrdu_graph_walk(G, u, p, T, start=u, rng=rng)
            pi = _g.walks.stationary_distribution(_g.walks.transition_matrix(G, kind="rrdu_graph", u=u, p=p))
        return {"G": G, "route": route, "pi": pi, "u": u, "T": T, "n": n}

    def update(self) -> None:
        v = self.compute()
        self.current = v
        for w in (self.hop, self.play):
            w.max = v["T"]
        if self.hop.value > v["T"]:
            self.hop.value = v["T"]
        r, u = v["route"], v["u"]
        seg = _g.walks.segments(r, u)
        jumps = 0 if len(r) < 2 else int(sum(1 for a, b in zip(r[:-1], r[1:]) if a != b and not v["G"].has_edge(a, b)))
        gaps = f"mean run between visits to u: {seg.descent_hops.mean():.2f}" if seg.n_visits else "u never visited"
        self.info.value = (f"{seg.n_visits} of {v['T']} hops at u = {u} (share {seg.n_visits / v['T']:.3f}, "
                           f"stationary {v['pi'][u]:.3f}); {gaps}; "
                           f"<b>{jumps}</b> hops jumped across a non-edge")
        self.redraw_hop()

    def redraw_hop(self) -> None:
        v = self.current
        t = min(int(self.hop.value), v["T"])
        r, G = v["route"], v["G"]
        counts = _g.walks.visit_counts(r[:t], v["n"])
        token = int(r[t - 1]) if t > 0 else int(r[0])
        hl = [(int(r[t - 2]), int(r[t - 1]))] if t >= 2 and r[t - 2] != r[t - 1] else []
        sizes = 14 + 20 * np.sqrt(counts / max(counts.max(), 1))
        _sync(self.graph_fig, graph_figure(G, counts, token=token, highlight=hl, sizes=sizes, cmin=0,
                                           cmax=max(int(counts.max()), 1), title=f"hop {t}: token at client {token}"))
        _sync(self.visit_fig, visits_figure(counts, v["pi"] * t, title="visits vs stationary expectation"))


class DynamicExplorer(Explorer):
    """A topology that changes every round: pick a schedule and a churn rate; see the round-t graph, the
    per-round spectral gap, and how fast the *product* of the mixing matrices contracts, against the
    static base graph."""

    def __init__(self, schedule: str = "edge_churn", n: int = 16, rate: float = 0.2, p_edge: float = 0.2,
                 base: str = "ring", rounds: int = 40, seed: int = 0) -> None:
        super().__init__()

        self.schedule = W.Dropdown(options=[s for s in _g.dynamic.DYNAMIC_TOPOLOGIES if s != "static"], value=schedule,
                                   description="schedule")
        self.n = W.IntSlider(value=n, min=3, max=40, description="N")
        self.rate = W.FloatSlider(value=rate, min=0.0, max=1.0, step=0.05, description="churn rate")
        self.p_edge = W.FloatSlider(value=p_edge, min=0.0, max=1.0, step=0.05, description="p_edge")
        self.base = W.Dropdown(options=sorted(_g.TOPOLOGIES), value=base, description="base graph")
        self.rounds = check_int("rounds", rounds, low=2)
        self.seed = seed
        self.round = W.IntSlider(value=0, min=0, max=self.rounds - 1, description="round t")
        self.play = W.Play(value=0, min=0, max=self.rounds - 1, interval=400, description="play")
        W.jslink((self.play, "value"), (self.round, "value"))
        self.info = W.HTML()
        self.graph_fig = go.FigureWidget(graph_figure(_g.topology.ring(4), colorbar_title="degree"))
        z = np.ones(self.rounds)
        self.dyn_fig = go.FigureWidget(dynamic_figure(z, z, z))
        for w in (self.schedule, self.n, self.rate, self.p_edge, self.base):
            self.observe(w, self.update)
        self.observe(self.round, self.redraw_round)
        self._layout(W.HBox([self.schedule, self.n, self.base]), W.HBox([self.rate, self.p_edge]),
                     W.HBox([self.play, self.round]), self.info, W.HBox([self.graph_fig, self.dyn_fig]))
        self.refresh()

    def compute(self) -> dict:
        n = check_int("N", self.n.value, low=2)
        rate = check_probability("churn rate", self.rate.value)
        p_edge = check_probability("p_edge", self.p_edge.value, allow_zero=False)
        sched = _g.make_schedule(self.schedule.value, n, seed=self.seed, base=self.base.value, rate=rate,
                                 p_edge=p_edge)
        static = _g.dynamic.StaticSchedule(_g.make_graph(self.base.value, n, seed=self.seed))
        gaps = sched.spectral_gaps(self.rounds)
        contraction = sched.contraction(self.rounds)
        window = next((B for B in range(1, self.rounds + 1) if sched.window_connected(self.rounds, B)), None)
        return {"schedule": sched, "gaps": gaps, "contraction": contraction,
                "static": static.contraction(self.rounds), "window": window}

    def update(self) -> None:
        v = self.compute()
        self.current = v
        disc = int((v["gaps"] < 1e-9).sum())
        win = f"every window of <b>{v['window']}</b> rounds is connected" if v["window"] else \
            f"not even all {self.rounds} rounds together are connected"
        self.info.value = (f"{disc} of {self.rounds} rounds are disconnected (gap 0); {win}; after {self.rounds} "
                           f"rounds gossip is {v['contraction'][-1]:.2e} from exact averaging "
                           f"(static {html.escape(self.base.value)}: {v['static'][-1]:.2e})")
        self.redraw_round()

    def redraw_round(self) -> None:
        v = self.current
        t = min(int(self.round.value), self.rounds - 1)
        G = v["schedule"].graph(t)
        deg = np.array([d for _, d in sorted(G.degree())], dtype=float)
        _sync(self.graph_fig, graph_figure(G, deg, pos=v["schedule"].pos, cmin=0, cmax=max(deg.max(), 1),
                                           title=f"round {t}: {G.number_of_edges()} edges, gap {v['gaps'][t]:.3f}"))
        _sync(self.dyn_fig, dynamic_figure(v["gaps"], v["contraction"], v["static"], current=t,
                                           title="mixing over time"))
