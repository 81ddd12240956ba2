"""Every log slider of every explorer shows, and computes with, a round value after a move in the browser.

The browser sends a log slider's value as ``base ** exponent`` at a point of the exponent grid (a keyboard step
from 1 on a grid of 0.05 sent 1.41254). The kernel replaces it by the roundest number drawn at the same grid
point (:func:`unlearnkit.viz._typed.round_log_value`), sends that back, and the readout box shows it. Checked
here for each grid point of each log slider (pure function), and by replaying what the browser sends for a few
keyboard steps on each explorer (kernel value, echo, readout box, redraw). Values set from code are kept exactly.
"""

from __future__ import annotations

import ast
import math
import os
from pathlib import Path

import ipywidgets as W
import pytest

os.environ.setdefault("UNLEARNKIT_QUICK", "1")

from _explorers import EXPLORERS  # noqa: E402

from unlearnkit.viz._typed import round_log_value, settle  # noqa: E402

VIZ = Path(__file__).resolve().parents[2] / "unlearnkit" / "viz"

LOG_SLIDER_CLASSES = {"PartitionExplorer", "GaussianExplorer", "RenyiExplorer", "CalibratorExplorer", "SigmaExplorer",
                      "CalibrationExplorer", "RRDUExplorer", "CurvatureExplorer", "NewtonNoiseExplorer",
                      "PDUDTNoiseExplorer", "AuditCeilingExplorer", "PLDBracketExplorer"}
CATALOGUE = [c for c in EXPLORERS if c[1] in LOG_SLIDER_CLASSES]


def _log_sliders(ex) -> dict[str, W.FloatLogSlider]:
    return {k: w for k, w in vars(ex).items() if isinstance(w, W.FloatLogSlider)}


def _significant_digits(v: float) -> int:
    return len(f"{v:.10e}".split("e")[0].replace(".", "").rstrip("0"))


def _grid_point(s: W.FloatLogSlider, v: float) -> int:
    return round((math.log(v) / math.log(s.base) - s.min) / s.step)


def test_every_explorer_with_a_log_slider_is_checked():
    """The catalogue holds every class in ``unlearnkit/viz`` that builds a ``FloatLogSlider``."""
    found = set()
    for path in VIZ.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and "FloatLogSlider(" in ast.unparse(node):
                found.add(node.name)
    assert found == LOG_SLIDER_CLASSES == {name for _label, name, _build in CATALOGUE}


@pytest.mark.parametrize("label,name,build", CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_log_sliders_round_every_grid_point_and_keyboard_steps(label, name, build, digits):
    ex = build(digits)
    assert type(ex).__name__ == name and ex.last_error is None
    sliders = _log_sliders(ex)
    assert sliders, f"{label}: no log slider"
    for key, s in sliders.items():
        # every grid point: a round value, in range, drawn at that grid point, distinct from its neighbours'
        n = math.floor((s.max - s.min) / s.step + 1e-9)
        lo, hi = s.base ** s.min, s.base ** s.max
        most = 2 if s.step >= 0.05 - 1e-12 else 3
        values = []
        for k in range(n + 1):
            v = round_log_value(s, s.base ** (s.min + k * s.step))
            assert lo <= v <= hi, f"{label}.{key}: {v} outside [{lo}, {hi}]"
            assert _grid_point(s, v) == k, f"{label}.{key}: {v} is drawn off its grid point {k}"
            assert _significant_digits(v) <= most, f"{label}.{key}: {v} has more than {most} significant digits"
            values.append(v)
        assert len(set(values)) == len(values)
        # keyboard steps as the browser sends them: the kernel keeps a round value, echoes it, the box shows it
        box = ex._readouts.get(key) or ex._readouts[s.description]
        sent: list[dict] = []
        s._send = lambda msg, buffers=None: sent.append(msg)
        k0 = _grid_point(s, s.value)
        for k in (k0 + 1, k0 + 2, k0 + 1, k0 - 1):
            k = min(max(k, 0), n)
            browser = s.base ** (s.min + k * s.step)
            updates = ex.n_updates
            sent.clear()
            s.set_state({"value": browser})
            assert _significant_digits(s.value) <= most and _grid_point(s, s.value) == k, \
                f"{label}.{key}: the browser sent {browser}, the kernel kept {s.value}"
            assert sent[-1]["state"] == {"value": s.value} or s.value == browser
            assert float(box.value) == s.value and len(box.value) <= 8, f"{label}.{key}: box shows {box.value!r}"
            assert ex.n_updates > updates or s.value == browser, f"{label}.{key}: no redraw"
        del s._send
        # a value set from code (a check cell, a typed value) is kept as it is
        s.value = lo * 1.2345678
        assert s.value == lo * 1.2345678


def test_a_typed_value_is_kept_and_an_off_grid_default_stays():
    s = W.FloatLogSlider(value=0.04, base=10, min=-4, max=0, step=0.05)
    settle(s)
    assert s.value == 0.04 and s.continuous_update is False
    s.set_state({"value": 10 ** -1.35})  # one keyboard step right of 0.04 (drawn at -1.4)
    assert s.value == 0.045
    s.set_state({"value": 10 ** 0.0})
    assert s.value == 1.0
    s.value = 0.0123
    assert s.value == 0.0123
    s.value = 5.0  # out of range from code: clamped, as the slider itself does
    assert s.value == 1.0
