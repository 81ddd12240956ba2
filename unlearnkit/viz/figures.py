"""Pure figure builders for the foundation notebooks: data in, ``plotly.graph_objects.Figure`` out.

They never touch widgets, so they are usable in scripts and reports (``fig.write_html``) and trivially
testable. Explorers wrap them in ``FigureWidget``s.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np
import plotly.graph_objects as go

from ._style import styled


COLORS = {
    "retrain": "#2ca02c",
    "finetune": "#1f77b4",
    "gradient_ascent": "#d62728",
    "original": "#7f7f7f",
    "unlearned": "#9467bd",
}

_METRIC_LABELS = {"forget_acc": "forget accuracy", "test_acc": "test accuracy", "mia_auc": "MIA AUC",
                  "retain_acc": "retain accuracy", "backdoor_asr": "backdoor success"}


@styled
def image_grid(images: np.ndarray, labels: Sequence[int], *, ncols: int = 10, title: str = "",
               highlight: Optional[Sequence[bool]] = None) -> go.Figure:
    """A grid of grey-scale images ``(n, 1, H, W)`` or ``(n, H, W)`` with their labels; ``highlight`` outlines
    some of them in red (e.g. the samples to forget)."""
    imgs = np.asarray(images, dtype=float)
    if imgs.ndim == 4:
        imgs = imgs[:, 0] if imgs.shape[1] == 1 else imgs.mean(axis=1)
    n = len(imgs)
    if n == 0:
        raise ValueError("image_grid: no images to show")
    ncols = max(1, min(ncols, n))
    nrows = int(np.ceil(n / ncols))
    h, w = imgs.shape[1:]
    canvas = np.full((nrows * (h + 1) - 1, ncols * (w + 1) - 1), np.nan)
    for k in range(n):
        r, c = divmod(k, ncols)
        canvas[r * (h + 1):r * (h + 1) + h, c * (w + 1):c * (w + 1) + w] = imgs[k]
    fig = go.Figure(go.Heatmap(z=canvas, colorscale="gray_r", showscale=False, hoverinfo="skip"))
    annotations = []
    shapes = []
    for k in range(n):
        r, c = divmod(k, ncols)
        annotations.append(dict(x=c * (w + 1) + w / 2 - 0.5, y=r * (h + 1) - 0.9, text=str(int(labels[k])),
                                showarrow=False, font=dict(size=10, color="#333")))
        if highlight is not None and highlight[k]:
            shapes.append(dict(type="rect", x0=c * (w + 1) - 0.5, x1=c * (w + 1) + w - 0.5, y0=r * (h + 1) - 0.5,
                               y1=r * (h + 1) + h - 0.5, line=dict(color="red", width=2)))
    fig.update_layout(title=title, annotations=annotations, shapes=shapes, height=90 + 70 * nrows,
                      margin=dict(l=10, r=10, t=40, b=10))
    fig.update_yaxes(autorange="reversed", showticklabels=False, scaleanchor="x")
    fig.update_xaxes(showticklabels=False)
    return fig


@styled
def label_histogram(counts: np.ndarray, *, title: str = "labels per client") -> go.Figure:
    """Heatmap of a federation's ``(n_clients, n_classes)`` label counts: how non-IID the split is."""
    counts = np.asarray(counts)
    fig = go.Figure(go.Heatmap(z=counts, x=[str(c) for c in range(counts.shape[1])],
                               y=[f"client {i}" for i in range(counts.shape[0])], colorscale="Blues",
                               colorbar=dict(title="samples")))
    fig.update_layout(title=title, xaxis_title="class", height=120 + 22 * counts.shape[0],
                      margin=dict(l=70, r=10, t=40, b=40))
    fig.update_yaxes(autorange="reversed")
    return fig


