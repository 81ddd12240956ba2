"""One seed, one generator per client and stream: the same draws in a process group and in the simulator.

A run is reproducible from a single integer ``seed``. Client (rank) ``i`` draws its stream ``s`` from a
``torch.Generator`` seeded by ``numpy.random.SeedSequence([seed, STREAMS[s], i])``: independent streams for
independent purposes (the starting vector, the noise an algorithm adds where it says, minibatches), the same
numbers whichever runtime draws them. The one-process reference (:mod:`unlearnkit.distributed.reference`)
calls the same function with the client index, so its noise equals the ranks' noise draw for draw.
"""

from __future__ import annotations

import numpy as np
import torch

from .._validate import check_choice, check_int


# Stream name -> the middle word of the seed sequence. Never renumber: it would change every run's draws.
STREAMS = {"init": 0, "noise": 1, "batches": 2, "route": 3}


def rank_seed(seed: int, rank: int, stream: str = "noise") -> int:
    """The 63-bit integer seeding ``stream`` of client ``rank`` under the run's ``seed``."""
    seed = check_int("seed", seed, low=0)
    rank = check_int("rank", rank, low=0)
    check_choice("stream", stream, tuple(STREAMS))
    word = np.random.SeedSequence([seed, STREAMS[stream], rank]).generate_state(1, np.uint64)[0]
    return int(word) & ((1 << 63) - 1)


def rank_generator(seed: int, rank: int, stream: str = "noise", device: str | torch.device = "cpu"
                   ) -> torch.Generator:
    """A fresh ``torch.Generator`` for ``stream`` of client ``rank`` (see :func:`rank_seed`)."""
    g = torch.Generator(device=device)
    g.manual_seed(rank_seed(seed, rank, stream))
    return g


def initial_vector(seed: int, rank: int, dim: int, *, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Client ``rank``'s starting vector, ``N(0, I_dim)`` from its ``"init"`` stream."""
    dim = check_int("dim", dim, low=1)
    gen = rank_generator(seed, rank, "init")
    return torch.randn(dim, generator=gen, device=gen.device, dtype=dtype)
