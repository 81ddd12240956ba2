"""Privacy loss distribution (PLD) accounting for the Gaussian and the Poisson-subsampled Gaussian mechanism.

Renyi DP bounds a composition from one side only, and its conversion to (epsilon, delta) loses a few per cent
(:mod:`unlearnkit.privacy.rdp`). The PLD describes the mechanism *exactly*: the distribution of the privacy
loss ``L = log(dP/dQ)(X)``, ``X ~ P``, of a dominating pair ``(P, Q)`` determines ``delta(eps)`` for every
``eps``, and composition adds independent losses (Meiser & Mohammadi 2018; Koskela et al. 2020). Discretised on
a grid of width ``h`` it is read from both sides:

- **pessimistic** (an upper bound; what a certificate may use): each bucket ``(k h, (k+1) h]`` of losses is
  split between its two end points so that both its ``P``- and its ``Q``-mass are kept ("connect the dots",
  Doroshenko et al. 2022, Alg. 1). This rounds every loss *up in the convex order*: the result is again a PLD
  (of a pair that dominates ``(P, Q)``), its delta equals the true one at every grid point and lies above it in
  between, and it composes soundly. Plain rounding up (privacy buckets) is also pessimistic but shifts the
  mean loss by about ``h/2`` per step, ``T h / 2`` after ``T`` steps; connect-the-dots keeps the mean of
  ``e^{-L}`` and its error does not grow that way. Losses above the range are put at ``+inf``.
- **optimistic** (a lower bound): each bucket's mass is rounded *down* to ``k h``; that is a lower bound after
  any composition because ``delta`` is increasing in every step's loss. To undo most of the ``T h / 2``
  drift, the pmf records the mean and variance of the rounding and adds back what Hoeffding's or Bernstein's
  inequality guarantees
  (:meth:`unlearnkit.privacy.pld_grid.GridPmf.delta`), so the bracket narrows like ``h sqrt(T)``.

Composition is an FFT convolution; ``T``-fold self-composition is one FFT power on a window chosen by a
Chernoff bound, with at most ``tail`` (default ``1e-15``) of mass wrapped, added to the ``+inf`` mass of
the pessimistic estimate (Koskela et al. 2020, Sec. 5). Neighbouring relations (``relation=``):

- ``"add_remove"`` (add or remove one record), both directions (remove: ``P = (1-q) N(0, s^2) + q N(1, s^2)``,
  ``Q = N(0, s^2)``; add: the pair swapped); the reported epsilon/delta is the larger of the two (Zhu, Dong &
  Wang 2022). For ``q = 1`` this is the Gaussian mechanism, whose composition is exactly ``mu``-GDP (Dong, Roth
  & Su 2019) and is checked against it in the tests.
- ``"substitution"`` (replace one record by another, each contribution of norm at most 1, both in the batch
  with the same probability ``q``): ``P = (1-q) N(0, s^2) + q N(1, s^2)``, ``Q = (1-q) N(0, s^2) + q N(-1, s^2)``,
  whose loss ``L(x) = log(1-q + q e^{(2x-1)/(2s^2)}) - log(1-q + q e^{(-2x-1)/(2s^2)})`` is increasing and odd,
  so one direction is enough (the pair is its own mirror image). For ``q = 1`` it is the Gaussian mechanism
  of sensitivity 2 (exactly ``(2/s)``-GDP per step). This is the pair of dp_accounting's ``REPLACE_ONE``
  relation (its ``AdjacencyType.REPLACE``, Google's "Privacy loss distributions" supplement).

References
----------
Meiser & Mohammadi 2018, "Tight on budget? Tight bounds for r-fold approximate differential privacy", CCS.
Koskela, Jalko & Honkela 2020, "Computing tight differential privacy guarantees using FFT", AISTATS.
Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, "Connect the dots: tighter discrete approximations of
privacy loss distributions", PoPETs.
Dong, Roth & Su 2019, "Gaussian differential privacy".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
from scipy import special

from .._validate import check_choice, check_delta, check_int, check_positive, check_probability, check_range, check_scale
from .pld_grid import GridPmf


#: the two directions of the add-or-remove-one relation
PLD_DIRECTIONS = ("remove", "add")
#: the neighbouring relations: add or remove one record, or substitute one (both directions in one pair)
PLD_RELATIONS = ("add_remove", "substitution")
_RELATION_PARTS = {"add_remove": PLD_DIRECTIONS, "substitution": ("replace",)}
#: the pessimistic discretisations: connect-the-dots (default) or plain rounding up (privacy buckets)
PLD_ESTIMATES = ("connect_dots", "round_up")

_Z = 10.0  # the x range covers the normal law to 10 standard deviations (tails below 1e-23)
_GRID_MIN, _GRID_MAX = 1e-6, 1.0
_TAIL_MAX = 1e-6
#: the smallest delta a certificate reads the PLD's upper end at. Below 1e-15 (the default ``tail`` the
#: compositions charge at ``+inf``) it is infinite; above that, double-precision FFT round-off leaves an absolute
#: error of about 1e-14 in the composed pmf, which moved the upper end *below* its own pmf's exact reading (direct
#: convolution, four DP-SGD settings) by at most 2e-9 at delta 1e-5, 2e-6 at 1e-8, 6e-5 at 1e-10, 4e-3 at 1e-12
#: and 0.12 at 1e-14 (measured, not proven: docs/frontiers/accountants.md)
PLD_MIN_DELTA = 1e-8
_MAX_POINTS = 5_000_000  # grid points of one step's loss range (40 MB per array)


@dataclass(frozen=True)
class EpsilonBracket:
    """Epsilon from both sides: ``lower <= exact <= upper``; only ``upper`` may go into a certificate."""

    lower: float
    upper: float

    @property
    def width(self) -> float:
        """``upper - lower``."""
        return self.upper - self.lower


@dataclass(frozen=True)
class DeltaBracket:
    """Delta from both sides: ``lower <= exact <= upper``; only ``upper`` may go into a certificate."""

    lower: float
    upper: float

    @property
    def width(self) -> float:
        """``upper - lower``."""
        return self.upper - self.lower


def _mass(lo: np.ndarray, hi: np.ndarray, mean: float, s: float) -> np.ndarray:
    """``N(mean, s^2)`` mass of ``[lo, hi]`` elementwise, from the side where the difference keeps digits."""
    z1, z2 = (lo - mean) / s, (hi - mean) / s
    return np.maximum(np.where(z1 > 0, special.ndtr(-z1) - special.ndtr(-z2), special.ndtr(z2) - special.ndtr(z1)),
                      0.0)


def _x_of_replace_loss(eps: np.ndarray, q: float, s: float) -> np.ndarray:
    """The ``x`` with substitution loss ``eps``: the positive root ``a = e^{x/s^2}`` of
    ``q c a^2 + (1-q)(1-e^eps) a - e^eps q c = 0`` (``c = e^{-1/(2 s^2)}``), in logs for ``eps >= 0`` and by
    the loss's oddness (``L(-x) = -L(x)``) below."""
    e = np.abs(eps)
    with np.errstate(divide="ignore"):
        log_a = np.log((1.0 - q) * -np.expm1(-e)) if q < 1 else np.full(e.shape, -np.inf)
    log_b2 = 2.0 * math.log(2.0 * q) - 1.0 / (s * s) - e  # log(4 q^2 c^2 e^-eps)
    log_inner = np.logaddexp(log_a, 0.5 * np.logaddexp(2.0 * log_a, log_b2))
    x = s * s * (e + log_inner - math.log(2.0 * q)) + 0.5
    return np.sign(eps) * x


