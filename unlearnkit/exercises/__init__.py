"""Checkers for the course's exercises: call one on your answer, read the verdict (and a hint when it is off).

Each checker recomputes the right answer with the package where that is cheap (nothing is hard-coded that
the package can compute quickly; an answer that needs a long run is accepted within a range its docstring
justifies), prints a verdict and returns ``True`` or ``False``; it never raises on a wrong answer, so a
notebook keeps running. ``None`` (the notebooks' placeholder) asks for an answer. Hints target the common
wrong answers seen in class.

>>> check_classic_threshold(None)
Write your answer in place of None, then run the cell again.
False
"""

from ..runtime import lazy_exports

__all__: list[str] = []  # the checks are imported from their notebook's module (unlearnkit.exercises.foundations...)

__getattr__, __dir__ = lazy_exports(__name__, __all__, {})
