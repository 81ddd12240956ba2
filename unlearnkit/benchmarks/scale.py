"""``python -m unlearnkit bench scale``: sparse networks of 10^2 to 10^5 clients, one gossip round ``X <- W X``.

For each topology (ring, torus: the circulant stencil, 1-D and 2-D; random 4-regular: the CSR kernel) and each ``N`` in
``10^2 .. 10^5`` (``10^4`` in quick mode) at ``d = 1000`` float32 parameters per client, a row gives the time
and peak traced memory of building ``W`` from the edge list (:func:`~unlearnkit.graphs.edge_list`,
:func:`~unlearnkit.graphs.sparse_mixing_matrix`), the kernel chosen, the time of one round into a reused output buffer (``round_ms``; ``round_fresh_ms`` allocates
the output every round, whose page faults on the CPU cost about as much as the round), and the time of one
elementwise memory pass over the ``(N, d)`` parameters (``X.mul_(1.0)``, in place, and ``torch.mul(X, 1.0,
out=Y)``, which reads ``X`` and writes a second array as a round must) measured in the same run, with the
round's ratio to each. ``rss_peak_mib`` is the process's peak resident memory so far (it only grows: rows run
in increasing ``N``); on CUDA ``gpu_peak_mib`` is the allocator's peak for the row. The last rows build a 10^4-hop
RR-DU walk on each size (:func:`walk_route_rows`): its time and traced peak beside the dense transition matrix's
size it never allocates. Then, at ``N = 10^4`` and ``10^5`` (``10^4`` in quick mode), one PDUDT gradient-gossip
round (:func:`gradient_gossip_rows`, ``d = 100``) and one Newton flood (:func:`flood_rows`) per topology
on the sparse representation, with their time and traced peak; and :func:`converted_path_rows`: the interface's
gradient gossip with a candidate leaver, PDUDT's CSR history and its correction, Newton's training and one request
on an edge list, each with its time, traced peak and the process's peak resident memory.

:func:`mix_loop_rows` compares, at ``N = 128``, the chosen kernel with a gossip round written the obvious way
(for each client, sum ``w_ij x_j`` over its neighbours): ``bench gossip`` prints those rows.
"""

from __future__ import annotations

import resource
import time
import tracemalloc
from typing import Any

import numpy as np
import torch

from . import register_bench, timeit
from .. import runtime as rt
from ..core import Request
from ..data.datasets import load
from ..data.federated import partition
from ..models import FlatParams, make_model
from ..runtime import make_generator


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def plain_gossip_loop(W: Any, X: torch.Tensor) -> torch.Tensor:
    """``W @ X`` the obvious way: for each client ``i``, ``sum_j w_ij x_j`` over its neighbours (and itself).

    Parameters
    ----------
    W: the mixing matrix as ``scipy.sparse`` CSR (its stored entries are the neighbours).
    X: ``(N, d)`` client vectors.

    Returns
    -------
    torch.Tensor
        ``(N, d)``, one Python-level axpy per stored entry of ``W``.
    """
    out = torch.empty_like(X)
    for i in range(X.shape[0]):
        lo, hi = W.indptr[i], W.indptr[i + 1]
        acc = torch.zeros_like(X[i])
        for j, w in zip(W.indices[lo:hi].tolist(), W.data[lo:hi].tolist()):
            acc += w * X[j]
        out[i] = acc
    return out


def mix_loop_rows(dev: torch.device, *, quick: bool = False) -> list[dict[str, Any]]:
    """One mixing round on a ring of 128 clients at ``d`` in {1000, 64000}: the chosen kernel, the dense
    matmul and :func:`plain_gossip_loop`, with the speedup of the chosen kernel over the loop."""
    from ..decentral.mixer import GossipKernel  # deferred: imports scipy.sparse
    from ..graphs import edge_list, sparse_mixing_matrix  # deferred: imports networkx

    n, rows, repeat = 128, [], 2 if quick else 5
    W = sparse_mixing_matrix(edge_list("ring", n), n)
    for d in (1000, 64000):
        X = torch.randn((n, d), generator=rt.make_generator(0, dev), device=dev)
        auto, dense = GossipKernel(W, device=dev), GossipKernel(W, kind="dense", device=dev)
        t_auto = timeit(lambda: auto(X), repeat=repeat)
        t_dense = timeit(lambda: dense(X), repeat=repeat)
        t_loop = timeit(lambda: plain_gossip_loop(W, X), repeat=max(1, repeat - 2))
        err = float((auto(X) - plain_gossip_loop(W, X)).abs().max())
        rows.append({"what": "mix only", "N": n, "d": d, "device": str(dev), "kernel": auto.kind,
                     "kernel_ms": 1e3 * t_auto, "dense_matmul_ms": 1e3 * t_dense, "plain_loop_ms": 1e3 * t_loop,
                     "speedup_vs_loop": t_loop / t_auto, "max_abs_diff": err})
    return rows


