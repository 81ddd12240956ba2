"""The noise-free Newton step of a request, computed once per (world, request, step settings).

Everything :class:`~unlearnkit.methods.newton.algorithm.Newton` does before the noise, the corrections
``x_delta_c = 1/(n_c - m_c) C_c^{-1} g_c`` (Wu et al. 2026, Algorithm 1, eqs. 2-3; client-wise: eq. 6), is a
deterministic function of the trained models, the data, the network, the request and the *step* settings
(curvature, damping, scope, centring, CG tolerance and cap, chunk size). The privacy settings (``epsilon``,
``delta``, ``mode``, ``sigma``, ``grad_tol``, ``release``, the overridden constants) and the fine-tuning round
only act afterwards: on the clipping, the noise and what is released. A frontier over epsilon (notebook 07:
5 to 7 epsilons x 2 modes x 1 to 3 draws) therefore solved the same conjugate-gradient system 10 to 42 times.

:func:`noise_free_step` keeps the last few steps in memory and hands out **clones** of the stored tensors, so
a caller that mutates ``extras["x_delta"]`` cannot reach the next caller. The solve draws no randomness, so
a cached step is bitwise the step a fresh solve computes, and the random stream (noise, then fine-tuning)
is unchanged: released parameters are identical with and without the cache
(``tests/methods/newton/test_newton_step_cache.py``).

**Key.** The objects the step reads (the model wrapper, data set, federation, network) by identity, kept
alive by the entry so their ids cannot be reused; the trained parameters and the request's indices by
content (a SHA-1 of their bytes, so a state whose parameters were changed in place misses); the training
weight decay; and the config with its privacy and post-processing fields reset to defaults, so every other
field, including any field added later, stays in the key.

**Cost.** A hit skips the solve, but the request still costs what it costs: the unlearning reports the
stored step's gradient evaluations, messages and seconds (``Cost.seconds`` adds the stored solve time to the
time spent now; ``extras["step_cached"]`` says it was reused). ``UNLEARNKIT_MEMO=0`` turns the cache off
(the switch of :mod:`unlearnkit.experiments.memo`, read on every call).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from torch import Tensor

from ...graphs.flood import relay_messages
from .steps import CurvatureSolver, statistic_size


_MAX_ENTRIES = 16  # a step is a few model-sized vectors; the entry also keeps its world alive
_STORE: "OrderedDict[str, tuple[tuple, _Step]]" = OrderedDict()
_STATS = {"hits": 0, "misses": 0}
# fields that act only after the step (clipping, noise, release, fine-tuning): reset in the key
_AFTER_STEP = dict(epsilon=1.0, delta=1e-5, mode="none", grad_tol=None, release="local", lipschitz=None,
                   hessian_lipschitz=None, sigma=None, finetune_rounds=0, progress=False)


@dataclass
class _Step:
    """The noise-free corrections of one request and what computing them cost."""

    x_delta: dict[int, Tensor]
    fractions: dict[int, tuple[int, int]]
    local_seconds: dict[int, float]
    evals: int
    messages: int
    converged: bool
    seconds: float  # wall time of the solve when it was computed
    cached: bool = False

    def copy(self, *, cached: bool) -> "_Step":
        return dataclasses.replace(self, x_delta={c: z.clone() for c, z in self.x_delta.items()},
                                   fractions=dict(self.fractions), local_seconds=dict(self.local_seconds),
                                   cached=cached)


def _enabled() -> bool:
    return os.environ.get("UNLEARNKIT_MEMO", "1").strip().lower() not in {"0", "false", "no"}


def _digest(*arrays: Any) -> str:
    h = hashlib.sha1()
    for a in arrays:
        if isinstance(a, Tensor):
            h.update(str((a.dtype, tuple(a.shape))).encode())
            a = a.detach().cpu().contiguous().numpy()
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def noise_free_step(state, request, config, *, reqs: dict[int, np.ndarray], wd: float,
                    xy: Callable[[np.ndarray], tuple[Tensor, Tensor]], x_bar: Tensor) -> _Step:
    """The corrections ``x_delta`` (before clipping and noise) of ``request``, from the cache when it holds them.

    Sample- and class-wise, each requester ``c`` solves ``x_delta_c = 1/(n_c - m_c) C_c^{-1} g_c`` with ``g_c``
    the (regularised) gradient of its forget samples and ``C_c`` its retained-data curvature (``scope="global"``:
    the average of all clients' retained curvatures at ``x_bar``); client-wise, the departing client solves
    ``x_delta_c = 1/(N - 1) C^{-1} grad f_c`` with ``C`` the average of the remaining clients' curvatures. A hit
    returns clones of the stored step (module docstring: key, cost); ``UNLEARNKIT_MEMO=0`` always solves.

    Parameters
    ----------
    state : TrainedState
        The clients' models ``(N, d)``, their data, federation and network.
    request : Request
        Sample-wise, class-wise or client-wise.
    config : NewtonConfig
        Its step settings (curvature, damping, scope, centring, CG tolerance and cap, chunk size) set the step;
        the privacy and post-processing fields do not enter the key.
    reqs : dict of int to numpy.ndarray
        Every requester's forget indices (:func:`~unlearnkit.methods.newton.steps.requesters_of`).
    wd : float
        Training weight decay ``lam``, added to every gradient and curvature.
    xy : callable
        ``indices -> (x, y)``: training samples on the parameters' device and dtype.
    x_bar : torch.Tensor
        Average of the models that will be released, where ``scope="global"`` computes the step.

    Returns
    -------
    _Step
        ``x_delta`` per requester, the fractions ``(m_c, n_c)``, each requester's seconds, the gradient
        evaluations, the messages, whether every solve converged, the solve's seconds and ``cached``.

    References
    ----------
    .. [1] H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, "Certified Unlearning in Decentralized Federated
       Learning", arXiv 2601.06436, 2026, Algorithm 1 with eqs. (2)-(3) (sample-wise), Section IV-C, eqs. (5)-(6)
       (client-wise) and Section IV-D, eq. (7) (the Fisher curvature).
    """
    if not _enabled():
        return _compute(state, request, config, reqs=reqs, wd=wd, xy=xy, x_bar=x_bar)
    owners = (state.flat, state.dataset, state.federation, state.network)
    step_cfg = dataclasses.replace(config, **_AFTER_STEP)
    key = repr((tuple(id(o) for o in owners), _digest(state.params, np.asarray(request.indices)), request.kind,
                request.client, getattr(request, "label", None), float(wd), str(state.params.device),
                [str(p.dtype) for p in state.flat.module.parameters()], step_cfg))
    entry = _STORE.get(key)
    if entry is not None and all(a is b for a, b in zip(entry[0], owners)):
        _STORE.move_to_end(key)
        _STATS["hits"] += 1
        return entry[1].copy(cached=True)
    _STATS["misses"] += 1
    step = _compute(state, request, config, reqs=reqs, wd=wd, xy=xy, x_bar=x_bar)
    _STORE[key] = (owners, step.copy(cached=False))
    while len(_STORE) > _MAX_ENTRIES:
        _STORE.popitem(last=False)
    return step


def clear_step_cache() -> None:
    """Forget every stored Newton step (and reset :func:`step_cache_stats`).

    Returns
    -------
    None
    """
    _STORE.clear()
    _STATS.update(hits=0, misses=0)


def step_cache_stats() -> dict[str, int]:
    """``{"hits", "misses", "entries"}`` since the last :func:`clear_step_cache`.

    Returns
    -------
    dict of str to int
        ``{"hits": ..., "misses": ..., "entries": ...}``.
    """
    return {**_STATS, "entries": len(_STORE)}


def _compute(state, request, config, *, reqs: dict[int, np.ndarray], wd: float,
             xy: Callable[[np.ndarray], tuple[Tensor, Tensor]], x_bar: Tensor) -> _Step:
    """Algorithm 1, lines 1-5 (sample- and class-wise) or section IV-C, eq. (6) (client-wise), noise-free."""
    t0 = time.perf_counter()
    flat, fed, G, X = state.flat, state.federation, state.network, state.params
    N, d = X.shape
    use_bar = config.scope == "global"
    evals = messages = 0
    x_delta: dict[int, Tensor] = {}
    converged = True
    fractions: dict[int, tuple[int, int]] = {}
    local_seconds: dict[int, float] = {}
    if request.kind == "client":
        c = request.client
        parts = [(x_bar if use_bar else X[i], *xy(fed.client_indices[i])) for i in range(N) if i != c]
        curv = CurvatureSolver(flat, config, wd, parts)
        at = x_bar if use_bar else X[c]
        xc, yc = xy(fed.client_indices[c])
        g = flat.grad(at, xc, yc, weight_decay=wd)  # eq. (6): the full local gradient of client c
        evals += xc.shape[0]
        x_delta[c] = curv.solve(g) / (N - 1)
        fractions[c] = (xc.shape[0], xc.shape[0])
        relay = relay_messages(G, c)
        messages += (2 * relay * curv.iterations if config.curvature.startswith("cg_")
                     else relay * statistic_size(config, d))
    else:
        shared = None
        if use_bar:
            parts = [(x_bar, *xy(request.retain(fed.client_indices[i]) if i in reqs
                                 else fed.client_indices[i])) for i in range(N)]
            shared = CurvatureSolver(flat, config, wd, parts)
        for c, U in reqs.items():
            t_c = time.perf_counter()
            at = x_bar if use_bar else X[c]
            xu, yu = xy(U)
            keep = fed.client_indices[c][~np.isin(fed.client_indices[c], U)]
            xr, yr = xy(keep)
            m, n = xu.shape[0], fed.client_indices[c].size
            g = flat.per_sample_grads(at, xu, yu, chunk_size=config.chunk_size).sum(0) + m * wd * at
            evals += m
            if config.center_gradient:
                xa, ya = xy(fed.client_indices[c])
                g = g - m * flat.grad(at, xa, ya, weight_decay=wd)
                evals += n
            if shared is not None:
                before = shared.iterations
                z = shared.solve(g)
                relay = relay_messages(G, c)
                messages += (2 * relay * (shared.iterations - before) if config.curvature.startswith("cg_")
                             else relay * statistic_size(config, d))
            else:
                local = CurvatureSolver(flat, config, wd, [(at, xr, yr)])
                z = local.solve(g)
                evals += local.evals
                converged &= local.converged
            x_delta[c] = z / (n - m)  # eq. (3): note the plus sign when applied, and the 1/(n_c - m_c)
            fractions[c] = (m, n)
            local_seconds[c] = time.perf_counter() - t_c
        curv = shared
    if curv is not None:
        evals += curv.evals
        converged &= curv.converged
    return _Step(x_delta=x_delta, fractions=fractions, local_seconds=local_seconds, evals=int(evals),
                 messages=int(messages), converged=bool(converged), seconds=time.perf_counter() - t0)
