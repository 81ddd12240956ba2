"""The audit ceiling, visible: how far a budget of trials could ever refute a certificate (a calculator).

:class:`AuditCeilingExplorer` lets a learner pick the number of trials per world and the audit statistic
and shows, next to the certified epsilon, the highest lower bound that budget could *ever* report (a perfect
attacker, every trial separated): :func:`unlearnkit.audit.ceiling.audit_ceiling`. When the certified epsilon
is above the ceiling, "not refuted" is guaranteed whatever the method does, so it is no evidence at all.
No training happens: the curves are computed once (milliseconds) and every control redraws instantly.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from .._validate import check_choice, check_int
from ..audit.ceiling import CEILING_STATISTICS, audit_ceiling, ceiling_curve
from ._explorer import Explorer
from ._style import styled


STATISTIC_LABELS = {
    "cp_split": "Clopper-Pearson, held-out split (default; no assumption)",
    "cp_bonferroni": "Clopper-Pearson, Bonferroni over thresholds (no assumption)",
    "gdp": "GDP-shape fit (assumes a Gaussian trade-off curve)",
    "one_run": "one run, n canaries all guessed right (Steinke et al. 2023)",
}
"""How each statistic is named in the widget; what it assumes is in :data:`unlearnkit.audit.STATISTIC_ASSUMPTIONS`."""

TRIAL_GRID = (50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 1_000_000)
_ONE_RUN_CURVE_MAX = 20_000  # the one-run curve is drawn up to here (larger n take a second each)


def ceiling_summary(n_trials: int, statistic: str, certified_epsilon: float, *, delta: float = 1e-5,
                    alpha: float = 0.05) -> dict[str, Any]:
    """The widget's compute function: ``{"ceiling", "certified_epsilon", "refutable", "text", ...}``.

    ``refutable`` is False when the certified epsilon is at or above the ceiling: no audit of that size and
    statistic could ever report a violation, so "not refuted" tells nothing about the certificate.
    """
    check_int("n_trials", n_trials, low=20)
    check_choice("statistic", statistic, CEILING_STATISTICS)
    if not (certified_epsilon >= 0) or math.isnan(certified_epsilon):
        raise ValueError(f"certified_epsilon={certified_epsilon!r} is out of range: expected epsilon in [0, inf]")
    c = audit_ceiling(n_trials, statistic, delta=delta, alpha=alpha)
    refutable = c > certified_epsilon
    if refutable:
        text = (f"With {n_trials:,} trials per world, {STATISTIC_LABELS[statistic]} can show at most "
                f"eps >= {c:.2f}: above the certified {certified_epsilon:g}, so a broken certificate *could* be "
                "refuted; 'not refuted' is evidence only as strong as the attack used.")
    else:
        text = (f"With {n_trials:,} trials per world, {STATISTIC_LABELS[statistic]} can show at most "
                f"eps >= {c:.2f}: at or below the certified {certified_epsilon:g}, so this audit can NEVER refute "
                "the certificate, whatever the method does. 'Not refuted' here carries no information.")
    return dict(n_trials=int(n_trials), statistic=statistic, ceiling=c, certified_epsilon=float(certified_epsilon),
                delta=float(delta), alpha=float(alpha), refutable=bool(refutable), text=text)


def _curves(grid: Sequence[int], delta: float, alpha: float) -> dict[str, np.ndarray]:
    out = {}
    for s in CEILING_STATISTICS:
        ns = [n for n in grid if s != "one_run" or n <= _ONE_RUN_CURVE_MAX]
        out[s] = np.array([ns, ceiling_curve(ns, s, delta=delta, alpha=alpha)])
    return out


@styled
def ceiling_figure(n_trials: int, statistic: str, certified_epsilon: float, *, delta: float = 1e-5,
                   alpha: float = 0.05, curves: dict[str, np.ndarray] | None = None) -> go.Figure:
    """Every statistic's ceiling against the trials per world (log axis), the chosen one highlighted, a
    marker at ``n_trials`` and the certified epsilon as a horizontal line."""
    info = ceiling_summary(n_trials, statistic, certified_epsilon, delta=delta, alpha=alpha)
    curves = curves or _curves(TRIAL_GRID, delta, alpha)
    fig = go.Figure()
    for s, (ns, cs) in curves.items():
        chosen = s == statistic
        # plain lists: numpy buffers do not reach the browser intact (see viz/_payload.py)
        fig.add_trace(go.Scatter(x=[int(v) for v in ns], y=[float(v) for v in cs], mode="lines+markers",
                                 name=STATISTIC_LABELS[s],
                                 line=dict(width=4 if chosen else 1.5, dash="solid" if chosen else "dot"),
                                 opacity=1.0 if chosen else 0.5))
    fig.add_trace(go.Scatter(x=[n_trials], y=[info["ceiling"]], mode="markers", name="your budget",
                             marker=dict(size=14, symbol="star", color="black")))
    fig.add_hline(y=certified_epsilon, line=dict(color="crimson", dash="dash"),
                  annotation_text=f"certified epsilon = {certified_epsilon:g}")
    verdict = "can refute" if info["refutable"] else "can NEVER refute"
    fig.update_layout(title=f"Audit ceiling: {n_trials:,} trials, ceiling {info['ceiling']:.2f} -> {verdict}",
                      xaxis=dict(type="log", title="trials per world (one run: canaries)"),
                      yaxis=dict(title="highest possible lower bound on epsilon", rangemode="tozero"),
                      height=420, legend=dict(orientation="h", y=-0.25))
    return fig


class AuditCeilingExplorer(Explorer):
    """Pick the trials per world, the statistic and the certified epsilon; see the ceiling (no training)."""

    def __init__(self, *, certified_epsilon: float = 1.0, delta: float = 1e-5, alpha: float = 0.05,
                 n_trials: int = 1_000, statistic: str = "cp_split"):
        super().__init__()
        self.delta, self.alpha = float(delta), float(alpha)
        self._curves = _curves(TRIAL_GRID, self.delta, self.alpha)
        self.trials = W.SelectionSlider(options=[(f"{n:,}", n) for n in TRIAL_GRID], value=n_trials,
                                        description="trials/world", continuous_update=False)
        self.statistic = W.Dropdown(options=[(STATISTIC_LABELS[s], s) for s in CEILING_STATISTICS],
                                    value=statistic, description="statistic", layout=W.Layout(width="520px"))
        self.epsilon = W.FloatLogSlider(value=certified_epsilon, base=10, min=-1, max=1.7, step=0.05,
                                        description="certified eps")
        self.fig = go.FigureWidget(ceiling_figure(n_trials, statistic, certified_epsilon, delta=self.delta,
                                                  alpha=self.alpha, curves=self._curves))
        self.summary = W.HTML()
        for w in (self.trials, self.statistic, self.epsilon):
            self.observe(w)
        self._layout(W.HBox([self.trials, self.epsilon]), self.statistic, self.fig, self.summary)
        self.refresh()

    def update(self) -> None:
        n, s, e = int(self.trials.value), self.statistic.value, float(self.epsilon.value)
        if s == "one_run" and n > 100_000:
            raise ValueError(f"n_trials={n} is out of range for the one-run statistic: expected at most 100,000 "
                             "canaries; pick fewer trials or another statistic")
        info = ceiling_summary(n, s, e, delta=self.delta, alpha=self.alpha)
        new = ceiling_figure(n, s, e, delta=self.delta, alpha=self.alpha, curves=self._curves)
        with self.fig.batch_update():
            self.fig.data = ()
            for tr in new.data:
                self.fig.add_trace(tr)
            self.fig.layout.shapes = new.layout.shapes
            self.fig.layout.annotations = new.layout.annotations
            self.fig.layout.title = new.layout.title
        color = "#060" if info["refutable"] else "#a00"
        self.summary.value = f"<p style='color:{color}'>{info['text']}</p>"
        self.info = info


@styled
def forgetting_figure(rows: Sequence[dict[str, Any]], *, title: str = "") -> go.Figure:
    """Forgetting scores (NeurIPS 2023 competition metric) of each run against its certificate.

    ``rows`` are :func:`unlearnkit.experiments.audits.forgetting.forgetting_scores` rows: one group of bars per
    run labelled with its certified epsilon ("none" when not certified), the score against plain retraining
    and against the certifier's output, each with its interval (the 95 % Student-t interval over the rows'
    ``n_repeats`` repetitions, named in the legend and the hover).
    """
    if not rows:
        raise ValueError("rows is empty: compute forgetting scores first")
    labels = []
    for r in rows:
        e = r.get("certified_epsilon", math.inf)
        cert = f"eps={e:g} ({r.get('certificate_mode', '')})" if math.isfinite(e) else "no certificate"
        labels.append(f"{r['method']} [{r['mode']}]<br>{cert}")
    fig = go.Figure()
    reps = sorted({int(r["n_repeats"]) for r in rows if r.get("n_repeats")})
    ci = f"95 % t-interval over {'/'.join(str(n) for n in reps)} repetitions" if reps else "95 % interval"
    for key, lo, hi, name in (("score", "ci_low", "ci_high", "vs retraining (the competition)"),
                              ("score_vs_certifier", "ci_low_vs_certifier", "ci_high_vs_certifier",
                               "vs the certifier (retraining + the same noise)")):
        y = [r.get(key, math.nan) for r in rows]
        fig.add_trace(go.Bar(x=labels, y=y, name=f"{name}; bars: {ci}", error_y=dict(
            type="data", symmetric=False, array=[r.get(hi, v) - v for r, v in zip(rows, y)],
            arrayminus=[v - r.get(lo, v) for r, v in zip(rows, y)]), hoverinfo="text",
            hovertext=[f"{name}: F = {v:.3f}, {ci}: [{r.get(lo, v):.3f}, {r.get(hi, v):.3f}]"
                       for r, v in zip(rows, y)]))
    fig.update_layout(barmode="group", title=title or "Forgetting score (1 = indistinguishable) per run",
                      yaxis=dict(title="forgetting score F (delta = 0.01)", range=[0, 1.05]), height=420)
    return fig
