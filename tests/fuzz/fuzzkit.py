"""The contract every fuzzed call must meet, and the shared hypothesis settings of ``tests/fuzz``.

A call on hostile input must end in exactly one of two ways:

1. **a clear error**: a ``ValueError`` or ``TypeError`` (or a subclass: ``DatasetCorruptError``,
   ``DivergenceError``) *raised inside unlearnkit* (the innermost traceback frame is in the package, not in
   numpy, scipy, torch or networkx), whose message names one of the parameters the caller passed;
2. **a finite result**: every float, array and tensor in the result is finite (``allow_inf`` admits
   infinity where it is the documented answer, e.g. epsilon of a mechanism without privacy); never NaN.

Anything else fails the test: a foreign exception (``ZeroDivisionError``, ``OverflowError``, ``IndexError``,
``RuntimeError`` from torch, a scipy error, ...), a ``ValueError`` from deep inside a dependency, a message
that does not say which parameter is wrong, or a hang (every call runs under a wall-clock alarm).
"""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import traceback
from contextlib import contextmanager
from typing import Any, Callable, Iterable

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import unlearnkit

PACKAGE_DIR = os.path.dirname(os.path.abspath(unlearnkit.__file__))
#: wall-clock bound on one call: anything slower on hostile input counts as a hang
CALL_SECONDS = 5.0

# few examples, fixed seed: the whole suite stays under a minute on one core and CI is reproducible
settings.register_profile("fuzz", max_examples=30, deadline=3000, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.register_profile("fuzz-long", max_examples=500, deadline=None, derandomize=False)
FUZZ = settings.get_profile(os.environ.get("UNLEARNKIT_FUZZ_PROFILE", "fuzz"))

#: finite values at the ends of the double range and around the usual edges
EXTREMES = [0.0, -0.0, 5e-324, 1e-308, 1e-300, 1e-160, 1e-12, 0.5, 1.0, 1.0 - 1e-16, 2.0, 1e12, 1e154, 1e300,
            1.7976931348623157e308, -1.0, -1e308]
#: any float, with the extremes and the non-finite ones overrepresented
wild_floats = st.one_of(st.sampled_from(EXTREMES + [math.nan, math.inf, -math.inf]), st.floats(), st.floats(-3, 3))
#: positive finite floats of every magnitude
pos_floats = st.one_of(st.sampled_from([v for v in EXTREMES if v > 0]),
                       st.floats(min_value=5e-324, max_value=1.7976931348623157e308))
#: integers from tiny to unreasonable (10**30 does not fit an int64)
wild_ints = st.one_of(st.integers(-3, 40), st.sampled_from([0, -1, 2**31, 2**63, 10**30]))
#: values of the wrong type
junk = st.one_of(st.none(), st.text(max_size=3), st.booleans(), st.just([1.0, 2.0]), st.just(object()))


class Hang(AssertionError):
    """The call ran past :data:`CALL_SECONDS` on one input."""


@contextmanager
def time_limit(seconds: float = CALL_SECONDS):
    def on_alarm(signum, frame):
        raise Hang(f"the call ran longer than {seconds} s (a hang or an unbounded search)")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def raised_in_package(exc: BaseException) -> bool:
    """The innermost frame of ``exc``'s traceback is a file of unlearnkit."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(PACKAGE_DIR)


def is_clear_error(exc: BaseException, names: Iterable[str]) -> bool:
    """The definition of a clear error: ValueError/TypeError raised by unlearnkit naming a parameter."""
    msg = str(exc)
    return (isinstance(exc, (ValueError, TypeError)) and not isinstance(exc, Hang) and raised_in_package(exc)
            and any(n in msg for n in names))


def assert_finite(value: Any, *, allow_inf: bool = False, where: str = "result") -> None:
    """No NaN anywhere in ``value`` (numbers, arrays, tensors, sequences, dicts, dataclasses); no inf either
    unless ``allow_inf``."""
    if value is None or isinstance(value, (str, bytes, bool)):
        return
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            assert_finite(getattr(value, f.name), allow_inf=allow_inf, where=f"{where}.{f.name}")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            assert_finite(v, allow_inf=allow_inf, where=f"{where}[{k!r}]")
        return
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().double().numpy()
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            assert_finite(v, allow_inf=allow_inf, where=f"{where}[{i}]")
        return
    arr = np.asarray(value)
    if arr.dtype.kind in "fc":
        assert not np.any(np.isnan(arr)), f"{where} contains NaN: {value!r}"
        if not allow_inf:
            assert np.all(np.isfinite(arr)), f"{where} is not finite: {value!r}"


def check_contract(fn: Callable[..., Any], *args: Any, names: Iterable[str] = (), allow_inf: bool = False,
                   seconds: float = CALL_SECONDS, **kwargs: Any) -> Any:
    """Call ``fn(*args, **kwargs)`` and assert the contract; return the result (``None`` after a clear error).

    ``names``: the parameter names a message may cite (default: the keyword names passed).
    """
    names = tuple(names) or tuple(kwargs)
    try:
        with time_limit(seconds):
            result = fn(*args, **kwargs)
    except Hang:
        raise
    except (ValueError, TypeError) as exc:
        if not is_clear_error(exc, names):
            raise AssertionError(f"unclear error from {getattr(fn, '__name__', fn)}: {type(exc).__name__}: {exc} "
                                 f"(expected a message from unlearnkit naming one of {names})") from exc
        return None
    except Exception as exc:  # noqa: BLE001 - the point: any other exception is a finding
        raise AssertionError(f"foreign exception from {getattr(fn, '__name__', fn)}: "
                             f"{type(exc).__name__}: {exc}") from exc
    assert_finite(result, allow_inf=allow_inf)
    return result
