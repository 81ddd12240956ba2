"""Capstone figures (pure: data -> plotly Figure) and the capstone explorer.

- :func:`reproduction_table` / :func:`reproduction_figure`: the papers' numbers next to ours;
- :func:`frontier_figure`: the privacy-utility frontier (test accuracy against epsilon, one trace per method);
- :func:`cost_figure`: unlearning cost against retraining (gradient evaluations and seconds);
- :func:`audit_figure`: the audit panel (empirical lower bound on epsilon against the certificate) and
  :func:`audit_histogram` (the two worlds' statistics and the chosen threshold);
- :class:`CapstoneExplorer`: one widget over a precomputed table of runs (pick epsilon, the method, the metric);
- every registered method at its working point, with the audit column: :mod:`unlearnkit.viz.all_methods`.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Optional, Sequence

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .._validate import check_choice
from ._explorer import Explorer
from ._style import styled
from .bands import add_seed_band, per_seed


PAPER_COLOR, OURS_COLOR = "#636EFA", "#EF553B"
#: the colours of pooled methods' lines and bands, in order
_COLORWAY = ("#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3")
METRICS = {"test_acc": "test accuracy", "forget_acc": "forget accuracy", "mia_auc": "MIA AUC (0.5 = no signal)",
           "dist_to_retrain": "distance to the retrained model"}


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:.4g}" if isinstance(v, float) else str(v)


@styled
def reproduction_table(rows: Sequence[Mapping[str, Any]], *, title: str = "") -> go.Figure:
    """A plotly table: where each number is (table, page), the paper's value and ours, side by side."""
    cols = ["table", "page", "dataset", "method", "metric", "unit", "paper", "ours", "our run", "note"]
    cells = [[r["table"] for r in rows], [_fmt(r.get("page")) for r in rows], [str(r["dataset"]) for r in rows],
             [r["method"] for r in rows], [r["metric"] for r in rows], [r["unit"] for r in rows],
             [_fmt(r["paper"]) + ("" if r.get("paper_std") is None else f" ± {r['paper_std']:.2g}") for r in rows],
             [_fmt(r["ours"]) for r in rows],
             ["-" if r.get("ours_method") is None else f"{r['ours_method']} on {r['ours_dataset']}" for r in rows],
             [r.get("note", "") for r in rows]]
    fig = go.Figure(go.Table(header=dict(values=cols, fill_color="#eef", align="left"),
                             cells=dict(values=cells, align="left")))
    fig.update_layout(title=title or "paper vs ours", height=120 + 28 * max(len(rows), 1),
                      margin=dict(l=10, r=10, t=50, b=10))
    return fig


@styled
def reproduction_figure(rows: Sequence[Mapping[str, Any]], *, title: str = "") -> go.Figure:
    """Dumbbells: for every row with a number, the paper's value and ours on one line, one panel per unit."""
    rows = [r for r in rows if r.get("paper") is not None or r.get("ours") is not None]
    units = list(dict.fromkeys(r["unit"] for r in rows)) or ["-"]
    fig = make_subplots(rows=len(units), cols=1, subplot_titles=[f"unit: {u}" for u in units],
                        vertical_spacing=0.25 / max(len(units), 1))
    for i, unit in enumerate(units, start=1):
        sub = [r for r in rows if r["unit"] == unit]
        labels = [f"{r['table']} · {r['method']} · {r['metric']} ({r['dataset']})" for r in sub]
        for key, name, color, symbol in (("paper", "paper", PAPER_COLOR, "diamond"), ("ours", "ours", OURS_COLOR, "circle")):
            fig.add_trace(go.Scatter(
                x=[r[key] for r in sub], y=labels, mode="markers", name=name, legendgroup=name, showlegend=i == 1,
                marker=dict(color=color, symbol=symbol, size=11),
                hovertext=[r.get("locator", "") if key == "paper" else f"{r.get('ours_method')} on {r.get('ours_dataset')}"
                           for r in sub]), row=i, col=1)
        for r, lab in zip(sub, labels):
            if r.get("paper") is not None and r.get("ours") is not None:
                fig.add_trace(go.Scatter(x=[r["paper"], r["ours"]], y=[lab, lab], mode="lines", showlegend=False,
                                         line=dict(color="#bbb", width=2), hoverinfo="skip"), row=i, col=1)
    fig.update_layout(title=title or "paper vs ours", height=220 + 32 * max(len(rows), 1),
                      margin=dict(l=10, r=10, t=60, b=10))
    return fig


