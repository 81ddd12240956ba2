"""Eager argument validation with messages that name the parameter, its value and the valid range.

Every public function and config dataclass in unlearnkit validates its inputs up front with these helpers,
so a student who drags a slider to a bad value reads *which* knob is wrong and what would be right,
instead of a shape error from deep inside a loop.
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
from typing import Any, Iterable, Sequence

import numpy as np


def _fmt(value: Any) -> str:
    return repr(value)


def check_finite(name: str, value: float) -> float:
    """Return ``float(value)`` or raise ``ValueError`` if it is NaN or infinite (``TypeError`` for a bool or a
    string: ``'1'`` and ``True`` are not numbers)."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise TypeError(f"{name}={_fmt(value)} is a {type(value).__name__}, not a number: expected a real number")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={_fmt(value)} is not a number") from None
    if not math.isfinite(v):
        raise ValueError(f"{name}={_fmt(value)} must be a finite number")
    return v


#: the privacy budgets a config accepts: below 1e-6 no noise scale is representable, above 1e6 nothing is private
EPSILON_RANGE = (1e-6, 1e6)


def check_epsilon(name: str, value: float) -> float:
    """A privacy budget: a finite number in :data:`EPSILON_RANGE` (the message names both ends)."""
    v = check_finite(name, value)
    lo, hi = EPSILON_RANGE
    if not (lo <= v <= hi):
        raise ValueError(f"{name}={value!r} is out of range: expected {name} in [{lo:g}, {hi:g}] (smaller needs noise "
                         "no float represents; larger promises nothing)")
    return v


def check_positive(name: str, value: float, *, allow_zero: bool = False) -> float:
    """``value > 0`` (or ``>= 0`` with ``allow_zero``), finite."""
    v = check_finite(name, value)
    if v < 0 or (v == 0 and not allow_zero):
        rng = "[0, inf)" if allow_zero else "(0, inf)"
        raise ValueError(f"{name}={_fmt(value)} is out of range: expected {name} in {rng}")
    return v


def check_range(
    name: str,
    value: float,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Check ``low <= value <= high`` with optional open ends; the message gives the interval."""
    v = check_finite(name, value) if math.isfinite(high) or math.isfinite(low) else check_number(name, value)
    bad_low = v <= low if low_open else v < low
    bad_high = v >= high if high_open else v > high
    if bad_low or bad_high:
        lb = "(" if low_open else "["
        hb = ")" if high_open else "]"
        raise ValueError(f"{name}={_fmt(value)} is out of range: expected {name} in {lb}{low}, {high}{hb}")
    return v


def check_probability(name: str, value: float, *, allow_zero: bool = True, allow_one: bool = True) -> float:
    """A probability in [0, 1] (ends optionally open)."""
    return check_range(name, value, 0.0, 1.0, low_open=not allow_zero, high_open=not allow_one)


#: How far above 1 a probability mass function may sum (round-off of a computed pmf)
PMF_TOL = 1e-9


def check_pmf(pmf: Sequence[float]) -> np.ndarray:
    """A non-empty array of probabilities ``P(K = k)``, ``k = 0, 1, ...``, summing to at most 1 (within
    :data:`PMF_TOL`), as a float array."""
    arr = np.asarray(pmf, dtype=float).reshape(-1)
    if arr.size == 0 or np.any(~np.isfinite(arr)) or np.any(arr < 0) or arr.sum() > 1 + PMF_TOL:
        raise ValueError(f"pmf (length {arr.size}, sum {arr.sum() if arr.size else 0:.6g}) is out of range: "
                         "expected a non-empty array of probabilities P(K = k), k = 0, 1, ..., summing to at most 1")
    return arr


#: The magnitudes a privacy scale may take (epsilon, sigma, sensitivity, mu): beyond them double arithmetic
#: overflows or underflows (``sigma**2`` past 1e154, ``1/epsilon``) and the solvers lose their bracket. Wide
#: on purpose: the nonconvex D2D/R2D bounds have sensitivities near 1e21.
SCALE_MIN, SCALE_MAX = 1e-100, 1e100


def check_scale(name: str, value: float, low: float = SCALE_MIN, high: float = SCALE_MAX) -> float:
    """A positive finite magnitude within ``[low, high]`` (default :data:`SCALE_MIN`, :data:`SCALE_MAX`)."""
    return check_range(name, value, low, high)


#: The smallest delta the Gaussian calibrations accept: below it ``log(1/delta)`` leaves the double range
#: (a subnormal delta made the classic sigma infinite).
DELTA_MIN = 1e-300


def check_delta(name: str, value: float) -> float:
    """A delta in ``[DELTA_MIN, 1)``."""
    return check_range(name, value, DELTA_MIN, 1.0, high_open=True)


class Limit(int):
    """An integer bound that knows its name: ``Limit("MAX_STEPS", 10**7)`` is the int ``10**7``, and
    :func:`check_int` with ``high=`` a limit names it in its message (``... in [1, 10000000] (MAX_STEPS)``)."""

    name: str

    def __new__(cls, name: str, value: int) -> "Limit":
        self = super().__new__(cls, value)
        self.name = name
        return self

    def __reduce__(self):
        return (Limit, (self.name, int(self)))


def check_int(name: str, value: Any, *, low: int | None = None, high: int | None = None) -> int:
    """An integer (bools rejected) within optional inclusive bounds; a :class:`Limit` ``high`` is named in the
    message."""
    if isinstance(value, bool) or not isinstance(value, (int,)) and not (
        hasattr(value, "__index__") and not isinstance(value, float)
    ):
        raise ValueError(f"{name}={_fmt(value)} must be an integer")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        lo = "-inf" if low is None else str(int(low))
        hi = "inf" if high is None else str(int(high))
        named = f" ({high.name})" if isinstance(high, Limit) else ""
        raise ValueError(f"{name}={_fmt(value)} is out of range: expected an integer in [{lo}, {hi}]{named}")
    return v


def check_instance(name: str, value: Any, cls: type, *, optional: bool = False) -> Any:
    """``value`` is a ``cls`` (or ``None`` when ``optional``): a wrong object fails here, not deep in a run."""
    if (value is None and optional) or isinstance(value, cls):
        return value
    raise TypeError(f"{name}={_fmt(value)} is not a {cls.__name__}: expected a {cls.__name__}"
                    + (" or None" if optional else ""))


def check_number(name: str, value: Any) -> float:
    """``float(value)`` for a real number (inf and NaN included: range checks come after); else ``TypeError``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}={_fmt(value)} is not a number")
    return float(value)


