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

from .algorithm import Newton
from .config import NewtonConfig
from .certify import (NEWTON_PAPER, logistic_newton_constants, newton_certificate, paper_sensitivity, sound_sensitivity,
                      step_bounds)
from .plan import newton_plan
from .steps import newton_model_constants
from .training import GossipRetrain, GossipRetrainConfig, exact_minimizer, train_dpsgd

__all__ = ["NewtonConfig", "Newton", "logistic_newton_constants", "newton_model_constants", "paper_sensitivity",
           "sound_sensitivity", "step_bounds", "newton_certificate", "train_dpsgd", "GossipRetrain", "GossipRetrainConfig", "exact_minimizer", "NEWTON_PAPER", "newton_plan"]