def _seed_band(fig: go.Figure, method: str, pts: Sequence[Mapping[str, Any]], metric: str, n_seeds: int) -> None:
    """A translucent band from the lowest to the highest value over seeds at each requested epsilon."""
    by_eps: dict[float, list[float]] = {}
    for p in pts:
        e = p.get("requested_epsilon", p.get("epsilon"))
        if e is not None and math.isfinite(float(e)) and float(e) > 0 and p.get(metric) is not None:
            by_eps.setdefault(float(e), []).append(float(p[metric]))
    xs = sorted(e for e, v in by_eps.items() if len(v) >= 2)
    if not xs:
        return
    lo, hi = [min(by_eps[e]) for e in xs], [max(by_eps[e]) for e in xs]
    fig.add_trace(go.Scatter(x=xs + xs[::-1], y=hi + lo[::-1], fill="toself", mode="lines", line=dict(width=0),
                             opacity=0.2, name=f"{method}: range over {n_seeds} seeds", hoverinfo="name",
                             legendgroup=method))


@styled
def frontier_figure(points: Iterable[Mapping[str, Any]], *, metric: str = "test_acc",
                    retrain: float | None = None, title: str = "",
                    seed_points: Optional[Sequence[Mapping[str, Any]]] = None, interval: str = "t95") -> go.Figure:
    """Privacy-utility frontier: ``metric`` against epsilon, one line per method (log-x).

    ``points`` are dicts with ``method``, ``epsilon`` and the metric; points without a finite epsilon
    (heuristics with no certificate) are drawn as horizontal dashed lines, legend entries named "no certificate".
    ``seed_points``: the same runs on several seeds (each point with a ``seed`` key, ``points``' seed included);
    each certified method then gets a translucent band from its lowest to its highest value over the seeds, in
    its legend group (so in its colour). Points pooled over seeds by a lab's frontier function (carrying
    ``<metric>_seeds``, :mod:`unlearnkit.experiments.seed_pool`) draw their mean with a band of ``interval``
    (``"t95"``: the 95 % Student-t interval for the mean over seeds; ``"minmax"``), named in legend and hover.
    """
    check_choice("metric", metric, tuple(METRICS))
    points = list(points)
    fig = go.Figure()
    levels: list[tuple[str, float, dict]] = []  # horizontal lines: (legend name, y, line style)
    if seed_points:
        n_seeds = len({p.get("seed") for p in seed_points})
        for method in dict.fromkeys(p["method"] for p in seed_points):
            _seed_band(fig, method, [p for p in seed_points if p["method"] == method], metric, n_seeds)
    for method in dict.fromkeys(p["method"] for p in points):
        pts = [p for p in points if p["method"] == method and p.get(metric) is not None]
        cert = sorted((p for p in pts if p.get("epsilon") is not None and math.isfinite(p["epsilon"])
                       and p["epsilon"] > 0), key=lambda p: p["epsilon"])
        if cert and any(p.get(f"{metric}_seeds") for p in cert):
            color = _COLORWAY[len({t.legendgroup for t in fig.data if t.legendgroup}) % len(_COLORWAY)]
            add_seed_band(fig, [p["epsilon"] for p in cert], [per_seed(p, metric) for p in cert], name=method,
                          color=color, interval=interval)
        elif cert:
            fig.add_trace(go.Scatter(x=[p["epsilon"] for p in cert], y=[p[metric] for p in cert],
                                     mode="lines+markers", name=method, legendgroup=method))
        elif pts and all(p.get("epsilon") is None for p in pts):  # exact retraining (eps = 0) is ``retrain``
            levels.append((f"{method} (no certificate)", float(np.mean([p[metric] for p in pts])), {"dash": "dash"}))
    if retrain is not None:
        levels.append(("retrain (exact, eps = 0)", float(retrain), {"color": "black"}))
    xs = [x for t in fig.data for x in t.x]
    for name, y, line in levels:  # legend entries, not annotations: several at one height overlapped
        if xs:
            fig.add_trace(go.Scatter(x=[min(xs), max(xs)], y=[y, y], mode="lines", name=name, line=line))
        else:
            fig.add_hline(y=y, line=line, annotation_text=name)
    fig.update_xaxes(type="log", title="certified epsilon (delta fixed)")
    fig.update_yaxes(title=METRICS[metric])
    fig.update_layout(title=title or "privacy-utility frontier", height=420)
    return fig


