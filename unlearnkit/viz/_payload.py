"""What a figure sends to the browser: plain JSON lists, and a widget state that matches the Python side.

Two causes made the decentralized graph views draw no nodes in JupyterLab while headless
tests, which read the Python objects, saw the data:

1. ``FigureWidget`` sends 1-D float numpy arrays as binary buffers (``plotly.serializers._py_to_js``) that the
   anywidget front end rebuilds as typed arrays; buffers restored from the kernel (a page reload, a reopened
   notebook) can come back empty, so the node trace arrived with ``x = null``. Edge traces (Python lists with
   ``None`` gaps) went as JSON and survived. :func:`plain_figure` turns every numpy array in a figure's traces
   into a plain list (NaN as ``None``, numpy scalars as Python numbers), so nothing travels as a buffer.
2. A ``FigureWidget``'s synced state (``_widget_data``, ``_widget_layout``: what a view is built from, and what
   the kernel hands a reloaded page or a second tab) is written only when the widget is created. Every later
   change (``fig.data = ()``, ``add_trace``, a restyle, a ``batch_update``) goes out as a one-shot message to
   the views alive at that moment, so a view created later showed the figure as it was first built.
   :func:`sync_widget` copies the current figure (as plain JSON) into the synced state, and
   :func:`keep_widgets_synced` makes every ``FigureWidget`` call it after each change it sends: outside a
   ``batch_update`` after the message, inside one once the batch ends. Plotly's front end applies the messages
   to the views it has and ignores a new ``_widget_data`` (its model's ``do_data`` does nothing), so a live view
   draws each change once and a later view starts from the current figure.

   A view reports back the values it computed ("defaults"); plotly's handler then *removed* every reported
   property from the figure (``_remove_overlapping_props``), including data a view happened to report: notebook
   01's dashed retraining lines lost their ``y`` that way, and a reloaded page drew them as diagonals.
   :func:`keep_widgets_synced` turns that removal off; the defaults are still recorded, the figure keeps its
   values.
"""

from __future__ import annotations

import functools
import math
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np
import plotly.graph_objects as go
from plotly.basewidget import BaseFigureWidget


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
    """Copy a ``FigureWidget``'s current traces and layout, as plain JSON, into its synced state (what a new view
    renders). Assigning the traits sends them to the front end when they changed; equal values send nothing."""
    if isinstance(fw, go.FigureWidget):
        fw._uk_unsynced = False
        fw._widget_data = plain(fw._data)
        fw._widget_layout = plain(fw._layout_obj._props)


# the BaseFigureWidget methods that send a change to the views (each runs after the Python figure changed)
_SENDERS = ("_send_addTraces_msg", "_send_deleteTraces_msg", "_send_moveTraces_msg", "_send_restyle_msg",
            "_send_relayout_msg", "_send_update_msg", "_send_animate_msg")
_BATCHES = ("batch_update", "batch_animate")


def _after_send(method: Any) -> Any:
    @functools.wraps(method)
    def send(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = method(self, *args, **kwargs)
        if self._in_batch_mode:
            self._uk_unsynced = True
        else:
            sync_widget(self)
        return out

    send._uk_synced = True  # type: ignore[attr-defined]
    return send


def _syncing_batch(method: Any) -> Any:
    @functools.wraps(method)
    @contextmanager
    def batch(self: Any, *args: Any, **kwargs: Any) -> Iterator[None]:
        outer = not self._in_batch_mode
        try:
            with method(self, *args, **kwargs):
                yield
        finally:  # adds and deletes inside the batch went out as they happened; the restyles went out just now
            if outer and getattr(self, "_uk_unsynced", False):
                sync_widget(self)

    batch._uk_synced = True  # type: ignore[attr-defined]
    return batch


def keep_widgets_synced() -> bool:
    """Make every ``FigureWidget`` keep its synced state equal to the figure after each change; True when this
    call installed it (``unlearnkit.viz`` calls it on import; later calls do nothing)."""

    if getattr(BaseFigureWidget._send_addTraces_msg, "_uk_synced", False):
        return False
    for name in _SENDERS:
        setattr(BaseFigureWidget, name, _after_send(getattr(BaseFigureWidget, name)))
    for name in _BATCHES:
        setattr(BaseFigureWidget, name, _syncing_batch(getattr(BaseFigureWidget, name)))
    BaseFigureWidget._remove_overlapping_props = staticmethod(_keep_props)
    return True


def _keep_props(input_data: Any, delta_data: Any, prop_path: tuple = ()) -> list:
    """Stands in for plotly's ``_remove_overlapping_props``: a value a view reports stays in the figure."""
    return []


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
