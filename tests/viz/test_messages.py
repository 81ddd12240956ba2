"""A message appears right below the row of controls holding the control that caused it.

A typed out-of-range value, and a ``ValueError`` raised by the redraw a moved control started, show in the
message box that follows that control's row in its column (the explorer's own box or a column of controls),
not at the bottom of a tall explorer; every other message box stays empty and hidden, and the next good value
clears and hides it. A message from no control (a run button) shows below the last row of controls, above
the figures.
"""

from __future__ import annotations

import ipywidgets as W
import pytest
from _explorers import EXPLORERS

from unlearnkit.viz._explorer import _controls


def _path(root: W.Widget, target: W.Widget) -> list[W.Widget] | None:
    if root is target:
        return [root]
    if type(root).__name__ == "FigureWidget":
        return None
    for c in getattr(root, "children", ()) or ():
        p = _path(c, target)
        if p:
            return [root, *p]
    return None


def _box_below_row(root: W.Widget, control: W.Widget) -> W.Widget:
    """The widget right after ``control``'s row in the nearest column (``VBox``) holding it."""
    path = _path(root, control)
    assert path, "control not in the explorer's box"
    for parent, child in reversed(list(zip(path, path[1:]))):
        if isinstance(parent, W.VBox):
            kids = list(parent.children)
            return kids[kids.index(child) + 1]
    raise AssertionError("no column holds the control")


def _message_boxes(ex) -> list[W.HTML]:
    return list({id(b): b for b in [*ex._slots.values(), ex.message]}.values())


def _shown(ex) -> list[W.HTML]:
    return [b for b in _message_boxes(ex) if b.value or b.layout.display != "none"]


def _figures_before(root: W.Widget, box: W.Widget) -> bool:
    order: list[W.Widget] = []

    def walk(w):
        order.append(w)
        if type(w).__name__ != "FigureWidget":
            for c in getattr(w, "children", ()) or ():
                walk(c)
    walk(root)
    return any(type(w).__name__ == "FigureWidget" for w in order[:order.index(box)])


@pytest.mark.parametrize("label,name,build", EXPLORERS, ids=[c[0] for c in EXPLORERS])
def test_a_refused_value_is_said_below_its_control(label, name, build, digits):
    ex = build(digits)
    root = ex.widget()
    assert _shown(ex) == [], f"{label}: a message box is shown before any message"
    assert not _figures_before(root, ex.message), f"{label}: the general message box sits below a figure"
    sliders = {k: w for k, w in vars(ex).items() if k in ex._readouts}
    assert sliders or not ex._readouts
    for key, box in ex._readouts.items():
        s = sliders.get(key) or next(w for w in vars(ex).values() if getattr(w, "description", None) == key)
        box.value = "123456789"
        below = _box_below_row(root, s)
        assert ex.last_error and "123456789" in below.value, f"{label}: {key}'s refusal is not below its row"
        assert _shown(ex) == [below], f"{label}: {key}'s refusal shown in {len(_shown(ex))} boxes"
        box.value = box.value  # nothing changes
        s.value = s.value
        box.value = str(s.value) if not isinstance(s, W.IntSlider) else str(int(s.value))
    # an update that fails after a control moved: said below that control
    def fail(_fn):
        raise ValueError("the redraw refused this value")

    moved = 0
    for key, w in _controls(ex):
        new = _another(w)
        if new is None or getattr(w, "disabled", False):
            continue
        ex._counted = fail
        try:
            w.value = new
        finally:
            del ex._counted
        if ex.last_error is None:  # a control the explorer reads only when its run button is pressed
            continue
        below = _box_below_row(root, w)
        assert "the redraw refused" in below.value and _shown(ex) == [below], f"{label}: {key}'s error misplaced"
        ex.clear_error()
        assert _shown(ex) == []
        moved += 1
    assert moved or any(isinstance(w, W.Button) for w in vars(ex).values()), f"{label}: no control redraws"


def _another(w: W.Widget):
    if isinstance(w, (W.Dropdown, W.ToggleButtons, W.RadioButtons, W.SelectionSlider)):
        values = [o[1] if isinstance(o, tuple) else o for o in w.options]
        return next((v for v in values if v != w.value), None)
    if isinstance(w, W.Checkbox):
        return not w.value
    if isinstance(w, W.FloatLogSlider):
        return w.value * (w.base ** w.step) if w.value * (w.base ** w.step) <= w.base ** w.max \
            else w.value / (w.base ** w.step)
    if isinstance(w, (W.IntSlider, W.FloatSlider, W.BoundedIntText, W.BoundedFloatText)):
        step = w.step or 1
        return w.value + step if w.value + step <= w.max else w.value - step
    return None


def test_a_message_from_a_run_button_shows_below_the_last_controls():
    from unlearnkit.viz.rrdu import RRDUExplorer

    ex = RRDUExplorer(None, n_clients=6, seed=0)
    ex.run_button.click()  # no world to run: a ValueError, said in place
    assert ex.last_error and "world" in ex.message.value and _shown(ex) == [ex.message]
    assert _box_below_row(ex.widget(), ex.run_button) is ex.message
