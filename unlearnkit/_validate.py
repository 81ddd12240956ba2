"""Eager argument validation with messages that name the parameter, its value and the valid range.

Every public function and config dataclass in unlearnkit validates its inputs up front with these helpers,
so a student who drags a slider to a bad value reads *which* knob is wrong and what would be right,
instead of a shape error from deep inside a loop.
"""

from __future__ import annotations

import math
from typing import Any, Iterable


def _fmt(value: Any) -> str:
    return repr(value)


def check_finite(name: str, value: float) -> float:
    """Return ``float(value)`` or raise ``ValueError`` if it is NaN or infinite."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={_fmt(value)} is not a number") from None
    if not math.isfinite(v):
        raise ValueError(f"{name}={_fmt(value)} must be a finite number")
    return v


def check_positive(name: str, value: float, *, allow_zero: bool = False) -> float:
    """``value > 0`` (or ``>= 0`` with ``allow_zero``), finite."""
    v = check_finite(name, value)
    if v < 0 or (v == 0 and not allow_zero):
        rng = "[0, inf)" if allow_zero else "(0, inf)"
        raise ValueError(f"{name}={_fmt(value)} is out of range: expected {name} in {rng}")
    return v


def check_range(
    name: str,
    value: float,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Check ``low <= value <= high`` with optional open ends; the message gives the interval."""
    v = check_finite(name, value) if math.isfinite(high) or math.isfinite(low) else float(value)
    bad_low = v <= low if low_open else v < low
    bad_high = v >= high if high_open else v > high
    if bad_low or bad_high:
        lb = "(" if low_open else "["
        hb = ")" if high_open else "]"
        raise ValueError(f"{name}={_fmt(value)} is out of range: expected {name} in {lb}{low}, {high}{hb}")
    return v


def check_probability(name: str, value: float, *, allow_zero: bool = True, allow_one: bool = True) -> float:
    """A probability in [0, 1] (ends optionally open)."""
    return check_range(name, value, 0.0, 1.0, low_open=not allow_zero, high_open=not allow_one)


def check_int(name: str, value: Any, *, low: int | None = None, high: int | None = None) -> int:
    """An integer (bools rejected) within optional inclusive bounds."""
    if isinstance(value, bool) or not isinstance(value, (int,)) and not (
        hasattr(value, "__index__") and not isinstance(value, float)
    ):
        raise ValueError(f"{name}={_fmt(value)} must be an integer")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        lo = "-inf" if low is None else str(low)
        hi = "inf" if high is None else str(high)
        raise ValueError(f"{name}={_fmt(value)} is out of range: expected an integer in [{lo}, {hi}]")
    return v


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """``value`` must be one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name}={_fmt(value)} is not valid: expected one of {', '.join(map(repr, choices))}")
    return value
