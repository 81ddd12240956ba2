"""RR-DU (Lamri & Maniatakos, "Fully Decentralized Certified Unlearning"): random-walk unlearning.

- :mod:`.accountants`: every accountant (A-D, S, M) as an object in one table, and RR-DU's plan;
- :mod:`.certify`: the accountants A-D, the DDP calibrations and the per-observer ledger (pure maths);
- :mod:`.walk`: the clients' data seen from the walk, the routing, the full-batch expectations;
- :mod:`.algorithm`: :class:`RRDUConfig` and the method :class:`RRDU` (paper Algorithm 4);
- :mod:`.baselines`: the section-6 baselines on the token walk, each a class with ``unlearn(...)``;
- :mod:`.sound`, :mod:`.noisy`, :mod:`.noisy_start`: the sound replacements: noisy training (the DDP
  baseline done right) and RR-DU's accountant ``"S"`` on a noisily trained start, with their threat model;
- :mod:`.mixture`: accountant ``"M"``, the per-visit Gaussian averaged over the random visit count;
- :mod:`.ledger`: the sound per-observer ledger of a realised walk (noisy start + u-steps, exact composition).

The backdoor experiment (Figure 1, Tables 3, 14-16) lives in :mod:`unlearnkit.experiments.rrdu.lab`.
"""

from ...runtime import lazy_exports

__all__ = [
    "RRDU", "RRDUConfig", "RetrainWalk", "FinetuneWalk", "DDPWalk", "DPSGDWalk", "WalkConfig", "DDPWalkConfig",
    "DPSGDWalkConfig", "NoisyDDP", "NoisyDDPConfig",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "RRDU": ".algorithm", "RRDUConfig": ".algorithm", "RetrainWalk": ".baselines", "FinetuneWalk": ".baselines",
    "DDPWalk": ".baselines", "DPSGDWalk": ".baselines", "WalkConfig": ".baselines", "DDPWalkConfig": ".baselines",
    "DPSGDWalkConfig": ".baselines", "NoisyDDP": ".noisy", "NoisyDDPConfig": ".noisy",
})
