"""Unlearning methods: the shared base types, the baselines and one module per paper.

Every module here registers its experiments with :func:`unlearnkit.experiments.register_method` when it is
imported; the registry imports them all on first use.
"""

from .base import Cost, Event, Request, Result, Stopwatch, TrainedState, Unlearner, emit

__all__ = ["Cost", "Event", "Request", "Result", "Stopwatch", "TrainedState", "Unlearner", "emit"]
