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

from ...runtime import lazy_exports

__all__ = [
    "PDUDT", "PDUDTConfig",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "PDUDT": ".algorithm", "PDUDTConfig": ".algorithm",
})
