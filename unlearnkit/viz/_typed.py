"""Typed values that are checked in the kernel, so a refusal is said in place.

An ipywidgets slider's editable readout clamps a typed value in the browser (0 clients became 2, epsilon 0
became 0.01, sigma -5 became 1e-4) and the kernel never sees what was typed, so nothing can say so.
:func:`typed_readouts` switches every slider's own readout off and puts a text box beside it: the text box
sends the raw text to the kernel, which sets the slider when the value is in range and otherwise shows a red
message naming the parameter, the typed value and the valid range, leaving the slider where it was.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import ipywidgets as W

__all__ = ["typed_readouts", "shown_value", "SLIDERS"]

#: sliders whose readout a student can type into
SLIDERS = (W.IntSlider, W.FloatSlider, W.FloatLogSlider)


def slider_range(s: W.Widget) -> tuple[float, float]:
    """The values a slider accepts (a log slider's ``min``/``max`` are exponents)."""
    if isinstance(s, W.FloatLogSlider):
        return s.base ** s.min, s.base ** s.max
    return s.min, s.max


def _fmt(s: W.Widget, v: Any) -> str:
    if isinstance(s, W.IntSlider):
        return str(int(v))
    f = getattr(s, "readout_format", "") or ".3g"
    text = format(float(v), f)
    try:  # the box shows the value the kernel computes with, never a rounded one (0.167, not "0.17")
        exact = abs(float(text) - float(v)) <= 1e-9 * max(abs(float(v)), 1e-300)
    except ValueError:
        exact = False
    return text if exact else f"{float(v):.6g}"


def shown_value(w: W.Widget) -> Any:
    """What the browser shows for control ``w`` (the text a readout box or dropdown displays), or None."""
    if isinstance(w, SLIDERS):
        return _fmt(w, w.value)
    if isinstance(w, (W.Dropdown, W.ToggleButtons, W.RadioButtons, W.SelectionSlider)):
        return w.label
    if isinstance(w, W.Checkbox):
        return bool(w.value)
    if isinstance(w, (W.IntText, W.FloatText, W.Text, W.BoundedIntText, W.BoundedFloatText)):
        return w.value
    return None  # a Play button and the like show no value


def check_typed(name: str, s: W.Widget, text: str) -> Any:
    """The value ``text`` asks slider ``s`` (parameter ``name``) for; ``ValueError`` naming the parameter,
    the value and the range when it is not a number of the slider's kind or lies outside the range."""
    lo, hi = slider_range(s)
    kind = "an integer" if isinstance(s, W.IntSlider) else "a number"
    expect = f"expected {kind} in [{_fmt(s, lo)}, {_fmt(s, hi)}]"
    raw = text.strip()
    try:
        v: Any = float(raw)
        if isinstance(s, W.IntSlider):
            if not v.is_integer():
                raise ValueError
            v = int(v)
    except (ValueError, OverflowError):
        raise ValueError(f"{name}={raw!r} is not {kind}: {expect}; it stays at {_fmt(s, s.value)}") from None
    if not (math.isfinite(v) and lo <= v <= hi):
        raise ValueError(f"{name}={raw} is out of range: {expect}; it stays at {_fmt(s, s.value)}")
    return v


def _on_grid(s: W.Widget, v: float) -> bool:
    k = (v - s.min) / s.step
    return abs(k - round(k)) < 1e-6


def _snap(s: W.Widget, v: float) -> Any:
    v = min(max(v, s.min), s.max)
    out = s.min + round((v - s.min) / s.step) * s.step
    return int(out) if isinstance(s, W.IntSlider) else round(out, 12)


def settle(s: W.Widget) -> None:
    """Make the browser leave slider ``s``'s value alone.

    The browser snaps a slider's value to its step grid and, when ``continuous_update`` is on, sends the
    snapped value back: q = 0.04 on a log slider with step 0.01 came back as 0.0398, and a check cell's
    value could come back after the restore (epsilon stayed at 3.02 instead of 1). A log slider therefore
    reports only when released (``continuous_update=False``: the kernel keeps exact values); a linear slider
    gets a finer step when its value is off the grid, and every value the kernel sets is snapped to the grid
    before it reaches the browser.
    """
    if isinstance(s, W.FloatLogSlider):
        s.continuous_update = False
        return
    if not s.step:
        return
    for _ in range(3):
        if _on_grid(s, s.value):
            break
        s.step = s.step / 10
    if not _on_grid(s, s.value):
        s.continuous_update = False
        return
    s._register_validator(lambda obj, proposal: _snap(obj, proposal["value"]), ["value"])


def typed_readouts(root: W.Widget, names: dict[int, str], show_error: Callable[[str], None],
                   clear_error: Callable[[], None]) -> dict[str, W.Text]:
    """Pair every slider under ``root`` with a kernel-checked text box (see the module docstring).

    ``names`` maps ``id(slider)`` to the explorer's attribute name (used when the slider has no description);
    returns ``{name: text box}``. Each slider is replaced in its parent box by ``HBox([slider, text])``.
    """
    out: dict[str, W.Text] = {}

    def pair(s: W.Widget) -> W.Widget:
        key = names.get(id(s), s.description or "value")
        label = s.description or key
        s.readout = False
        settle(s)
        box = W.Text(value=_fmt(s, s.value), continuous_update=False, layout=W.Layout(width="76px"))
        box.add_class(f"uk-readout-{key}")
        state = {"busy": False}

        def typed(change: dict) -> None:
            if state["busy"]:
                return
            try:
                v = check_typed(label, s, change["new"])
            except ValueError as exc:
                show_error(str(exc))
                return
            clear_error()
            state["busy"] = True
            try:
                s.value = v  # the slider's own observers redraw (and may clear the message box)
            finally:
                state["busy"] = False
            box.value = _fmt(s, s.value)
            if not isinstance(s, W.FloatLogSlider) and abs(s.value - v) > 1e-9 * max(abs(v), 1.0):
                show_error(f"{label}={change['new'].strip()} lies between the slider's steps of {s.step:g}: "
                           f"set to {s.value:g}")

        def moved(change: dict) -> None:
            state["busy"] = True
            try:
                box.value = _fmt(s, change["new"])
            finally:
                state["busy"] = False

        box.observe(typed, names="value")
        s.observe(moved, names="value")
        out[key] = box
        row = W.HBox([s, box], layout=W.Layout(align_items="center"))
        return row

    def walk(w: W.Widget) -> None:
        kids = list(getattr(w, "children", ()) or ())
        if not kids or type(w).__name__ == "FigureWidget":
            return
        new = [pair(c) if isinstance(c, SLIDERS) and c.readout else c for c in kids]
        if any(a is not b for a, b in zip(new, kids)):
            w.children = new
        for c in new:
            walk(c)

    walk(root)
    return out
