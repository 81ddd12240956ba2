"""Figures (pure: data -> plotly Figure) and interactive explorers for the course notebooks.

Modules are imported lazily: ``from unlearnkit.viz.dashboard import ForgettingDashboard`` or
``uk.viz.dashboard``. Each explorer subclasses :class:`unlearnkit.viz._explorer.Explorer`.
"""

from __future__ import annotations

from ..runtime import lazy_exports
from ._startup import skip_iri_grammar

skip_iri_grammar()  # before anything imports plotly's renderers (see _startup: about 2 s saved per notebook)

from ._explorer import Explorer, driving  # noqa: E402
from ._payload import keep_widgets_synced  # noqa: E402
from ._widget_esm import use_shared_bundle  # noqa: E402
from ._style import readable  # noqa: E402

keep_widgets_synced()  # every FigureWidget's synced state follows its figure (what a reloaded page draws)
use_shared_bundle()  # plotly's widget bundle is evaluated once per page, and no figure misses anywidget's 2 s

__all__ = ["Explorer", "driving", "readable"]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {})  # the figure modules load as themselves (uk.viz.dashboard)
