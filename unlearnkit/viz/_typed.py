"""Typed values that are checked in the kernel, so a refusal is said in place.

An ipywidgets slider's editable readout clamps a typed value in the browser (0 clients became 2, epsilon 0
became 0.01, sigma -5 became 1e-4) and the kernel never sees what was typed, so nothing can say so.
:func:`typed_readouts` switches every slider's own readout off and puts a text box beside it: the text box
sends the raw text to the kernel, which sets the slider when the value is in range and otherwise shows a red
message naming the parameter, the typed value and the valid range, leaving the slider where it was.

A log slider moved in the browser reports ``base ** exponent`` at a point of its exponent grid (1.07152 for
10^0.03); :func:`round_log_value` replaces it, in the kernel, by the roundest number that the browser still
draws at the same grid point (1.07 on a grid of 0.01, 1.1 on a grid of 0.05, 3e-8 on a grid of 0.5), so the box
shows, and the explorer computes with, a value a student can read.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import ipywidgets as W


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


def round_log_value(s: W.Widget, v: float) -> float:
    """The roundest number that log slider ``s`` draws at the grid point nearest ``v``.

    The grid point is ``min + k * step`` in the exponent (the browser's handle positions). Candidates are tried
    from roundest to least round: one significant digit (2, 3e-8), then two ending in 5 (1.5, 25), then two
    (1.1), then three ending in 5, three, and so on; the first within the slider's range whose exponent lies
    within 0.45 step of the grid point wins, so the browser draws it at that point and a keyboard step from
    there reaches the next point (each point gets its own value). ``v`` itself when nothing fits.
    """
    if not (v > 0 and math.isfinite(v)) or not s.step or s.step <= 0:
        return v
    b = s.base
    n = math.floor((s.max - s.min) / s.step + 1e-9)
    k = min(max(round((math.log(v) / math.log(b) - s.min) / s.step), 0), n)
    g = s.min + k * s.step
    lo, hi = b ** s.min, b ** s.max
    target = b ** g
    e10 = math.floor(math.log10(target))
    for digits in range(1, 8):
        for unit in ((5, 1) if digits > 1 else (1,)):
            q = unit * 10.0 ** (e10 - digits + 1)
            near = sorted({math.floor(target / q), math.ceil(target / q)},
                          key=lambda m: abs(math.log(m * q) - math.log(target)))
            for m in near:
                c = float(f"{m * q:.{digits + 1}g}")
                if c > 0 and lo <= c <= hi and abs(math.log(c) / math.log(b) - g) < 0.45 * s.step:
                    return c
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
        s._register_validator(_log_validator, ["value"])
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


def _log_validator(obj: W.Widget, proposal: Any) -> float:
    """A log slider's value: rounded when the browser sent it (the value is then locked while it is set),
    else kept; clamped to the range either way, as the slider's own validator does."""
    v = proposal["value"]
    if "value" in obj._property_lock:
        v = round_log_value(obj, v)
    return min(max(v, obj.base ** obj.min), obj.base ** obj.max)


def typed_readouts(root: W.Widget, names: dict[int, str], show_error: Callable[[str, W.Widget], None],
                   clear_error: Callable[[], None]) -> dict[str, W.Text]:
    """Pair every slider under ``root`` with a kernel-checked text box (see the module docstring).

    ``names`` maps ``id(slider)`` to the explorer's attribute name (used when the slider has no description);
    returns ``{name: text box}``. Each slider is replaced in its parent box by ``HBox([slider, text])``;
    ``show_error(text, slider)`` shows a refusal (next to that slider).
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
                show_error(str(exc), s)
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
                           f"set to {s.value:g}", s)

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
