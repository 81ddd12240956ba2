"""Every registered method at its working point: the capstone's comparison table, its frontier, an explorer.

- :func:`method_table_html`: one HTML table, grouped by setting and forget task, with the advantage over
  retraining with the same budget (:func:`advantage_html`: mean, 95 % interval over seeds, label) and the audit
  column;
- :func:`certified_frontier_figure`: released test accuracy against certified epsilon, uncertified methods in
  an "inf" column;
- :class:`AllMethodsExplorer`: both over the rows of
  :func:`unlearnkit.experiments.capstone_table.capstone_rows` (committed measurements by default), a setting
  filter and a button that re-runs every quick profile live.
"""

from __future__ import annotations

import html
import math
from typing import Any, Mapping, Optional, Sequence

import ipywidgets as W
import plotly.graph_objects as go

from .._validate import check_choice
from ..experiments.capstone_table import capstone_rows, load_audit_rows
from ._explorer import Explorer


_SETTING_COLOR = {"centralized": "#1f77b4", "decentralized": "#ff7f0e"}
#: the frontier's marker symbols, one per method (in the order of the rows; repeated after the last)
METHOD_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "triangle-down", "pentagon", "hexagon", "star",
                  "cross", "x", "triangle-left", "triangle-right", "hourglass", "bowtie", "star-diamond",
                  "diamond-wide")


def _acc(v: Any) -> str:
    return "-" if v is None else f"{float(v):.3f}"


def _cell_color(row: Mapping[str, Any]) -> str:
    """Green: works under a sound certificate; red: fails to forget or to stay useful; grey: otherwise."""
    text = str(row.get("reading", ""))
    if text.startswith("works") or row.get("method") == "retrain":
        return "#e6f4ea"
    return "#fde8e8" if "NOT" in text else "#f3f3f3"


_ADVANTAGE_WORDS = {"better": "better", "same": "no better", "worse": "worse"}
_ADVANTAGE_COLOR = {"better": "#1a7f37", "same": "#555", "worse": "#b42318"}


def advantage_html(row: Mapping[str, Any]) -> str:
    """A row's advantage over retraining with the same budget: mean, 95 % interval over seeds, the number of
    seeds and the label (better, no better, worse than equal-budget retraining), or "not measured"."""

    if row.get("advantage") is None:
        return "not measured"
    lab = str(row.get("advantage_label", "same"))
    words = _ADVANTAGE_WORDS.get(lab, lab)
    return (f'<span title="{html.escape(str(row.get("advantage_text", "")))}">'
            f'{row["advantage"]:+.3f} [{row["advantage_low"]:+.3f}, {row["advantage_high"]:+.3f}], '
            f'{int(row.get("advantage_n_seeds") or 0)} seeds: '
            f'<b style="color:{_ADVANTAGE_COLOR.get(lab, "#555")}">{html.escape(words)}</b></span>')


def method_table_html(rows: Sequence[Mapping[str, Any]], *, max_width: int = 1400) -> str:
    """Every method in one HTML table, grouped by setting and forget task (one header row per group).

    ``rows`` are :func:`unlearnkit.experiments.capstone_table.capstone_rows`. Fixed column widths (the table
    never grows wider than ``max_width`` pixels; long cells wrap inside their column); the audit cell's
    tooltip names the run its numbers come from. Each group's "retraining" is that run's own retraining.
    """

    cols = (("method", 8), ("guarantee", 13), ("test accuracy: released vs retraining (one draw)", 10),
            ("forget metric: released vs retraining (original)", 13), ("cost / retraining", 6),
            ("advantage over equal-budget retraining [95 % CI over seeds]", 14),
            ("audit (lower bound on epsilon)", 18), ("what it shows", 18))
    esc = html.escape
    head = "".join(f'<th style="text-align:left;padding:4px 6px">{esc(c)}</th>' for c, _ in cols)
    colgroup = "".join(f'<col style="width:{w}%">' for _, w in cols)
    body, last = [], None
    for r in rows:
        if r.get("group") != last:
            last = r.get("group")
            body.append(f'<tr><td colspan="{len(cols)}" style="background:#eef;font-weight:bold;padding:4px 6px">'
                        f'{esc(str(last))}</td></tr>')
        a = r.get("audit_row") or {}
        tip = esc(" · ".join(str(a[k]) for k in ("statistic", "n_trials", "source", "note") if a.get(k) is not None))
        ratio = r.get("cost_ratio")
        cells = (f"<b>{esc(r['method'])}</b>", esc(r["guarantee"]),
                 f"{_acc(r.get('test_acc'))} vs {_acc(r.get('retrain_test_acc'))}",
                 f"{esc(r['forget_metric'])} {_acc(r.get('forget'))} vs {_acc(r.get('retrain_forget'))} "
                 f"({_acc(r.get('original_forget'))})",
                 "-" if ratio is None else f"{ratio:.2f}", advantage_html(r),
                 f'<span title="{tip}">{esc(r["audit"])}</span>', esc(r["reading"]))
        tds = "".join(f'<td style="text-align:left;vertical-align:top;padding:3px 6px">{c}</td>' for c in cells)
        body.append(f'<tr style="background:{_cell_color(r)}">{tds}</tr>')
    return (f'<table style="table-layout:fixed;width:100%;max-width:{max_width}px;border-collapse:collapse;'
            f'font-size:12px;word-wrap:break-word"><colgroup>{colgroup}</colgroup><tr>{head}</tr>'
            + "".join(body) + "</table>")


