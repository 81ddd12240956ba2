"""Unlearning methods: the baselines and one module per paper.

Methods know nothing of experiments: the runnable experiments live in :mod:`unlearnkit.experiments`, whose
table names them. The shared types (Request, TrainedState, Result, Cost, Certificate) live in
:mod:`unlearnkit.core` and are re-exported here for convenience.

Every method class has one entry point with one calling shape (``tests/test_calling_shape.py`` checks it)::

    Method().unlearn(state, request, config, *, generator, callback=None, progress=False) -> Result
"""

from ..core import Cost, Event, Request, Result, Stopwatch, TrainedState, Unlearner, emit
from .baselines import Finetune, FinetuneConfig, GradientAscent, GradientAscentConfig, Retrain, RetrainConfig

__all__ = ["Cost", "Event", "Request", "Result", "Stopwatch", "TrainedState", "Unlearner", "emit",
           "Retrain", "RetrainConfig", "Finetune", "FinetuneConfig", "GradientAscent", "GradientAscentConfig"]
