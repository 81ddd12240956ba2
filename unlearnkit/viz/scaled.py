"""The pieces that let the live demos scale with the device: slider ranges from
:func:`unlearnkit.experiments.device_limits.demo_limits`, the gossip trajectory as one matrix product per
round on the compute device, and edge coordinates built with array operations.

Two decisions are kept apart on purpose: the *ranges* an explorer offers come from its
:class:`~unlearnkit.experiments.device_limits.DemoLimits` (the CPU's limits reproduce today's sliders exactly,
a CUDA device's reach 1,024 clients), while the *computation* runs on :func:`unlearnkit.device`. An explorer
handed the GPU limits on a CPU-only machine therefore still runs, on CPU tensors: that is how the GPU ranges
are tested without a GPU. The defaults an explorer starts at never change with the device, so a notebook
teaches the same lesson on every machine and only the ranges grow.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

import ipywidgets as W
import numpy as np
import torch

from .._validate import check_int
from ..experiments.device_limits import DemoLimits, demo_limits
from ..runtime import device as default_device


#: edges a graph picture draws at most: a complete graph on 40 clients (the CPU range) has 780, one on
#: 1,024 clients half a million, which take seconds to validate and more to render for a grey blur
MAX_DRAWN_EDGES = 20_000
#: cells per side a mixing-matrix heatmap shows at most (block means beyond: a 1,024 x 1,024 matrix is a
#: million cells, 10 s of payload on the CPU, and a screen shows about 400 pixels of it)
MAX_HEATMAP_SIDE = 128


def explorer_limits(limits: Optional[DemoLimits] = None) -> DemoLimits:
    """``limits`` when given, else the :func:`demo_limits` of :func:`unlearnkit.device` (read when an
    explorer is built, so ``UNLEARNKIT_DEVICE=cpu`` gives the CPU ranges on a GPU machine)."""
    if limits is None:
        return demo_limits()
    if not isinstance(limits, DemoLimits):
        raise TypeError(f"limits={limits!r} is out of range: expected a DemoLimits (see demo_limits) or None")
    return limits


def averaging_on_device(W: Any, values: Any, rounds: int, *, device: Any = None) -> np.ndarray:
    """Gossip averaging ``x <- W x`` for ``rounds`` rounds, every client at once: one ``(N, N) @ (N, ...)``
    product per round on ``device`` (default :func:`unlearnkit.device`), in float64.

    The same trajectory as :func:`unlearnkit.decentral.gossip.simulate_averaging` for a static ``W`` (up to
    summation order), but vectorised on the device: at N = 1,024 a round is one matmul rather than a NumPy
    product on the host. Returns the ``(rounds + 1, N, ...)`` trajectory on the host, row 0 being ``values``.
    """
    rounds = check_int("rounds", rounds, low=0)
    if device is None:
        device = default_device()
    Wt = torch.as_tensor(np.asarray(W, dtype=float), dtype=torch.float64, device=device)
    x = torch.as_tensor(np.asarray(values, dtype=float), dtype=torch.float64, device=device)
    if Wt.ndim != 2 or Wt.shape[0] != Wt.shape[1]:
        raise ValueError(f"W has shape {tuple(Wt.shape)}: expected a square (N, N) mixing matrix")
    if x.ndim == 0 or x.shape[0] != Wt.shape[0]:
        raise ValueError(f"values has shape {tuple(x.shape)} but the network has N={Wt.shape[0]} clients")
    out = torch.empty((rounds + 1, *x.shape), dtype=torch.float64, device=device)
    out[0] = x
    for t in range(rounds):
        x = Wt @ x
        out[t + 1] = x
    return out.cpu().numpy()


def edge_xy(pos: np.ndarray, edges: Iterable[tuple[int, int]]) -> tuple[list, list]:
    """Line coordinates for ``edges``: ``x_a, x_b, None`` per edge (``None`` breaks the line), built with
    array indexing. The lists equal the per-edge Python loop's element for element (NumPy floats and
    ``None``), but a complete graph on 1,024 clients (half a million edges) no longer takes seconds."""
    pos = np.asarray(pos, dtype=float)
    e = np.asarray(list(edges), dtype=np.int64).reshape(-1, 2)
    out = []
    for axis in (0, 1):
        coords = np.empty(3 * len(e), dtype=object)
        coords[0::3] = list(pos[e[:, 0], axis])
        coords[1::3] = list(pos[e[:, 1], axis])
        coords[2::3] = None
        out.append(coords.tolist())
    return out[0], out[1]


def drawn_edges(G: Any, cap: int = MAX_DRAWN_EDGES) -> list:
    """The edges a picture of ``G`` draws: all of them up to ``cap`` (every graph the CPU ranges allow), else
    ``cap`` of them drawn uniformly with a fixed seed (the same picture every time). Only the grey edge layer
    thins; nodes, values and highlighted edges are all drawn, and the explorers state the true edge count."""
    edges = list(G.edges)
    if len(edges) <= cap:
        return edges
    keep = np.sort(np.random.default_rng(0).choice(len(edges), size=cap, replace=False))
    return [edges[i] for i in keep]


def heatmap_view(W: Any, title: str, side: int = MAX_HEATMAP_SIDE) -> tuple[np.ndarray, str]:
    """``(matrix, title)`` to show for ``W``: ``W`` itself up to ``side`` clients (every CPU range), else the
    means of ``ceil(N / side)``-sized blocks of clients, the title saying so. Block means keep what the
    picture teaches (where the weight sits: the band of a ring, the two blocks of two clusters)."""
    W = np.asarray(W, dtype=float)
    n = W.shape[0]
    if n <= side:
        return W, title
    b = -(-n // side)
    m = -(-n // b)
    pad = np.full((m * b, m * b), np.nan)
    pad[:n, :n] = W
    blocks = np.nanmean(pad.reshape(m, b, m, b), axis=(1, 3))
    return blocks, f"{title}: means of {b} x {b} blocks"


def seeds_slider(value: int = 1, limits: Optional[DemoLimits] = None, *, description: str = "seeds") -> Any:
    """An ``IntSlider`` for the number of independent runs drawn at once (a confidence band): from 1 to the
    device's ``max_seeds`` (8 on a CPU, 64 on a GPU), starting at ``value`` whatever the device."""

    lim = explorer_limits(limits)
    value = check_int("seeds", value, low=1, high=lim.max_seeds)
    return W.IntSlider(value=value, min=1, max=lim.max_seeds, description=description)
