"""The ground floor: the types every room of unlearnkit shares.

Nothing here imports from the rest of the package (except the argument checks in ``_validate``), so
``data``, ``train``, ``privacy``, ``graphs``, ``decentral``, ``methods`` and ``experiments`` can all build
on it. The one calling shape every unlearning method shares:

``result = method.unlearn(state, request, config, *, generator, callback=None)``

- ``state`` (:class:`TrainedState`) is what training left behind: final parameters, checkpoints, caches,
  the dataset and, for decentralized methods, the federation and the network.
- ``request`` (:class:`Request`) says what to forget: sample indices, a whole class or a whole client.
- ``config`` is a frozen dataclass owned by the method.
- the result (:class:`Result`) holds the new parameters, a :class:`Certificate` (or ``None`` for
  heuristics), a history of small dicts for plots, and a :class:`Cost` counted on the same axes as
  retraining (gradient evaluations, messages, seconds).

A :class:`Certificate` is a *claim*: the unlearned model is (epsilon, delta)-indistinguishable from
retraining, under stated assumptions (constants L, beta, mu, C0, ...), by a named theorem. unlearnkit keeps
the paper's claim (``mode="paper"``) apart from the one we can prove (``mode="sound"``); heuristics carry
``mode="none"`` and no certificate at all is ``None``.

Long-running code accepts ``callback(event)`` with small :class:`Event` objects, so that widgets can draw
training and forgetting live.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:  # the ground floor does not import torch: privacy's accountants run without it
    import torch
    from torch import Tensor

from ._validate import (DivergenceError, check_choice, check_finite_params, check_generator, check_index_array,
                        check_int, check_request, check_request_fits, check_result, check_unlearn_call, checked_unlearn,
                        Limit)


MODES = ("paper", "sound", "none")
#: The most iterations (steps, K, rounds, local steps) a config may ask for: 10^7 steps already take hours.
MAX_STEPS = Limit("MAX_STEPS", 10_000_000)
#: The largest vector dimension a synthetic problem may ask for (10^7 float64 values are 80 MB per copy).
MAX_DIM = Limit("MAX_DIM", 10_000_000)
#: The most samples (training set, per-client data, canaries, batch size) a config may ask for.
MAX_SAMPLES = Limit("MAX_SAMPLES", 10_000_000)
#: The most trials (trained models, audit draws, Monte-Carlo draws, thresholds) an audit may ask for: each is
#: at least one model's training or evaluation, and 10^6 of them take days.
MAX_TRIALS = Limit("MAX_TRIALS", 1_000_000)
#: The most repetitions (repeats, reps, audits, seeds) of a whole experiment.
MAX_REPEATS = Limit("MAX_REPEATS", 10_000)
#: The largest seed: seeds go to torch and numpy as 64-bit integers.
MAX_SEED = Limit("MAX_SEED", 2**63 - 1)


@dataclass(frozen=True)
class Cost:
    """What a piece of work cost, on axes that compare unlearning with retraining.

    ``grad_evals`` counts per-sample gradient evaluations (a minibatch of b costs b; a full-batch gradient
    over n samples costs n; a Hessian-vector product counts as 2 gradient evaluations per sample).
    ``messages`` counts model-sized vectors sent between clients. ``memory_bytes`` is extra state kept
    (checkpoints, caches).
    """

    grad_evals: int = 0
    messages: int = 0
    seconds: float = 0.0
    memory_bytes: int = 0

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(
            self.grad_evals + other.grad_evals,
            self.messages + other.messages,
            self.seconds + other.seconds,
            max(self.memory_bytes, other.memory_bytes),
        )

    def to_dict(self) -> dict[str, float]:
        return {"grad_evals": int(self.grad_evals), "messages": int(self.messages),
                "seconds": float(self.seconds), "memory_bytes": int(self.memory_bytes)}


@dataclass(frozen=True)
class Event:
    """A small notification from a long-running loop, for live views.

    ``kind`` names what happened (``"step"``, ``"hop"``, ``"round"``, ``"noise"``, ``"eval"``, ``"done"``);
    ``step`` is the iteration, ``node`` the client involved (decentralized methods) and ``values`` any
    scalars worth plotting (loss, accuracy, noise norm, distance...).
    """

    kind: str
    step: int
    node: Optional[int] = None
    values: Mapping[str, float] = field(default_factory=dict)

    def __getitem__(self, key: str) -> float:
        return self.values[key]


Callback = Callable[[Event], None]


def emit(callback: Optional[Callback], kind: str, step: int, node: Optional[int] = None, **values: float) -> None:
    """Send an :class:`Event` if a callback is listening (a no-op otherwise, so loops stay cheap)."""
    if callback is not None:
        callback(Event(kind, step, node, {k: float(v) for k, v in values.items()}))


@dataclass(frozen=True)
class Request:
    """What to forget.

    Attributes
    ----------
    kind:
        ``"samples"`` (some samples, usually of one client), ``"class"`` (every training sample of one label)
        or ``"client"`` (every sample a client holds).
    indices:
        Indices into the *training set* of the samples to forget, each once (a duplicate is refused with a
        ``ValueError``). Stored as a private sorted copy that is read-only: a request cannot change after it
        was validated (``request.indices[0] = 5`` raises ``ValueError``).
    client:
        The client holding them, for decentralized methods (``None`` when centralized).
    label:
        The forgotten class for ``kind="class"``.
    """

    kind: str
    indices: np.ndarray
    client: Optional[int] = None
    label: Optional[int] = None

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, ("samples", "class", "client"))
        raw = check_index_array("indices", self.indices)
        for field_name in ("client", "label"):  # an id or None; junk here used to fail deep in the validator
            if getattr(self, field_name) is not None:
                check_int(field_name, getattr(self, field_name), low=0)
        idx, counts = np.unique(raw, return_counts=True)
        if idx.size == 0:
            raise ValueError("indices is empty: a forget request must name at least one training sample")
        if idx.size != raw.size:  # never drop silently: m, costs and certificates count the samples named
            dup = idx[counts > 1]
            raise ValueError(f"indices contains {raw.size - idx.size} duplicate entries (e.g. {dup[:5].tolist()}): "
                             "a forget request must name each training sample once; pass np.unique(indices)")
        if idx[0] < 0:
            raise ValueError(f"indices contains a negative index ({idx[0]})")
        idx = np.array(idx, dtype=np.int64, copy=True)  # private: the caller's array may change later
        idx.flags.writeable = False
        object.__setattr__(self, "indices", idx)

    @property
    def m(self) -> int:
        """Number of samples to forget."""
        return int(self.indices.size)

    def validate(self, *, n_train: int, train_indices: Optional[np.ndarray] = None, labels: Any = None,
                 n_classes: Optional[int] = None, client_indices: Any = None) -> "Request":
        """Check this request against the data it applies to (see :func:`check_request_fits`); return it."""
        return check_request_fits(self, n_train=n_train, train_indices=train_indices, labels=labels,
                                  n_classes=n_classes, client_indices=client_indices)

    def retain(self, indices: np.ndarray) -> np.ndarray:
        """``indices`` minus the forget set (order preserved)."""
        indices = np.asarray(indices, dtype=np.int64)
        return indices[~np.isin(indices, self.indices)]

    def describe(self) -> str:
        where = "" if self.client is None else f" of client {self.client}"
        if self.kind == "class":
            return f"forget class {self.label} ({self.m} samples{where})"
        if self.kind == "client":
            return f"forget client {self.client} ({self.m} samples)"
        return f"forget {self.m} samples{where}"


@dataclass
class TrainedState:
    """What training left behind, as unlearning methods need it.

    Attributes
    ----------
    flat:
        The :class:`~unlearnkit.models.FlatParams` view of the model.
    params:
        Final parameters ``(d,)``, or ``(N, d)`` for a network of clients.
    dataset:
        The :class:`~unlearnkit.data.Dataset` trained on.
    train_indices:
        Indices of ``dataset``'s training split that were used.
    config:
        The training config (a frozen dataclass), so retraining can repeat it exactly.
    checkpoints:
        ``{step: params}`` saved during training (R2D rewinds to them).
    federation, network:
        For decentralized methods: the partition of data among clients and the graph.
    extras:
        Anything else a method needs (gradient caches, the walk's trajectory, ...).
    cost:
        What training cost.
    """

    flat: Any
    params: Tensor
    dataset: Any
    train_indices: np.ndarray
    config: Any = None
    checkpoints: dict[int, Tensor] = field(default_factory=dict)
    federation: Any = None
    network: Any = None
    extras: dict[str, Any] = field(default_factory=dict)
    cost: Cost = field(default_factory=Cost)
    history: list[dict[str, float]] = field(default_factory=list)

    def replace(self, **changes: Any) -> "TrainedState":
        return replace(self, **changes)


@dataclass
class Result:
    """What an unlearning method returns.

    ``certificate`` is a :class:`unlearnkit.privacy.Certificate` for certified methods and ``None`` for
    heuristics (fine-tuning, gradient ascent). Retraining from scratch is exact: its certificate has
    epsilon = delta = 0.
    """

    params: Tensor
    certificate: Any
    history: list[dict[str, float]]
    cost: Cost
    extras: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Unlearner(Protocol):
    """Anything with the shared ``unlearn`` and ``certify`` signatures."""

    name: str

    def certify(self, state: TrainedState, request: Request, config: Any) -> "Plan":
        ...

    def unlearn(self, state: TrainedState, request: Request, config: Any, *, generator: torch.Generator,
                callback: Optional[Callback] = None, progress: bool = False) -> Result:
        ...


def cuda_sync() -> None:
    # no torch imported, or CUDA never initialised in this process: no GPU work to wait for (a CPU run on a
    # machine with a GPU must not pay for, or trigger, a CUDA context)
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.synchronize()


class Stopwatch:
    """``with Stopwatch() as sw: ...; sw.seconds``.

    Synchronises CUDA on entry and exit when CUDA has been initialised in this process, so GPU timings are
    honest; a CPU run (CUDA available but never used) neither waits on nor creates a CUDA context.
    """

    def __enter__(self) -> "Stopwatch":
        cuda_sync()
        self._t0 = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: Any) -> None:
        cuda_sync()
        self.seconds = time.perf_counter() - self._t0


@dataclass(frozen=True)
class Certificate:
    """An (epsilon, delta) unlearning guarantee and where it comes from.

    Attributes
    ----------
    epsilon, delta:
        The guarantee. ``epsilon = inf`` means "no guarantee" (e.g. constants only estimated).
    sigma:
        Standard deviation of the Gaussian noise that was added (``None`` if none).
    mechanism:
        What was privatised, e.g. ``"Gaussian output perturbation"``, ``"subsampled Gaussian (RDP)"``.
    source:
        The theorem or equation, e.g. ``"Mu & Klabjan 2025, Thm 3.3"``.
    mode:
        ``"paper"`` (the paper's formula as printed), ``"sound"`` (a bound we can prove) or ``"none"``
        (heuristic: the numbers are reported, not guaranteed).
    constants:
        The constants the bound assumed (``{"L": 1.0, "beta": 0.25, ...}``).
    note:
        One line a student should read (what the certificate does *not* cover, for example).
    """

    epsilon: float
    delta: float
    sigma: Optional[float] = None
    mechanism: str = ""
    source: str = ""
    mode: str = "sound"
    constants: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""

    def __post_init__(self) -> None:
        check_choice("mode", self.mode, MODES)
        if not (self.epsilon >= 0):
            raise ValueError(f"epsilon={self.epsilon!r} is out of range: expected epsilon in [0, inf]")
        if not (0 <= self.delta <= 1):
            raise ValueError(f"delta={self.delta!r} is out of range: expected delta in [0, 1]")
        if self.sigma is not None and not (self.sigma >= 0):
            raise ValueError(f"sigma={self.sigma!r} is out of range: expected sigma in [0, inf)")

    @classmethod
    def none(cls, note: str) -> "Certificate":
        """No certificate: ``epsilon = inf``, ``mode="none"``, with ``note`` saying why (the plan of a heuristic)."""
        return cls(epsilon=math.inf, delta=1.0, mode="none", mechanism="none", note=note)

    @classmethod
    def exact(cls, note: str = "the retrained model is the reference distribution itself") -> "Certificate":
        """Exact unlearning: retraining from scratch on the data without the forgotten part, ``epsilon = delta =
        0`` by definition (the plan of every retraining baseline)."""
        return cls(0.0, 0.0, None, "retraining from scratch", "exact unlearning (definition)", "sound", note=note)

    @property
    def certified(self) -> bool:
        """True only for a finite guarantee we can prove (``mode="sound"``).

        A paper-mode certificate reproduces a paper's printed calibration; several of those are loose or do
        not hold (the note says which), so they never count as certified. ``mode="none"`` is a heuristic.
        """
        return self.mode == "sound" and math.isfinite(self.epsilon)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["constants"] = dict(self.constants)
        d["certified"] = self.certified
        return d

    def __str__(self) -> str:
        sig = "-" if self.sigma is None else f"{self.sigma:.4g}"
        consts = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.constants.items())
        lines = [
            f"Certificate [{self.mode}]: ({self.epsilon:.4g}, {self.delta:.3g})-unlearning, sigma={sig}",
            f"  mechanism: {self.mechanism or '-'}",
            f"  source:    {self.source or '-'}",
        ]
        if consts:
            lines.append(f"  assumes:   {consts}")
        if self.note:
            lines.append(f"  note:      {self.note}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td></tr>"
            for k, v in [
                ("guarantee", f"({self.epsilon:.4g}, {self.delta:.3g})"),
                ("sigma", "-" if self.sigma is None else f"{self.sigma:.4g}"),
                ("mode", self.mode),
                ("mechanism", self.mechanism or "-"),
                ("source", self.source or "-"),
                ("assumes", ", ".join(f"{k}={v}" for k, v in self.constants.items()) or "-"),
                ("note", self.note or "-"),
            ]
        )
        return f"<table><caption style='text-align:left'><b>Certificate</b></caption>{rows}</table>"


@dataclass(frozen=True)
class NoisePoint:
    """One point where a method adds Gaussian noise, as its certificate declares it.

    Attributes
    ----------
    name:
        The point's name, the one its traced release carries (:mod:`unlearnkit.privacy.trace`).
    sensitivity:
        The largest L2 distance the certificate allows between the noise-free values of the two worlds
        (D and D minus D_f) at this point; ``None`` when the certificate bounds none.
    sigma:
        The noise std per coordinate.
    count:
        How many releases of this point the certificate composes (1: a single release).
    """

    name: str
    sensitivity: Optional[float]
    sigma: float
    count: int = 1


@dataclass(frozen=True)
class Plan:
    """What a method will release and certify for a request, computed before any unlearning work.

    ``certificate`` is the one :meth:`unlearn` issues (unless a check on the run, stated in its note, withdraws
    it; ``None`` for a run that issues none); ``noise`` lists the method's noise points with their declared sensitivities. Every method class
    has ``certify(state, request, config) -> Plan``, and its ``unlearn`` calls it.
    """

    certificate: Optional[Certificate]
    noise: tuple[NoisePoint, ...] = ()

    @property
    def sigma(self) -> Optional[float]:
        """The certificate's noise std (the first noise point's when the run issues no certificate)."""
        if self.certificate is not None and self.certificate.sigma is not None:
            return self.certificate.sigma
        return self.noise[0].sigma if self.noise else None

    @property
    def certified(self) -> bool:
        return self.certificate is not None and self.certificate.certified

    def point(self, name: str) -> NoisePoint:
        """The noise point called ``name`` (``KeyError`` naming the ones there are)."""
        for p in self.noise:
            if p.name == name:
                return p
        raise KeyError(f"name={name!r}: this plan's noise points are {[p.name for p in self.noise]}")