@register_bench("scale", description="sparse W from edge lists, one gossip round at N = 1e2..1e5 (1e6 on a GPU), "
                                     "d = 1000, against one memory pass over the parameters")
def bench_scale(*, quick: bool = False) -> list[dict[str, Any]]:
    from ..decentral.mixer import GossipKernel  # deferred: imports scipy.sparse
    from ..graphs import edge_list, sparse_mixing_matrix  # deferred: imports networkx

    dev = rt.device()
    d = 1000
    sizes = [100, 1000, 10_000] + ([] if quick else [100_000])
    gpu_sizes = [1_000_000] if dev.type == "cuda" and not quick else []  # 10^6 x 1000 floats: 3.7 GiB a copy
    rows = []
    for name, kw in (("ring", {}), ("torus", {}), ("random_regular", {"degree": 4})):
        for n in sizes + gpu_sizes:
            tracemalloc.start()
            t0 = time.perf_counter()
            W = sparse_mixing_matrix(edge_list(name, n, **kw), n)
            build = time.perf_counter() - t0
            build_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            if dev.type == "cuda":
                torch.cuda.reset_peak_memory_stats(dev)
            X = torch.randn((n, d), generator=rt.make_generator(0, dev), device=dev)
            Y = torch.empty_like(X)
            kernel = GossipKernel(W, device=dev)
            repeat = 3 if n >= 100_000 else 5
            t_round = timeit(lambda: kernel(X, out=Y), repeat=repeat)
            t_fresh = timeit(lambda: kernel(X), repeat=repeat)
            t_pass = timeit(lambda: X.mul_(1.0), repeat=repeat)
            t_pass2 = timeit(lambda: torch.mul(X, 1.0, out=Y), repeat=repeat)
            row = {"topology": name, "N": n, "d": d, "device": str(dev), "threads": torch.get_num_threads(),
                   "kernel": kernel.kind, "build_s": build, "build_peak_mib": build_peak / 2**20,
                   "round_ms": 1e3 * t_round, "round_fresh_ms": 1e3 * t_fresh, "pass_inplace_ms": 1e3 * t_pass, "pass_out_ms": 1e3 * t_pass2,
                   "ratio_inplace": t_round / t_pass, "ratio_out": t_round / t_pass2,
                   "params_mib": X.numel() * X.element_size() / 2**20, "rss_peak_mib": _peak_rss_mib()}
            if dev.type == "cuda":
                row["gpu_peak_mib"] = torch.cuda.max_memory_allocated(dev) / 2**20
            rows.append(row)
            del X, Y, kernel, W
    big = [n for n in sizes if n >= 10_000]
    return rows + walk_route_rows(sizes) + gradient_gossip_rows(big) + flood_rows(big) + converted_path_rows(big)


def gradient_gossip_rows(sizes: list[int], d: int = 100) -> list[dict[str, Any]]:
    """One gradient-gossip round ``Theta - eta W G`` (:func:`~unlearnkit.decentral.gradient_gossip_round`) on a
    sparse mixing matrix, float32, ``d`` parameters per client: the best of 3 rounds with the kernel reused
    (``round_ms``), and one round from the ``scipy.sparse`` matrix, kernel build included (``first_round_ms``),
    with its traced peak (numpy and SciPy allocations, the ``(N, d)`` inputs included: they are numpy-backed
    CPU tensors, so these rows run on the CPU whatever device the other rows use)."""
    from ..decentral.gradient_gossip import gradient_gossip_round  # deferred: imports networkx
    from ..decentral.mixer import GossipKernel  # deferred: imports scipy.sparse
    from ..graphs import edge_list, sparse_mixing_matrix  # deferred: imports networkx

    rows = []
    for name, kw in (("ring", {}), ("random_regular", {"degree": 4})):
        for n in sizes:
            W = sparse_mixing_matrix(edge_list(name, n, **kw), n)
            rng = np.random.default_rng(0)
            tracemalloc.start()
            thetas = torch.as_tensor(rng.standard_normal((n, d), dtype=np.float32), device="cpu")
            grads = torch.as_tensor(rng.standard_normal((n, d), dtype=np.float32), device="cpu")
            t0 = time.perf_counter()
            gradient_gossip_round(W, thetas, grads, 0.1)
            first = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            kernel = GossipKernel(W, dtype=torch.float32)
            t_round = timeit(lambda: gradient_gossip_round(kernel, thetas, grads, 0.1), repeat=3)
            rows.append({"topology": name, "N": n, "d": d, "what": "gradient gossip round (sparse W)",
                         "kernel": kernel.kind, "round_ms": 1e3 * t_round, "first_round_ms": 1e3 * first,
                         "round_peak_mib": peak / 2**20, "params_mib": thetas.numel() * 4 / 2**20,
                         "dense_matrix_mib": 8 * n * n / 2**20, "rss_peak_mib": _peak_rss_mib()})
            del W, thetas, grads, kernel
    return rows


