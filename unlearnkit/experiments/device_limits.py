"""How large the live demos may be on the device at hand: one table, so every explorer scales the same way.

On 2 CPU cores an explorer must answer in well under a second, so its sliders stop at small worlds; a GPU
computes the vectorised steps (one ``vmap`` over all clients, one matmul for the mixing) in milliseconds at
sizes the CPU needs seconds for (measured: a gossip round at N = 1024 takes 3.7 ms on an H100 against 38 ms
vectorised on 16 CPU threads and 2 s for a per-client loop). :func:`demo_limits` returns the slider maxima for
a device; the defaults an explorer *starts* at stay the CPU's, so a notebook teaches the same lesson
everywhere and only the ranges grow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._validate import check_int
from ..core import MAX_REPEATS
from ..graphs.sparse import MAX_SPARSE_CLIENTS
from ..graphs.walks import MAX_HOPS
from ..runtime import device as default_device


@dataclass(frozen=True, kw_only=True)
class DemoLimits:
    """Slider maxima for the live demos on one device.

    Attributes
    ----------
    device:
        The torch device type the limits are for (``"cpu"`` or ``"cuda"``).
    max_clients:
        Clients in a gossip or walk explorer (notebook 05), ``>= 3``.
    max_seeds:
        Independent runs drawn at once for a confidence band (RR-DU, Newton, PDUDT curves), ``>= 1``.
    max_hops:
        Hops of a live walk, ``>= 10``.
    dataset:
        The largest dataset an explorer offers: ``"digits"`` on a CPU, ``"mnist"`` on a GPU.
    """

    device: str
    max_clients: int
    max_seeds: int
    max_hops: int
    dataset: str

    def __post_init__(self) -> None:
        check_int("max_clients", self.max_clients, low=3, high=MAX_SPARSE_CLIENTS)
        check_int("max_seeds", self.max_seeds, low=1, high=MAX_REPEATS)
        check_int("max_hops", self.max_hops, low=10, high=MAX_HOPS)
        if self.dataset not in ("digits", "mnist"):
            raise ValueError(f"dataset={self.dataset!r} is out of range: expected 'digits' or 'mnist'")


_CPU = DemoLimits(device="cpu", max_clients=40, max_seeds=8, max_hops=2000, dataset="digits")
_CUDA = DemoLimits(device="cuda", max_clients=1024, max_seeds=64, max_hops=20000, dataset="mnist")


def demo_limits(device: Any = None) -> DemoLimits:
    """The :class:`DemoLimits` of ``device`` (a torch device, ``"cpu"``, ``"cuda:N"``), default
    :func:`unlearnkit.device` (which honours ``UNLEARNKIT_DEVICE``). Any CUDA device gets the GPU limits; every
    other device the CPU's (the 2-core defaults the course is timed on)."""
    if device is None:
        device = default_device()
    kind = getattr(device, "type", None) or str(device).split(":", 1)[0]
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"device={device!r} is out of range: expected a cpu or cuda device")
    return _CUDA if kind == "cuda" else _CPU