def check_index_array(name: str, value: Any) -> np.ndarray:
    """``value`` as a flat ``int64`` array of indices; integral floats pass, anything else is refused.

    Refused with a message naming ``name``: non-numbers (``None``, strings, nested junk), booleans (a mask is
    not a list of indices: pass ``np.flatnonzero(mask)``), fractional numbers (``1.5`` used to be truncated
    to 1 silently) and integers beyond ``int64`` (an ``OverflowError`` before).
    """
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name}={_fmt(value)} is not an array of integer indices") from None
    if arr.dtype.kind == "b":
        raise ValueError(f"{name}={_fmt(value)} is a boolean mask: expected integer indices (np.flatnonzero(mask))")
    if arr.size == 0:
        return arr.astype(np.int64).ravel()
    if arr.dtype.kind == "O":  # Python ints beyond 64 bits or mixed junk
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in arr.ravel()):
            raise ValueError(f"{name}={_fmt(value)} is not an array of integer indices")
    elif arr.dtype.kind not in "iuf":
        raise ValueError(f"{name}={_fmt(value)} is not an array of integer indices")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
        raise ValueError(f"{name}={_fmt(value)} contains non-integer values: expected integer indices")
    if arr.dtype.kind in "uOf":  # vectorised for numeric arrays; Python ints (object arrays) one by one
        flat = arr.ravel()
        big = ([v for v in flat.tolist() if not -(2**63) <= v < 2**63] if arr.dtype.kind == "O"
               else flat[(flat >= 2.0**63) | (flat < -(2.0**63))].tolist())
        if big:
            raise ValueError(f"{name} contains {big[0]!r}, out of range: expected indices in [0, 2**63 - 1]")
    return arr.astype(np.int64).ravel()


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """``value`` must be one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name}={_fmt(value)} is not valid: expected one of {', '.join(map(repr, choices))}")
    return value


class DivergenceError(ValueError):
    """A run produced non-finite parameters, losses or metrics (NaN or infinity): it diverged.

    Raised instead of returning the diverged model, so that no metric or certificate is ever computed on it.
    """


def _setting(setting: Any) -> str:
    text = repr(setting)
    return text if len(text) <= 400 else text[:397] + "..."


def _all_finite(value: Any) -> bool:
    if hasattr(value, "isfinite"):  # a torch tensor (this floor does not import torch)
        return bool(value.isfinite().all())
    return bool(np.all(np.isfinite(np.asarray(value, dtype=float))))


def check_finite_params(value: Any, *, where: str, setting: Any = None, step: int | None = None,
                        what: str = "parameters") -> Any:
    """Return ``value`` (a tensor, array or number) or raise :class:`DivergenceError` if any entry is NaN/inf.

    The message names ``where`` (the function or method), the ``step`` reached and the ``setting`` (usually
    the config) that diverged, and suggests the usual cure (a smaller step size).
    """
    if _all_finite(value):
        return value
    at = "" if step is None else f" by step {step}"
    cfg = "" if setting is None else f" with {_setting(setting)}"
    raise DivergenceError(f"{where}: the {what} became non-finite (NaN or infinity){at}{cfg}; the run diverged "
                          "(try a smaller learning rate or step size); no result or certificate is returned")


def check_generator(generator: Any, *, where: str) -> Any:
    """``generator`` must be a ``torch.Generator``: unlearnkit never falls back to torch's global RNG."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(generator, torch.Generator):
        raise ValueError(f"{where}: generator={_fmt(generator)} is not a torch.Generator; randomness is always "
                         "explicit: pass generator=unlearnkit.make_generator(seed)")
    return generator