def flood_rows(sizes: list[int]) -> list[dict[str, Any]]:
    """One flood of Newton's correction (:func:`~unlearnkit.graphs.flood`: breadth-first distances and parents
    over the edge list) and the relay count to a sink (:func:`~unlearnkit.graphs.relay_messages`) from client
    0: time, traced peak, hops and messages. On a ring the flood takes ``N / 2`` hops, all computed at once."""
    from ..graphs import edge_list, flood  # deferred: imports networkx
    from ..graphs.flood import relay_messages  # deferred: imports networkx

    rows = []
    for name, kw in (("ring", {}), ("random_regular", {"degree": 4})):
        for n in sizes:
            edges = edge_list(name, n, **kw)
            tracemalloc.start()
            t0 = time.perf_counter()
            fl = flood(edges, 0, n=n)
            t_flood = time.perf_counter() - t0
            t0 = time.perf_counter()
            relay = relay_messages(edges, 0, n=n)
            t_relay = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            rows.append({"topology": name, "N": n, "what": "flood (edge list)", "flood_s": t_flood,
                         "relay_s": t_relay, "flood_peak_mib": peak / 2**20, "hops": fl.rounds,
                         "messages": fl.messages, "relay_messages": relay, "dense_matrix_mib": 8 * n * n / 2**20})
            del fl, edges
    return rows


def walk_route_rows(sizes: list[int], hops: int = 10_000) -> list[dict[str, Any]]:
    """RR-DU's edge-respecting walk (``u = 0``, ``p = 0.1``) of ``hops`` hops on a random 4-regular edge list of
    each size: the time and the traced peak memory of building the route (CSR rows, never ``N x N``)."""
    from ..graphs import edge_list  # deferred: imports networkx
    from ..graphs.walks import rrdu_graph_walk  # deferred: imports networkx

    rows = []
    for n in sizes:
        edges = edge_list("random_regular", n, degree=4)
        tracemalloc.start()
        t0 = time.perf_counter()
        rrdu_graph_walk(edges, 0, 0.1, hops, n=n, rng=np.random.default_rng(0))
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append({"topology": "random_regular", "N": n, "what": f"rrdu_graph_walk, {hops} hops",
                     "walk_s": seconds, "walk_peak_mib": peak / 2**20, "dense_matrix_mib": 8 * n * n / 2**20})
    return rows


