"""An RDP accountant with a readable ledger, and one ledger per observer.

The accountant is a running sum of Renyi curves over a fixed grid of orders (composition, Mironov 2017,
Proposition 1), converted to (epsilon, delta) on demand with :func:`~unlearnkit.privacy.rdp.rdp_to_dp`.
What makes it ours:

- **a ledger a student can read**: every :meth:`RDPAccountant.compose` call records *what* was composed
  (an event with a one-line description), *how often*, and *why* (free text, e.g. "noisy corrective step at
  client 3"); consecutive identical entries merge, so 10^4 DP-SGD steps are one line;
- **observers**: in decentralized learning each client sees a different part of the run (RR-DU's network
  RDP, digest 000 section 3.3). ``compose(..., observer="client 2")`` charges only that client's ledger;
  ``observer=None`` charges the default (central) ledger; :meth:`RDPAccountant.epsilon` takes the observer.

Events are small frozen dataclasses (:class:`GaussianEvent`, :class:`SubsampledGaussianEvent`,
:class:`LinearEvent`, :class:`CurveEvent`); a raw array is accepted too. dp_accounting's ``GaussianDpEvent``,
``PoissonSampledDpEvent(q, GaussianDpEvent)``, ``SelfComposedDpEvent`` and ``ComposedDpEvent`` are translated,
so the same description can be fed to both accountants (notebook 02 does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from .._validate import check_choice, check_int, check_positive, check_scale, check_probability
from ..core import Certificate
from .rdp import (CONVERSIONS, DEFAULT_ORDERS, check_orders, gaussian_rdp, rdp_to_delta, rdp_to_dp,
                  subsampled_gaussian_rdp)


#: The key of the default ledger (``observer=None``).
CENTRAL = "central"


@dataclass(frozen=True)
class GaussianEvent:
    """One Gaussian mechanism: noise std ``sigma`` on a quantity of L2 sensitivity ``sensitivity``."""

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        check_scale("sigma", self.sigma)
        check_scale("sensitivity", self.sensitivity)

    def curve(self, orders: np.ndarray) -> np.ndarray:
        return gaussian_rdp(self.sigma, orders, self.sensitivity)

    def describe(self) -> str:
        return f"Gaussian(sigma={self.sigma:.4g}, sensitivity={self.sensitivity:.4g})"


@dataclass(frozen=True)
class SubsampledGaussianEvent:
    """One Poisson-subsampled Gaussian step: rate ``q``, noise multiplier ``sigma`` (add/remove-one)."""

    q: float
    sigma: float

    def __post_init__(self) -> None:
        check_probability("q", self.q, allow_zero=False)
        check_scale("sigma", self.sigma)

    def curve(self, orders: np.ndarray) -> np.ndarray:
        return subsampled_gaussian_rdp(self.q, self.sigma, orders)

    def describe(self) -> str:
        return f"PoissonSubsampledGaussian(q={self.q:.4g}, noise multiplier={self.sigma:.4g})"


@dataclass(frozen=True)
class LinearEvent:
    """A bound ``D_alpha <= alpha rho`` at every order (amplification by iteration, zCDP)."""

    rho: float
    label: str = "linear RDP"

    def __post_init__(self) -> None:
        check_positive("rho", self.rho, allow_zero=True)

    def curve(self, orders: np.ndarray) -> np.ndarray:
        return np.asarray(orders, dtype=float) * self.rho

    def describe(self) -> str:
        return f"{self.label}(alpha * {self.rho:.4g})"


@dataclass(frozen=True, eq=False)
class CurveEvent:
    """Any precomputed curve on the accountant's orders, with a description."""

    values: np.ndarray
    label: str = "RDP curve"

    def curve(self, orders: np.ndarray) -> np.ndarray:
        v = np.asarray(self.values, dtype=float)
        if v.shape != np.shape(orders):
            raise ValueError(f"curve has shape {v.shape} but the accountant has {np.shape(orders)} orders")
        if np.any(np.isnan(v)) or np.any(v < 0):
            raise ValueError("curve contains NaN or negative values; an RDP curve is non-negative")
        return v

    def describe(self) -> str:
        return self.label


