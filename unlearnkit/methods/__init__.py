"""Unlearning methods: the baselines and one module per paper.

Methods know nothing of experiments: the runnable experiments live in :mod:`unlearnkit.experiments`, whose
table names them. The shared types (Request, TrainedState, Result, Cost, Certificate) live in
:mod:`unlearnkit.core` and are re-exported here for convenience.

Every method class has one entry point with one calling shape (``tests/test_calling_shape.py`` checks it)::

    Method().unlearn(state, request, config, *, generator, callback=None, progress=False) -> Result
"""

from ..runtime import lazy_exports

__all__ = [
    "Request", "TrainedState", "Result", "Unlearner", "Retrain", "RetrainConfig", "Finetune", "FinetuneConfig",
    "GradientAscent", "GradientAscentConfig", "R2D", "R2DConfig", "D2D", "D2DConfig", "GradientClipping",
    "GradientClippingConfig", "ModelClipping", "ModelClippingConfig", "OutputPerturbation",
    "OutputPerturbationConfig", "CleanFinetuneConfig", "DPSGDConfig", "RRDU", "RRDUConfig", "RetrainWalk",
    "FinetuneWalk", "DDPWalk", "DPSGDWalk", "WalkConfig", "DDPWalkConfig", "DPSGDWalkConfig", "NoisyDDP",
    "NoisyDDPConfig", "Newton", "NewtonConfig", "GossipRetrain", "GossipRetrainConfig", "PDUDT", "PDUDTConfig",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "Request": "..core", "TrainedState": "..core", "Result": "..core", "Unlearner": "..core", "Retrain": ".baselines",
    "RetrainConfig": ".baselines", "Finetune": ".baselines", "FinetuneConfig": ".baselines",
    "GradientAscent": ".baselines", "GradientAscentConfig": ".baselines", "R2D": ".descend_rewind.r2d",
    "R2DConfig": ".descend_rewind.r2d", "D2D": ".descend_rewind.d2d", "D2DConfig": ".descend_rewind.d2d",
    "GradientClipping": ".noisy_finetune.algorithms", "GradientClippingConfig": ".noisy_finetune.algorithms",
    "ModelClipping": ".noisy_finetune.algorithms", "ModelClippingConfig": ".noisy_finetune.algorithms",
    "OutputPerturbation": ".noisy_finetune.algorithms", "OutputPerturbationConfig": ".noisy_finetune.algorithms",
    "CleanFinetuneConfig": ".noisy_finetune.finetune", "DPSGDConfig": ".noisy_finetune.dpsgd",
    "RRDU": ".rrdu.algorithm", "RRDUConfig": ".rrdu.algorithm", "RetrainWalk": ".rrdu.baselines",
    "FinetuneWalk": ".rrdu.baselines", "DDPWalk": ".rrdu.baselines", "DPSGDWalk": ".rrdu.baselines",
    "WalkConfig": ".rrdu.baselines", "DDPWalkConfig": ".rrdu.baselines", "DPSGDWalkConfig": ".rrdu.baselines",
    "NoisyDDP": ".rrdu.noisy", "NoisyDDPConfig": ".rrdu.noisy", "Newton": ".newton.algorithm",
    "NewtonConfig": ".newton.config", "GossipRetrain": ".newton.training", "GossipRetrainConfig": ".newton.training",
    "PDUDT": ".pdudt.algorithm", "PDUDTConfig": ".pdudt.algorithm",
})
