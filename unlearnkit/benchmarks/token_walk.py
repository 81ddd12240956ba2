"""Token-walk rows of ``python -m unlearnkit bench gossip``: the package's walks against the obvious loop.

The loop is what one writes first: an ``nn.Module``, ``torch.optim.SGD``, and per hop a ``torch.randint``
minibatch from the current client, ``loss.backward()``, ``opt.step()`` (:func:`plain_token_loop`). Against it:
:func:`~unlearnkit.decentral.run_token` (one walk, hop by hop, the lessons' and methods' walk) and
:func:`~unlearnkit.decentral.run_walks` with ``K`` independent walks as one ``(K, d)`` tensor (an audit's or a
lesson's many seeds). Rows give hops per second counted over all walks (``walk_hops_per_s``) and the ratio to the
loop's; the loop would run ``K`` walks one after the other, so the ratio is the time saved on the same work. The
loop and the package's walk are timed alternately, best of ``repeat``, so load on a shared machine hits both.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch

from .. import data as D, runtime as rt
from ..core import cuda_sync as sync
from ..models import FlatParams, make_model


def plain_token_loop(module: torch.nn.Module, dataset: Any, client_indices: list, route: np.ndarray, *, lr: float,
                     batch_size: int, generator: torch.Generator) -> torch.nn.Module:
    """One token walk written the obvious way: SGD on a copy of ``module``, one minibatch per hop from the
    current client's samples (with replacement). Returns the trained copy."""
    model = copy.deepcopy(module)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    lossf = torch.nn.CrossEntropyLoss()
    dev = dataset.x_train.device
    pools = [torch.as_tensor(ix, device=dev) for ix in client_indices]
    for v in route:
        pool = pools[int(v)]
        rows = pool[torch.randint(0, len(pool), (batch_size,), generator=generator, device=generator.device).to(dev)]
        opt.zero_grad()
        lossf(model(dataset.x_train[rows]), dataset.y_train[rows]).backward()
        opt.step()
    return model


def _best(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def walk_loop_rows(dev: torch.device, *, quick: bool = False) -> list[dict[str, Any]]:
    """Digits MLP (d = 4,810), 10 clients, RR-DU routes (``u = 0``, ``p = 0.1``), batch 32, ``10^4`` hops
    (2,000 in quick mode): the plain loop, ``run_token`` and ``run_walks`` at ``K`` in {1, 16, 64}."""
    from ..decentral import TokenConfig, run_token, run_walks  # deferred: imports networkx
    from ..graphs import rrdu_route  # deferred: imports networkx

    hops, repeat = (2_000, 1) if quick else (10_000, 2)
    ds = D.load("digits", device=dev)
    fed = D.partition(ds, 10, seed=0)
    module = make_model("mlp", ds.input_shape, 10, generator=rt.make_generator(0)).to(dev)
    flat = FlatParams(copy.deepcopy(module))
    cfg = TokenConfig(lr=0.1, batch_size=32)
    routes = np.stack([rrdu_route(10, 0, 0.1, hops, rng=rt.numpy_generator(k)) for k in range(64)])
    gen = lambda: rt.make_generator(1, dev)  # noqa: E731
    loop = lambda: plain_token_loop(module, ds, fed.client_indices, routes[0], lr=0.1, batch_size=32,  # noqa: E731
                                    generator=gen())
    contenders = [("run_token", 1, lambda: run_token(flat, fed, routes[0], cfg, generator=gen()))]
    contenders += [(f"run_walks K={k}", k, lambda k=k: run_walks(flat, fed, routes[:k], cfg, generator=gen()))
                   for k in (1, 16, 64)]
    t_loop, rows = float("inf"), []
    for name, k, fn in contenders:
        t_loop = min(t_loop, _best(loop, 1))
        t = _best(fn, repeat)
        rows.append({"what": "token walk", "walk": name, "walks": k, "hops": hops, "d": flat.d, "device": str(dev),
                     "threads": torch.get_num_threads(), "seconds": t, "walk_hops_per_s": k * hops / t})
    for r in rows:
        r["plain_loop_hops_per_s"] = hops / t_loop
        r["speedup_vs_loop"] = r["walk_hops_per_s"] / r["plain_loop_hops_per_s"]
    return rows