@styled
def forgetting_curves(history: Sequence[Mapping[str, float]], *, reference: Optional[Mapping[str, float]] = None,
                      metrics: Sequence[str] = ("forget_acc", "test_acc", "mia_auc"), x: str = "grad_evals",
                      title: str = "forgetting as it happens") -> go.Figure:
    """Metric curves over the course of unlearning (x: gradient evaluations), with retraining's values as
    dashed reference lines."""
    fig = go.Figure()
    palette = ["#d62728", "#1f77b4", "#9467bd", "#ff7f0e", "#2ca02c"]
    xs = [h.get(x, i) for i, h in enumerate(history)]
    for k, m in enumerate(metrics):
        fig.add_trace(go.Scatter(x=xs, y=[h.get(m) for h in history], mode="lines+markers",
                                 name=_METRIC_LABELS.get(m, m), line=dict(color=palette[k % len(palette)])))
    for k, m in enumerate(metrics):
        if reference is not None and m in reference:
            fig.add_trace(go.Scatter(x=[min(xs, default=0), max(xs, default=1)], y=[reference[m]] * 2, mode="lines",
                                     name=f"retrain: {_METRIC_LABELS.get(m, m)}", showlegend=True,
                                     line=dict(color=palette[k % len(palette)], dash="dash", width=1)))
    fig.update_layout(title=title, xaxis_title="gradient evaluations" if x == "grad_evals" else x,
                      yaxis=dict(range=[-0.02, 1.02], title="value"), height=380, margin=dict(l=50, r=10, t=50, b=40),
                      legend=dict(orientation="h", y=-0.25))
    return fig


@styled
def metrics_bars(results: Mapping[str, Mapping[str, float]], *,
                 metrics: Sequence[str] = ("test_acc", "forget_acc", "mia_auc"),
                 title: str = "after unlearning") -> go.Figure:
    """Grouped bars: one group per metric, one bar per model (``{"retrain": {...}, "finetune": {...}}``).

    A metric with ``<metric>_low`` / ``<metric>_high`` in a row (``mia_auc`` from
    :func:`unlearnkit.evaluate.report`: its 95 % interval) gets an error bar and the interval in the hover."""
    fig = go.Figure()
    for name, r in results.items():
        y = [r.get(m, np.nan) for m in metrics]
        lo = [r.get(f"{m}_low", v) if r.get(f"{m}_low") is not None else v for m, v in zip(metrics, y)]
        hi = [r.get(f"{m}_high", v) if r.get(f"{m}_high") is not None else v for m, v in zip(metrics, y)]
        hover = [f"{name}: {_METRIC_LABELS.get(m, m)} {v:.3f}" + (f", 95 % interval [{a:.3f}, {b:.3f}]"
                                                                  if f"{m}_low" in r else "")
                 for m, v, a, b in zip(metrics, y, lo, hi)]
        fig.add_trace(go.Bar(name=name, x=[_METRIC_LABELS.get(m, m) for m in metrics], y=y,
                             marker_color=COLORS.get(name), hovertext=hover, hoverinfo="text",
                             error_y=dict(type="data", symmetric=False, array=[b - v for v, b in zip(y, hi)],
                                          arrayminus=[v - a for v, a in zip(y, lo)], visible=any(
                                              f"{m}_low" in r for m in metrics))))
    fig.update_layout(title=title, barmode="group", yaxis=dict(range=[0, 1.05]), height=340,
                      margin=dict(l=50, r=10, t=50, b=40))
    return fig


@styled
def cost_bars(costs: Mapping[str, float], *, title: str = "cost (gradient evaluations)") -> go.Figure:
    """Horizontal bars of each method's cost on one axis (log scale)."""
    names = list(costs)
    fig = go.Figure(go.Bar(x=[max(costs[n], 1) for n in names], y=names, orientation="h",
                           marker_color=[COLORS.get(n, "#888") for n in names]))
    fig.update_layout(title=title, xaxis_type="log", height=60 + 40 * len(names), margin=dict(l=120, r=10, t=40, b=30))
    return fig


