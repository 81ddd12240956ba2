"""Shared helpers of the exercise checkers: the verdict line, the None placeholder, number and name parsing."""

from __future__ import annotations

import math
from typing import Any, Optional


def verdict(ok: bool, text: str) -> bool:
    print(("Correct. " if ok else "Not yet. ") + text)
    return ok


def needs_answer(answer: Any) -> bool:
    if answer is None:
        print("Write your answer in place of None, then run the cell again.")
        return True
    return False


def as_number(answer: Any, what: str) -> Optional[float]:
    try:
        if isinstance(answer, bool):  # True would read as 1.0: a yes/no is not a number
            raise TypeError
        x = float(answer)
    except (TypeError, ValueError):
        print(f"Not yet. Expected a number for {what}, got {answer!r}.")
        return None
    if not math.isfinite(x):
        print(f"Not yet. {what} must be finite, got {answer!r}.")
        return None
    return x


def exercise_name(answer: Any) -> str:
    """A name answer, normalised: lower case, spaces, dashes and parentheses folded to one underscore."""
    text = str(answer).strip().lower()
    for ch in " -()/.,":
        text = text.replace(ch, "_")
    return "_".join(p for p in text.split("_") if p)
