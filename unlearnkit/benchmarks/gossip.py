"""``python -m unlearnkit bench gossip``: one D-PSGD round, vectorised against a per-client Python loop.

Both sides do the same maths on the same minibatches (digits, the default MLP, batch 32 per client): every
client's gradient, then ``x_i <- sum_j W_ij x_j - lr g_i`` on a ring. The loop is what a one-process-per-
client simulator does client by client (decentralizepy, BlueFog; ``research/peers.md`` B.3); the vectorised
engine is one ``vmap`` call and one matmul (:func:`unlearnkit.decentral.gossip_step`). Rows also time the
sparse ``W`` path and report the largest difference between the two results.

The ``"mix only"`` rows time the gossip round ``X <- W X`` alone on a ring of 128 clients at ``d`` = 1000 and
64000: the kernel :class:`~unlearnkit.decentral.mixer.GossipKernel` chooses, the dense matmul, and the loop
written the obvious way (for each client, sum ``w_ij x_j`` over its neighbours; see
:mod:`unlearnkit.benchmarks.scale`).

The ``"token walk"`` rows run ``10^4`` hops of a token walk written the obvious way against
:func:`~unlearnkit.decentral.run_token` and :func:`~unlearnkit.decentral.run_walks` (``K`` walks as one tensor),
with the ratio of hops per second (:mod:`unlearnkit.benchmarks.token_walk`).
"""

from __future__ import annotations

from typing import Any

import torch

from . import register_bench, timeit
from .. import data as D, runtime as rt
from ..models import FlatParams, make_model
from .scale import mix_loop_rows
from .token_walk import walk_loop_rows


@register_bench("gossip", description="vectorised D-PSGD round vs a per-client loop, digits MLP, N in {8, 32, 128}")
def bench_gossip(*, quick: bool = False) -> list[dict[str, Any]]:
    from ..decentral._engine import ClientSampler  # deferred: imports networkx
    from ..decentral.gossip import gossip_step, gossip_step_loop  # deferred: imports networkx
    from ..graphs import mixing_matrix  # deferred: imports networkx
    from ..graphs.topology import ring  # deferred: imports networkx

    dev = rt.device()
    ds = D.load("digits", device=dev)
    flat = FlatParams(make_model("mlp", ds.input_shape, ds.n_classes, generator=rt.make_generator(0))).to(dev)
    sizes = [8, 32, 128] + ([512, 1024] if dev.type == "cuda" else [])
    repeat = 2 if quick else 5
    rows = []
    for n in sizes:
        fed = D.partition(ds, n, seed=0)
        sampler = ClientSampler(ds, fed.client_indices, 32, generator=rt.make_generator(0, dev))
        batches = [sampler.sample()[:2]]
        W = torch.tensor(mixing_matrix(ring(n)), dtype=torch.float32, device=dev)
        Ws = W.to_sparse()
        thetas = flat.init().to(dev).expand(n, -1).clone()
        thetas += 0.01 * torch.randn(thetas.shape, generator=rt.make_generator(1, dev), device=dev)

        def vec():
            return gossip_step(flat, thetas, batches, W, lr=0.1)[0]

        def sparse():
            return gossip_step(flat, thetas, batches, Ws, lr=0.1)[0]

        def loop():
            return gossip_step_loop(flat, thetas, batches, W, lr=0.1)[0]

        t_vec = timeit(vec, repeat=repeat)
        t_sp = timeit(sparse, repeat=repeat)
        t_loop = timeit(loop, repeat=max(1, repeat - 2) if n >= 512 else repeat)
        diff = float((vec() - loop()).abs().max())
        rows.append({"N": n, "d": flat.d, "device": str(dev), "threads": torch.get_num_threads(),
                     "vectorized_ms": 1e3 * t_vec, "sparse_ms": 1e3 * t_sp, "loop_ms": 1e3 * t_loop,
                     "speedup": t_loop / t_vec, "max_abs_diff": diff})
    return rows + mix_loop_rows(dev, quick=quick) + walk_loop_rows(dev, quick=quick)
