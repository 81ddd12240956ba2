"""Newton/Fisher certified unlearning in decentralized federated learning (Wu et al. 2026; digest 001).

- :mod:`~unlearnkit.methods.newton.certify`: constants, sensitivities and the certificate (pure, both modes);
- :mod:`~unlearnkit.methods.newton.config`: :class:`NewtonConfig`;
- :mod:`~unlearnkit.methods.newton.algorithm`: :class:`Newton` (Algorithm 1 and
  section IV-C: one Newton/Fisher correction per requester, noise, flooding, optional fine-tuning);
- :mod:`~unlearnkit.methods.newton.steps`: who requests, the curvature solve, the model's constants;
- :mod:`~unlearnkit.methods.newton.training`: D-PSGD training, the paper's retraining baseline (RT) and the
  exact convex oracle.

The flood itself is :func:`unlearnkit.graphs.flood`; the experiments (profiles, the paper's tables, the
convex lab of notebook 07) are in :mod:`unlearnkit.experiments.newton.lab`.
"""

from ...runtime import lazy_exports

__all__ = [
    "Newton", "NewtonConfig", "GossipRetrain", "GossipRetrainConfig",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "Newton": ".algorithm", "NewtonConfig": ".config", "GossipRetrain": ".training",
    "GossipRetrainConfig": ".training",
})
