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

from ._engine import ClientSampler, MixingSource, batched_loss_and_grad, consensus_distance
from .correction import retrain_matrices
from .mixer import MIX_KERNELS, GossipKernel
from .gradient_gossip import (GradientGossipConfig, HistoryCache, RunningSumCache, paper_storage_bytes,
                              gradient_gossip_round, run_gradient_gossip)
from .token import HopContext, TokenConfig, TokenOptimizer, netdp_sigma, run_netdp, run_token
from .many_walks import Walks, run_walks
from .gossip import GossipConfig, gossip_step, gossip_step_loop, run_gossip, simulate_averaging
from .network import Network, SimulatedNetwork
from .network_steps import LocalProblem, dpsgd_rounds, flooded_correction, gradient_gossip_rounds

__all__ = ["HopContext", "TokenConfig", "TokenOptimizer", "netdp_sigma", "run_netdp", "run_token", "Walks", "run_walks",
           "GradientGossipConfig", "HistoryCache", "RunningSumCache", "paper_storage_bytes", "retrain_matrices",
           "run_gradient_gossip", "gradient_gossip_round",
           "MIX_KERNELS", "GossipKernel",
           "ClientSampler", "MixingSource", "batched_loss_and_grad", "consensus_distance",
           "GossipConfig", "gossip_step", "gossip_step_loop", "run_gossip", "simulate_averaging",
           "Network", "SimulatedNetwork", "LocalProblem", "dpsgd_rounds", "gradient_gossip_rounds",
           "flooded_correction"]
