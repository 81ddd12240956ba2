"""RR-DU's per-client privacy ledger fed from the messages the ranks actually exchanged.

:class:`unlearnkit.methods.rrdu.SoundObserverLedger` charges observer ``v`` with ``k_v``, the number of noisy
u-steps made before ``v``'s last receipt of the token (its docstring has the argument). The simulator reads
``k_v`` off the planned route. In a real run the route is whatever the messages did, so here it is read off the
per-rank message logs (:meth:`MessageLog.rows <unlearnkit.distributed.MessageLog.rows>`), two ways:

- :func:`route_from_messages`: the realised route rebuilt from every rank's token and stop messages (the
  token's header carries the hop index; the holder stays put between two moves). Pass it to the ledger as
  its ``path``.
- :func:`observer_visits`: ``k_v`` per client from what each client itself saw: ``u``'s own log gives the hops
  ``u`` ran (from each arrival of the token to its next departure), ``v``'s own log its last receipt.

Both equal the route-derived counts when the run followed its route (tested); a lost or extra message shows
as a mismatch (:func:`route_from_messages` raises on a token sent by a rank that did not hold it).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from .._validate import check_int


def _sends(rows: Iterable[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["direction"] == "send" and r["kind"] == kind]


def route_from_messages(rows: Iterable[dict[str, Any]]) -> np.ndarray:
    """The walk's route (client per hop) rebuilt from all ranks' message-log rows of one walk."""
    rows = list(rows)
    tokens = sorted(_sends(rows, "token"), key=lambda r: r["step"])
    stops = _sends(rows, "stop")
    if not stops:
        raise ValueError("no stop message in the rows: pass every rank's log of one finished walk")
    last = {r["step"] for r in stops}
    if len(last) != 1 or len({r["src"] for r in stops}) != 1:
        raise ValueError(f"the stop messages disagree on the last hop or holder: steps {sorted(last)}")
    n_hops = last.pop() + 1
    holder = tokens[0]["src"] if tokens else stops[0]["src"]
    moves = {r["step"]: r for r in tokens}
    if len(moves) != len(tokens):
        raise ValueError("two token messages carry the same hop index: the rows mix several walks")
    route = np.empty(n_hops, dtype=np.int64)
    for t in range(n_hops):
        if t in moves:
            if moves[t]["src"] != holder:
                raise ValueError(f"hop {t}: rank {moves[t]['src']} sent the token but rank {holder} held it")
            holder = moves[t]["dst"]
        route[t] = holder
    if route[-1] != stops[0]["src"]:
        raise ValueError(f"the walk ends at rank {route[-1]} but rank {stops[0]['src']} sent the stop")
    return route


def observer_visits(logs: Sequence[Sequence[dict[str, Any]]], u: int) -> np.ndarray:
    """``k_v`` for every client ``v`` (0 at ``u``) from the per-rank logs ``logs[r]`` (rank ``r``'s rows).

    ``u``'s hops are the runs from each arrival of the token at ``u`` (a received token's hop index, or hop 0
    when ``u``'s first message is a send) to its next departure (the hop index of the token it sends, or one
    past the hop of its stop message). ``k_v`` counts those before ``v``'s last received token."""
    n = len(logs)
    u = check_int("u", u, low=0, high=n - 1)
    events = sorted((r["step"], r["direction"], r["kind"]) for r in logs[u] if r["kind"] in ("token", "stop")
                    and (r["direction"] == "send" or r["kind"] == "token"))
    runs: list[tuple[int, int]] = []
    arrival = 0 if events and events[0][1] == "send" else None
    for step, direction, kind in events:
        if direction == "recv":
            arrival = step
        elif arrival is not None:
            runs.append((arrival, step + 1 if kind == "stop" else step))
            arrival = None

    def before(t: int) -> int:
        return sum(max(0, min(end, t) - a) for a, end in runs)

    seen = np.zeros(n, dtype=np.int64)
    for v in range(n):
        got = [r["step"] for r in logs[v] if r["direction"] == "recv" and r["kind"] == "token"]
        if v != u and got:
            seen[v] = before(max(got))
    return seen
