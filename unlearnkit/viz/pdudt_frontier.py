"""Notebook 08's certified frontier: released accuracy, backdoor success and distance to retraining against epsilon.

:func:`pdudt_frontier_figure` draws a frontier dict (:func:`unlearnkit.experiments.pdudt.frontier.pdudt_frontier`):
one line per (mode, correction scale) row in each of three panels, with the retrained (dashed) and the original
(dotted) model as horizontal references in the first two. :func:`smallest_epsilon_rows` is the table beside it.
"""

from __future__ import annotations

from typing import Any, Mapping

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..experiments.pdudt.frontier import smallest_epsilon
from ._style import styled

PANELS = (("test_acc", "released test accuracy"), ("backdoor_asr", "backdoor success"),
          ("dist_to_retrain", "distance to retraining"))


@styled
def pdudt_frontier_figure(front: Mapping[str, Any], *, title: str = "PDUDT under a certificate: the frontier") -> go.Figure:
    """Three panels against epsilon (log): released test accuracy, backdoor success, distance to retraining (log).

    Parameters
    ----------
    front : mapping
        ``{"rows": {row name: [point, ...]}, "references": {"retrain": {...}, "original": {...}}}``; a point has
        ``epsilon``, ``test_acc``, ``backdoor_asr`` and ``dist_to_retrain``.
    title : str
        The figure's title.

    Returns
    -------
    plotly.graph_objects.Figure
        One trace per row and panel (the legend shows each row once), two reference lines in the first two
        panels.
    """
    fig = make_subplots(rows=1, cols=3, subplot_titles=[label for _, label in PANELS])
    for row, pts in front["rows"].items():
        for col, (key, _) in enumerate(PANELS, start=1):
            fig.add_scatter(x=[p["epsilon"] for p in pts], y=[p[key] for p in pts], name=row, legendgroup=row,
                            showlegend=col == 1, mode="lines+markers", row=1, col=col)
    for col, (key, _) in enumerate(PANELS[:2], start=1):
        fig.add_hline(y=front["references"]["retrain"][key], line_dash="dash", row=1, col=col)
        fig.add_hline(y=front["references"]["original"][key], line_dash="dot", row=1, col=col)
    fig.update_xaxes(type="log", title="epsilon")
    fig.update_yaxes(type="log", row=1, col=3)
    fig.update_layout(height=380, title=title)
    return fig


def smallest_epsilon_rows(front: Mapping[str, Any], **tolerances: float) -> list[dict[str, Any]]:
    """Per frontier row, the smallest epsilon whose release is close to retraining's (``None``: no epsilon is).

    ``tolerances`` go to :func:`~unlearnkit.experiments.pdudt.frontier.smallest_epsilon` (``acc_points``,
    ``asr_points``). Returns ``[{"row", "smallest epsilon"}, ...]`` in the frontier's row order.
    """
    return [{"row": r, "smallest epsilon": smallest_epsilon(front, r, **tolerances)} for r in front["rows"]]