PrivacyEvent = Union[GaussianEvent, SubsampledGaussianEvent, LinearEvent, CurveEvent]


def _from_dp_accounting(event: Any) -> list[tuple[PrivacyEvent, int]]:
    """Translate a dp_accounting DpEvent (duck-typed; no import needed) into our events with counts."""
    name = type(event).__name__
    if name == "GaussianDpEvent":
        return [(GaussianEvent(float(event.noise_multiplier)), 1)]
    if name == "PoissonSampledDpEvent" and type(event.event).__name__ == "GaussianDpEvent":
        q = float(event.sampling_probability)
        sigma = float(event.event.noise_multiplier)
        return [(GaussianEvent(sigma) if q == 1 else SubsampledGaussianEvent(q, sigma), 1)]
    if name == "SelfComposedDpEvent":
        return [(e, c * int(event.count)) for e, c in _from_dp_accounting(event.event)]
    if name == "ComposedDpEvent":
        out: list[tuple[PrivacyEvent, int]] = []
        for e in event.events:
            out += _from_dp_accounting(e)
        return out
    raise ValueError(f"event={event!r} is not supported: expected a curve, one of our events, or a dp_accounting "
                     "Gaussian / Poisson-sampled Gaussian / self-composed / composed event")


@dataclass
class LedgerEntry:
    """One line of a ledger: ``count`` times ``event``, and why."""

    event: PrivacyEvent
    count: int
    why: str
    curve: np.ndarray = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {"event": self.event.describe(), "count": self.count, "why": self.why}