def _request_indices(request: Any, n_train: int, where: str) -> np.ndarray:
    """``request.indices`` checked on the array itself: non-empty, each in ``[0, n_train - 1]``, each once.

    Neither sortedness nor the checks of :class:`~unlearnkit.core.Request` are assumed, so an object whose
    indices were swapped after construction is re-validated here.
    """
    idx = check_index_array("request.indices", request.indices)
    if idx.size == 0:
        raise ValueError(f"{where}: request.indices is empty: a forget request must name at least one training "
                         "sample")
    lo, hi = int(idx.min()), int(idx.max())
    if lo < 0 or hi >= n_train:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{where}: request.indices contains {bad}, out of range: expected training indices in "
                         f"[0, {n_train - 1}] (the dataset has n_train={n_train})")
    uniq, counts = np.unique(idx, return_counts=True)
    if uniq.size != idx.size:
        raise ValueError(f"{where}: request.indices contains {idx.size - uniq.size} duplicate entries (e.g. "
                         f"{uniq[counts > 1][:5].tolist()}): a forget request must name each training sample once")
    return idx


def check_request_fits(request: Any, *, n_train: int, train_indices: Any = None, labels: Any = None,
                       n_classes: int | None = None, client_indices: Any = None, where: str = "request") -> Any:
    """Check a forget ``request`` against the data it applies to; return it unchanged.

    Checks (each error names the request field, its value and the valid range): every index in
    ``[0, n_train - 1]`` and named once (checked on the array, whatever its order); at least one index among
    ``train_indices`` (a request that removes nothing gets no result, so no certificate); something left to
    train on afterwards; for ``kind="class"`` a ``label`` in ``[0, n_classes - 1]`` that every forgotten sample
    carries (``labels``: all training labels); for a federation (``client_indices``: one index array per
    client) a ``client`` in range that holds every forgotten sample (``kind="client"`` or a ``"samples"``
    request that names its client), and for ``kind="client"`` every sample of that client.
    """
    n_train = int(n_train)
    idx = _request_indices(request, n_train, where)
    trained = np.arange(n_train) if train_indices is None else np.asarray(train_indices, dtype=np.int64)
    hit = np.isin(idx, trained)
    if not hit.any():
        raise ValueError(f"{where}: none of the {idx.size} request.indices (e.g. {int(idx[0])}) is among the "
                         f"{trained.size} samples the model was trained on: the request would remove nothing")
    if trained.size - int(hit.sum()) <= 0:
        raise ValueError(f"{where}: the request removes all {trained.size} training samples: nothing is left to "
                         "train on (expected at least one retained sample)")
    if request.kind == "class":
        hi = "?" if n_classes is None else int(n_classes) - 1
        if request.label is None or (n_classes is not None and not 0 <= int(request.label) < int(n_classes)):
            raise ValueError(f"{where}: request.label={_fmt(request.label)} is out of range: a class request "
                             f"needs a label in [0, {hi}]")
        if labels is not None:
            wrong = idx[np.asarray(labels)[idx] != int(request.label)]
            if wrong.size:
                raise ValueError(f"{where}: request.label={request.label} but {wrong.size} of request.indices "
                                 f"(e.g. {int(wrong[0])}) carry another label: a class request must name only "
                                 "samples of that class")
    if client_indices is not None and (request.client is not None or request.kind == "client"):
        n_clients = len(client_indices)
        c = request.client
        if c is None or isinstance(c, bool) or not 0 <= int(c) < n_clients:
            raise ValueError(f"{where}: request.client={_fmt(c)} is out of range: expected a client in "
                             f"[0, {n_clients - 1}] (the federation has n_clients={n_clients})")
        own = np.asarray(client_indices[int(c)], dtype=np.int64)
        foreign = idx[~np.isin(idx, own)]
        if foreign.size:
            raise ValueError(f"{where}: request.client={int(c)} does not hold {foreign.size} of request.indices "
                             f"(e.g. {int(foreign[0])}): a client request must name samples that client holds")
        left = np.setdiff1d(own, idx)
        if request.kind == "client" and left.size:
            raise ValueError(f"{where}: request.kind='client' names {idx.size} of the {own.size} samples that "
                             f"client {int(c)} holds (e.g. {int(left[0])} is missing): a client request must name "
                             f"every sample of its client (federation.client_indices[{int(c)}]); use "
                             "kind='samples' for part of a client's data")
    return request


