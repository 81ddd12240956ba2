"""PDUDT figures (pure: data -> plotly Figure) and the two explorers of notebook 08.

- :func:`topology_figure`: one round's graph on a circle, the leaving client and its edges in red;
- :func:`correction_figure`: per-round size of the residual ``||delta_i^t||`` (bars) and the weight ``p_i^t``
  (line) for one client: which rounds the correction draws on;
- :func:`pdudt_sigma_figure`: the noise actually used (manual) against the certified one (paper and sound mode),
  on a log axis;
- :func:`sigma_sweep_figure`: accuracy against sigma for perturbed retraining, PDUDT and PDUDT(ES) (Fig. 1);
- :func:`accuracy_figure`: test accuracy per round, before and after the leaver goes, per method;
- :func:`mia_figure`: membership-inference precision per method with error bars, beside the paper's Table 3;
- :func:`time_figure`: unlearning time against retraining (log axis), beside the paper's Table 2;
- :class:`TopologyExplorer`: a churn slider and a round slider over a dynamic topology;
- :class:`PDUDTNoiseExplorer`: a sigma slider (manual) against the certified sigma, and what the noise does to the
  average model's and the clients' accuracy.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .._validate import check_int, check_positive, check_range
from ..evaluate import accuracy
from ..methods.pdudt.certify import GapConstants, pdudt_certificate
from ._explorer import Explorer
from ._payload import plain_figure
from ._style import styled
from .bands import add_seed_band, per_seed, seeds_text
from .tables import certificate_row


METHOD_LABELS = {"origin": "Origin (no unlearning)", "retrain": "Retrain", "perturbed_retrain": "Perturbed retraining",
                 "pdudt": "PDUDT", "pdudt_es": "PDUDT (ES)", "control": "Control: no correction, same noise"}
PDUDT_COLORS = {"origin": "#7f7f7f", "retrain": "#2ca02c", "perturbed_retrain": "#98df8a", "pdudt": "#d62728",
          "pdudt_es": "#ff9896", "control": "#1f77b4"}
LEAVER, OTHER = "#d62728", "#9aa7b8"


def _circle(n: int) -> np.ndarray:
    a = np.pi / 2 - 2 * np.pi * np.arange(n) / n
    return np.stack([np.cos(a), np.sin(a)], axis=1)


@styled
def topology_figure(W: Any, leaver: int, *, round_index: Optional[int] = None, title: str = "") -> go.Figure:
    """The graph of one round (the support of ``W``), the leaver and its edges in red.

    Traces: 0 other edges, 1 the leaver's edges, 2 nodes. Edge widths follow the mixing weights.
    """
    W = np.asarray(W, dtype=float)
    n = W.shape[0]
    check_int("leaver", leaver, low=0, high=n - 1)
    pos = _circle(n)
    ex, ey, lx, ly = [], [], [], []
    for i in range(n):
        for j in range(i + 1, n):
            if W[i, j] > 0:
                xs, ys = (lx, ly) if leaver in (i, j) else (ex, ey)
                xs += [pos[i, 0], pos[j, 0], None]
                ys += [pos[i, 1], pos[j, 1], None]
    deg = (W > 0).sum(1) - 1
    colors = [LEAVER if i == leaver else "#1f77b4" for i in range(n)]
    text = [f"client {i}: {deg[i]} neighbours, W_ii = {W[i, i]:.2f}" for i in range(n)]
    fig = go.Figure([
        go.Scatter(x=ex, y=ey, mode="lines", line=dict(color=OTHER, width=2), hoverinfo="skip", name="edges"),
        go.Scatter(x=lx, y=ly, mode="lines", line=dict(color=LEAVER, width=4), hoverinfo="skip",
                   name=f"client {leaver}'s edges"),
        go.Scatter(x=pos[:, 0], y=pos[:, 1], mode="markers+text", text=[str(i) for i in range(n)],
                   textposition="middle center", textfont=dict(color="white"), hovertext=text, hoverinfo="text",
                   marker=dict(size=26, color=colors, line=dict(color="white", width=1)), name="clients"),
    ])
    t = "" if round_index is None else f"round {round_index}: "
    fig.update_layout(title=title or f"{t}client {leaver} has {int(deg[leaver])} neighbours",
                      xaxis=dict(visible=False, range=[-1.3, 1.3]), yaxis=dict(visible=False, range=[-1.3, 1.3],
                                                                                scaleanchor="x"),
                      width=420, height=420, showlegend=False, margin=dict(l=10, r=10, t=50, b=10))
    return plain_figure(fig)


@styled
def correction_figure(delta_norms: Any, p: Any, client: int, *, leaver: Optional[int] = None,
                      es_rounds: Optional[int] = None, title: str = "") -> go.Figure:
    """``||delta_i^t||`` per round (bars, left axis) and ``p_i^t`` (line, right axis) for ``client``.

    Traces: 0 residual norms, 1 weights. A dotted line marks the ES horizon.
    """
    dn = np.asarray(delta_norms.cpu() if isinstance(delta_norms, torch.Tensor) else delta_norms, dtype=float)
    pp = np.asarray(p.cpu() if isinstance(p, torch.Tensor) else p, dtype=float)
    T, n = dn.shape
    check_int("client", client, low=0, high=n - 1)
    rounds = np.arange(T)
    fig = go.Figure([
        go.Bar(x=rounds, y=dn[:, client], name="||delta_i^t|| (Eq. 7)", marker_color="#d62728", opacity=0.7),
        go.Scatter(x=rounds, y=pp[:, client], name="p_i^t (Eq. 8)", yaxis="y2", mode="lines+markers",
                   line=dict(color="#1f77b4")),
    ])
    if es_rounds is not None:
        fig.add_vline(x=es_rounds - 0.5, line_dash="dot", annotation_text="ES horizon")
    who = "" if leaver is None else f" (client {leaver} leaves)"
    fig.update_layout(title=title or f"client {client}: residual per round and its weight{who}",
                      xaxis_title="round t", yaxis=dict(title="||delta||", rangemode="tozero"),
                      yaxis2=dict(title="p", overlaying="y", side="right", rangemode="tozero"),
                      legend=dict(orientation="h", y=-0.25), height=360, margin=dict(l=50, r=50, t=50, b=40))
    return plain_figure(fig)


@styled
def pdudt_sigma_figure(manual: float, certified: Mapping[str, float], *, title: str = "") -> go.Figure:
    """Bars on a log axis: the manual sigma against each certified one (``{"paper": s, "sound": s}``)."""
    check_positive("sigma", manual, allow_zero=True)
    names = ["manual (used)", *[f"certified ({k})" for k in certified]]
    vals = [max(manual, 1e-12), *[float(v) for v in certified.values()]]
    fig = go.Figure(go.Bar(x=names, y=vals, marker_color=["#1f77b4", *["#d62728"] * len(certified)],
                           text=[f"{v:.3g}" for v in vals], textposition="outside"))
    ratio = (min(certified.values()) / manual) if manual > 0 and certified else math.inf
    fig.update_layout(title=title or f"sigma: the certificate asks for {ratio:.3g} times more noise",
                      yaxis=dict(type="log", title="sigma (std of the noise on the average model)"),
                      height=360, margin=dict(l=50, r=10, t=50, b=40))
    return plain_figure(fig)


@styled
def sigma_sweep_figure(sigmas: Sequence[float], accuracies: Mapping[str, Sequence[float]], *,
                       title: str = "") -> go.Figure:
    """Accuracy of the average model against the noise sigma, one line per method (paper Figure 1)."""
    fig = go.Figure()
    for name, acc in accuracies.items():
        fig.add_trace(go.Scatter(x=list(sigmas), y=list(acc), mode="lines+markers", name=METHOD_LABELS.get(name, name),
                                 line=dict(color=PDUDT_COLORS.get(name))))
    fig.update_layout(title=title or "accuracy against sigma, right after unlearning (paper Fig. 1)",
                      xaxis_title="sigma (noise on the average model)", yaxis_title="test accuracy", height=380,
                      legend=dict(orientation="h", y=-0.25), margin=dict(l=50, r=10, t=50, b=40))
    return plain_figure(fig)


@styled
def accuracy_figure(curves: Mapping[str, Sequence[Mapping[str, float]]], t1: int, *, key: str = "test_acc",
                    title: str = "") -> go.Figure:
    """Accuracy per round, one line per method; the leaver goes at the dashed line ``t1``."""
    fig = go.Figure()
    for name, rows in curves.items():
        rows = [r for r in rows if key in r]
        fig.add_trace(go.Scatter(x=[r["round"] for r in rows], y=[r[key] for r in rows], mode="lines+markers",
                                 name=METHOD_LABELS.get(name, name), line=dict(color=PDUDT_COLORS.get(name))))
    fig.add_vline(x=t1, line_dash="dash", annotation_text="client leaves (t1)")
    fig.update_layout(title=title or "accuracy of the average model", xaxis_title="round", yaxis_title=key,
                      height=380, legend=dict(orientation="h", y=-0.25), margin=dict(l=50, r=10, t=50, b=40))
    return plain_figure(fig)


@styled
def mia_figure(methods: Mapping[str, Mapping[str, float]], *, paper: Optional[Mapping[str, Sequence[float]]] = None,
               key: str = "mia_precision", title: str = "") -> go.Figure:
    """Membership-inference precision per method (ours; the paper's beside it when given), 50% = guessing."""
    names = [m for m in ("origin", "retrain", "perturbed_retrain", "pdudt", "pdudt_es", "control") if m in methods]
    std_key = "mia_std" if key == "mia_precision" else key.replace("precision", "std")
    lo_key, hi_key = key.replace("precision", "ci_low"), key.replace("precision", "ci_high")
    y = [methods[m][key] for m in names]
    if names and all(lo_key in methods[m] for m in names):  # one attack's 95 % Clopper-Pearson interval
        what = "95 % Clopper-Pearson interval of one attack"
        lo, hi = [methods[m][lo_key] for m in names], [methods[m][hi_key] for m in names]
        err = dict(type="data", symmetric=False, array=[h - v for v, h in zip(y, hi)],
                   arrayminus=[v - a for v, a in zip(y, lo)])
        hover = [f"{METHOD_LABELS[m]}: {v:.1f} % (std over repeats {methods[m].get(std_key, 0.0):.1f}), {what}: "
                 f"[{a:.1f}, {h:.1f}]" for m, v, a, h in zip(names, y, lo, hi)]
    else:
        what = "one standard deviation over the repeats"
        err = dict(array=[methods[m].get(std_key, 0.0) for m in names])
        hover = [f"{METHOD_LABELS[m]}: {v:.1f} % +- {methods[m].get(std_key, 0.0):.1f} ({what})"
                 for m, v in zip(names, y)]
    fig = go.Figure(go.Bar(x=[METHOD_LABELS[m] for m in names], y=y, error_y=err, name=f"ours (bars: {what})",
                           marker_color=[PDUDT_COLORS[m] for m in names], hovertext=hover, hoverinfo="text"))
    if paper:
        lab = {"Origin": "origin", "Retrain": "retrain", "PDUDT": "pdudt", "PDUDT (ES)": "pdudt_es"}
        fig.add_trace(go.Scatter(x=[METHOD_LABELS[lab[k]] for k in paper if k in lab],
                                 y=[v[0] for k, v in paper.items() if k in lab],
                                 error_y=dict(array=[v[1] for k, v in paper.items() if k in lab]),
                                 mode="markers", marker=dict(symbol="diamond", size=12, color="black"),
                                 name="paper (MNIST, Table 3)"))
    fig.add_hline(y=50, line_dash="dot", annotation_text="guessing")
    fig.update_layout(title=title or "membership inference on the leaver's data", yaxis_title="attack precision (%)",
                      height=380, margin=dict(l=50, r=10, t=50, b=40), legend=dict(orientation="h", y=-0.3))
    return plain_figure(fig)


def method_rows(methods: Mapping[str, Mapping[str, float]], *, t_after: int) -> list[dict[str, Any]]:
    """Per method, its test accuracy and membership-inference precision as table rows (for ``viz.tables.table``).

    Parameters
    ----------
    methods : mapping of str to mapping
        Method name -> its metrics: ``test_acc``, ``mia_precision`` and ``mia_std`` (percent), and optionally
        ``after_T_test_acc`` (the test accuracy after ``t_after`` more training rounds).
    t_after : int
        The number of further rounds behind ``after_T_test_acc``, used in that column's header.

    Returns
    -------
    list of dict
        One row per method, in the mapping's order: ``method`` (its label in :data:`METHOD_LABELS`),
        ``accuracy``, ``after <t_after> more rounds`` (``None`` where the method has no such value) and
        ``MIA precision (%)`` as ``"mean ± std"`` to one decimal.
    """
    after = f"after {t_after} more rounds"
    return [{"method": METHOD_LABELS.get(name, name), "accuracy": m["test_acc"], after: m.get("after_T_test_acc"),
             "MIA precision (%)": f"{m['mia_precision']:.1f} ± {m['mia_std']:.1f}"} for name, m in methods.items()]


def release_rows(metrics: Mapping[str, float]) -> list[dict[str, Any]]:
    """Test accuracy and backdoor success of the released, the retrained and the original model, as table rows.

    Parameters
    ----------
    metrics : mapping of str to float
        A PDUDT run's metrics: ``test_acc`` and ``backdoor_asr`` of the release, and the same keys prefixed by
        ``retrain_`` and ``original_``.

    Returns
    -------
    list of dict
        Two rows (``test accuracy``, ``backdoor success``), each with ``metric``, ``released``, ``retrained``
        and ``original``.
    """
    return [{"metric": label, "released": metrics[key], "retrained": metrics["retrain_" + key],
             "original": metrics["original_" + key]}
            for key, label in (("test_acc", "test accuracy"), ("backdoor_asr", "backdoor success"))]


def gap_certificate_rows(*, lr: float, t1: int, n: int, constants: GapConstants,
                         settings: Sequence[tuple[str, str]] = (("paper", "paper"), ("sound", "paper"), ("paper", "sum")),
                         epsilon: float = 1.0, delta: float = 1e-5) -> list[dict[str, Any]]:
    """Corollary 4.10's certificate from hand-set constants, once per (mode, correction scale), as table rows.

    Parameters
    ----------
    lr, t1, n : float, int, int
        Step size, request round and number of clients of the setting certified.
    constants : GapConstants
        The constants of Assumptions 4.5 to 4.8 (set by hand: nothing verifies them, so no row is certified).
    settings : sequence of (str, str)
        ``(mode, correction_scale)`` pairs, one row each, in this order.
    epsilon, delta : float
        The target of every certificate.

    Returns
    -------
    list of dict
        Per setting, :func:`~unlearnkit.viz.tables.certificate_row` of
        :func:`~unlearnkit.methods.pdudt.pdudt_certificate`, labelled ``"<mode>, <correction_scale>"`` (its
        ``mode`` column is the mode the certificate holds in: ``none`` where it certifies nothing).
    """
    return [certificate_row(f"{mode}, {scale}", pdudt_certificate(lr=lr, t1=t1, n=n, constants=constants, mode=mode,
                                                                  epsilon=epsilon, delta=delta, correction_scale=scale))
            for mode, scale in settings]


@styled
def pdudt_frontier_figure(front: Mapping[str, Any], *, interval: str = "t95") -> go.Figure:
    """Released test accuracy, backdoor success and distance to retraining against epsilon, one line per row
    of ``front`` (:func:`unlearnkit.experiments.pdudt.frontier.pdudt_frontier`), retraining dashed and the
    original dotted. A frontier on several seeds (``pdudt_frontier(seeds=...)``) draws each line as the mean
    over the seeds with a band (``interval``: ``"t95"``, the 95 % Student-t interval, or ``"minmax"``)."""

    keys = ("test_acc", "backdoor_asr", "dist_to_retrain")
    fig = make_subplots(rows=1, cols=3, subplot_titles=("released test accuracy", "backdoor success",
                                                        "distance to retraining"))
    for i, (row, pts) in enumerate(front["rows"].items()):
        pts = [p for p in pts if math.isfinite(p["test_acc"])]  # the paper's theorem is silent at some epsilons
        color = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")[i % 5]
        for col, key in enumerate(keys, start=1):
            add_seed_band(fig, [p["epsilon"] for p in pts], [per_seed(p, key) for p in pts], name=row, group=row,
                          color=color, interval=interval, showlegend=col == 1, row=1, col=col,
                          floor=1e-6 if key == "dist_to_retrain" else None)
    for col, key in enumerate(keys[:2], start=1):
        fig.add_hline(y=front["references"]["retrain"][key], line_dash="dash", row=1, col=col)
        fig.add_hline(y=front["references"]["original"][key], line_dash="dot", row=1, col=col)
    fig.update_xaxes(type="log", title="epsilon")
    fig.update_yaxes(type="log", row=1, col=3)
    seeds = front.get("seeds") or [0]
    fig.update_layout(height=400, title=f"PDUDT under a certificate: the frontier; {seeds_text(seeds, interval)}")
    return fig


@styled
def time_figure(seconds: Mapping[str, float], *, paper: Optional[Mapping[str, float]] = None,
                title: str = "") -> go.Figure:
    """Unlearning time per method (log axis): ours, and the paper's (MNIST, Table 2) when given."""
    names = [m for m in ("retrain", "pdudt", "pdudt_es", "control") if m in seconds]
    fig = go.Figure(go.Bar(x=[METHOD_LABELS[m] for m in names], y=[seconds[m] for m in names], name="ours (s)",
                           marker_color=[PDUDT_COLORS[m] for m in names],
                           text=[f"{seconds[m]:.3g} s" for m in names], textposition="outside"))
    if paper:
        lab = {"Retrain": "retrain", "PDUDT": "pdudt", "PDUDT (ES)": "pdudt_es"}
        fig.add_trace(go.Bar(x=[METHOD_LABELS[lab[k]] for k in paper if k in lab],
                             y=[v for k, v in paper.items() if k in lab], name="paper, MNIST (s)",
                             marker_color="#444", opacity=0.5))
    ratio = seconds.get("retrain", math.nan) / max(seconds.get("pdudt", math.nan), 1e-12)
    fig.update_layout(title=title or f"unlearning time: retraining takes {ratio:.3g} times longer than PDUDT",
                      yaxis=dict(type="log", title="seconds"), barmode="group", height=380,
                      margin=dict(l=50, r=10, t=50, b=40), legend=dict(orientation="h", y=-0.3))
    return plain_figure(fig)


class TopologyExplorer(Explorer):
    """A dynamic topology round by round: the churn slider sets the share of edges rewired per round
    (:class:`~unlearnkit.graphs.dynamic.EdgeChurnSchedule`), the round slider walks through time, and the
    leaver's edges are red. The status line counts in how many rounds the leaver had a neighbour."""

    def __init__(self, n: int = 10, leaver: int = 9, rounds: int = 30, churn: float = 0.3, p_edge: float = 0.4,
                 seed: int = 0) -> None:
        super().__init__()

        self.n = check_int("n", n, low=3, high=40)
        self.rounds = check_int("rounds", rounds, low=1)
        self.p_edge = check_range("p_edge", p_edge, 0.0, 1.0, low_open=True)
        self.seed = int(seed)
        self.churn = W.FloatSlider(value=churn, min=0.0, max=1.0, step=0.05, description="churn")
        self.leaver = W.IntSlider(value=leaver, min=0, max=self.n - 1, description="leaver k")
        self.round = W.IntSlider(value=0, min=0, max=self.rounds - 1, description="round t")
        self.play = W.Play(value=0, min=0, max=self.rounds - 1, interval=400, description="play")
        W.jslink((self.play, "value"), (self.round, "value"))
        self.fig = go.FigureWidget(topology_figure(np.eye(self.n), 0))
        self.observe(self.churn, self.update)
        self.observe(self.leaver, self.redraw)
        self.observe(self.round, self.redraw)
        self._layout(W.HBox([self.churn, self.leaver]), W.HBox([self.play, self.round]), self.fig)
        self.refresh()

    def compute(self) -> np.ndarray:
        from ..graphs.dynamic import EdgeChurnSchedule  # deferred: imports networkx
        from ..graphs.topology import erdos_renyi  # deferred: imports networkx

        churn = check_range("churn", self.churn.value, 0.0, 1.0)
        G = erdos_renyi(self.n, self.p_edge, seed=self.seed)
        sched = EdgeChurnSchedule(G, churn, seed=self.seed)
        return sched.mixings(self.rounds)

    def update(self) -> None:
        self.W = self.compute()
        self.redraw()

    def redraw(self) -> None:
        k = check_int("leaver k", self.leaver.value, low=0, high=self.n - 1)
        t = check_int("round t", self.round.value, low=0, high=self.rounds - 1)
        new = topology_figure(self.W[t], k, round_index=t)
        with self.fig.batch_update():
            for tr, nt in zip(self.fig.data, new.data):
                tr.x, tr.y = nt.x, nt.y
                if nt.marker is not None and nt.marker.color is not None:
                    tr.marker.color = nt.marker.color
                tr.hovertext = nt.hovertext
            self.fig.layout.title.text = new.layout.title.text
        deg = (self.W > 0).sum(-1) - 1
        with_nb = int((deg[:, k] > 0).sum())
        changed = float(np.mean([((self.W[s] > 0) != (self.W[s - 1] > 0)).sum() / 2 for s in range(1, self.rounds)]))
        self.status.value = (f"client {k} had neighbours in <b>{with_nb}</b> of {self.rounds} rounds; "
                             f"on average {changed:.1f} node pairs change their link per round")


class PDUDTNoiseExplorer(Explorer):
    """The noise slider: ``sigma`` on the average model (each client adds ``sqrt(n-1) sigma``), the certified
    sigma beside it, and the accuracy of the average model and of the individual clients after the noise.

    ``corrected`` are the ``(n-1, d)`` corrected models before noise (``Result.extras["corrected"]``); the
    certified sigmas come from :func:`~unlearnkit.methods.pdudt.certify.pdudt_certificate` with ``constants``,
    the noise from :func:`~unlearnkit.methods.pdudt.client_noise` (the draw PDUDT itself adds).
    """

    def __init__(self, flat: Any, corrected: torch.Tensor, dataset: Any, *, lr: float, t1: int, constants: Any,
                 sigma: float = 0.01, epsilon: float = 1.0, delta: float = 1e-5, seed: int = 0) -> None:
        super().__init__()

        self.flat, self.corrected, self.dataset = flat, corrected, dataset
        self.lr, self.t1, self.constants, self.delta = lr, t1, constants, delta
        self.n = corrected.shape[0] + 1
        self.seed = int(seed)
        self.sigma = W.FloatLogSlider(value=sigma, base=10, min=-4, max=3, step=0.1, description="sigma",
                                      readout_format=".3g")
        self.epsilon = W.FloatLogSlider(value=epsilon, base=10, min=-1, max=1, step=0.1, description="epsilon",
                                        readout_format=".3g")
        self.sigma_fig = go.FigureWidget(pdudt_sigma_figure(1.0, {"paper": 1.0, "sound": 1.0}))
        self.acc_fig = go.FigureWidget(go.Figure(
            go.Bar(x=["average model", "clients (mean)"], y=[0.0, 0.0], marker_color=["#d62728", "#1f77b4"]),
            layout=dict(title="accuracy after the noise", yaxis=dict(range=[0, 1], title="test accuracy"), height=360,
                        margin=dict(l=50, r=10, t=50, b=40))))
        self.observe(self.sigma, self.update)
        self.observe(self.epsilon, self.update)
        self._layout(W.HBox([self.sigma, self.epsilon]), W.HBox([self.sigma_fig, self.acc_fig]))
        self.refresh()

    def compute(self) -> dict:
        from ..methods.pdudt.algorithm import client_noise  # deferred: imports networkx

        sigma = check_positive("sigma", self.sigma.value, allow_zero=True)
        eps = check_positive("epsilon", self.epsilon.value)
        cert = {mode: pdudt_certificate(lr=self.lr, t1=self.t1, n=self.n, constants=self.constants, mode=mode,
                                        epsilon=eps, delta=self.delta).sigma for mode in ("paper", "sound")}
        gen = torch.Generator(device=self.corrected.device).manual_seed(self.seed)
        z = client_noise(self.n - 1, self.corrected.shape[1], sigma, generator=gen, dtype=self.corrected.dtype)
        models = self.corrected + z
        ds = self.dataset
        avg = accuracy(self.flat, models, ds.x_test, ds.y_test)
        per = float(np.mean([accuracy(self.flat, m, ds.x_test, ds.y_test) for m in models]))
        return {"sigma": sigma, "epsilon": eps, "certified": cert, "avg_acc": avg, "client_acc": per}

    def update(self) -> None:
        v = self.compute()
        self.current = v
        new = pdudt_sigma_figure(v["sigma"], v["certified"])
        with self.sigma_fig.batch_update():
            self.sigma_fig.data[0].x = new.data[0].x
            self.sigma_fig.data[0].y = new.data[0].y
            self.sigma_fig.data[0].text = new.data[0].text
            self.sigma_fig.layout.title.text = new.layout.title.text
        with self.acc_fig.batch_update():
            self.acc_fig.data[0].y = [v["avg_acc"], v["client_acc"]]
            self.acc_fig.layout.title.text = (f"sigma = {v['sigma']:.3g}: average model {v['avg_acc']:.3f}, "
                                              f"clients {v['client_acc']:.3f}")
        self.status.value = (f"each client adds N(0, {math.sqrt(self.n - 1):.2f}^2 sigma^2 I); the certificate at "
                             f"epsilon = {v['epsilon']:.3g} needs sigma = {v['certified']['paper']:.4g} (paper) or "
                             f"{v['certified']['sound']:.4g} (sound)")