def converted_path_rows(sizes: list[int], *, rounds: int = 3, d: int = 10) -> list[dict[str, Any]]:
    """On a ring of each size, the paths that take an edge list or a CSR matrix instead of ``N x N``:

    - ``gradient_gossip_rounds``: :func:`~unlearnkit.decentral.network_steps.gradient_gossip_rounds` on a
      :class:`~unlearnkit.decentral.SimulatedNetwork`, ``rounds`` rounds of a float64 logistic model (``d = 5``)
      with one candidate leaver (the ``1 + 1`` mixes of each exchange);
    - ``pdudt history``: ``rounds`` rounds fed to a :class:`~unlearnkit.decentral.HistoryCache` (CSR ``W^t``, ``d``
      float64 gradients) and one leaver's correction from it, round by round (beside the bytes a dense
      ``(T, N, N)`` history would take);
    - ``newton``: :func:`~unlearnkit.methods.newton.train_dpsgd` (1 round, edge list) and one sample-wise
      :class:`~unlearnkit.methods.newton.Newton` request with its flood, on the CPU.

    ``peak_mib``: tracemalloc's peak over the step (numpy and SciPy arrays; torch's own allocations are not
    traced), ``rss_peak_mib``: the process's peak resident memory so far (it only grows).
    """

    from ..decentral.gradient_gossip import HistoryCache  # deferred: imports networkx
    from ..decentral.network import SimulatedNetwork  # deferred: imports networkx
    from ..decentral.network_steps import gradient_gossip_rounds  # deferred: imports networkx
    from ..decentral.gossip import GossipConfig  # deferred: imports networkx
    from ..graphs.sparse import edge_list, sparse_mixing_matrix  # deferred: imports networkx
    from ..methods.newton.algorithm import Newton  # deferred: imports networkx
    from ..methods.newton.config import NewtonConfig  # deferred: imports scipy.optimize
    from ..methods.newton.training import train_dpsgd  # deferred: imports networkx

    def traced(fn: Any) -> tuple[Any, float, float]:
        tracemalloc.start()
        t0 = time.perf_counter()
        out = fn()
        sec = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return out, sec, peak / 2**20

    rows: list[dict[str, Any]] = []
    for n in [100, *sizes]:  # 100: a warm-up (first vmap and imports), not reported
        base = {"topology": "ring", "N": n, "rounds": rounds, "dense_matrix_mib": 8 * n * n / 2**20}
        flat = FlatParams(make_model("logreg", (4,), 1, generator=make_generator(0)).double(), loss="logistic")
        gen = torch.Generator(device="cpu").manual_seed(0)
        xs = torch.randn((n, 2, 4), generator=gen, dtype=torch.float64, device="cpu")
        ys = torch.randint(0, 2, (n, 2), generator=gen, device="cpu").double()
        start = flat.init().detach().expand(n, -1).clone()
        edges = edge_list("ring", n)
        (_, sums), sec, peak = traced(lambda: gradient_gossip_rounds(
            SimulatedNetwork(n), flat, start, lambda: (xs, ys), edges, rounds=rounds, lr=0.1, leavers=(7,)))
        rows.append({**base, "what": "gradient_gossip_rounds (edge list, 1 leaver)", "d": flat.d, "seconds": sec,
                     "peak_mib": peak, "rss_peak_mib": _peak_rss_mib()})
        del xs, ys, start, sums

        W = sparse_mixing_matrix(edges, n)
        rng = np.random.default_rng(0)
        grads = [torch.as_tensor(rng.standard_normal((n, d)), device="cpu") for _ in range(rounds)]

        def history() -> Any:
            cache = HistoryCache()
            for g in grads:
                cache.update(W, g)
            return cache, cache.correction(7, 0.1, scale="sum")

        (cache, _), sec, peak = traced(history)
        rows.append({**base, "what": "pdudt history (CSR) + one correction", "d": d, "seconds": sec,
                     "peak_mib": peak, "history_mib": cache.memory_bytes / 2**20,
                     "dense_history_mib": (8 * rounds * (n * n + n * d)) / 2**20, "rss_peak_mib": _peak_rss_mib()})
        del cache, grads, W

        ds = load("synthetic", n_train=2 * n, n_test=20, dim=3, seed=1, device="cpu")
        fed = partition(ds, n, seed=0)
        lr_flat = FlatParams(make_model("logreg", ds.input_shape, 1, generator=make_generator(0)), loss="logistic")
        cfg = GossipConfig(rounds=1, lr=0.2, batch_size=2, weight_decay=0.1)
        st, t_train, p_train = traced(lambda: train_dpsgd(lr_flat, fed, edges, cfg, generator=make_generator(0)))
        req = Request("samples", np.asarray(fed.client_indices[10][:1]))
        res, sec, peak = traced(lambda: Newton().unlearn(st, req, NewtonConfig(mode="none", sigma=0.01),
                                                         generator=make_generator(0)))
        rows.append({**base, "rounds": 1, "what": "newton train (edge list) + one sample request", "d": lr_flat.d,
                     "train_s": t_train, "train_peak_mib": p_train, "seconds": sec, "peak_mib": peak,
                     "messages": res.cost.messages, "rss_peak_mib": _peak_rss_mib()})
        del st, res, fed, ds
    return [r for r in rows if r["N"] != 100 or 100 in sizes]