def certified_frontier_figure(rows: Sequence[Mapping[str, Any]], *, title: str = "") -> go.Figure:
    """Released test accuracy against certified epsilon, every method at its working point.

    Each point is one draw (the committed seed); a translucent bar beside it is the released accuracy's 95 %
    interval over the seeds of the equal-budget measurements, where the row carries one (``seeded_test_acc``).
    Certified methods sit at their epsilon (log axis); uncertified ones (paper-mode claims and heuristics) in
    an "inf" column on the right, exact retraining in a "0" column on the left. Each point is linked to its
    own run's retraining accuracy (a dash), since the tasks differ; colour is the setting, a filled marker a
    row that forgets (within the table's tolerance) and an open one a row that does not or cannot show it.
    Each method has its own marker symbol and a legend entry (a click hides its point, dash and bar), and its
    name in the hover: no text labels, which overlapped where many methods share one epsilon. Epsilons that
    agree to 9 significant digits share a column (RR-DU's calibrated 0.9999999999999987 sits at 1).
    """
    finite = [float(f"{float(r['epsilon']):.9g}") for r in rows
              if r.get("certified") and 0 < float(r["epsilon"]) < math.inf]
    lo, hi = (min(finite), max(finite)) if finite else (1.0, 1.0)
    x_zero, x_inf = lo / 30, hi * 30  # far enough that a column's sideways spread never reaches its neighbour

    def column(r: Mapping[str, Any]) -> float:
        e = float(r["epsilon"])
        return x_inf if not r.get("certified") or math.isinf(e) else x_zero if e <= 0 else float(f"{e:.9g}")

    symbols = {}  # one marker symbol per method, in the order of the rows
    for r in rows:
        symbols.setdefault(r["method"], METHOD_SYMBOLS[len(symbols) % len(METHOD_SYMBOLS)])

    cols: dict[float, list] = {}
    for r in rows:
        cols.setdefault(column(r), []).append(r)
    fig = go.Figure()
    for x, members in cols.items():
        n = len(members)
        # spread a column's points sideways, in order of accuracy (0.14 decades apart)
        members = sorted(members, key=lambda r: r.get("test_acc") or 0.0)
        for i, r in enumerate(members):
            xi = x * 10 ** (0.14 * (i - (n - 1) / 2))
            color = _SETTING_COLOR.get(r.get("setting"), "#7f7f7f")
            filled = bool(r.get("forgets")) and r.get("forget_signal") is not False
            group = f"method {r['method']}"
            if r.get("retrain_test_acc") is not None and r.get("test_acc") is not None:
                fig.add_trace(go.Scatter(x=[xi, xi], y=[r["retrain_test_acc"], r["test_acc"]], mode="lines+markers",
                                         line=dict(color=color, width=1), showlegend=False, hoverinfo="skip",
                                         legendgroup=group,
                                         marker=dict(symbol=["line-ew-open", "circle"], size=[12, 0],
                                                     line=dict(width=2, color=color))))
            band = r.get("seeded_test_acc")
            if band:  # the released accuracy's 95 % interval over seeds, beside the single draw
                fig.add_trace(go.Scatter(x=[xi * 1.06] * 2, y=[band["low"], band["high"]], mode="lines",
                                         line=dict(color=color, width=5), opacity=0.35, showlegend=False,
                                         legendgroup=group,
                                         hovertext=[f"{r['method']}: {band['mean']:.3f} [{band['low']:.3f}, "
                                                    f"{band['high']:.3f}] (95 % t-interval over "
                                                    f"{r.get('advantage_n_seeds')} seeds)"] * 2,
                                         hoverinfo="text"))
            fig.add_trace(go.Scatter(
                x=[xi], y=[r.get("test_acc")], mode="markers", name=r["method"], legendgroup=group,
                legendrank=100 + list(symbols).index(r["method"]),  # the legend lists methods in row order
                marker=dict(size=11, symbol=symbols[r["method"]], color=color if filled else "white",
                            line=dict(width=2, color=color)),
                hovertext=[f"{r['method']}: {r['guarantee']}<br>{r.get('group', '')}<br>"
                           f"{r.get('reading', '')}"], hoverinfo="text"))
    # the keys (colour, fill, bar, dash) come first in the legend, then the methods
    for name, color in _SETTING_COLOR.items():
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, legendrank=1,
                                 marker=dict(size=11, color=color)))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="does not forget (or cannot show it)",
                             legendrank=2, marker=dict(size=11, color="white", line=dict(width=2, color="#555"))))
    n_seeds = sorted({int(r["advantage_n_seeds"]) for r in rows if r.get("seeded_test_acc")
                      and r.get("advantage_n_seeds")})
    if n_seeds:  # the bars' legend entry: which interval, over how many seeds
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=dict(color="#555", width=5), opacity=0.35,
                                 legendrank=3, name=f"95 % t-interval over {'/'.join(str(n) for n in n_seeds)} seeds"))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="its run's retraining accuracy",
                             legendrank=4, marker=dict(symbol="line-ew-open", size=12, color="#555",
                                         line=dict(width=2, color="#555"))))
    ticks = sorted({x_zero, x_inf, *finite})
    labels = ["0 (exact)" if t == x_zero else "inf (not certified)" if t == x_inf else f"{t:g}" for t in ticks]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=labels, title="certified epsilon (delta = 1e-5)")
    fig.update_yaxes(title="released test accuracy")
    fig.add_vrect(x0=x_inf / 4, x1=x_inf * 4, fillcolor="#eee", opacity=0.5, line_width=0, layer="below")
    fig.update_layout(title=title or "every method at its working point: released accuracy against certified epsilon",
                      height=560, margin=dict(l=10, r=10, t=50, b=10), legend=dict(font=dict(size=11)))
    return fig


