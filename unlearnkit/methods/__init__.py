"""Unlearning methods: the baselines and one module per paper.

Methods know nothing of experiments: the runnable experiments live in :mod:`unlearnkit.experiments`, whose
table names them. The shared types (Request, TrainedState, Result, Cost, Certificate) live in
:mod:`unlearnkit.core` and are re-exported here for convenience.

Every method class has one entry point with one calling shape (``tests/test_calling_shape.py`` checks it)::

    Method().unlearn(state, request, config, *, generator, callback=None, progress=False) -> Result
"""

from ..core import Cost, Event, Request, Result, Stopwatch, TrainedState, Unlearner, emit
from .baselines import Finetune, FinetuneConfig, GradientAscent, GradientAscentConfig, Retrain, RetrainConfig
from .descend_rewind import D2D, R2D, D2DConfig, R2DConfig
from .newton import GossipRetrain, GossipRetrainConfig, Newton, NewtonConfig
from .noisy_finetune import (CleanFinetuneConfig, DPSGDConfig, GradientClipping, GradientClippingConfig, ModelClipping,
                             ModelClippingConfig, OutputPerturbation, OutputPerturbationConfig)
from .pdudt import PDUDT, PDUDTConfig
from .rrdu import (RRDU, DDPWalk, DDPWalkConfig, DPSGDWalk, DPSGDWalkConfig, FinetuneWalk, NoisyDDP, NoisyDDPConfig,
                   RetrainWalk, RRDUConfig, WalkConfig)

__all__ = [
    # the shared types (from unlearnkit.core)
    "Cost", "Event", "Request", "Result", "Stopwatch", "TrainedState", "Unlearner", "emit",
    # baselines
    "Retrain", "RetrainConfig", "Finetune", "FinetuneConfig", "GradientAscent", "GradientAscentConfig",
    # Descend or Rewind? (Mu & Klabjan 2025)
    "D2D", "D2DConfig", "R2D", "R2DConfig",
    # Certified Unlearning for Neural Networks (Koloskova et al. 2025)
    "GradientClipping", "GradientClippingConfig", "ModelClipping", "ModelClippingConfig", "OutputPerturbation",
    "OutputPerturbationConfig", "CleanFinetuneConfig", "DPSGDConfig",
    # RR-DU (Lamri & Maniatakos) and its walk baselines
    "RRDU", "RRDUConfig", "RetrainWalk", "FinetuneWalk", "DDPWalk", "DPSGDWalk", "WalkConfig", "DDPWalkConfig",
    "DPSGDWalkConfig", "NoisyDDP", "NoisyDDPConfig",
    # Newton/Fisher in decentralized FL (Wu et al. 2026)
    "Newton", "NewtonConfig", "GossipRetrain", "GossipRetrainConfig",
    # PDUDT (Qiao et al. 2025)
    "PDUDT", "PDUDTConfig",
]
