"""Figures and the explorer of notebook 06 (RR-DU; digest 000 section 8).

Pure figure builders (data -> ``go.Figure``): :func:`walk_figure` (the token on the topology, u in red),
:func:`ledger_figure` (per-client epsilon bars), :func:`curves_figure` (clean accuracy and backdoor success
over the hops), :func:`accountant_sigma_figure` (sigma against epsilon for accountants A-D and DDP) and
:func:`capacity_figure` (deletion capacity of RR-DU and DDP), :func:`why_p_figure` (the routing probability
against the weights of the expected step). :class:`RRDUExplorer` wires them to sliders:
moving p, epsilon, delta, rho, s, the alignment variant or the accountant recalibrates sigma and redraws the walk preview,
the ledger and the capacity plot at once; :meth:`RRDUExplorer.run` runs RR-DU (and DDP at the same epsilon)
on the backdoor task and streams every hop into the figures.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Optional, Sequence

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..privacy.capacity import ddp_capacity, rrdu_capacity
from ..runtime import make_generator
from ._explorer import Explorer
from ._payload import plain_figure
from ._style import styled


U_COLOR, NODE_COLOR, TOKEN_COLOR, NOISE_COLOR = "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e"


@styled
def why_p_figure(n_clients: int, *, marks: Sequence[float] = (0.0, 0.1, 1.0)) -> go.Figure:
    """Why ``p = 1/N``: the expected step of RR-DU's exact variant against retraining's gradient, as p varies.

    A hop goes to u with probability p (a step on u's retained data, gradient g_u) and otherwise to one of the
    N - 1 others uniformly (gradient g_v), so the expected step is ``p g_u + (1 - p)/(N - 1) sum_v g_v``;
    retraining's gradient weighs every client 1/N. Left: the two weights against p, with 1/N. Right: how far
    the expected step is from retraining's gradient, ``|p - 1/N| ||g_u - mean of the others' g_v||``, in units
    of that gradient gap. ``marks``: values of p to mark (the paper's Table 3 runs 0, 0.1 and 1).
    """

    n = int(n_clients)
    if n < 2:
        raise ValueError(f"n_clients={n_clients!r} is out of range: expected n_clients in [2, inf)")
    p = np.linspace(0.0, 1.0, 201)
    p = np.union1d(p, [1.0 / n])
    fig = make_subplots(rows=1, cols=2, subplot_titles=("weights in the expected step", "distance to retraining"))
    fig.add_scatter(x=p, y=p, name="u's gradient: p", line=dict(color=U_COLOR), row=1, col=1)
    fig.add_scatter(x=p, y=(1 - p) / (n - 1), name="each other client's: (1 - p)/(N - 1)",
                    line=dict(color=NODE_COLOR), row=1, col=1)
    fig.add_scatter(x=[0, 1], y=[1 / n, 1 / n], mode="lines", name=f"retraining: 1/N = {1 / n:.3g} each",
                    line=dict(color="black", dash="dash"), row=1, col=1)
    fig.add_scatter(x=p, y=np.abs(p - 1 / n), name="|p - 1/N| (x the gradient gap)", line=dict(color="#9467bd"),
                    row=1, col=2)
    ms = [float(m) for m in marks]
    fig.add_scatter(x=ms, y=[abs(m - 1 / n) for m in ms], mode="markers+text", text=[f"p = {m:g}" for m in ms],
                    textposition=["middle right" if m < 0.5 else "middle left" for m in ms],
                    marker=dict(color="#9467bd", size=9), name="the paper's Table 3", row=1, col=2)
    fig.update_yaxes(range=[-0.05, 1.05], row=1, col=2)
    for col in (1, 2):
        fig.add_vline(x=1 / n, line=dict(color="gray", dash="dot"), row=1, col=col)
    fig.update_xaxes(title_text="p (probability that a hop goes to u)", range=[0, 1])
    fig.update_layout(title=f"Only at p = 1/N = {1 / n:.3g} does the walk weigh u as retraining does (N = {n})",
                      height=380)
    return fig


def _positions(n: int) -> np.ndarray:
    ang = 2 * np.pi * np.arange(n) / n
    return np.stack([np.cos(ang), np.sin(ang)], axis=1)


@styled
def walk_figure(n_clients: int, u: int, route: Sequence[int], *, upto: Optional[int] = None,
                edges: Optional[Sequence[tuple[int, int]]] = None, pos: Optional[np.ndarray] = None) -> go.Figure:
    """The token walk on the clients: node size = visits so far, u in red, the token (green, orange when its
    last hop was a noisy u-step) and the last few hops as a trail. ``edges`` default: the complete graph."""
    pos = _positions(n_clients) if pos is None else np.asarray(pos)
    route = np.asarray(route, dtype=int)
    upto = len(route) if upto is None else int(upto)
    seen = route[:upto]
    counts = np.bincount(seen, minlength=n_clients) if seen.size else np.zeros(n_clients, int)
    if edges is None:
        edges = [(i, j) for i in range(n_clients) for j in range(i + 1, n_clients)]
    ex, ey = [], []
    for i, j in edges:
        ex += [pos[i, 0], pos[j, 0], None]
        ey += [pos[i, 1], pos[j, 1], None]
    trail = seen[-6:]
    fig = go.Figure()
    fig.add_scatter(x=ex, y=ey, mode="lines", line=dict(color="#ddd", width=1), hoverinfo="skip", name="edges")
    fig.add_scatter(x=pos[trail, 0] if trail.size else [], y=pos[trail, 1] if trail.size else [], mode="lines",
                    line=dict(color=TOKEN_COLOR, width=3, dash="dot"), name="last hops")
    colors = [U_COLOR if v == u else NODE_COLOR for v in range(n_clients)]
    fig.add_scatter(x=pos[:, 0], y=pos[:, 1], mode="markers+text", text=[str(v) for v in range(n_clients)],
                    textposition="middle center", textfont=dict(color="white"),
                    marker=dict(size=(18 + 3 * np.sqrt(counts)).tolist(), color=colors), name="clients",
                    hovertext=[f"client {v}: {c} visits" for v, c in enumerate(counts)], hoverinfo="text")
    at = int(seen[-1]) if seen.size else None
    noisy = at == u
    fig.add_scatter(x=[pos[at, 0]] if at is not None else [], y=[pos[at, 1]] if at is not None else [],
                    mode="markers", marker=dict(size=40, color="rgba(0,0,0,0)",
                                                line=dict(color=NOISE_COLOR if noisy else TOKEN_COLOR, width=5)),
                    name="token")
    fig.update_layout(title=f"hop {upto}: token at client {at}" + (" (noisy step at u)" if noisy else ""),
                      xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x"), showlegend=False,
                      height=360, width=380, margin=dict(l=10, r=10, t=40, b=10))
    return plain_figure(fig)


@styled
def ledger_figure(epsilons: np.ndarray, u: int, *, target: Optional[float] = None) -> go.Figure:
    """Per-client epsilon of what each client observed (bars); u is not an observer (drawn empty)."""
    eps = np.nan_to_num(np.asarray(epsilons, dtype=float), nan=0.0)
    colors = [U_COLOR if v == u else NODE_COLOR for v in range(len(eps))]
    fig = go.Figure(go.Bar(x=[f"{v}" for v in range(len(eps))], y=eps.tolist(), marker_color=colors))
    if target is not None:
        fig.add_hline(y=target, line_dash="dash", annotation_text=f"target epsilon {target:g}")
    fig.update_layout(title="per-client privacy ledger (epsilon of each view)", xaxis_title="client",
                      yaxis_title="epsilon", height=300, width=420, margin=dict(l=40, r=10, t=40, b=40))
    return plain_figure(fig)


@styled
def curves_figure(curves: dict[str, dict], *, start: Optional[int] = None,
                  references: Optional[dict[str, dict]] = None) -> go.Figure:
    """Clean accuracy (solid) and backdoor success (dashed) against the hop, one colour per method;
    ``references`` (e.g. retraining) as horizontal dotted lines; ``start`` marks where unlearning begins."""
    palette = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#7f7f7f"]
    fig = go.Figure()
    for i, (name, c) in enumerate(curves.items()):
        col = palette[i % len(palette)]
        fig.add_scatter(x=list(c.get("hop", [])), y=list(c.get("clean_acc", [])), mode="lines+markers",
                        name=f"{name} clean", line=dict(color=col))
        fig.add_scatter(x=list(c.get("hop", [])), y=list(c.get("asr", [])), mode="lines+markers",
                        name=f"{name} backdoor", line=dict(color=col, dash="dash"))
    for name, vals in (references or {}).items():
        fig.add_hline(y=vals["clean_acc"], line_dash="dot", line_color="black",
                      annotation_text=f"{name} clean {vals['clean_acc']:.2f}")
        fig.add_hline(y=vals["asr"], line_dash="dot", line_color="grey",
                      annotation_text=f"{name} backdoor {vals['asr']:.2f}")
    if start is not None:
        fig.add_vline(x=start, line_dash="dash", line_color="purple")
    fig.update_layout(title="clean accuracy and backdoor success", xaxis_title="hop", yaxis_title="accuracy",
                      yaxis_range=[0, 1.02], height=360, width=620, margin=dict(l=40, r=10, t=40, b=40))
    return plain_figure(fig)


@styled
def accountant_sigma_figure(*, delta: float, n_clients: int, p: float, T_unlearn: int, L: float, m: int = 1,
                 eps_grid: Optional[np.ndarray] = None, mark: Optional[float] = None) -> go.Figure:
    """sigma against epsilon for accountants A-D (flat in m) and DDP (Algorithm 3 and group privacy in m)."""
    from ..methods.rrdu.certify import ddp_sigma, rrdu_sigma  # deferred: imports scipy.optimize

    eps_grid = np.geomspace(0.1, 20, 25) if eps_grid is None else np.asarray(eps_grid)
    fig = go.Figure()
    for acc in "ABCD":
        fig.add_scatter(x=eps_grid, y=[rrdu_sigma(acc, epsilon=e, delta=delta, n_clients=n_clients, p=p, T_unlearn=T_unlearn, L=L)
                                       for e in eps_grid], name=f"RR-DU {acc}")
    fig.add_scatter(x=eps_grid, y=[ddp_sigma("alg3", epsilon=e, delta=delta, L=L) for e in eps_grid],
                    name="DDP Alg. 3", line=dict(dash="dot"))
    fig.add_scatter(x=eps_grid, y=[ddp_sigma("group_sound", epsilon=e, delta=delta, L=L, m=m, T=T_unlearn,
                                             n_clients=n_clients) for e in eps_grid],
                    name=f"DDP group (m={m}), refuted", line=dict(dash="dot"))
    if mark is not None:
        fig.add_vline(x=mark, line_dash="dash")
    fig.update_layout(title="noise needed for (epsilon, delta)", xaxis_type="log", yaxis_type="log",
                      xaxis_title="epsilon", yaxis_title="sigma", height=340, width=520,
                      margin=dict(l=40, r=10, t=40, b=40))
    return plain_figure(fig)


@styled
def capacity_figure(*, epsilon: float, delta: float, n_clients: int, d: int, T_unlearn: int, L: float, rho: float, p: float,
                    s: int, gamma: float = 1.0, T: int = 100, R: float = 10.0) -> go.Figure:
    """Deletion capacity: RR-DU's m* against n_u (zero until A < gamma, then linear) and DDP's m against N."""

    n_u = np.unique(np.geomspace(10, 1e5, 40).astype(int))
    rr = [rrdu_capacity(gamma=gamma, epsilon=epsilon, delta=delta, n_clients=n_clients, d=d, T_unlearn=T_unlearn, n_u=int(n), L=L,
                        rho=rho, p=p, s=s, floor=False).m for n in n_u]
    ddp = [ddp_capacity(gamma=gamma, epsilon=epsilon, delta=delta, n_clients=n_clients, d=d, T=T, R=R, L=L, s=s,
                        floor=False) * n / n_clients for n in n_u]
    fig = go.Figure()
    # a log axis cannot draw m* = 0: leave those points out and say in words where the capacity is zero
    fig.add_scatter(x=n_u, y=[m if m > 0 else None for m in rr], name="RR-DU m* (local data n_u)")
    fig.add_scatter(x=n_u, y=ddp, name="DDP m (Thm 3.5; grows only with N)", line=dict(dash="dot"))
    zero = [int(n) for n, m in zip(n_u, rr) if not m > 0]
    if zero:
        where = ("for every n_u shown" if len(zero) == len(n_u) else f"for n_u up to {max(zero):,}")
        fig.add_annotation(text=f"RR-DU m* = 0 {where}: its risk bound exceeds gamma there", xref="paper",
                           yref="paper", x=0.02, y=0.98, xanchor="left", yanchor="top", showarrow=False,
                           font=dict(color="#1f77b4", size=11))
    fig.update_layout(title=f"deletion capacity (gamma={gamma:g}, d={d})", xaxis_type="log", yaxis_type="log",
                      xaxis_title="n_u (DDP: scaled by n_u/N for comparison)", yaxis_title="deletions m",
                      height=340, width=520, margin=dict(l=40, r=10, t=40, b=40))
    return plain_figure(fig)


class RRDUExplorer(Explorer):
    """Notebook 06's explorer: RR-DU's knobs, the walk, the ledger, forgetting curves and capacity.

    Parameters
    ----------
    world:
        A :class:`unlearnkit.experiments.rrdu.lab.BackdoorWorld` (trained original and retrained models). ``None``
        builds the walk, ledger and capacity views only; :meth:`run` then needs one.
    n_clients, u, T_unlearn, L:
        Used when ``world`` is None (else taken from the world's setup).
    """

    def __init__(self, world: Any = None, *, n_clients: int = 10, u: int = 0, T_unlearn: int = 60, L: float = 0.5,
                 seed: int = 0) -> None:
        super().__init__()
        self.world = world
        if world is not None:
            st = world.setup
            n_clients, u, T_unlearn, L = st.n_clients, st.u, st.T_unlearn, st.clip_L
            self.d = world.flat.d
        else:
            self.d = 10_000
        self.n_clients, self.u, self.T_unlearn, self.L, self.seed = n_clients, u, T_unlearn, L, seed
        style = {"description_width": "90px"}
        self.p = W.FloatSlider(value=round(1 / n_clients, 3), min=0.0, max=1.0, step=0.01, description="p", style=style)
        self.epsilon = W.FloatLogSlider(value=1.0, base=10, min=-1, max=1.3, step=0.05, description="epsilon",
                                        style=style)
        self.delta = W.FloatLogSlider(value=1e-5, base=10, min=-8, max=-2, step=0.5, description="delta", style=style)
        self.rho = W.FloatLogSlider(value=10.0, base=10, min=-0.5, max=2, step=0.05, description="rho", style=style)
        self.s = W.IntSlider(value=1, min=1, max=8, description="s", style=style)
        self.variant = W.Dropdown(options=["lightweight", "exact", "corrected"], value="lightweight",
                                  description="variant", style=style)
        self.accountant = W.Dropdown(options=["A", "B", "C", "D"], value="C", description="accountant", style=style)
        self.run_button = W.Button(description="run RR-DU and DDP", button_style="primary")
        self.sigma_text = W.HTML()
        self.route: np.ndarray = np.zeros(0, int)
        self.sigma = float("nan")
        self.walk_fig = go.FigureWidget(walk_figure(n_clients, u, []))
        self.ledger_fig = go.FigureWidget(ledger_figure(np.zeros(n_clients), u))
        self.curve_fig = go.FigureWidget(curves_figure({}))
        self.capacity_fig = go.FigureWidget()
        self.results: dict[str, dict] = {}
        for w in (self.p, self.epsilon, self.delta, self.rho, self.s, self.variant, self.accountant):
            self.observe(w)
        self.run_button.on_click(lambda _b: self.guard(self.run))
        controls = W.VBox([self.p, self.epsilon, self.delta, self.rho, self.s, self.variant, self.accountant,
                           self.run_button, self.sigma_text])
        self._layout(W.HBox([controls, self.walk_fig, self.ledger_fig]), W.HBox([self.curve_fig, self.capacity_fig]))
        self.refresh()

    # -- the cheap part: calibration, a walk preview, the ledger, capacity ------------------------------------
    def config(self) -> Any:
        from ..methods.rrdu import RRDUConfig  # deferred: imports torch

        return RRDUConfig(T_unlearn=self.T_unlearn, p=float(self.p.value), s=int(self.s.value), epsilon=float(self.epsilon.value),
                          delta=float(self.delta.value), rho=float(self.rho.value), variant=self.variant.value,
                          accountant=self.accountant.value, clip_L=self.L,
                          **({} if self.world is None else {"lr": self.world.setup.lr,
                                                            "optimizer": self.world.setup.optimizer,
                                                            "batch_size": self.world.setup.batch_size,
                                                            "local_steps": self.world.setup.local_steps,
                                                            "eval_every": self.world.setup.eval_every}))

    def update(self) -> None:
        from ..graphs.walks import rrdu_route  # deferred: imports networkx
        from ..methods.rrdu.certify import rrdu_certify, rrdu_sigma  # deferred: imports scipy.optimize

        cfg = self.config()
        self.sigma = rrdu_sigma(cfg.accountant, epsilon=cfg.epsilon, delta=cfg.delta, n_clients=self.n_clients, p=cfg.p,
                               T_unlearn=self.T_unlearn, L=self.L, sens_factor=cfg.sens_factor)
        cert = rrdu_certify(cfg.accountant, sigma=max(self.sigma, 1e-12), delta=cfg.delta, n_clients=self.n_clients, p=cfg.p,
                       T_unlearn=self.T_unlearn, L=self.L)
        self.sigma_text.value = (f"<b>sigma = {self.sigma:.4g}</b> (accountant {cfg.accountant}, "
                                 f"certificate mode '{cert.mode}')<br><small>{cert.note}</small>")
        if cfg.p == 0:  # not a clamp: the accountant's answer, said in words so it does not read as one
            self.sigma_text.value += ("<br><b>p = 0: the walk never routes to u, so u takes no corrective step: "
                                      "no noise to calibrate (sigma = 0) and nothing is forgotten.</b>")
        self.route = rrdu_route(self.n_clients, self.u, cfg.p, self.T_unlearn, rng=np.random.default_rng(self.seed))
        self._draw_walk(len(self.route))
        self._draw_ledger(self.route)
        cap = capacity_figure(epsilon=cfg.epsilon, delta=cfg.delta, n_clients=self.n_clients, d=self.d, T_unlearn=self.T_unlearn,
                              L=self.L, rho=cfg.rho, p=max(cfg.p, 1e-6), s=cfg.s)
        with self.capacity_fig.batch_update():
            self.capacity_fig.data = ()
            for tr in cap.data:
                self.capacity_fig.add_trace(tr)
            self.capacity_fig.layout = cap.layout

    def _draw_walk(self, upto: int) -> None:
        fig = walk_figure(self.n_clients, self.u, self.route, upto=upto)
        with self.walk_fig.batch_update():
            for tgt, src in zip(self.walk_fig.data, fig.data):
                tgt.x, tgt.y = src.x, src.y
                if src.marker is not None:
                    tgt.marker = src.marker
                if src.line is not None:
                    tgt.line = src.line
            self.walk_fig.layout.title = fig.layout.title

    def ledger_epsilons(self, route: Sequence[int]) -> np.ndarray:
        """Per-client epsilon along ``route`` at the current sigma (the ledger of the explorer's accountant:
        the amplified one for B, the per-visit one otherwise)."""
        from ..methods.rrdu.certify import ObserverLedger  # deferred: imports scipy.optimize

        if not (self.sigma > 0):
            out = np.zeros(self.n_clients)
            out[self.u] = np.nan
            return out
        acc = "B" if self.accountant.value == "B" else "C"
        led = ObserverLedger.from_path(route, n_clients=self.n_clients, u=self.u, sigma=self.sigma,
                                       Delta=2 * self.L, accountant=acc)
        return led.epsilons(float(self.delta.value))

    def _draw_ledger(self, route: Sequence[int]) -> None:
        eps = np.nan_to_num(self.ledger_epsilons(route), nan=0.0)
        with self.ledger_fig.batch_update():
            self.ledger_fig.data[0].y = eps.tolist()

    # -- the expensive part: run RR-DU and DDP on the backdoor task, live -----------------------------------
    def run(self, methods: Sequence[str] = ("rrdu", "ddp")) -> dict:
        """Run RR-DU along the previewed route (and DDP at the same epsilon), streaming hops into the figures."""
        from ..experiments.rrdu.lab import history_curve, run_method  # deferred: imports torch
        from ..methods.rrdu import RRDU  # deferred: imports torch

        if self.world is None:
            raise ValueError("world is None: build one with unlearnkit.experiments.rrdu.lab.build_world to run the "
                             "methods")
        w, cfg = self.world, self.config()
        curves = {"original": history_curve(w.original.history)}
        self.results = {}
        if "rrdu" in methods:
            live: dict[str, list] = {"hop": [], "clean_acc": [], "asr": [], "asr_all": []}
            start = w.setup.T_train
            gate = [0.0]  # the earliest time of the next redraw; the first hop is drawn at once

            def on_event(ev: Any) -> None:
                if ev.kind != "hop":
                    return
                if "clean_acc" in ev.values:
                    live["hop"].append(start + ev.step)
                    for k in ("clean_acc", "asr", "asr_all"):
                        live[k].append(ev.values[k])
                now = time.perf_counter()
                if ev.step == len(self.route) or now >= gate[0]:
                    self._draw_walk(ev.step)
                    self._draw_ledger(self.route[:ev.step])
                    self._draw_curves({**curves, "RR-DU": live})
                    # a redraw rebuilds three figures (about 0.1 s of CPU): wait four times what it cost before
                    # the next one, so drawing never takes over the walk (on a loaded machine a wall-clock
                    # throttle alone redrew after every hop and made the run ten times slower)
                    spent = time.perf_counter() - now
                    gate[0] = time.perf_counter() + max(1.0 / self.max_fps, 4.0 * spent)

            # the previewed route and the calibrated sigma, so the run is the walk on screen
            res = RRDU(monitor=w.metrics, route=self.route).unlearn(
                w.original.replace(federation=w.federation), w.request, dataclasses.replace(cfg, sigma=self.sigma),
                generator=make_generator(self.seed), callback=on_event)
            self.results["rrdu"] = {"final": w.metrics(res.params), "curve": dict(live), "sigma": self.sigma}
            curves["RR-DU"] = live
        if "ddp" in methods:
            old = w.setup
            try:
                w.setup = dataclasses.replace(old, epsilon=float(self.epsilon.value), delta=float(self.delta.value))
                r = run_method(w, "ddp", seed=self.seed)
            finally:
                w.setup = old
            r.pop("params")
            self.results["ddp"] = r
            curves["DDP"] = r["curve"]
        self._draw_curves(curves)
        self.status.value = " | ".join(f"{k}: clean {v['final']['clean_acc']:.3f}, backdoor {v['final']['asr']:.3f}"
                                       for k, v in self.results.items())
        return self.results

    def _draw_curves(self, curves: dict[str, dict]) -> None:
        refs = None
        if self.world is not None and self.world.retrained is not None:
            refs = {"retrain": self.world.metrics(self.world.retrained.params)}
        fig = curves_figure(curves, start=None if self.world is None else self.world.setup.T_train, references=refs)
        with self.curve_fig.batch_update():
            self.curve_fig.data = ()
            for tr in fig.data:
                self.curve_fig.add_trace(tr)
            self.curve_fig.layout = fig.layout