#: the setting filter's choices
SETTINGS_SHOWN = ("all", "centralized", "decentralized")


class AllMethodsExplorer(Explorer):
    """The comparison table and the frontier of every registered method, with a live re-run.

    ``rows``: :func:`~unlearnkit.experiments.capstone_table.capstone_rows` (None: built from the committed
    measurements and audit rows). The ``setting`` dropdown filters both views; the button re-runs every
    method's quick profile (about 30 s on 2 CPU cores; cached for the session) and replaces the rows.
    """

    def __init__(self, rows: Optional[Sequence[Mapping[str, Any]]] = None, *,
                 audit_rows: Optional[Sequence[Mapping[str, Any]]] = None):

        super().__init__()
        self.audit_rows = load_audit_rows() if audit_rows is None else list(audit_rows)
        self.rows = [dict(r) for r in (rows if rows is not None else capstone_rows(audit_rows=self.audit_rows))]
        if not self.rows:
            raise ValueError("rows is empty: expected one row per registered method (capstone_rows())")
        self.source = "committed measurements"
        self.setting = W.Dropdown(options=SETTINGS_SHOWN, value="all", description="setting")
        self.button = W.Button(description="re-run live (about 30 s)", tooltip="run every method's quick profile now")
        self.button.on_click(lambda _b: self.guard(self.rerun))
        self.table = W.HTML()
        self.fig = go.FigureWidget(certified_frontier_figure(self.rows))
        self.observe(self.setting)
        self._layout(W.HBox([self.setting, self.button]), self.table, self.fig)
        self.refresh()

    def shown(self) -> list[dict[str, Any]]:
        """The rows the current setting filter shows."""
        check_choice("setting", self.setting.value, SETTINGS_SHOWN)
        return [r for r in self.rows if self.setting.value in ("all", r.get("setting"))]

    def rerun(self) -> None:
        """Run every registered method's quick profile now and show those rows."""
        # deferred: read when called (tests patch capstone_table.measure)
        from ..experiments.capstone_table import capstone_rows, measure

        self.status.value = "running every quick profile..."
        self.rows = capstone_rows(measure()["results"], audit_rows=self.audit_rows)
        self.source = "live run"
        self.refresh()

    def update(self) -> None:
        rows = self.shown()
        self.table.value = method_table_html(rows)
        new = certified_frontier_figure(rows)
        with self.fig.batch_update():
            self.fig.data = ()
            for tr in new.data:
                self.fig.add_trace(tr)
            self.fig.layout.annotations = new.layout.annotations
            self.fig.layout.shapes = new.layout.shapes
            self.fig.layout.xaxis.tickvals = new.layout.xaxis.tickvals
            self.fig.layout.xaxis.ticktext = new.layout.xaxis.ticktext
        works = sum(str(r.get("reading", "")).startswith("works") for r in rows)
        self.status.value = (f"{len(rows)} methods ({self.source}); {works} forget and stay useful under a sound "
                             "certificate")
