"""What a figure sends to the browser: plain JSON lists, and a widget state that matches the Python side.

Two causes made the decentralized graph views draw no nodes in JupyterLab (issue 19, finding 1) while headless
tests, which read the Python objects, saw the data:

1. ``FigureWidget`` sends 1-D float numpy arrays as binary buffers (``plotly.serializers._py_to_js``) that the
   anywidget front end rebuilds as typed arrays; buffers restored from the kernel (a page reload, a reopened
   notebook) can come back empty, so the node trace arrived with ``x = null``. Edge traces (Python lists with
   ``None`` gaps) went as JSON and survived. :func:`plain_figure` turns every numpy array in a figure's traces
   into a plain list (NaN as ``None``, numpy scalars as Python numbers), so nothing travels as a buffer.
2. An explorer is displayed as an ``ipywidgets`` box, so plotly's ``FigureWidget._repr_mimebundle_`` (which
   copies the figure into the synced ``_widget_data``) never runs: the browser built the figure from the state
   at construction, and the restyle messages sent before the view existed were lost. :func:`sync_widget` copies
   the current figure into the synced state; :class:`~unlearnkit.viz._explorer.Explorer` calls it on display.
"""

from __future__ import annotations

import math
from copy import deepcopy
from typing import Any

import numpy as np
import plotly.graph_objects as go

__all__ = ["plain", "plain_figure", "sync_widget", "payload_problems"]


def plain(v: Any) -> Any:
    """``v`` with every numpy array/scalar and tuple turned into Python lists/numbers; NaN and inf become ``None``
    (plotly draws ``None`` as a gap, like NaN, and strict JSON has no NaN)."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def plain_figure(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` whose traces are rebuilt from :func:`plain` values (plotly skips assigning a value equal
    to the current one, so the traces are rebuilt rather than updated)."""
    return go.Figure(data=[plain(tr.to_plotly_json()) for tr in fig.data], layout=fig.layout)


def sync_widget(fw: Any) -> None:
    """Copy a ``FigureWidget``'s current traces and layout into its synced state (what a new view renders)."""
    if isinstance(fw, go.FigureWidget):
        fw._widget_data = deepcopy(fw._data)
        fw._widget_layout = deepcopy(fw._layout_obj._props)


def payload_problems(fig: Any, where: str = "fig") -> list[str]:
    """Every trace value of ``fig`` (or of a ``FigureWidget``'s synced state) that would not reach the browser as
    plain JSON: numpy arrays (binary buffers, or ``null`` for object dtype), numpy scalars, NaN."""
    out: list[str] = []

    def walk(v: Any, path: str) -> None:
        if isinstance(v, np.ndarray):
            out.append(f"{path}: numpy array dtype={v.dtype}")
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{path}.{k}")
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                walk(x, f"{path}[{i}]")
                if len(out) > 20:
                    return
        elif isinstance(v, np.generic):
            out.append(f"{path}: numpy scalar {type(v).__name__}")
        elif isinstance(v, float) and not math.isfinite(v):
            out.append(f"{path}: {v}")

    data = fig._widget_data if isinstance(fig, go.FigureWidget) else fig._data
    for i, tr in enumerate(data):
        walk(tr, f"{where}.data[{i}]({tr.get('name')})")
    return out
