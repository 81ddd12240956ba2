"""The mechanism trace: what every noisy release saw, for the end-to-end replay check.

A certified method adds noise at a few points (its *mechanisms*). Each such point calls :func:`noisy_release`
instead of adding :func:`~unlearnkit.privacy.noise.gaussian_noise` by hand: outside a :func:`recording`
block it is exactly ``value + gaussian_noise(value, sigma, generator)``; inside one it also keeps a
:class:`TracedMechanism` record: the noise-free vector, the noise scale, the sensitivity the certificate declares
for it, and a fingerprint of the standard-normal draw. Loops and branches whose count the certificate
assumes public report it with :func:`flow` (``flow("train.steps", T)``).

The replay check (:mod:`unlearnkit.experiments.replay`) runs a whole pipeline twice, on D and on D minus
the forget set, under a recording each, and compares the two :class:`Trace` objects.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import numpy as np
import torch
from torch import Tensor

from .._validate import check_positive
from .noise import gaussian_noise


@dataclass
class TracedMechanism:
    """One noisy release: ``value + sigma * z`` with ``z ~ N(0, I)``.

    ``sensitivity`` is the largest distance between the two worlds' noise-free ``value`` the certificate
    allows at this point (``None``: the method declared none); ``draw`` is the first entries of ``z``, so
    two runs with the same seeds can be checked to have drawn the same noise.
    """

    name: str
    value: Tensor
    sigma: float
    sensitivity: Optional[float]
    draw: Tensor


@dataclass
class Trace:
    """The mechanisms of one run, in order, and the control-flow counts it reported."""

    mechanisms: list[TracedMechanism] = field(default_factory=list)
    flow: dict[str, list[Any]] = field(default_factory=dict)
    inputs: dict[str, list[Tensor]] = field(default_factory=dict)

    def shape(self) -> list[tuple[str, tuple[int, ...]]]:
        """Name and shape of each mechanism, in order: equal in two runs with the same control flow."""
        return [(m.name, tuple(m.value.shape)) for m in self.mechanisms]


_ACTIVE: contextvars.ContextVar[Optional[Trace]] = contextvars.ContextVar("unlearnkit_trace", default=None)
_SOURCE: contextvars.ContextVar[Optional[tuple[Trace, dict[str, int]]]] = contextvars.ContextVar(
    "unlearnkit_transcript", default=None)
_DRAW_KEEP = 16


@contextlib.contextmanager
def recording() -> Iterator[Trace]:
    """``with recording() as trace: ...``: every :func:`noisy_release` and :func:`flow` inside lands in ``trace``.

    Yields
    ------
    Trace
        A fresh, empty trace, active until the block exits (nested recordings restore the outer one).
    """
    trace = Trace()
    token = _ACTIVE.set(trace)
    try:
        yield trace
    finally:
        _ACTIVE.reset(token)


@contextlib.contextmanager
def replaying(source: Trace) -> Iterator[Trace]:
    """A :func:`recording` in which every :func:`transcript` point returns ``source``'s value instead of its own.

    This is the relation of adaptive composition: each mechanism of the second run is evaluated at the state
    the first run *released* before it (the observer's view), so the two runs' noise-free values at a
    mechanism differ only through the data that mechanism reads.

    Parameters
    ----------
    source : Trace
        The recorded first run whose ``inputs`` are replayed, consumed in order per name.

    Yields
    ------
    Trace
        The second run's own recording.

    References
    ----------
    .. [1] I. Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 1 (adaptive sequential composition: the
       second mechanism g(X, D) reads the released X of the first).
    .. [2] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Theorem 3.2
       (composition of adaptively chosen f-DP mechanisms).
    """
    token = _SOURCE.set((source, {}))
    try:
        with recording() as trace:
            yield trace
    finally:
        _SOURCE.reset(token)


def transcript(name: str, value: Tensor) -> Tensor:
    """A released state that later mechanisms are computed from (the token's model before a noisy step).

    Inside a :func:`recording` it is kept (``trace.inputs[name]``); inside :func:`replaying` the source run's
    value at the same point (the same name, the same count) is returned instead; elsewhere ``value``.

    Parameters
    ----------
    name : str
        The point's name; the k-th call with a name pairs with the source run's k-th.
    value : Tensor
        This run's state at the point.

    Returns
    -------
    Tensor
        ``value`` itself, or under :func:`replaying` a copy of the source run's value on ``value``'s device
        and in its dtype (``RuntimeError`` when the source run released fewer at this name).

    References
    ----------
    .. [1] I. Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 1 (adaptive sequential composition: the
       second mechanism g(X, D) reads the released X of the first).
    .. [2] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Theorem 3.2
       (composition of adaptively chosen f-DP mechanisms).
    """
    src = _SOURCE.get()
    if src is not None:
        source, cursor = src
        seen = source.inputs.get(name, [])
        k = cursor.get(name, 0)
        if k >= len(seen):
            raise RuntimeError(f"transcript point {name!r} #{k}: the source run released only {len(seen)} "
                               "(the control flow differs)")
        cursor[name] = k + 1
        return seen[k].to(device=value.device, dtype=value.dtype).clone()
    trace = _ACTIVE.get()
    if trace is not None:
        trace.inputs.setdefault(name, []).append(value.detach().clone())
    return value


def coupled_uniforms(name: str, keys: Any, generator: torch.Generator) -> Tensor:
    """``U(0, 1)`` draws, one per row, coupled by row identity ``keys`` (the rows' indices in the raw data).

    Elsewhere and inside a :func:`recording` it is ``torch.rand(len(keys))`` (a recording keeps ``keys``);
    inside :func:`replaying` it draws as many uniforms as the source run did at this point (so the generator
    stays in step with it) and returns those of its own rows: a row present in both runs gets the same draw,
    so a Poisson-sampled batch differs only by the rows one run lacks.

    Parameters
    ----------
    name : str
        The draw point's name; the k-th call with a name pairs with the source run's k-th.
    keys : array_like of int
        Row identities, one per draw.
    generator : torch.Generator
        The generator the uniforms come from.

    Returns
    -------
    Tensor
        Shape ``(len(keys),)``, uniforms in [0, 1) on the generator's device (``RuntimeError`` under
        :func:`replaying` when a key is not among the source run's keys at this point).
    """
    keys_t = torch.as_tensor(np.asarray(keys, dtype=np.int64), device="cpu")  # an index table
    src = _SOURCE.get()
    if src is not None:
        source, cursor = src
        seen = source.inputs.get(name, [])
        k = cursor.get(name, 0)
        if k >= len(seen):
            raise RuntimeError(f"coupled draw {name!r} #{k}: the source run drew only {len(seen)}")
        cursor[name] = k + 1
        theirs = seen[k]
        u = torch.rand(theirs.numel(), generator=generator, device=generator.device)
        order = torch.argsort(theirs)
        pos = order[torch.searchsorted(theirs[order], keys_t).clamp(max=theirs.numel() - 1)]
        if not torch.equal(theirs[pos], keys_t):
            raise RuntimeError(f"coupled draw {name!r}: this run has rows the source run did not have")
        return u[pos.to(u.device)]
    trace = _ACTIVE.get()
    if trace is not None:
        trace.inputs.setdefault(name, []).append(keys_t)
    return torch.rand(keys_t.numel(), generator=generator, device=generator.device)


def noisy_release(value: Tensor, sigma: float, generator: torch.Generator, *, name: str,
            sensitivity: Optional[float] = None) -> Tensor:
    """``value + gaussian_noise(value, sigma, generator)``, recorded when a :func:`recording` is active.

    ``sigma == 0`` still draws (as :func:`~unlearnkit.privacy.noise.gaussian_noise` does), so the stream of
    later draws does not depend on it.

    Parameters
    ----------
    value : Tensor
        The noise-free release.
    sigma : float
        Noise standard deviation, ``>= 0``.
    generator : torch.Generator
        The generator the noise comes from.
    name : str
        The mechanism's name in the trace.
    sensitivity : float, optional
        The sensitivity the certificate declares at this point (``None``: none declared).

    Returns
    -------
    Tensor
        ``value + sigma * z`` with ``z ~ N(0, I)`` shaped like ``value``.

    References
    ----------
    .. [1] C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", Found. Trends Theor. Comput. Sci.
       2014, Theorem A.1 (the Gaussian mechanism this release is).
    .. [2] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration and
       Optimal Denoising", ICML 2018, Theorem 8.
    """
    trace = _ACTIVE.get()
    if trace is None:
        return value + gaussian_noise(value, sigma, generator)
    check_positive("sigma", sigma, allow_zero=True)
    z = gaussian_noise(value, 1.0, generator)  # sigma * z below is the same arithmetic as gaussian_noise's
    sens = None if sensitivity is None else float(sensitivity)
    trace.mechanisms.append(TracedMechanism(name, value.detach().clone(), float(sigma), sens,
                                      z.detach().reshape(-1)[:_DRAW_KEEP].clone()))
    return value + float(sigma) * z


def record_release(name: str, value: Tensor, sigma: float, z: Tensor, *,
                   sensitivity: Optional[float] = None) -> None:
    """Record a release ``value + sigma * z`` whose noise the caller drew itself (``z ~ N(0, I)``).

    For mechanisms that draw their noise in pieces (one message per requester, a sum of them released):
    ``value`` is the noise-free release, ``sigma`` the std of every released coordinate and ``z`` the
    standard-normal vector the release carries. Outside a :func:`recording` it does nothing.

    Parameters
    ----------
    name : str
        The mechanism's name in the trace.
    value : Tensor
        The noise-free release.
    sigma : float
        Std of every released coordinate, ``>= 0``.
    z : Tensor
        The standard-normal draw the release carries (its first entries are kept).
    sensitivity : float, optional
        The sensitivity the certificate declares at this point (``None``: none declared).

    Returns
    -------
    None
    """
    trace = _ACTIVE.get()
    if trace is None:
        return
    check_positive("sigma", sigma, allow_zero=True)
    sens = None if sensitivity is None else float(sensitivity)
    trace.mechanisms.append(TracedMechanism(name, value.detach().clone(), float(sigma), sens,
                                            z.detach().reshape(-1)[:_DRAW_KEEP].clone()))


def recording_active() -> bool:
    """Whether a :func:`recording` is active (to skip building a record nobody keeps).

    Returns
    -------
    bool
        True inside a :func:`recording` (or :func:`replaying`) block.
    """
    return _ACTIVE.get() is not None


def flow(name: str, value: Any) -> None:
    """Report a control-flow count or branch (``flow("walk.length", 12)``) to the active recording.

    Parameters
    ----------
    name : str
        The count's name; values accumulate in ``trace.flow[name]`` in call order.
    value : Any
        The count or branch taken.

    Returns
    -------
    None
        Outside a :func:`recording` it does nothing.
    """
    trace = _ACTIVE.get()
    if trace is not None:
        trace.flow.setdefault(name, []).append(value)
