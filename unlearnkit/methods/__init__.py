"""Unlearning methods: the baselines and one module per paper.

Methods know nothing of experiments: the runnable experiments live in :mod:`unlearnkit.experiments`, whose
table names them. The shared types (Request, TrainedState, Result, Cost, Certificate) live in
:mod:`unlearnkit.core` and are re-exported here for convenience.
"""

from ..core import Cost, Event, Request, Result, Stopwatch, TrainedState, Unlearner, emit

__all__ = ["Cost", "Event", "Request", "Result", "Stopwatch", "TrainedState", "Unlearner", "emit"]
