"""Seed bands on the course's frontier figures: the mean over seeds as a line, an interval around it as a band.

A frontier drawn from one seed shows a curve that wobbles by a few points from run to run; a method "works"
only where it works on several seeds. :func:`seed_interval` summarises the per-seed values of one point (a
95 % Student-t interval for the mean by default, or the range from the lowest to the highest seed), and
:func:`add_seed_band` draws a method's per-seed values: a translucent band (legend entry and hover name the
interval and the number of seeds) and the mean line, whose hover gives each point's interval.

The per-seed values come from the experiments' frontier functions (their ``seeds=`` argument), which return
rows whose metric is the mean over seeds and whose ``<metric>_seeds`` list holds one value per seed.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

import plotly.graph_objects as go

from .._validate import check_choice
from ..experiments.budget import t_interval


#: the intervals a band can show: ``"t95"`` (95 % Student-t interval for the mean) or ``"minmax"`` (the range)
INTERVALS = {"t95": "95 % t-interval", "minmax": "min-max range"}


def seed_interval(values: Sequence[float], interval: str = "t95") -> tuple[float, float, float]:
    """``(mean, low, high)`` of the per-seed ``values`` of one point (a single value gives ``(v, v, v)``).

    ``interval="t95"``: the 95 % Student-t interval for the mean over seeds; ``"minmax"``: the lowest and
    highest seed. Values that are ``None`` or not finite are left out."""
    check_choice("interval", interval, tuple(INTERVALS))
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not vals:
        raise ValueError("values has no finite entry: give one value per seed")
    if len(vals) == 1:
        return vals[0], vals[0], vals[0]
    if interval == "minmax":
        return sum(vals) / len(vals), min(vals), max(vals)
    return t_interval(vals, 0.95)


def interval_label(n_seeds: int, interval: str = "t95", unit: str = "seed") -> str:
    """What a band shows, for legends and hovers: ``"95 % t-interval over 3 seeds"`` (``unit`` names what
    the values are drawn over: seeds, trials, noise draws)."""
    check_choice("interval", interval, tuple(INTERVALS))
    return f"{INTERVALS[interval]} over {n_seeds} {unit}{'s' if n_seeds != 1 else ''}"


def seeds_text(seeds: Sequence[int], interval: str = "t95") -> str:
    """What a figure's bands are, for its title: ``"mean and 95 % t-interval over 3 seeds (seeds 0, 1, 2)"``,
    or ``"one run per point (seed 0), no band"``."""
    seeds = list(seeds)
    if len(seeds) < 2:
        return f"one run per point (seed {seeds[0] if seeds else '?'}), no band"
    return f"mean and {interval_label(len(seeds), interval)} (seeds {', '.join(str(s) for s in seeds)})"


def per_seed(row: Mapping[str, Any], key: str) -> list[float]:
    """The per-seed values of ``key`` in a frontier row (``row[key + "_seeds"]``, else ``[row[key]]``)."""
    vals = row.get(f"{key}_seeds")
    if vals is None:
        return [] if row.get(key) is None else [float(row[key])]
    return [float(v) for v in vals if v is not None]


def _rgba(color: str, alpha: float) -> str:
    c = color.lstrip("#")
    if len(c) == 6:
        return f"rgba({int(c[0:2], 16)},{int(c[2:4], 16)},{int(c[4:6], 16)},{alpha})"
    return color


def add_seed_band(fig: go.Figure, xs: Sequence[float], values: Sequence[Sequence[float]], *, name: str,
                  color: str, group: Optional[str] = None, dash: str = "solid", interval: str = "t95",
                  showlegend: bool = True, row: Optional[int] = None, col: Optional[int] = None,
                  x_label: str = "epsilon", digits: int = 3, unit: str = "seed",
                  floor: Optional[float] = None) -> None:
    """Draw one method's per-seed values at ``xs``: a band for the interval and the mean line on top.

    ``values[i]`` holds the per-seed values at ``xs[i]``. The band (drawn only where some point has two or
    more seeds) is named ``"<name>: 95 % t-interval over n seeds"`` and sits in the legend group of the line
    (``group``, default ``name``), so it takes the line's colour; the line's hover gives each point's mean
    and interval. ``row``/``col`` place both in a subplot."""
    group = group or name
    stats = [seed_interval(v, interval) for v in values]
    n = max((len([x for x in v if x is not None]) for v in values), default=0)
    label = interval_label(n, interval, unit)
    where = {} if row is None else {"row": row, "col": col}
    xs = [float(x) for x in xs]
    if n >= 2:
        lo, hi = [s[1] if floor is None else max(s[1], floor) for s in stats], [s[2] for s in stats]
        fig.add_trace(go.Scatter(x=xs + xs[::-1], y=hi + lo[::-1], fill="toself", mode="lines",
                                 line=dict(width=0, color=color), fillcolor=_rgba(color, 0.18),
                                 name=f"{name}: {label}", legendgroup=group, showlegend=showlegend,
                                 hoverinfo="name"), **where)
    hover = [f"{name}<br>{x_label} = {x:g}<br>mean {m:.{digits}f}"
             + (f", {label}: [{lo_:.{digits}f}, {hi_:.{digits}f}]" if n >= 2 else f" (one {unit})")
             for x, (m, lo_, hi_) in zip(xs, stats)]
    fig.add_trace(go.Scatter(x=xs, y=[s[0] for s in stats], mode="lines+markers",
                             name=f"{name} (mean)" if n >= 2 else name, legendgroup=group, showlegend=showlegend,
                             line=dict(color=color, dash=dash), marker=dict(color=color), hovertext=hover,
                             hoverinfo="text"), **where)
