"""The base every interactive explorer in the course builds on.

An explorer owns its controls (ipywidgets), one or more plotly ``FigureWidget``s, and an update method.
What it guarantees a student:

- **Bad input never dumps a traceback.** Every callback runs through :meth:`Explorer.guard`: a
  ``ValueError`` (our validation messages name the parameter, its value and the valid range) is shown in
  place in a red message box and the explorer keeps working; the last good figure stays on screen.
  Unexpected exceptions are shown the same way, with their type, and logged.
- **The message appears where the student looks**: right below the row of controls holding the control
  that caused it (a moved slider, a typed value); a message with no such control (a run button's run) below
  the last row of controls, above the figures.
- **Redraws are batched and throttled**: :meth:`Explorer.throttled` lets a live loop redraw at most
  ``max_fps`` times a second, and figure updates happen inside ``FigureWidget.batch_update()``.
- **Headless testing**: everything is plain Python state, so pytest can set ``explorer.slider.value = 3``
  and read ``explorer.fig.data[0].y`` back with no browser and no kernel.
"""

from __future__ import annotations

import html
import json
import logging
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import ipywidgets as W
from IPython.display import display

from ._payload import sync_widget
from ._style import readable
from ._typed import shown_value, typed_readouts


log = logging.getLogger("unlearnkit.viz")

#: width budget of one row of figures: a 1400 px JupyterLab window with the file browser open leaves about
#: 965 px to a cell's output (measured in the browser test's screenshot), two figures and their margins must fit
#: it; rows wrap (rather than clip) in narrower windows
ROW_PX = 940
#: what a row reserves for a box of controls placed beside its figures
_CONTROLS_PX = 300
#: below this a figure is unreadable: the row wraps instead
_MIN_FIG_PX = 300


