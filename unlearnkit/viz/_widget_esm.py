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
Messages that reach a model before then are not replayed, which is harmless because each change is followed
by the full synced state (:func:`~unlearnkit.viz._payload.keep_widgets_synced`), and a view is built from that.
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

export default () => {
  let widget;
  let started;
  return {
    initialize(ctx) {
      started = load().then((factory) => {
        widget = typeof factory === "function" ? factory() : factory;
        return widget.initialize ? widget.initialize(ctx) : undefined;
      });
    },
    async render(ctx) {
      await started;
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