@styled
def cost_figure(rows: Iterable[Mapping[str, Any]], *, title: str = "") -> go.Figure:
    """Unlearning cost as a fraction of retraining (gradient evaluations and seconds), one bar pair per method."""
    rows = list(rows)
    names = [r["method"] for r in rows]

    def ratio(a: Any, b: Any) -> float | None:
        return None if a is None or not b else float(a) / float(b)

    fig = go.Figure([
        go.Bar(x=names, y=[ratio(r.get("grad_evals"), r.get("retrain_grad_evals")) for r in rows],
               name="gradient evaluations / retraining"),
        go.Bar(x=names, y=[ratio(r.get("seconds"), r.get("retrain_seconds")) for r in rows],
               name="seconds / retraining"),
    ])
    fig.add_hline(y=1.0, line_dash="dot", annotation_text="retraining")
    fig.update_yaxes(type="log", title="cost relative to retraining")
    fig.update_layout(title=title or "unlearning cost against retraining", barmode="group", height=420)
    return fig


@styled
def audit_figure(results: Iterable[Any], *, title: str = "") -> go.Figure:
    """The audit panel: each audit's lower bound (with its confidence) against its certified epsilon.

    ``results`` are :class:`unlearnkit.audit.AuditResult` objects (or their ``to_dict()``). A red bar is a
    violation: the certificate is refuted at the audit's confidence. Results of one
    :func:`~unlearnkit.experiments.audits.methods.audit_methods` call carry their family-wise confidence
    (Bonferroni over the audits shown), which the legend reports.
    """
    res = [r.to_dict() if hasattr(r, "to_dict") else dict(r) for r in results]
    labels = [f"{r.get('label', '')} [{r.get('mode') or '-'}]" for r in res]
    colors = ["#d62728" if r.get("violation") else "#2ca02c" for r in res]
    fam = res[0].get("alpha_family") if res else None
    conf = (f"family-wise {1 - fam:.0%} over {res[0].get('n_audits')} audits" if fam is not None
            else "1 - alpha")
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=[r["epsilon_lower"] for r in res], marker_color=colors,
                         name=f"audit lower bound ({conf})",
                         hovertext=[r.get("verdict", "") for r in res]))
    fig.add_trace(go.Scatter(x=labels, y=[r.get("certified_epsilon") for r in res], mode="markers",
                             marker=dict(symbol="line-ew-open", size=36, line=dict(width=3, color="black")),
                             name="certified epsilon"))
    fig.update_yaxes(title="epsilon")
    fig.update_layout(title=title or "audit: empirical lower bound vs certificate (red = refuted)", height=420)
    return fig


@styled
def audit_histogram(result: Any, *, title: str = "") -> go.Figure:
    """The held-out statistic in both worlds and the threshold the audit chose."""
    fig = go.Figure([go.Histogram(x=np.asarray(result.stat_a), name="world A (unlearned)", opacity=0.6),
                     go.Histogram(x=np.asarray(result.stat_b), name="world B (certifier)", opacity=0.6)])
    fig.add_vline(x=result.threshold, line_dash="dash", annotation_text="threshold")
    fig.update_layout(barmode="overlay", title=title or f"{result.label}: eps >= {result.epsilon_lower:.2f}",
                      xaxis_title="1-D statistic", height=360)
    return fig


