"""Real decentralized runs: one process per client over ``torch.distributed`` (gloo on CPU by default).

The simulators in :mod:`unlearnkit.decentral` hold the whole network in one process as an ``(N, d)``
tensor. Here each client is a rank that holds only its own vector, and every exchange is a real message:

- :mod:`~unlearnkit.distributed.network`: :class:`ProcessGroupNetwork`, this rank's view of the network:
  neighbour gossip with ``isend``/``irecv`` (one D-PSGD round ``x_i <- sum_j W_ij x_j``), the walk token
  (send to the next client, receive from any, a clean stop), flooding (Newton/Fisher's broadcast) and a
  per-rank :class:`MessageLog`. It satisfies :class:`unlearnkit.decentral.network.Network`, so the steps of
  :mod:`unlearnkit.decentral.network_steps` (D-PSGD with local steps, PDUDT's gradient gossip over
  per-round neighbour sets, the flooded Newton correction) run here as they run in
  :class:`~unlearnkit.decentral.SimulatedNetwork`: ``spawn(dpsgd_task, 4, problem, graph, rounds, lr)``.
- :mod:`~unlearnkit.distributed.seeds`: one seed -> one generator per client and stream, identical in a
  process group and in the one-process references.
- :mod:`~unlearnkit.distributed.tasks`: gossip averaging, flooding and a token walk as rank tasks, with
  references.
- :mod:`~unlearnkit.distributed.token_sgd`: Network-SGD's hop on real data, each rank loading only its own
  client's samples; equal to :func:`unlearnkit.decentral.run_token` with the same hop rule.
- :mod:`~unlearnkit.distributed.launch`: :func:`spawn` (from Python or a notebook) and
  :func:`launch_torchrun`, both with a wall-clock timeout that stops every rank.
- :mod:`~unlearnkit.distributed.run`: the worker module that ``torchrun`` starts.

Launching
---------
One machine, four ranks (``--standalone`` picks a free local rendezvous port)::

    torchrun --standalone --nproc-per-node=4 -m unlearnkit.distributed.run gossip --topology ring --rounds 20
    torchrun --standalone --nproc-per-node=4 -m unlearnkit.distributed.run walk --hops 50 --route-kind rrdu --u 0
    torchrun --standalone --nproc-per-node=4 -m unlearnkit.distributed.run gossip --schedule random_k_out --rounds 20
    torchrun --standalone --nproc-per-node=4 -m unlearnkit.distributed.run flood --topology ring --reduce mean

From Python or a notebook (the task function must live in an importable module)::

    from unlearnkit.distributed import spawn, gossip_averaging
    from unlearnkit.graphs import ring
    results = spawn(gossip_averaging, 4, ring(4), 20, 1000, seed=0, timeout=120)   # one dict per rank

Several machines: run the same command on every machine, with the node count, this machine's ranks, a
shared job id and one reachable rendezvous endpoint (host:port of any one of the machines)::

    torchrun --nnodes=2 --nproc-per-node=4 --rdzv-backend=c10d --rdzv-id=job42 \\
             --rdzv-endpoint=node0.example.org:29500 -m unlearnkit.distributed.run gossip --rounds 20

Ranks are numbered across machines (``RANK``, ``WORLD_SIZE`` = clients); every rank builds the same graph
from ``--seed``. ``--backend nccl`` needs one GPU per rank and supports gossip (flood too, untested on
GPUs) but not the walk (NCCL has no receive-from-any, which the walk token uses). Each rank costs about
250 MB of memory; a send or receive waiting longer than ``--timeout`` seconds raises on its rank instead of
hanging.
"""

from ..runtime import lazy_exports

__all__ = [
    "spawn", "launch_torchrun", "ProcessGroupNetwork", "DistributedRunError",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "spawn": ".launch", "launch_torchrun": ".launch", "ProcessGroupNetwork": ".network",
    "DistributedRunError": ".launch",
})