def _x_of_loss(eps: np.ndarray, q: float, s: float, direction: str) -> np.ndarray:
    """The point ``x`` where the loss equals ``eps`` (``-inf`` beyond the loss's bound).

    remove: ``L(x) = log(1 - q + q e^u)``, add: ``L(x) = -log(1 - q + q e^u)``, ``u = (2x - 1) / (2 s^2)``;
    replace: the substitution loss of the module docstring.
    """
    if direction == "replace":
        return _x_of_replace_loss(eps, q, s)
    sign = 1.0 if direction == "remove" else -1.0
    e = sign * eps
    with np.errstate(divide="ignore", invalid="ignore"):
        l1q = math.log1p(-q) if q < 1 else -math.inf
        u = e + np.log(-np.expm1(l1q - e)) - math.log(q)  # log((e^e - (1 - q)) / q) without cancellation
        u = np.where(e > l1q, u, -np.inf)
    return s * s * u + 0.5


def _loss_of_x(x: float, q: float, s: float, direction: str) -> float:
    u = (2.0 * x - 1.0) / (2.0 * s * s)
    l1q = math.log1p(-q) if q < 1 else -math.inf
    val = float(np.logaddexp(l1q, math.log(q) + u))
    if direction == "replace":
        return val - float(np.logaddexp(l1q, math.log(q) + (-2.0 * x - 1.0) / (2.0 * s * s)))
    return val if direction == "remove" else -val