class CapstoneExplorer(Explorer):
    """All methods under one (epsilon, delta): a table and a frontier, from a precomputed list of runs.

    ``points`` are dicts ``{"method", "epsilon", "test_acc", "forget_acc", "mia_auc", "dist_to_retrain",
    "grad_evals", "retrain_grad_evals", ...}`` (one per method and epsilon; heuristics have epsilon None).
    ``seed_points`` (optional): the same runs on several seeds, drawn as bands (:func:`frontier_figure`).
    The epsilon slider picks the budget shown in the table and marked on the frontier; the metric dropdown
    changes the frontier's y-axis. Nothing is recomputed, so it responds instantly.
    """

    def __init__(self, points: Sequence[Mapping[str, Any]], *, retrain: Mapping[str, float] | None = None,
                 seed_points: Optional[Sequence[Mapping[str, Any]]] = None):
        super().__init__()
        if not points:
            raise ValueError("points is empty: run at least one method before exploring")
        self.points = [dict(p) for p in points]
        self.retrain = dict(retrain or {})
        self.seed_points = [dict(p) for p in seed_points] if seed_points else None
        eps = sorted({self._budget(p) for p in self.points if self._budget(p) is not None})
        self.epsilons = eps or [1.0]
        self.slider = W.SelectionSlider(options=[(f"{e:g}", e) for e in self.epsilons],
                                        value=self.epsilons[len(self.epsilons) // 2], description="epsilon")
        self.metric = W.Dropdown(options=[(v, k) for k, v in METRICS.items()], value="test_acc", description="metric")
        self.fig = go.FigureWidget(frontier_figure(self.points, metric="test_acc", retrain=self.retrain.get("test_acc"),
                                                   seed_points=self.seed_points))
        self.table = W.HTML()
        self.observe(self.slider)
        self.observe(self.metric)
        self._layout(W.HBox([self.slider, self.metric]), self.fig, self.table)
        self.refresh()

    @staticmethod
    def _budget(p: Mapping[str, Any]) -> float | None:
        """The target a run was asked for (``requested_epsilon``), else its certified epsilon; None if neither."""
        e = p.get("requested_epsilon", p.get("epsilon"))
        if e is None or not math.isfinite(float(e)) or float(e) <= 0:
            return None
        return float(e)

    def rows_at(self, epsilon: float) -> list[dict[str, Any]]:
        """For each method, its run at target ``epsilon`` (heuristics and exact retraining: their only run)."""
        out = []
        for method in dict.fromkeys(p["method"] for p in self.points):
            pts = [p for p in self.points if p["method"] == method]
            cert = [p for p in pts if self._budget(p) is not None]
            pick = min(cert, key=lambda p: abs(math.log(self._budget(p)) - math.log(epsilon))) if cert else pts[0]
            out.append(pick)
        return out

    def update(self) -> None:
        metric = self.metric.value
        eps = float(self.slider.value)
        for p in self.points:
            e = p.get("epsilon")
            if e is not None and not (float(e) >= 0):
                raise ValueError(f"epsilon={e!r} of method {p['method']!r} is out of range: expected epsilon in [0, inf]")
        if not (eps > 0):
            raise ValueError(f"epsilon={eps!r} is out of range: expected epsilon in (0, inf)")
        check_choice("metric", metric, tuple(METRICS))
        new = frontier_figure(self.points, metric=metric, retrain=self.retrain.get(metric),
                              seed_points=self.seed_points)
        with self.fig.batch_update():
            self.fig.data = ()
            for tr in new.data:
                self.fig.add_trace(tr)
            self.fig.layout.shapes = new.layout.shapes
            self.fig.layout.annotations = new.layout.annotations
            self.fig.layout.yaxis.title = new.layout.yaxis.title
            self.fig.layout.title = f"{METRICS[metric]} against epsilon (table at epsilon = {eps:g})"
        rows = self.rows_at(eps)
        head = "".join(f"<th>{h}</th>" for h in ("method", "certified epsilon", "test acc", "forget acc", "MIA AUC",
                                                  "dist. to retrain", "grad evals / retrain"))
        body = ""
        for p in rows:
            ratio = (p.get("grad_evals") / p["retrain_grad_evals"]) if p.get("grad_evals") is not None and p.get("retrain_grad_evals") else None
            body += "<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in (
                p["method"], p.get("epsilon"), p.get("test_acc"), p.get("forget_acc"), p.get("mia_auc"),
                p.get("dist_to_retrain"), ratio)) + "</tr>"
        self.table.value = f"<table><tr>{head}</tr>{body}</table>"