def check_request_scope(request: Any, *, kinds: Iterable[str] | None = None, client_scope: str | None = None,
                        client_indices: Any = None, where: str = "request") -> Any:
    """Check that a method supports this kind of request; return it unchanged.

    ``kinds``: the request kinds the method supports (``None``: any). ``client_scope``: ``None`` (no
    constraint), ``"part"`` (the request names one client and part of its data, so the client keeps at least
    one sample) or ``"whole"`` (the request names one client and every sample it holds: the method's
    certificate is for a whole client leaving). ``client_indices``: one index array per client. Run after
    :func:`check_request_fits`, which has checked the client is in range and holds the samples.
    """
    if kinds is not None:
        kinds = tuple(kinds)
        if request.kind not in kinds:
            raise ValueError(f"{where}: request.kind={request.kind!r} is not supported: expected one of "
                             f"{', '.join(map(repr, kinds))} (the request kinds this method supports)")
    if client_scope is None:
        return request
    check_choice("client_scope", client_scope, ("part", "whole"))
    c = request.client
    what = ("unlearns a whole client (its certificate is for a client leaving)" if client_scope == "whole" else
            "deletes part of one client's data (its certificate is for samples of one client)")
    if client_indices is None:
        raise ValueError(f"{where}: the state has no federation (state.federation.client_indices): this method "
                         f"{what} and needs the partition of the data among clients")
    if c is None:
        raise ValueError(f"{where}: request.kind={request.kind!r} without a client (request.client=None): this "
                         f"method {what}; expected request.client in [0, {len(client_indices) - 1}]")
    own = np.asarray(client_indices[int(c)], dtype=np.int64)
    named = int(np.isin(own, np.asarray(request.indices, dtype=np.int64)).sum())
    if client_scope == "whole" and named < own.size:
        raise ValueError(f"{where}: the request names {named} of the {own.size} samples of client {int(c)}: this "
                         f"method {what}, so it would remove all {own.size} and certify more than was asked; "
                         f"a partial-client request is refused (pass every sample, federation.client_indices"
                         f"[{int(c)}], or use a method that certifies sample requests)")
    if client_scope == "part" and named >= own.size:
        raise ValueError(f"{where}: the request names all {own.size} samples of client {int(c)}: this method {what} "
                         "and the client must keep at least one sample (expected 1 to "
                         f"{own.size - 1} of its samples); a client that leaves needs a method for client requests")
    return request


def _numpy(x: Any) -> np.ndarray:
    return np.asarray(x.detach().cpu()) if hasattr(x, "detach") else np.asarray(x)


