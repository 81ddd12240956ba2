"""Per-example forgetting scores on digits plotted against each method's certificate (a pure figure builder).

Rows come from :func:`unlearnkit.experiments.audits.forgetting_digits.digits_epsilon_sweep` (one method at several
certified epsilons) and, for the reference band, the exact-retraining row of
:func:`~unlearnkit.experiments.audits.forgetting_digits.digits_forgetting_scores`.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import plotly.graph_objects as go

from ._style import styled


@styled
def forgetting_vs_epsilon_figure(sweep: Sequence[dict[str, Any]], *, control: dict[str, Any] | None = None,
                                 title: str = "") -> go.Figure:
    """Forgetting score ``F`` (1 = indistinguishable) with its 95 % interval against the certified epsilon (log
    axis), scored against plain retraining and against the certifier's counterfactual; ``control`` (the exact
    retraining row) is drawn as a band: the most any method can score at this many models."""
    rows = sorted((r for r in sweep if math.isfinite(r.get("certified_epsilon", math.inf))),
                  key=lambda r: r["certified_epsilon"])
    if not rows:
        raise ValueError("sweep has no row with a finite certified_epsilon: run digits_epsilon_sweep first")
    x = [float(r["certified_epsilon"]) for r in rows]
    fig = go.Figure()
    if control is not None:
        lo, hi = float(control["ci_low"]), float(control["ci_high"])
        fig.add_trace(go.Scatter(x=[x[0], x[-1], x[-1], x[0]], y=[lo, lo, hi, hi], fill="toself", mode="none",
                                 name="exact retraining (control), 95 % CI", opacity=0.3))
    for key, lo, hi, name in (("score", "ci_low", "ci_high", "vs retraining (the competition)"),
                              ("score_vs_certifier", "ci_low_vs_certifier", "ci_high_vs_certifier",
                               "vs the certifier (the same mechanism on retraining)")):
        y = [float(r[key]) for r in rows]
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=name, error_y=dict(
            type="data", symmetric=False, array=[float(r[hi]) - v for r, v in zip(rows, y)],
            arrayminus=[v - float(r[lo]) for r, v in zip(rows, y)])))
    method = rows[0].get("method", "")
    fig.update_layout(title=title or f"Forgetting score of {method} on digits against its sound certificate",
                      xaxis=dict(title="certified epsilon (delta = 1e-5)", type="log"),
                      yaxis=dict(title="forgetting score F (delta = 0.01)", range=[0, 1.05]), height=420)
    return fig