class RDPAccountant:
    """Compose Renyi curves per observer and convert them to (epsilon, delta).

    Parameters
    ----------
    orders : array of orders > 1
        The grid every curve lives on (default :data:`~unlearnkit.privacy.rdp.DEFAULT_ORDERS`).

    Examples
    --------
    >>> acc = RDPAccountant()
    >>> acc.compose(SubsampledGaussianEvent(q=0.01, sigma=1.1), count=1000, why="DP-SGD")
    >>> round(acc.epsilon(1e-5), 3)
    1.712
    """

    def __init__(self, orders: Iterable[float] = DEFAULT_ORDERS) -> None:
        self.orders = check_orders(orders)
        self.orders.setflags(write=False)
        self._ledgers: dict[Hashable, list[LedgerEntry]] = {}
        self._totals: dict[Hashable, np.ndarray] = {}

    # -- composing ---------------------------------------------------------------------------------------
    def compose(
        self,
        curve_or_event: Any,
        count: int = 1,
        *,
        why: str = "",
        observer: Hashable | Sequence[Hashable] | None = None,
    ) -> None:
        """Charge ``count`` repetitions of an event (or a raw curve) to one or several observers' ledgers.

        ``observer`` may be a single key, a list of keys (each is charged the full amount: each sees the
        event) or ``None`` for the central ledger.
        """
        count = check_int("count", count, low=0)
        if isinstance(curve_or_event, (np.ndarray, list, tuple)):
            items: list[tuple[PrivacyEvent, int]] = [(CurveEvent(np.asarray(curve_or_event, dtype=float)), 1)]
        elif hasattr(curve_or_event, "curve") and hasattr(curve_or_event, "describe"):
            items = [(curve_or_event, 1)]
        else:
            items = _from_dp_accounting(curve_or_event)
        keys = [CENTRAL] if observer is None else (
            list(observer) if isinstance(observer, (list, tuple, set, frozenset)) else [observer])
        prepared = [(ev, k * count, ev.curve(self.orders)) for ev, k in items]
        for key in keys:
            ledger = self._ledgers.setdefault(key, [])
            total = self._totals.setdefault(key, np.zeros_like(self.orders))
            for ev, n, curve in prepared:
                if n == 0:
                    continue
                last = ledger[-1] if ledger else None
                # run-length merge of identical consecutive entries (CurveEvents never compare equal)
                if last is not None and last.why == why and not isinstance(ev, CurveEvent) and last.event == ev:
                    last.count += n
                else:
                    ledger.append(LedgerEntry(ev, n, why, curve))
                total += n * curve

    # -- reading -----------------------------------------------------------------------------------------
    @property
    def observers(self) -> list[Hashable]:
        """The ledgers that exist, in creation order."""
        return list(self._ledgers)

    def rdp(self, observer: Hashable | None = None) -> np.ndarray:
        """The composed curve of an observer (zeros if nothing was charged to it)."""
        key = CENTRAL if observer is None else observer
        return self._totals.get(key, np.zeros_like(self.orders)).copy()

    def ledger(self, observer: Hashable | None = None) -> list[dict[str, Any]]:
        """The observer's ledger as rows ``{"event", "count", "why"}``."""
        key = CENTRAL if observer is None else observer
        return [e.as_dict() for e in self._ledgers.get(key, [])]

    def n_events(self, observer: Hashable | None = None) -> int:
        """How many mechanism invocations were charged (sum of counts, not the number of ledger lines)."""
        key = CENTRAL if observer is None else observer
        return sum(e.count for e in self._ledgers.get(key, []))

    def epsilon_and_order(self, delta: float, method: str = "cks", *, observer: Hashable | None = None,
                          warn_edge: bool = True) -> tuple[float, float]:
        """``(epsilon, best order)`` for the observer's composed curve at ``delta``."""
        check_choice("method", method, CONVERSIONS)
        r = self.rdp(observer)
        if not np.any(r):
            check_probability("delta", delta, allow_zero=False, allow_one=False)
            return 0.0, float("nan")
        return rdp_to_dp(self.orders, r, delta, method=method, warn_edge=warn_edge)

    def epsilon(self, delta: float, method: str = "cks", *, observer: Hashable | None = None) -> float:
        """Epsilon spent so far by the observer, at ``delta``, with the named conversion."""
        return self.epsilon_and_order(delta, method, observer=observer)[0]

    def delta(self, epsilon: float, method: str = "cks", *, observer: Hashable | None = None) -> float:
        """The smallest delta at which the observer's view is epsilon-DP."""
        r = self.rdp(observer)
        if not np.any(r):
            check_positive("epsilon", epsilon, allow_zero=True)
            return 0.0
        return rdp_to_delta(self.orders, r, epsilon, method=method)[0]

    def worst_observer(self, delta: float, method: str = "cks") -> tuple[Optional[Hashable], float]:
        """The observer with the largest epsilon and that epsilon (``(None, 0.0)`` if nothing was composed)."""
        best: tuple[Optional[Hashable], float] = (None, 0.0)
        for key in self._ledgers:
            e = self.epsilon(delta, method, observer=key)
            if best[0] is None or e > best[1]:
                best = (key, e)
        return best

    def certificate(
        self,
        delta: float,
        *,
        method: str = "cks",
        observer: Hashable | None = None,
        sigma: float | None = None,
        mechanism: str = "",
        source: str = "",
        mode: str = "sound",
        constants: Mapping[str, Any] | None = None,
        note: str = "",
    ) -> Certificate:
        """Package the observer's (epsilon, delta) as a :class:`Certificate` (best order in ``constants``)."""
        eps, order = self.epsilon_and_order(delta, method, observer=observer)
        consts = dict(constants or {})
        consts.setdefault("rdp_order", order)
        consts.setdefault("conversion", method)
        if not mechanism:
            mechanism = "; ".join(f"{e['count']} x {e['event']}" for e in self.ledger(observer))
        return Certificate(epsilon=eps, delta=delta, sigma=sigma, mechanism=mechanism, source=source, mode=mode,
                           constants=consts, note=note)

    def summary(self, delta: float, method: str = "cks") -> str:
        """A plain-text table: one block per observer with its ledger and its (epsilon, delta)."""
        lines = []
        for key in self._ledgers:
            eps, order = self.epsilon_and_order(delta, method, observer=key, warn_edge=False)
            lines.append(f"[{key}] epsilon = {eps:.4g} at delta = {delta:.3g} ({method}, best order {order:g})")
            for row in self.ledger(key):
                why = f"  # {row['why']}" if row["why"] else ""
                lines.append(f"    {row['count']:>8d} x {row['event']}{why}")
        return "\n".join(lines) if lines else "(empty accountant)"

    def __repr__(self) -> str:
        return f"RDPAccountant({len(self.orders)} orders, observers={self.observers!r})"