def _direction_pmfs(q: float, s: float, h: float, direction: str,
                    estimate: str = "connect_dots") -> tuple[GridPmf, GridPmf]:
    """Pessimistic (connect-the-dots or rounded-up) and optimistic (rounded-down) pmfs of one direction."""
    p_comp = [(1.0 - q, 0.0), (q, 1.0)] if direction in ("remove", "replace") else [(1.0, 0.0)]
    q_comp = {"remove": [(1.0, 0.0)], "add": [(1.0 - q, 0.0), (q, 1.0)],
              "replace": [(1.0 - q, 0.0), (q, -1.0)]}[direction]
    x_lo, x_hi = -_Z * s, 1.0 + _Z * s
    ends = sorted([_loss_of_x(x_lo, q, s, direction), _loss_of_x(x_hi, q, s, direction)])
    k0, k1 = math.floor(ends[0] / h), max(math.ceil(ends[1] / h), math.floor(ends[0] / h) + 1)
    if k1 - k0 > _MAX_POINTS:
        raise ValueError(f"grid={h!r} is too fine for sigma={s!r}: the loss range [{ends[0]:.4g}, {ends[1]:.4g}] "
                         f"needs {k1 - k0} grid points; expected grid >= {(ends[1] - ends[0]) / _MAX_POINTS:.3g}")
    eps = np.arange(k0, k1 + 1) * h
    x = _x_of_loss(eps, q, s, direction)
    if direction in ("remove", "replace"):
        lo, hi = x[:-1], x[1:]                           # losses (eps_i, eps_i+1]  <->  x in (x_i, x_i+1]
        below, above = (-np.inf, x[0]), (x[-1], np.inf)
    else:
        lo, hi = x[1:], x[:-1]                           # the loss decreases in x
        below, above = (x[0], np.inf), (-np.inf, x[-1])

    def mass(comp, a, b):
        return sum(w * _mass(np.asarray(a, float), np.asarray(b, float), m, s) for w, m in comp if w > 0)

    pm, qm = mass(p_comp, lo, hi), mass(q_comp, lo, hi)
    p_below, p_above = float(mass(p_comp, *below)), float(mass(p_comp, *above))
    # connect the dots: split (pm, qm) into a at eps_i and pm - a at eps_i+1 keeping both masses
    with np.errstate(over="ignore", invalid="ignore"):
        a = (qm * np.exp(eps[:-1]) - pm * math.exp(-h)) / -math.expm1(-h)
    a = np.clip(np.nan_to_num(a, nan=0.0, posinf=0.0), 0.0, pm)
    pess = np.zeros(eps.size)
    if estimate == "round_up":  # privacy buckets: the whole bucket at its upper end
        pess[1:] += pm
    else:
        pess[:-1] += a
        pess[1:] += pm - a
    pess[0] += p_below  # losses below the grid rounded up (keeps a pessimistic bound)
    # optimistic: bucket mass at its lower end; r = log(pm / qm) - eps_i in [0, h] is the rounding
    opt = np.zeros(eps.size)
    opt[:-1] = pm
    opt[-1] = p_above  # losses above the grid rounded down to the top; the lower tail is dropped
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.clip(np.log(pm) - np.log(qm) - eps[:-1], 0.0, h)
    r = np.where(pm > 0, np.nan_to_num(r), 0.0)
    shift = float(np.sum(pm * r))
    spread = float(np.sum(pm * (r - shift) ** 2)) + max(1.0 - float(np.sum(pm)), 0.0) * shift * shift
    return (GridPmf(h, k0, pess, min(p_above, 1.0), True)._trimmed(),
            GridPmf(h, k0, opt, 0.0, False, shift=shift, steps=1, spread=spread)._trimmed())


