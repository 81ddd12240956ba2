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
- :func:`readable` also keeps the title clear of plotly's mode bar and inside the figure: the top
  :data:`MODEBAR_PX` pixels are left to the mode bar (it appears there on hover and covered titles), the title
  sits below them, wrapped onto more lines when it would run past the figure's width (a 490 px figure cut
  "per-client privacy ledger (epsilon of each vi"), and the top margin grows to hold it.
- :func:`readable` gives the traces of one legend group one colour: plotly colours traces by their index, so
  a method drawn in two subplots with one legend entry had a second colour that no legend entry explained.
- :func:`style_problems` is the checker the tests run on every figure the notebooks build.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Callable, Iterable, Optional, TypeVar

import plotly.graph_objects as go


#: a bound more than this factor above the largest plotted value is annotated, not plotted
OFF_SCALE = 100.0
#: a log axis spanning 2 to this many decades is labelled at every decade only (wider ones plotly thins itself;
#: narrower ones keep plotly's 2-5 labels, else an epsilon grid of 0.5 to 8 would show the single tick "1")
DECADE_TICKS_UP_TO = 8.0
DECADE_TICKS_FROM = 2.0
#: the band at the top of a figure left to plotly's mode bar
MODEBAR_PX = 32
#: a title line's height, in font sizes
_LINE = 1.3
#: the width a figure without one is drawn at (a notebook cell's output, file browser open)
_FIG_PX = 960
#: a line break the title wrapping made (plotly breaks at any ``<br ...>``); an author's ``<br>`` is kept
_WRAP = "<br >"
#: plotly's defaults: title font size, figure height, top margin
_TITLE_FONT, _HEIGHT, _TOP = 17, 450, 100
#: plotly's default colours, in its order
_COLORWAY = ("#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880", "#FF97FF",
             "#FECB52")
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
        if ax.type == "log":
            _narrow_log_ticks(fig, ax)
        if ax.type == "log" and ax.tickvals is None and ax.dtick in (None, 1):
            span = _decades(fig, ax)
            want = 1 if span is not None and DECADE_TICKS_FROM <= span <= DECADE_TICKS_UP_TO else None
            if ax.dtick != want:
                ax.dtick = want
    _legend_below(fig)
    _fit_title(fig)
    _one_colour_per_legend_group(fig)
    return fig


#: a figure narrower than this gets its legend below the plot (beside it, it took half the width)
LEGEND_BELOW_PX = 700


def _legend_entries(fig: Any) -> list[str]:
    lay, out, groups = fig.layout, [], set()
    shown = [t for t in fig.data if t.visible in (None, True) and t.type not in ("heatmap", "table", "contour")]
    for t in shown:
        on = t.showlegend is True or (t.showlegend is None and lay.showlegend is not False
                                      and (lay.showlegend is True or len(shown) > 1))
        if on and not (t.legendgroup and t.legendgroup in groups):
            out.append(_plain(t.name or ""))
            groups.add(t.legendgroup)
    return out


def _legend_below(fig: Any) -> None:
    """Put the legend of a figure narrower than :data:`LEGEND_BELOW_PX` in rows below the plot (the figure
    grows by the rows' height, the plot keeps its size), unless the figure places its legend itself."""
    lay = fig.layout
    meta = lay.meta if isinstance(lay.meta, dict) else {}
    mine = "uk_legend_px" in meta
    if not mine and (lay.legend.orientation is not None or lay.legend.x is not None or lay.legend.y is not None):
        return
    entries = _legend_entries(fig)
    if not lay.width or lay.width >= LEGEND_BELOW_PX or not entries:
        return
    rows, used = 1, 0.0
    for name in entries:
        w = 40 + 6.5 * len(name)
        if used and used + w > lay.width - 20:
            rows, used = rows + 1, 0.0
        used += w
    px = rows * 21 + 6
    old = int(meta.get("uk_legend_px", 0))
    if old != px:
        base_b = (lay.margin.b if lay.margin.b is not None else 80) - old
        lay.margin.b = base_b + px
        lay.height = (lay.height or _HEIGHT) - old + px
        lay.meta = {**meta, "uk_legend_px": px}
    _set(lay.legend, orientation="h", yref="container", y=0, yanchor="bottom", x=0, xanchor="left")


def title_lines(text: str, width_px: float, font_px: float = _TITLE_FONT) -> list[str]:
    """``text`` broken at spaces into lines that fit ``width_px`` at ``font_px``: an author's ``<br>`` is kept,
    a break this function made before (``<br >``) is undone first, so a wider figure gets fewer lines."""
    per_line = max(16, int(width_px / (0.58 * font_px)))
    out: list[str] = []
    for line in re.split(r"<br\s*/?>", text.replace(_WRAP, " ")):
        words, cur = line.split(" "), ""
        for w in words:
            if cur and len(_plain(cur + " " + w)) > per_line:
                out.append(cur)
                cur = w
            else:
                cur = f"{cur} {w}" if cur else w
        out.append(cur)
    return out


def _plain(text: str) -> str:
    return re.sub(r"<[^>]*>", "", text)


def _set(obj: Any, **values: Any) -> None:
    """Set only what differs (each change of a ``FigureWidget`` is a message to the browser)."""
    changed = {k: v for k, v in values.items() if obj[k] != v}
    if changed:
        obj.update(**changed)


