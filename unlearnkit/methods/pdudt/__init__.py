"""PDUDT: unlearning a leaving client under dynamic topologies from cached gradients.

Qiao et al., "PDUDT: Provable Decentralized Unlearning under Dynamic Topologies", ICML 2025 (digest 002).

- :mod:`~unlearnkit.methods.pdudt.algorithm`: :class:`PDUDTConfig` and :class:`PDUDT` (Algorithm 2, lines
  9-16), the per-client noise :func:`client_noise`;
- :mod:`~unlearnkit.methods.pdudt.certify`: Theorem 4.9's gap bound and Corollary 4.10's noise and certificate
  (pure maths, paper and sound mode) and :func:`lemma_coverage`, which corrections that bound covers;
- :mod:`~unlearnkit.methods.pdudt.sound`: the sound calibration where Theorem 4.9's premises fail (a worst-case
  gradient-gossip sensitivity, :func:`gossip_sensitivity`, and its :func:`gossip_certificate`);
- Eqs. (7) to (9) (residuals, weights, correction, the retrain rules and correction scales) live in
  :mod:`unlearnkit.decentral.correction`, shared with the gradient-gossip caches, and are re-exported here.

Experiments (the paper's pipeline, profiles, sweeps, tables) are in :mod:`unlearnkit.experiments.pdudt.lab`;
the membership-inference metric of Table 3 is :func:`unlearnkit.evaluate.mia_precision`.
"""

from ...decentral.correction import (CORRECTION_SCALES, RETRAIN_RULES, correction, history_correction,
                                     reconstruct_models, residuals, retrain_mixing, round_weights)
from .algorithm import PDUDT, PDUDTConfig, client_noise, measured_rho, pdudt_plan
from .certify import (NOISE_MODES, GapBound, GapConstants, bun_steinke_epsilon, gap_bound, lemma_coverage,
                      pdudt_certificate, pdudt_sigma, step_size_limit)
from .sound import (SOUND_SCOPES, GossipSensitivity, GossipSmoothness, gossip_certificate, gossip_sensitivity,
                    sound_gossip_sigma)

__all__ = [
    "PDUDT", "PDUDTConfig", "client_noise", "measured_rho", "pdudt_plan",
    "NOISE_MODES", "GapConstants", "GapBound", "step_size_limit", "gap_bound", "bun_steinke_epsilon",
    "pdudt_sigma", "lemma_coverage", "pdudt_certificate",
    "SOUND_SCOPES", "GossipSmoothness", "GossipSensitivity", "gossip_sensitivity", "sound_gossip_sigma",
    "gossip_certificate",
    "RETRAIN_RULES", "CORRECTION_SCALES", "retrain_mixing", "residuals", "round_weights", "correction",
    "history_correction", "reconstruct_models",
]