class PLD:
    """Privacy loss distributions of one neighbouring relation, each kept pessimistic and optimistic.

    Build with :meth:`gaussian` or :meth:`subsampled_gaussian`; combine with :meth:`compose` and
    :meth:`self_compose`; read with :meth:`epsilon` and :meth:`delta`, which return brackets whose ``upper``
    end is the certified value. See the module docstring for the discretisation and the references.
    """

    def __init__(self, parts: Mapping[str, tuple[GridPmf, GridPmf]], grid: float):
        self._parts = dict(parts)
        self.grid = float(grid)

    @property
    def relation(self) -> str:
        """The neighbouring relation, one of :data:`PLD_RELATIONS`."""
        return "substitution" if "replace" in self._parts else "add_remove"

    @classmethod
    def subsampled_gaussian(cls, q: float, sigma: float, *, grid: float = 1e-3,
                            estimate: str = "connect_dots", relation: str = "add_remove") -> "PLD":
        """One step of the Poisson-subsampled Gaussian mechanism (contribution norm 1, noise multiplier ``sigma``).

        Parameters
        ----------
        q : float in (0, 1]
            Sampling rate; ``q = 1`` is the plain Gaussian mechanism.
        sigma : float > 0
            Noise multiplier (noise standard deviation over the L2 sensitivity).
        grid : float in [1e-6, 1]
            ``value_discretization_interval``: the width of the loss grid.
        estimate : {"connect_dots", "round_up"}
            The pessimistic discretisation (see the module docstring); ``"round_up"`` is there to show the
            ``T h / 2`` drift that connect-the-dots avoids.
        relation : {"add_remove", "substitution"}
            The neighbouring relation (module docstring); ``"substitution"`` with ``q = 1`` is the Gaussian
            mechanism of sensitivity 2.

        Returns
        -------
        PLD
            One step, pessimistic and optimistic.
        """
        q = check_probability("q", q, allow_zero=False)
        sigma = check_scale("sigma", sigma, low=1e-3, high=1e6)
        grid = check_range("grid", grid, _GRID_MIN, _GRID_MAX)
        check_choice("estimate", estimate, PLD_ESTIMATES)
        check_choice("relation", relation, PLD_RELATIONS)
        return cls({d: _direction_pmfs(q, sigma, grid, d, estimate) for d in _RELATION_PARTS[relation]}, grid)

    @classmethod
    def gaussian(cls, sigma: float, *, sensitivity: float = 1.0, grid: float = 1e-3,
                 estimate: str = "connect_dots") -> "PLD":
        """The Gaussian mechanism ``f(D) + N(0, sigma^2)`` for ``f`` of L2 sensitivity ``sensitivity``."""
        sigma = check_scale("sigma", sigma)
        sensitivity = check_scale("sensitivity", sensitivity)
        ratio = sigma / sensitivity
        if not 1e-3 <= ratio <= 1e6:
            raise ValueError(f"sigma / sensitivity = {ratio!r} is out of range: expected it in [0.001, 1e6]")
        return cls.subsampled_gaussian(1.0, ratio, grid=grid, estimate=estimate)

    def _check(self, other: "PLD") -> None:
        if not isinstance(other, PLD):
            raise TypeError(f"other={other!r} is not a PLD")
        if other.grid != self.grid:
            raise ValueError(f"other.grid={other.grid!r} differs from grid={self.grid!r}: build both on one grid")
        if other.relation != self.relation:
            raise ValueError(f"other.relation={other.relation!r} differs from relation={self.relation!r}: compose "
                             "mechanisms analysed under one neighbouring relation")

    def compose(self, other: "PLD", *, tail: float = 1e-15) -> "PLD":
        """The PLD of running this mechanism and then ``other`` (any order; adaptive composition).

        ``tail`` in [0, 1e-6]: the mass cut from the ends of each result (sound on both sides).
        """
        self._check(other)
        tail = check_range("tail", tail, 0.0, _TAIL_MAX)
        return PLD({d: (p.compose(other._parts[d][0], tail), o.compose(other._parts[d][1], tail))
                    for d, (p, o) in self._parts.items()}, self.grid)

    def self_compose(self, times: int, *, tail: float = 1e-15) -> "PLD":
        """``times``-fold composition with itself (one FFT power; ``tail`` of mass may wrap and is accounted)."""
        times = check_int("times", times, low=1, high=10**8)
        tail = check_range("tail", tail, 0.0, _TAIL_MAX)
        return PLD({d: (p.self_compose(times, tail), o.self_compose(times, tail))
                    for d, (p, o) in self._parts.items()}, self.grid)

    def epsilon(self, delta: float) -> EpsilonBracket:
        """The smallest epsilon with ``delta(epsilon) <= delta``, from both sides (max over the directions)."""
        delta = check_delta("delta", delta)
        return EpsilonBracket(max(o.epsilon(delta) for _, o in self._parts.values()),
                              max(p.epsilon(delta) for p, _ in self._parts.values()))

    def delta(self, epsilon: float) -> DeltaBracket:
        """The hockey-stick divergence at ``epsilon``, from both sides (max over the directions)."""
        epsilon = check_positive("epsilon", epsilon, allow_zero=True)
        return DeltaBracket(max(o.delta(epsilon) for _, o in self._parts.values()),
                            max(p.delta(epsilon) for p, _ in self._parts.values()))

    def pmf(self, direction: str = "remove", *, pessimistic: bool = True) -> GridPmf:
        """The discretised loss distribution of one direction (for plots and teaching); ``"replace"`` is the one
        direction of the substitution relation."""
        if direction not in self._parts:
            raise ValueError(f"direction={direction!r} is not one of {tuple(self._parts)} (relation "
                             f"{self.relation!r})")
        return self._parts[direction][0 if pessimistic else 1]

    def __repr__(self) -> str:
        sizes = {d: p.probs.size for d, (p, _) in self._parts.items()}
        return f"PLD(grid={self.grid:g}, relation={self.relation!r}, sizes={sizes})"