def fit_rows(widget: W.Widget, budget: int = ROW_PX) -> None:
    """Make every row of figures fit ``budget`` pixels, recursively.

    A plotly ``FigureWidget`` without a width autosizes to its container, but inside an ``HBox`` it has none
    and falls back to 700 px: three side by side overflow the notebook and are cut off. Each row (``HBox``)
    holding figures gives them an equal share of the budget (less what its controls take) and wraps its
    children onto the next line when the window is narrower still.
    """
    children = list(getattr(widget, "children", ()) or ())
    if isinstance(widget, W.HBox):
        figs = [c for c in children if _is_figure(c)]
        if figs:
            others = len(children) - len(figs)
            share = max(_MIN_FIG_PX, (budget - others * _CONTROLS_PX) // len(figs))
            for f in figs:
                if f.layout.width is None or f.layout.width > share:
                    f.layout.width = share
            widget.layout.flex_flow = "row wrap"
    for c in children:
        if not _is_figure(c):
            fit_rows(c, budget)


def _is_figure(w: Any) -> bool:
    return type(w).__name__ == "FigureWidget"


class Explorer:
    """Base class: subclasses build ``self.controls`` and figures, then call ``self._layout(...)``.

    Subclass contract
    -----------------
    - build widgets and figures in ``__init__``, then call ``self.refresh()`` once;
    - register observers with ``self.observe(widget, self.refresh)`` (or any method): they are guarded;
    - implement ``update()``: read control values, compute, redraw; raise ``ValueError`` for bad input;
    - ``widget()`` returns the top-level box to display (notebooks just show the explorer itself).
    """

    max_fps: float = 10.0

    def __init__(self) -> None:
        self.message = W.HTML(value="", layout=W.Layout(min_height="0px"))
        self.status = W.HTML(value="")
        self.last_error: str | None = None
        self.n_updates = 0
        self._last_draw = 0.0
        self._box: W.Widget | None = None
        self._readouts: dict[str, W.Text] = {}
        self._slots: dict[int, W.HTML] = {}
        self._source: W.Widget | None = None
        self._shown: list[W.HTML] = []

    # -- error handling ------------------------------------------------------------------------------------
    def show_error(self, text: str, source: W.Widget | None = None) -> None:
        """Show ``text`` in the message box below the row of ``source`` (default: the control whose change is
        being handled; none: :attr:`message`, below the last row of controls)."""
        self.last_error = text
        for slot in self._shown:
            _set_slot(slot, "")
        slot = self._slots.get(id(source if source is not None else self._source), self.message)
        _set_slot(slot, (
            "<div style='color:#a00;background:#fee;border:1px solid #e99;padding:4px 8px;border-radius:4px'>"
            f"&#9888; {html.escape(text)}</div>"
        ))
        self._shown = [slot]

    def clear_error(self) -> None:
        self.last_error = None
        for slot in {id(s): s for s in [*self._shown, self.message]}.values():
            _set_slot(slot, "")
        self._shown = []

    def guard(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn``; show a ``ValueError`` (or anything else) in place instead of raising."""
        try:
            out = fn(*args, **kwargs)
        except ValueError as exc:
            self.show_error(str(exc))
            return None
        except Exception as exc:  # a widget must never die on a student
            log.exception("explorer update failed")
            self.show_error(f"{type(exc).__name__}: {exc}")
            return None
        self.clear_error()
        return out

    def observe(self, widget: W.Widget, fn: Callable[[], Any] | None = None, names: str = "value") -> None:
        """Call ``fn`` (default :meth:`refresh`) whenever ``widget``'s trait ``names`` changes, guarded."""
        fn = fn or self.update
        widget.observe(lambda _change: self._caused_by(widget, fn), names=names)

    def _caused_by(self, widget: W.Widget, fn: Callable[[], Any]) -> Any:
        before, self._source = self._source, widget
        try:
            return self.guard(self._counted, fn)
        finally:
            self._source = before

    def _counted(self, fn: Callable[[], Any]) -> Any:
        out = fn()
        self.n_updates += 1
        if self._box is not None:  # a redraw may have brought a figure builder's own width back
            fit_rows(self._box)
        for w in vars(self).values():  # an update may have switched an axis to log (or copied a layout)
            if _is_figure(w):
                readable(w)
        return out

    def refresh(self) -> None:
        """Recompute and redraw now (guarded)."""
        self.guard(self._counted, self.update)

    def update(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- throttling ----------------------------------------------------------------------------------------
    def throttled(self, force: bool = False) -> bool:
        """True when a live loop may redraw now (at most ``max_fps`` per second)."""
        now = time.perf_counter()
        if force or now - self._last_draw >= 1.0 / self.max_fps:
            self._last_draw = now
            return True
        return False

    # -- display -------------------------------------------------------------------------------------------
    def _layout(self, *children: W.Widget) -> W.Widget:
        self._defaults = W.HTML(value="", layout=W.Layout(display="none"))
        self._box = W.VBox([*children, self.status, self._defaults])
        self._box.add_class("uk-explorer")
        names = {id(w): name for name, w in _controls(self)}
        self._readouts = typed_readouts(self._box, names, self.show_error, self.clear_error)
        self._slots = _message_slots(self._box, _controls_and_buttons(self), self.message)
        for name, w in _controls(self):  # the browser test finds each control by its attribute name
            w.add_class(f"uk-ctl-{name}")
        _uncut_labels(self)
        _wrap_control_rows(self._box)
        fit_rows(self._box)
        return self._box

    def declared_defaults(self) -> dict[str, Any]:
        """Each control's value as the explorer is first shown (what the notebook's text describes)."""
        return {name: shown_value(w) for name, w in _controls(self)}

    def widget(self) -> W.Widget:
        if self._box is None:
            raise RuntimeError("the explorer did not build its layout")
        return self._box

    def _ipython_display_(self) -> None:

        for value in vars(self).values():  # a box never calls FigureWidget._repr_mimebundle_
            sync_widget(value)
        if self._box is not None and not self._defaults.value:  # rendered for the browser test to compare
            self._defaults.value = (f"<div class='uk-defaults' data-defaults='"
                                    f"{html.escape(json.dumps(self.declared_defaults()), quote=True)}'></div>")
        display(self.widget())


#: characters of a description that fit ipywidgets' default 80 px label, and of a button's 148 px face
_LABEL_CHARS, _BUTTON_CHARS = 11, 16


def _uncut_labels(ex: "Explorer") -> None:
    """Widen a control's label, or a button, whose text ipywidgets would cut with an ellipsis
    ("Dirichlet a...", "run RR-DU and D...")."""
    for w in vars(ex).values():
        if isinstance(w, W.Button):
            if len(w.description or "") + (2 if w.icon else 0) > _BUTTON_CHARS and w.layout.width is None:
                w.layout.width = "max-content"
        elif isinstance(w, W.Widget) and len(getattr(w, "description", "") or "") > _LABEL_CHARS:
            style = getattr(w, "style", None)
            if style is not None and not getattr(style, "description_width", None):
                style.description_width = "initial"


def _wrap_control_rows(w: W.Widget) -> None:
    """A row of several controls wraps onto the next line in a narrow window (a 1024 px laptop) instead of
    shrinking its sliders to a few pixels; a slider and its readout box stay together."""
    kids = list(getattr(w, "children", ()) or ())
    if not kids or _is_figure(w):
        return
    pair = len(kids) == 2 and isinstance(kids[0], W.ValueWidget) and isinstance(kids[1], W.Text)
    if isinstance(w, W.HBox) and len(kids) > 1 and not pair and not any(_is_figure(c) for c in kids):
        w.layout.flex_flow = "row wrap"
    for c in kids:
        _wrap_control_rows(c)


def _set_slot(slot: W.HTML, value: str) -> None:
    if slot.value != value:
        slot.value = value
    display = None if value else "none"
    if slot.layout.display != display:
        slot.layout.display = display


def _controls_and_buttons(ex: "Explorer") -> set[int]:
    return {id(w) for _name, w in _controls(ex)} | {id(w) for w in vars(ex).values() if isinstance(w, W.Button)}


def _message_slots(root: W.VBox, controls: set[int], last: W.HTML) -> dict[int, W.HTML]:
    """Put an (empty, hidden) message box below every row that holds controls; returns ``{id(control): box}``.

    A row is a child of a ``VBox`` (the explorer's own or a column of controls inside it) that contains one of
    ``controls`` not already served by a deeper column. The last box in document order is ``last`` (the
    explorer's general message box), so a message from no particular control shows below the last controls;
    without controls, ``last`` goes at the end of ``root``.
    """
    rows: dict[int, tuple[W.Box, int]] = {}  # id(control) -> (column, index of its row in the column)
    order: list[tuple[W.Box, int]] = []  # the rows, in document order

    def under(w: W.Widget) -> list[int]:
        found = [id(w)] if id(w) in controls else []
        if type(w).__name__ != "FigureWidget":
            for c in getattr(w, "children", ()) or ():
                found += under(c)
        return found

    def visit(w: W.Widget) -> None:
        kids = list(getattr(w, "children", ()) or ())
        if not kids or type(w).__name__ == "FigureWidget":
            return
        for i, c in enumerate(kids):
            visit(c)
            if isinstance(w, W.VBox):
                free = [k for k in under(c) if k not in rows]
                if free:
                    order.append((w, i))
                    rows.update({k: (w, i) for k in free})

    visit(root)
    boxes: dict[tuple[int, int], W.HTML] = {}
    for n, (col, i) in enumerate(order):
        boxes[(id(col), i)] = last if n == len(order) - 1 else W.HTML(
            value="", layout=W.Layout(min_height="0px", display="none"))
    _set_slot(last, last.value)
    by_column: dict[int, tuple[W.Box, list[int]]] = {}
    for col, i in order:
        by_column.setdefault(id(col), (col, []))[1].append(i)
    for col, at in by_column.values():
        kids = list(col.children)
        for i in sorted(at, reverse=True):
            kids.insert(i + 1, boxes[(id(col), i)])
        col.children = kids
    if not order:
        root.children = [*root.children[:-2], last, *root.children[-2:]]
    return {k: boxes[(id(col), i)] for k, (col, i) in rows.items()}


# read-outs, not controls: an update rewrites them anyway
_OUTPUTS = (W.HTML, W.HTMLMath, W.Label, W.Output)


def _controls(ex: Explorer) -> list[tuple[str, W.Widget]]:
    return [(name, w) for name, w in vars(ex).items()
            if isinstance(w, W.ValueWidget) and not isinstance(w, _OUTPUTS) and not _is_figure(w)]


@contextmanager
def driving(*explorers: Explorer) -> Iterator[None]:
    """Drive explorers from code (a notebook's check cell) and put them back as the student left them.

    A check cell that moves a displayed explorer's sliders changes what the student looks at; inside this
    block it may, and on leaving every control gets its previous value back (each restore redraws, as a
    student's move would) and the explorer redraws once more, so after Run All every explorer shows its
    documented default.
    """
    saved = [(ex, [(w, w.value) for _name, w in _controls(ex)]) for ex in explorers]
    try:
        yield
    finally:
        for ex, values in saved:
            for w, v in values:
                if w.value != v:
                    w.value = v
            if type(ex).update is not Explorer.update:  # run-button explorers redraw on their button only
                ex.refresh()