def check_request(state: Any, request: Any, *, where: str = "request", kinds: Iterable[str] | None = None,
                  client_scope: str | None = None) -> Any:
    """:func:`check_request_fits` then :func:`check_request_scope`, with everything read from a
    :class:`~unlearnkit.core.TrainedState`; a ``request`` that is not a Request (``None``) raises ``TypeError``."""
    if not (hasattr(request, "indices") and hasattr(request, "kind")):
        raise TypeError(f"{where}: request={_fmt(request)[:60]} is a {type(request).__name__}, not a Request: "
                        "expected a unlearnkit.core.Request naming the samples to forget")
    ds = state.dataset
    fed = getattr(state, "federation", None)
    clients = getattr(fed, "client_indices", None)
    check_request_fits(
        request, n_train=ds.n_train, train_indices=state.train_indices,
        labels=_numpy(ds.y_train) if request.kind == "class" else None, n_classes=getattr(ds, "n_classes", None),
        client_indices=clients, where=where)
    return check_request_scope(request, kinds=kinds, client_scope=client_scope, client_indices=clients, where=where)


def check_state_tensors(state: Any, *, where: str) -> None:
    """``state.params`` has the dtype and device of the training data (float64 parameters with float32 data
    failed 15 to 24 frames deep in torch)."""
    params, x = getattr(state, "params", None), getattr(getattr(state, "dataset", None), "x_train", None)
    if not (hasattr(params, "dtype") and hasattr(x, "dtype")):
        return
    if params.dtype != x.dtype:
        raise TypeError(f"{where}: state.params has dtype {params.dtype} but the data has dtype {x.dtype}: expected "
                        f"the same floating dtype (convert with params.to({x.dtype}))")
    if params.device != x.device:
        raise ValueError(f"{where}: state.params is on device {params.device} but the data is on {x.device}: "
                         "expected one device (load the data with device=... or move the parameters)")


def check_unlearn_call(state: Any, request: Any, generator: Any, *, where: str, kinds: Iterable[str] | None = None,
                       client_scope: str | None = None) -> None:
    """The checks at the start of every method's ``unlearn``: an explicit generator, parameters that match the
    data's dtype and device, and a request that fits, of a kind (and client scope) the method supports."""
    check_generator(generator, where=where)
    check_state_tensors(state, where=where)
    check_request(state, request, where=where, kinds=kinds, client_scope=client_scope)


def check_result(result: Any, *, where: str, setting: Any = None) -> Any:
    """Return ``result`` (a :class:`~unlearnkit.core.Result`) after checking its parameters are finite."""
    check_finite_params(result.params, where=where, setting=setting)
    return result


def checked_unlearn(unlearn: Any) -> Any:
    """Decorate a method's ``unlearn``: :func:`check_unlearn_call` before it runs, :func:`check_result` after.

    So every method refuses a missing generator or a request that does not fit its state before any work, and
    never returns (or certifies) non-finite parameters. The request's kind and client scope are checked against
    the method class's ``request_kinds`` (a tuple of kinds; required) and ``client_scope`` (``None``, ``"part"``
    or ``"whole"``; see :func:`check_request_scope`). The config's class comes from the annotation of ``config``,
or, where a shared ``unlearn`` annotates it ``Any``, from the class attribute ``config_type``. The signature is kept (``inspect.signature`` follows
    ``__wrapped__``), so ``tests/test_calling_shape.py`` sees the method's own.
    """
    sig = inspect.signature(unlearn)
    hint = sig.parameters["config"].annotation if "config" in sig.parameters else None
    # the config's class, from the annotation (a string under ``from __future__ import annotations``)
    expected = unlearn.__globals__.get(hint) if isinstance(hint, str) else hint

    @functools.wraps(unlearn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        where = f"{type(self).__name__}.unlearn"
        cls = type(self)
        want = expected if isinstance(expected, type) and expected is not Any else getattr(cls, "config_type", None)
        if want is not None and not isinstance(a["config"], want):  # another method's config
            raise TypeError(f"{where}: config={_setting(a['config'])} is not a {want.__name__}: pass the "
                            f"config of this method ({want.__name__})")
        kinds = getattr(cls, "request_kinds", None)
        if kinds is None:  # every method states what it unlearns: a missing declaration is a bug, not "any"
            raise TypeError(f"{where}: {cls.__name__}.request_kinds is not set: a method class must state the "
                            "request kinds it supports")
        check_unlearn_call(a["state"], a["request"], a["generator"], where=where, kinds=kinds,
                           client_scope=getattr(cls, "client_scope", None))
        return check_result(unlearn(self, *args, **kwargs), where=where, setting=a.get("config"))

    return wrapper