def _dpsgd_pld(q: float, sigma: float, steps: int, grid: float, relation: str = "add_remove") -> PLD:
    steps = check_int("steps", steps, low=1, high=10**8)
    return PLD.subsampled_gaussian(q, sigma, grid=grid, relation=relation).self_compose(steps)


def pld_epsilon(q: float, sigma: float, steps: int, delta: float, *, grid: float = 1e-3,
                relation: str = "add_remove") -> EpsilonBracket:
    """Epsilon of ``steps`` Poisson-subsampled Gaussian steps (DP-SGD) at ``delta``, from both sides.

    Parameters
    ----------
    q : float in (0, 1]
        Sampling rate (``q = 1``: ``steps`` plain Gaussian mechanisms).
    sigma : float > 0
        Noise multiplier.
    steps : int >= 1
    delta : float in (0, 1)
    grid : float in [1e-6, 1]
        Width of the loss grid; the bracket narrows as it shrinks.
    relation : {"add_remove", "substitution"}
        The neighbouring relation (module docstring).

    Returns
    -------
    EpsilonBracket
        ``lower <= exact epsilon <= upper``; a certificate uses ``upper``.

    References
    ----------
    Koskela, Jalko & Honkela, "Computing tight differential privacy guarantees using FFT", AISTATS 2020.
    Doroshenko, Ghazi, Kamath, Kumar & Manurangsi, "Connect the dots: tighter discrete approximations of
    privacy loss distributions", PoPETs 2022, Algorithm 1 (the pessimistic estimate).
    """
    delta = check_delta("delta", delta)
    return _dpsgd_pld(q, sigma, steps, grid, relation).epsilon(delta)


def pld_delta(q: float, sigma: float, steps: int, epsilon: float, *, grid: float = 1e-3,
              relation: str = "add_remove") -> DeltaBracket:
    """Delta of ``steps`` Poisson-subsampled Gaussian steps at ``epsilon``, from both sides (see
    :func:`pld_epsilon`).

    Parameters
    ----------
    q : float in (0, 1]
        Sampling rate (``q = 1``: ``steps`` plain Gaussian mechanisms).
    sigma : float in [1e-3, 1e6]
        Noise multiplier.
    steps : int in [1, 1e8]
        Number of steps.
    epsilon : float
        ``>= 0``, finite.
    grid : float in [1e-6, 1]
        Width of the loss grid; the bracket narrows as it shrinks.
    relation : {"add_remove", "substitution"}
        The neighbouring relation (module docstring).

    Returns
    -------
    DeltaBracket
        ``lower <= exact delta <= upper`` (the larger of the add and remove directions); a certificate uses
        ``upper``.

    References
    ----------
    Koskela, Jalko & Honkela, "Computing tight differential privacy guarantees using FFT", AISTATS 2020.
    Doroshenko, Ghazi, Kamath, Kumar & Manurangsi, "Connect the dots: tighter discrete approximations of
    privacy loss distributions", PoPETs 2022, Algorithm 1 (the pessimistic estimate).
    """
    epsilon = check_positive("epsilon", epsilon, allow_zero=True)
    return _dpsgd_pld(q, sigma, steps, grid, relation).delta(epsilon)
