"""The front-end module a ``FigureWidget`` is rendered with: plotly's widget bundle, sent once per kernel and
evaluated once per page.

Every ``FigureWidget`` is an anywidget whose ``_esm`` trait is plotly's ~5 MB widget bundle (plotly.js and the
widget code). As plotly ships it, that text is part of *every* figure's synced state: each figure's comm-open
message carries 5 MB, the page imports it once per figure, and a reloaded page asks the kernel for all widget
states in one reply (six figures: 30 MB) that jupyterlab-manager must receive within 4 s, while each view waits
only 2 s for its model ("widget model not found"). anywidget also gives each model 2 s (a hard-coded
``AbortSignal.timeout(2000)``) to import its module and initialise; a model that misses the window never becomes
ready and drops every later message, so the figure stays blank or frozen. On a loaded 2-core machine both windows
were missed.

:func:`use_shared_bundle` gives the class a figure module of a few kilobytes, and makes each ``FigureWidget``
creation ensure the kernel holds one :class:`BundleCarrier`: a widget model with no view whose module carries the
bundle as a string. The carrier's ``initialize`` imports the bundle at most once per page (a promise shared
through ``globalThis`` under a key naming the bundle's hash); a figure's ``initialize`` returns at once, and
plotly's own ``initialize`` and ``render`` run, unchanged, once the bundle has loaded (a view waits for it).
Messages that reach a figure's model before then are lost to plotly's model (its handlers do not exist yet); each
change is followed by the full synced state (:func:`~unlearnkit.viz._payload.keep_widgets_synced`), which
supersedes them. A view drawn in between would start from the state before the lost messages and apply the later
ones on top (a bar chart cleared and refilled would show old and new bars; plotly's view ignores a new full
state), so when a message was lost before the bundle loaded, a view is drawn once the full state of the part it
edits (data, layout) has arrived, or after 3 s at the latest.
``UNLEARNKIT_WIDGET_BUNDLE=plotly`` keeps plotly's own module.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from typing import Any

import anywidget
import traitlets
from plotly.basewidget import BaseFigureWidget


_SLOT = """\
const KEY = Symbol.for("unlearnkit.plotly-widget.%(digest)s");

// one slot per page: the promise of plotly's module, resolved by whichever bundle carrier imports it first
function slot() {
  if (!globalThis[KEY]) {
    const s = { started: false };
    s.promise = new Promise((resolve) => { s.resolve = resolve; });
    globalThis[KEY] = s;
  }
  return globalThis[KEY];
}
"""

_CARRIER = _SLOT + """\
const SOURCE = %(source)s;

export default () => ({
  initialize() {
    const s = slot();
    if (s.started) return;
    s.started = true;
    const url = URL.createObjectURL(new Blob([SOURCE], { type: "text/javascript" }));
    import(url).then(
      (mod) => { URL.revokeObjectURL(url); s.resolve(mod.default); },
      (err) => { URL.revokeObjectURL(url); s.started = false; console.error("plotly's widget bundle", err); });
  },
});
"""

_FIGURE = _SLOT + """\

// plotly's change messages, by the part of the synced state each one edits
const DATA_MSGS = ["addTraces", "deleteTraces", "moveTraces", "restyle", "update", "animate", "removeTraceProps"];
const LAYOUT_MSGS = ["relayout", "update", "animate", "removeLayoutProps"];
const WAIT_MS = 3000;

export default () => {
  let widget;
  let started;
  let ready = false;
  const lost = { data: false, layout: false };
  let waiters = [];
  const settle = () => {
    if (!lost.data && !lost.layout) { waiters.forEach((w) => w()); waiters = []; }
  };
  return {
    initialize(ctx) {
      const model = ctx.model;
      // a message that reaches the model before plotly's own handlers exist is lost to it; the full state the
      // kernel sends after every change supersedes it
      for (const [part, msgs] of [["data", DATA_MSGS], ["layout", LAYOUT_MSGS]]) {
        for (const m of msgs) model.on("change:_py2js_" + m, () => { if (!ready) lost[part] = true; });
        model.on("change:_widget_" + part, () => { lost[part] = false; settle(); });
      }
      started = slot().promise.then((factory) => {
        widget = typeof factory === "function" ? factory() : factory;
        const out = widget.initialize ? widget.initialize(ctx) : undefined;
        ready = true;
        return out;
      });
    },
    async render(ctx) {
      await started;
      if (lost.data || lost.layout) {  // draw from the full state that follows the lost messages
        await new Promise((resolve) => { waiters.push(resolve); setTimeout(resolve, WAIT_MS); });
      }
      return widget.render(ctx);
    },
  };
};
"""


def _digest(bundle: str) -> str:
    return hashlib.sha1(bundle.encode()).hexdigest()[:16]


def carrier_module(bundle: str) -> str:
    """The module text of the bundle carrier: on ``initialize`` it imports ``bundle`` (an anywidget ES module),
    at most once per page, and hands its default export to every figure module of the same bundle."""
    return _CARRIER % {"source": json.dumps(bundle), "digest": _digest(bundle)}


def figure_module(bundle: str) -> str:
    """The module text of every ``FigureWidget``: a few kilobytes that wait for the carrier's import of
    ``bundle`` and then run plotly's own ``initialize`` and ``render``."""
    return _FIGURE % {"digest": _digest(bundle)}


class BundleCarrier(anywidget.AnyWidget):
    """A widget model with no view whose front-end module carries plotly's widget bundle; one per kernel
    (:func:`bundle_carrier`)."""

    _esm = traitlets.Unicode("").tag(sync=True)


_carrier: list[BundleCarrier] = []


def bundle_carrier() -> BundleCarrier:
    """The kernel's open bundle carrier, created (and its bundle sent) when there is none."""
    if not _BUNDLE:
        raise RuntimeError("no bundle carrier: use_shared_bundle() has not installed the figure module "
                           "(UNLEARNKIT_WIDGET_BUNDLE=plotly keeps plotly's own)")
    if not _carrier or _carrier[0].comm is None:
        _carrier[:] = [BundleCarrier(_esm=carrier_module(_BUNDLE[0]))]
    return _carrier[0]


_BUNDLE: list[str] = []


def _init_with_carrier(init: Any) -> Any:
    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        bundle_carrier()  # its model reaches the page before the figure's
        init(self, *args, **kwargs)

    return __init__


def use_shared_bundle() -> bool:
    """Give every ``FigureWidget`` created from now on the small figure module, and make each creation ensure
    the kernel has a bundle carrier; True when this call did so."""

    if os.environ.get("UNLEARNKIT_WIDGET_BUNDLE", "shared") == "plotly":
        return False
    esm = BaseFigureWidget.__dict__.get("_esm")  # anywidget's FileContents of plotly's bundle (str() reads it)
    if esm is None or "unlearnkit.plotly-widget." in str(esm)[:400]:
        return False
    _BUNDLE[:] = [str(esm)]
    BaseFigureWidget._esm = figure_module(_BUNDLE[0])
    BaseFigureWidget.__init__ = _init_with_carrier(BaseFigureWidget.__init__)
    return True