def _fit_title(fig: Any) -> None:
    lay = fig.layout
    text = lay.title.text
    if not text or "<span" in text:
        return
    font = lay.title.font.size or _TITLE_FONT
    lines = title_lines(text, 0.92 * (lay.width or _FIG_PX), font)
    new = _WRAP.join(lines)
    if new != text:
        lay.title.text = new
    above = any((a.yref or "y") == "paper" and a.y is not None and a.y >= 0.99 for a in lay.annotations or ())
    top = MODEBAR_PX + int(len(lines) * font * _LINE) + (30 if above else 12)
    if (lay.margin.t if lay.margin.t is not None else _TOP) < top:
        lay.margin.t = top
    # plotly centres a title of several lines on its anchor: the anchor moves down by half the extra lines
    below = MODEBAR_PX + (len(lines) - 1) * font * _LINE / 2
    _set(lay.title, yref="container", yanchor="top", y=round(1 - below / (lay.height or _HEIGHT), 4))


def _trace_colour(t: Any) -> Any:
    if t.type == "bar":
        return t.marker.color
    return t.line.color or t.marker.color


def _one_colour_per_legend_group(fig: Any) -> None:
    """Give each legend group with several traces one colour (its first explicit one, else the next of the
    colorway); the other traces of such a figure take the following colours in order."""
    groups: dict[str, list[Any]] = {}
    for t in fig.data:
        if t.type in ("scatter", "scattergl", "bar") and t.legendgroup:
            groups.setdefault(t.legendgroup, []).append(t)
    if not any(len(g) > 1 for g in groups.values()):
        return
    way = list(fig.layout.colorway or fig.layout.template.layout.colorway or _COLORWAY)
    given: dict[Any, Any] = {}
    for i, t in enumerate(fig.data):
        if t.type not in ("scatter", "scattergl", "bar"):
            continue
        key = t.legendgroup if len(groups.get(t.legendgroup or "", ())) > 1 else ("trace", i)
        if key not in given:
            own = next((_trace_colour(o) for o in groups.get(key, ()) if isinstance(_trace_colour(o), str)), None)
            given[key] = own or way[len(given) % len(way)]
        if _trace_colour(t) is None:
            if t.type == "bar":
                t.marker.color = given[key]
            else:
                t.line.color = given[key]
                if t.marker.color is None:
                    t.marker.color = given[key]


def _narrow_log_ticks(fig: Any, ax: Any) -> None:
    """A log axis spanning less than :data:`DECADE_TICKS_FROM` decades is labelled at the 1-2-5 values in its
    range (0.5, 1, 2, 5 for an epsilon grid of 0.5 to 8; plotly printed 5 6 7 8 9 1 2 3 ... there). The ticks are
    recorded as ours in ``layout.meta`` and dropped again when a redraw widens the axis; an author's ticks stay."""
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    ours = list(meta.get("uk_ticks", []))
    name = ax.plotly_name
    if ax.tickvals is not None and name not in ours:
        return
    bounds = _log_bounds(fig, ax)
    vals: list[float] = []
    if bounds is not None and math.log10(bounds[1] / bounds[0]) < DECADE_TICKS_FROM:
        lo, hi = bounds
        decades = range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
        vals = [float(f"{m * 10.0 ** e:.1g}") for e in decades for m in (1, 2, 5)
                if lo * (1 - 1e-9) <= m * 10.0 ** e <= hi * (1 + 1e-9)]
    if len(vals) >= 2:
        if list(ax.tickvals or ()) != vals:
            ax.update(tickvals=vals, ticktext=[f"{v:g}" for v in vals], dtick=None)
        if name not in ours:
            fig.layout.meta = {**meta, "uk_ticks": [*ours, name]}
    elif name in ours:
        ax.update(tickvals=None, ticktext=None)
        fig.layout.meta = {**meta, "uk_ticks": [n for n in ours if n != name]}


def _log_bounds(fig: Any, ax: Any) -> Optional[tuple[float, float]]:
    """The smallest and largest value log axis ``ax`` shows: its fixed range, else the positive values the
    traces on it plot (None when it plots none)."""
    if ax.range is not None and None not in tuple(ax.range):
        lo, hi = sorted(float(v) for v in ax.range)
        return 10.0 ** lo, 10.0 ** hi
    letter = ax.plotly_name[0]
    ref = letter + ax.plotly_name[len(letter) + 4:]
    values = [v for t in fig.data if (getattr(t, f"{letter}axis", None) or letter) == ref
              and t.type in ("scatter", "scattergl", "bar") for v in _numbers(getattr(t, letter, None)) if v > 0]
    return (min(values), max(values)) if values else None


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
    :data:`DECADE_TICKS_UP_TO` decades a tick per decade (``dtick=1``); the traces of a legend group share one
    colour; a title fits the figure's width and sits below the mode bar's band; every visible trace
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
    groups: dict[str, set] = {}
    for t in data:
        if t.type in ("scatter", "scattergl", "bar") and t.legendgroup:
            c = _trace_colour(t)
            groups.setdefault(t.legendgroup, set()).add(c if isinstance(c, str) else repr(c))
    for g, colours in groups.items():
        if len(colours) > 1 or colours == {"None"} and sum(t.legendgroup == g for t in data) > 1:
            out.append(f"{label}: legend group {g!r} is drawn in {len(colours)} colours (one legend entry)")
    lay = fig.layout
    if lay.title.text:
        need = len(title_lines(lay.title.text, 0.92 * (lay.width or _FIG_PX), lay.title.font.size or _TITLE_FONT))
        if need > len(re.split(r"<br\s*/?>|<br >", lay.title.text)):
            out.append(f"{label}: title {lay.title.text!r} runs past the figure's {lay.width or _FIG_PX} px")
        if lay.title.yref != "container" or (lay.title.y or 1) > 1 - MODEBAR_PX / (lay.height or _HEIGHT) + 1e-3 \
                or (lay.margin.t if lay.margin.t is not None else _TOP) < MODEBAR_PX + need * _LINE * _TITLE_FONT:
            out.append(f"{label}: title {lay.title.text!r} sits under plotly's mode bar")
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
