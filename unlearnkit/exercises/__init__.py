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

from .capstone import check_deployment
from .centralized import check_rewind_depth, check_small_sigma_settings
from .foundations import (check_best_gap_per_edge, check_classic_threshold, check_forgotten_class,
                          check_runnable_ring_walk, check_strict_ascent, classic_threshold)
from .networks import (accountant_c_epsilon, check_accountant_c_epsilon, check_clientwise_weight,
                       check_leaver_class_origin)

__all__ = ["check_classic_threshold", "check_best_gap_per_edge", "check_runnable_ring_walk", "check_forgotten_class",
           "check_strict_ascent", "check_rewind_depth", "check_small_sigma_settings", "check_accountant_c_epsilon",
           "check_clientwise_weight", "check_leaver_class_origin", "check_deployment", "classic_threshold",
           "accountant_c_epsilon"]
