"""Trained worlds, reused within a session: a notebook that trains the same profile twice trains it once.

Training is deterministic given its configuration and seed (every draw comes from a generator seeded by the
caller), so a second call with the same configuration would recompute the same bits. :func:`memoized` keeps
the first result and hands out a **deep copy** on every call (the first included), so callers can mutate
what they get (load parameters into the module, add extras) without touching the stored copy or each other:
a memoised world is bitwise the world a fresh call would train (``tests/foundation/test_startup_cache.py``).

The key is the ``repr`` of the configuration (frozen dataclasses print every field, nested configs
included), so two configurations that differ in any field never share an entry. ``UNLEARNKIT_MEMO=0``
turns the memo off; :func:`clear_memo` empties it.
"""

from __future__ import annotations

import copy
import os
from collections import OrderedDict
from typing import Any, Callable, Hashable


_MAX_ENTRIES = 32  # digits-sized worlds are a few MB each; an LRU bound keeps a long session's memory flat
_STORE: "OrderedDict[tuple[str, str], Any]" = OrderedDict()
_STATS = {"hits": 0, "misses": 0}


def memo_enabled() -> bool:
    """False when ``UNLEARNKIT_MEMO`` is ``0``/``false``/``no`` (read on every call, so tests can flip it)."""
    return os.environ.get("UNLEARNKIT_MEMO", "1").strip().lower() not in {"0", "false", "no"}


def memoized(kind: str, key: Hashable, build: Callable[[], Any]) -> Any:
    """``build()``, or a deep copy of the value an earlier call with the same ``(kind, repr(key))`` built.

    ``build`` must be deterministic given ``key`` (it seeds its own generators from the key) and must not
    report progress to a callback (a memo hit would skip the events): callers bypass the memo for those.
    """
    if not memo_enabled():
        return build()
    k = (kind, repr(key))
    if k in _STORE:
        _STORE.move_to_end(k)
        _STATS["hits"] += 1
        return copy.deepcopy(_STORE[k])
    _STATS["misses"] += 1
    value = build()
    _STORE[k] = copy.deepcopy(value)
    while len(_STORE) > _MAX_ENTRIES:
        _STORE.popitem(last=False)
    return value


def memoized_on(owners: tuple, kind: str, key: Hashable, build: Callable[[], Any]) -> Any:
    """:func:`memoized` for work on live objects (a trained world): a hit needs the *same* objects.

    ``owners`` are the objects the work reads (a world's model, data, trained state...); they are compared by
    identity (``is``) and kept alive by the entry, so an id cannot be reused by another object while the entry
    lives. ``key`` holds everything else, by value (``repr``): the settings, including any mutable setting
    of the owners (a world's ``setup`` can be swapped in place, so it belongs in ``key``).
    """
    if not memo_enabled():
        return build()
    k = (kind, repr((tuple(id(o) for o in owners), key)))
    entry = _STORE.get(k)
    if entry is not None and len(entry[0]) == len(owners) and all(a is b for a, b in zip(entry[0], owners)):
        _STORE.move_to_end(k)
        _STATS["hits"] += 1
        return copy.deepcopy(entry[1])
    _STATS["misses"] += 1
    value = build()
    _STORE[k] = (tuple(owners), copy.deepcopy(value))
    while len(_STORE) > _MAX_ENTRIES:
        _STORE.popitem(last=False)
    return value


def clear_memo() -> None:
    """Forget every memoised world (and reset :func:`memo_stats`)."""
    _STORE.clear()
    _STATS.update(hits=0, misses=0)


def memo_stats() -> dict[str, int]:
    """``{"hits", "misses", "entries"}`` since the last :func:`clear_memo`."""
    return {**_STATS, "entries": len(_STORE)}
