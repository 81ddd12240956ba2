"""The front-end module a ``FigureWidget`` is rendered with: plotly's widget bundle, evaluated once per page.

Every ``FigureWidget`` is an anywidget whose ``_esm`` trait holds plotly's ~5 MB widget bundle (plotly.js and the
widget code). The browser imports that text once *per figure* (each from its own blob URL, so nothing is shared),
and anywidget gives each figure's model 2 s (a hard-coded ``AbortSignal.timeout(2000)``) to import and
initialise. A model that misses the window never becomes ready; anywidget then drops every later message to
it, so the figure stays blank or frozen at its first state until the page is reloaded. With six figures in
one cell on a loaded 2-core machine the window was missed often.

:func:`use_shared_bundle` replaces the class's ``_esm`` with a small module that carries the bundle as a string
and imports it at most once per page (shared through ``globalThis`` under a key naming the bundle's hash). Its
``initialize`` returns at once, so every model is ready within the window however long the bundle takes;
plotly's own ``initialize`` and ``render`` run, unchanged, when the bundle has loaded (a view waits for it).
Messages that reach a model before then are lost to plotly's model (its handlers do not exist yet); each change
is followed by the full synced state (:func:`~unlearnkit.viz._payload.keep_widgets_synced`), which supersedes
them. A view drawn in between would start from the state before the lost messages and apply the later ones on top
(a bar chart cleared and refilled would show old and new bars; plotly's view ignores a new full state), so when a
message was lost before the bundle loaded, a view is drawn once the full state of the part it edits (data,
layout) has arrived, or after 3 s at the latest.
``UNLEARNKIT_WIDGET_BUNDLE=plotly`` keeps plotly's own module.
"""

from __future__ import annotations

import hashlib
import json
import os

from plotly.basewidget import BaseFigureWidget


_MODULE = """\
const KEY = Symbol.for("unlearnkit.plotly-widget.%(digest)s");
const SOURCE = %(source)s;

function load() {
  if (!globalThis[KEY]) {
    const url = URL.createObjectURL(new Blob([SOURCE], { type: "text/javascript" }));
    globalThis[KEY] = import(url).then(
      (mod) => { URL.revokeObjectURL(url); return mod.default; },
      (err) => { URL.revokeObjectURL(url); delete globalThis[KEY]; throw err; });
  }
  return globalThis[KEY];
}

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
      started = load().then((factory) => {
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


def shared_bundle_module(bundle: str) -> str:
    """The module text that imports ``bundle`` (an anywidget ES module) at most once per page."""
    digest = hashlib.sha1(bundle.encode()).hexdigest()[:16]
    return _MODULE % {"source": json.dumps(bundle), "digest": digest}


def use_shared_bundle() -> bool:
    """Give every ``FigureWidget`` created from now on the shared-bundle module; True when this call did so."""

    if os.environ.get("UNLEARNKIT_WIDGET_BUNDLE", "shared") == "plotly":
        return False
    esm = BaseFigureWidget.__dict__.get("_esm")  # anywidget's FileContents of plotly's bundle (str() reads it)
    if esm is None or "unlearnkit.plotly-widget." in str(esm)[:400]:
        return False
    BaseFigureWidget._esm = shared_bundle_module(str(esm))
    return True
