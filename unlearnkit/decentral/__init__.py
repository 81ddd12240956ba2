"""Simulators of decentralized training, the whole network in one process.

- :mod:`~unlearnkit.decentral.gossip`: D-PSGD (parameter gossip), all clients as one ``(N, d)`` tensor,
  gradients by one ``vmap`` call, mixing by one matmul; a per-client loop reference.
- :mod:`~unlearnkit.decentral.mixer`: the gossip round ``X <- W X`` with its kernel (dense, circulant stencil,
  CSR) chosen by ``W``'s structure and size, for networks of up to millions of clients.
- :mod:`~unlearnkit.decentral.gradient_gossip`: gradient-gossip DSGD as PDUDT trains, with the per-client
  caches PDUDT's correction needs (running sums in O(N d) per client, or the full history);
  :mod:`~unlearnkit.decentral.correction`: PDUDT's Eqs. (7) to (9), the one copy the caches and the
  unlearner share.
- :mod:`~unlearnkit.decentral.token`: random-walk token SGD (RR-DU's Algorithm 2) and the noisy projected
  NetDP variant (Algorithm 3), with a per-hop hook for custom steps at chosen clients.
- :mod:`~unlearnkit.decentral.network`: the network interface (gossip round, walk, flood, per-client
  generators) shared with :mod:`unlearnkit.distributed`, and :class:`SimulatedNetwork`, its in-process
  implementation; :mod:`~unlearnkit.decentral.network_steps`: D-PSGD, gradient gossip and Newton/Fisher's
  flooded correction written once against it, for either runtime.
"""

from ..runtime import lazy_exports

__all__ = [
    "GossipConfig", "run_gossip", "TokenConfig", "run_token", "run_walks", "GradientGossipConfig",
    "run_gradient_gossip", "SimulatedNetwork",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "GossipConfig": ".gossip", "run_gossip": ".gossip", "TokenConfig": ".token", "run_token": ".token",
    "run_walks": ".many_walks", "GradientGossipConfig": ".gradient_gossip", "run_gradient_gossip": ".gradient_gossip",
    "SimulatedNetwork": ".network",
})
