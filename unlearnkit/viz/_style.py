"""One look for every course figure: readable log axes, named legends, bounds that never flatten a plot.

- :func:`readable` labels the ticks of every log axis as powers of ten (``10^-7``). Plotly's default SI
  format printed ``100n``, ``10f`` and ``10B`` (billions), which students read as typos. An axis whose data
  spans :data:`DECADE_TICKS_FROM` to :data:`DECADE_TICKS_UP_TO` decades gets a tick per decade and nothing between (plotly's default
  there adds small "2" and "5" labels that read as stray numbers). Every figure builder
  is wrapped in :func:`styled`, and :class:`~unlearnkit.viz._explorer.Explorer` applies :func:`readable` to
  its figures after every redraw (an update may switch an axis to log).
- :func:`mark_bound` draws a bound as a marker only while it lies within :data:`OFF_SCALE` times the largest
  value the figure plots; a larger one (the nonconvex PSGD-R2D bound is about ``3e35``) would squash every
  curve into one pixel row on a log axis, so it becomes an annotation at the top edge that states its value.
- :func:`style_problems` is the checker the tests run on every figure the notebooks build.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Iterable, Optional, TypeVar

import plotly.graph_objects as go

__all__ = ["OFF_SCALE", "DECADE_TICKS_UP_TO", "readable", "styled", "mark_bound", "style_problems", "fmt_power"]

#: a bound more than this factor above the largest plotted value is annotated, not plotted
OFF_SCALE = 100.0
#: a log axis spanning 2 to this many decades is labelled at every decade only (wider ones plotly thins itself;
#: narrower ones keep plotly's 2-5 labels, else an epsilon grid of 0.5 to 8 would show the single tick "1")
DECADE_TICKS_UP_TO = 8.0
DECADE_TICKS_FROM = 2.0
#: tick formats a reader parses without knowing SI prefixes
_READABLE = ("power", "e", "E")

F = TypeVar("F", bound=Callable[..., Any])


def _axes(fig: Any) -> Iterable[Any]:
    lay = fig.layout
    for key in lay:  # plotly lists only the axes that exist (xaxis, xaxis2, ... for subplots)
        if key.startswith(("xaxis", "yaxis")) and lay[key] is not None:
            yield lay[key]


def readable(fig: Any) -> Any:
    """Label every log axis of ``fig`` (a ``Figure`` or ``FigureWidget``) in powers of ten, one tick per decade
    where its data spans :data:`DECADE_TICKS_FROM` to :data:`DECADE_TICKS_UP_TO` decades; returns ``fig``."""
    for ax in _axes(fig):
        if ax.type == "log" and ax.exponentformat not in _READABLE and ax.ticktext is None:
            ax.exponentformat = "power"
            ax.showexponent = "all"
        if ax.type == "log" and ax.tickvals is None and ax.dtick in (None, 1):
            span = _decades(fig, ax)
            want = 1 if span is not None and DECADE_TICKS_FROM <= span <= DECADE_TICKS_UP_TO else None
            if ax.dtick != want:
                ax.dtick = want
    return fig


def _decades(fig: Any, ax: Any) -> Optional[float]:
    """How many decades log axis ``ax`` shows: its fixed range, else the span of the positive values the
    traces on it plot (None when it plots none)."""
    if ax.range is not None and None not in tuple(ax.range):
        lo, hi = (float(v) for v in ax.range)
        return abs(hi - lo)
    letter = ax.plotly_name[0]
    ref = letter + ax.plotly_name[len(letter) + 4:]  # "yaxis2" -> "y2"
    values: list[float] = []
    for t in fig.data:
        if (getattr(t, f"{letter}axis", None) or letter) == ref and t.type in ("scatter", "scattergl", "bar"):
            values += [v for v in _numbers(getattr(t, letter, None)) if v > 0]
    if not values:
        return None
    return math.log10(max(values)) - math.log10(min(values))


def styled(builder: F) -> F:
    """Decorator for a figure builder: the figure it returns goes through :func:`readable`."""

    @functools.wraps(builder)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return readable(builder(*args, **kwargs))

    return wrapper  # type: ignore[return-value]


def fmt_power(v: float) -> str:
    """``2.9e+35`` as ``2.9 x 10^35`` (plain text, for hover and annotations)."""
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    e = math.floor(math.log10(abs(v)))
    return f"{v:.3g}" if -3 <= e <= 4 else f"{v / 10 ** e:.2g} x 10^{e}"


def mark_bound(fig: go.Figure, x: float, y: float, *, name: str, data_max: float,
               marker: Optional[dict] = None) -> bool:
    """Draw the bound ``(x, y)``: a named marker when ``y <= OFF_SCALE * data_max``, otherwise an annotation
    at the top of the plot, above ``x``, that gives its value ("off the scale"). Returns True when plotted."""
    if math.isfinite(y) and (not data_max > 0 or y <= OFF_SCALE * data_max):
        fig.add_scatter(x=[x], y=[y], mode="markers", name=name, marker=marker or {})
        return True
    fig.add_annotation(x=x, y=1.0, xref="x", yref="paper", yanchor="bottom", showarrow=True, ax=0, ay=18,
                       arrowhead=2, text=f"{name} = {fmt_power(y)} (off the scale)", font={"size": 10})
    return False


def style_problems(fig: Any, label: str = "figure") -> list[str]:
    """What a student would see as unreadable in ``fig``: log axes in SI format, legend entries with
    plotly's default names ("trace 0"), bound traces far above the data. Empty when all is well.

    Rules: every log axis uses a power or ``e`` exponent format (or explicit tick texts), and one spanning 2 to
    :data:`DECADE_TICKS_UP_TO` decades a tick per decade (``dtick=1``); every visible trace
    that appears in the legend has a name; a trace whose name contains "bound" has no y-value above
    :data:`OFF_SCALE` times the largest y-value of the other traces on the same axes.
    """
    out: list[str] = []
    for ax in _axes(fig):
        if ax.type == "log" and ax.exponentformat not in _READABLE and ax.ticktext is None:
            out.append(f"{label}: log axis {ax.plotly_name} has exponentformat {ax.exponentformat!r}")
        span = _decades(fig, ax) if ax.type == "log" and ax.tickvals is None else None
        if span is not None and DECADE_TICKS_FROM <= span <= DECADE_TICKS_UP_TO and ax.dtick != 1:
            out.append(f"{label}: log axis {ax.plotly_name} spans {span:.1f} decades without a tick per decade")
    data = list(fig.data)
    legend_on = fig.layout.showlegend
    shown = [t for t in data if t.visible in (None, True) and t.type not in ("heatmap", "table", "contour")]
    for t in shown:
        in_legend = t.showlegend is True or (t.showlegend is None and legend_on is not False
                                             and (legend_on is True or len(shown) > 1))
        if in_legend and not (t.name or "").strip():
            out.append(f"{label}: a {t.type} trace in the legend has no name (plotly shows 'trace N')")
    for t in data:
        if "bound" not in (t.name or "").lower() or getattr(t, "y", None) is None:
            continue
        axes = (getattr(t, "xaxis", None), getattr(t, "yaxis", None))
        others = [v for o in data if o is not t and (getattr(o, "xaxis", None), getattr(o, "yaxis", None)) == axes
                  and "bound" not in (o.name or "").lower() and getattr(o, "y", None) is not None
                  for v in _numbers(o.y)]
        top = max(others, default=0.0)
        worst = max(_numbers(t.y), default=0.0)
        if top > 0 and worst > OFF_SCALE * top:
            out.append(f"{label}: trace {t.name!r} plots {worst:.3g}, over {OFF_SCALE:g} x the data's {top:.3g}")
    return out


def _numbers(values: Any) -> list[float]:
    out = []
    for v in values if values is not None else ():
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f):
            out.append(f)
    return out
