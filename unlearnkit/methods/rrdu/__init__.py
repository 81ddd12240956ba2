"""RR-DU (Lamri & Maniatakos, "Fully Decentralized Certified Unlearning"): random-walk unlearning.

- :mod:`.accountants`: every accountant (A-D, S, M) as an object in one table, and RR-DU's plan;
- :mod:`.certify`: the accountants A-D, the DDP calibrations and the per-observer ledger (pure maths);
- :mod:`.walk`: the clients' data seen from the walk, the routing, the full-batch expectations;
- :mod:`.algorithm`: :class:`RRDUConfig` and the method :class:`RRDU` (paper Algorithm 4);
- :mod:`.baselines`: the section-6 baselines on the token walk, each a class with ``unlearn(...)``;
- :mod:`.sound`, :mod:`.noisy`, :mod:`.noisy_start`: the sound replacements (issue 20): noisy training (the DDP
  baseline done right) and RR-DU's accountant ``"S"`` on a noisily trained start, with their threat model;
- :mod:`.mixture`: accountant ``"M"``, the per-visit Gaussian averaged over the random visit count;
- :mod:`.ledger`: the sound per-observer ledger of a realised walk (noisy start + u-steps, exact composition).

The backdoor experiment (Figure 1, Tables 3, 14-16) lives in :mod:`unlearnkit.experiments.rrdu.lab`.
"""

from .algorithm import RRDU, RRDUConfig
from .baselines import (DDPWalk, DDPWalkConfig, DPSGDWalk, DPSGDWalkConfig, FinetuneWalk, NetworkSGD, RetrainWalk,
                        WalkConfig)
from .accountants import (ACCOUNTANTS, Accountant, ClosedFormAccountant, MixtureAccountant, NoisyStartAccountant,
                          rrdu_plan)
from .certify import (CLOSED_FORM_ACCOUNTANTS, DDP_CALIBRATIONS, ObserverLedger, ddp_certify, ddp_sigma,
                      network_amplification,
                      observer_hit_prob, rrdu_certify, rrdu_epsilon, rrdu_sigma, visit_quantile)
from .ledger import SoundObserverLedger
from .mixture import (OBSERVERS, accountant_comparison, observer_visit_pmf, rrdu_mixture_certify, rrdu_mixture_epsilon,
                      rrdu_mixture_sigma, rrdu_visit_pmf)
from .noisy import NoisyDDP, NoisyDDPConfig, NoisyWalkConfig, NoisyWalkTraining
from .sound import noisy_walk_certify, noisy_walk_epsilon, noisy_walk_sigma, rrdu_noisy_start_certify
from .walk import VARIANTS, WalkData, expected_update, make_route, retrain_gradient

__all__ = [
    "RRDU", "RRDUConfig", "VARIANTS", "WalkData", "make_route", "expected_update", "retrain_gradient",
    "WalkConfig", "DDPWalkConfig", "DPSGDWalkConfig", "NetworkSGD", "RetrainWalk", "FinetuneWalk", "DDPWalk",
    "DPSGDWalk",
    "ACCOUNTANTS", "Accountant", "ClosedFormAccountant", "NoisyStartAccountant", "MixtureAccountant", "rrdu_plan",
    "CLOSED_FORM_ACCOUNTANTS", "DDP_CALIBRATIONS", "ObserverLedger", "ddp_certify", "ddp_sigma", "network_amplification",
    "observer_hit_prob", "rrdu_certify", "rrdu_epsilon", "rrdu_sigma", "visit_quantile",
    "NoisyWalkConfig", "NoisyWalkTraining", "NoisyDDPConfig", "NoisyDDP", "noisy_walk_certify", "noisy_walk_epsilon",
    "noisy_walk_sigma", "rrdu_noisy_start_certify",
    "OBSERVERS", "accountant_comparison", "observer_visit_pmf", "rrdu_mixture_certify", "rrdu_mixture_epsilon",
    "rrdu_mixture_sigma", "rrdu_visit_pmf", "SoundObserverLedger",
]
