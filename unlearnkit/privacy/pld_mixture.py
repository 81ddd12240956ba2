"""A mixture of privacy loss distributions: a mechanism composed a random, data-independent number of times.

When the number ``K`` of steps is drawn independently of the data, with the same law in both worlds, the joint
output ``(K, view)`` has hockey-stick divergence

    ``H_eps = sum_k P(K = k) H_eps(P_k || Q_k)``

for each direction of the neighbouring relation (the common marginal of ``K`` factors out; hiding ``K`` can only
lower it), where ``(P_k, Q_k)`` is the dominating pair of ``base`` composed with ``k`` steps
(:mod:`unlearnkit.privacy.mixture`, fact 2, for plain Gaussians). Read through PLDs, ``delta(eps)`` of the joint
output is the delta of the *mixture* ``sum_k P(K = k) PLD_k`` of the composed loss distributions, one direction
at a time (the larger direction is reported). This works for any step a :class:`~unlearnkit.privacy.PLD` can
hold, the Poisson-subsampled Gaussian included, which the Gaussian (GDP) form cannot express.

Both ends are kept:

- **upper** (certifies): the pessimistic pmfs of ``k = 0 .. k_max`` summed with their weights into one pmf on the
  common grid (exactly the mixture's delta, an upper bound because each part is), with the mass of
  ``P(K > k_max)`` and any missing ``pmf`` mass put at loss ``+inf`` (delta 1);
- **lower**: ``sum_k P(K = k) delta_k^low(eps)`` over the same ``k`` with each part's optimistic reading
  (:meth:`unlearnkit.privacy.pld_grid.GridPmf.delta`); dropping the rest is valid for a lower bound. The
  reported lower epsilon is a point where that lower delta still exceeds the target.

``k_max`` is the smallest ``k`` with ``P(K > k) <= pmf_tail`` (default ``1e-12`` for a delta reading and
``1e-4 delta`` for an epsilon reading), so the number of FFT compositions is bounded by the support that matters.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from .._validate import check_delta, check_pmf, check_positive, check_range
from .pld import PLD, DeltaBracket, EpsilonBracket
from .pld_grid import GridPmf


def _identity(like: PLD) -> PLD:
    """The PLD of releasing nothing (loss 0 with probability 1), on ``like``'s grid and relation."""
    parts = {d: (GridPmf(like.grid, 0, np.ones(1), 0.0, True), GridPmf(like.grid, 0, np.ones(1), 0.0, False))
             for d in like._parts}
    return PLD(parts, like.grid)


def _components(pmf: np.ndarray, step: PLD, base: Optional[PLD], pmf_tail: float) -> tuple[list, float]:
    """``[(P(K = k), PLD_k)]`` for ``k <= k_max`` with positive weight, and the charged tail mass."""
    if not isinstance(step, PLD):
        raise TypeError(f"step={step!r} is not a PLD")
    if base is not None:
        step._check(base)
    beyond = np.clip(1.0 - np.cumsum(pmf), 0.0, None)  # P(K > k), the missing mass included
    k_max = int(np.argmax(beyond <= pmf_tail)) if np.any(beyond <= pmf_tail) else pmf.size - 1
    tail = float(max(1.0 - pmf[: k_max + 1].sum(), 0.0))
    current = base if base is not None else _identity(step)
    out = []
    for k in range(k_max + 1):
        if pmf[k] > 0:
            out.append((float(pmf[k]), current))
        if k < k_max:
            current = current.compose(step)
    return out, tail


def _upper_pmfs(comps: list, tail: float) -> list[GridPmf]:
    """Per direction: the weighted sum of the pessimistic pmfs on the common grid, ``tail`` at ``+inf``."""
    out = []
    for d in comps[0][1]._parts:
        pess = [(w, p._parts[d][0]) for w, p in comps]
        k0 = min(g.k0 for _, g in pess)
        end = max(g.k0 + g.probs.size for _, g in pess)
        probs = np.zeros(end - k0)
        inf = tail
        for w, g in pess:
            probs[g.k0 - k0: g.k0 - k0 + g.probs.size] += w * g.probs
            inf += w * g.inf_mass
        out.append(GridPmf(pess[0][1].h, k0, probs, min(inf, 1.0), True))
    return out


def _lower_delta(comps: list, epsilon: float) -> float:
    return max(sum(w * p._parts[d][1].delta(epsilon) for w, p in comps) for d in comps[0][1]._parts)


def _check_common(pmf, step, base, pmf_tail):
    arr = check_pmf(pmf)
    pmf_tail = check_range("pmf_tail", pmf_tail, 0.0, 1e-3)
    return _components(arr, step, base, pmf_tail)


def pld_mixture_delta(epsilon: float, pmf: Sequence[float], step: PLD, *, base: Optional[PLD] = None,
                      pmf_tail: float = 1e-12) -> DeltaBracket:
    """Delta at ``epsilon`` of ``base`` followed by ``K`` steps, ``K ~ pmf`` independent of the data, both ends.

    Parameters
    ----------
    epsilon : float
        ``>= 0``, finite.
    pmf : sequence of float
        ``P(K = k)`` for ``k = 0, 1, ...``, non-negative, summing to at most 1 (the missing mass counts as
        delta 1 on the upper end).
    step : PLD
        One step (e.g. :meth:`PLD.gaussian` or :meth:`PLD.subsampled_gaussian`).
    base : PLD, optional
        A part that is always there (e.g. a noisy training), on the same grid and relation; ``None``: nothing.
    pmf_tail : float in [0, 1e-3]
        Counts beyond the smallest ``k`` with ``P(K > k) <= pmf_tail`` are charged delta 1 (upper) or 0 (lower).

    Returns
    -------
    DeltaBracket
        ``lower <= sum_k P(K = k) delta_k(epsilon) <= upper`` (the larger direction); ``upper`` certifies.

    References
    ----------
    Koskela, Jalko & Honkela 2020, "Computing tight differential privacy guarantees using FFT", AISTATS (the
    composed PLDs); the mixture over a data-independent count is joint convexity of the hockey-stick
    divergence (:mod:`unlearnkit.privacy.mixture`).
    """
    epsilon = check_positive("epsilon", epsilon, allow_zero=True)
    comps, tail = _check_common(pmf, step, base, pmf_tail)
    upper = max(g.delta(epsilon) for g in _upper_pmfs(comps, tail))
    return DeltaBracket(min(_lower_delta(comps, epsilon), upper), min(upper, 1.0))


def pld_mixture_epsilon(delta: float, pmf: Sequence[float], step: PLD, *, base: Optional[PLD] = None,
                        pmf_tail: Optional[float] = None, tol: float = 1e-4) -> EpsilonBracket:
    """Epsilon at ``delta`` of ``base`` followed by ``K ~ pmf`` steps (module docstring), from both sides.

    Parameters
    ----------
    delta : float
        In (0, 1).
    pmf : sequence of float
        ``P(K = k)`` for ``k = 0, 1, ...``, non-negative, summing to at most 1 (the missing mass counts as
        delta 1 on the upper end).
    step : PLD
        One step, on the same grid and relation as ``base``.
    base : PLD, optional
        A part that is always there; ``None``: nothing.
    pmf_tail : float in [0, 1e-3], optional
        As in :func:`pld_mixture_delta`; ``None``: ``1e-4 delta``.
    tol : float in [1e-9, 1e-1]
        Bisection tolerance of the lower end (the upper end is exact for its discrete pmf).

    Returns
    -------
    EpsilonBracket
        ``upper``: the smallest epsilon whose pessimistic mixture delta is at most ``delta`` (``inf`` when the
        infinite-loss mass alone exceeds it); ``lower``: an epsilon at which the optimistic mixture delta still
        exceeds ``delta`` (0 when none does).

    References
    ----------
    Koskela, Jalko & Honkela 2020, "Computing tight differential privacy guarantees using FFT", AISTATS;
    Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, "Connect the dots", PoPETs (the pessimistic pmfs).
    """
    delta = check_delta("delta", delta)
    tol = check_range("tol", tol, 1e-9, 1e-1)
    comps, tail = _check_common(pmf, step, base, 1e-4 * delta if pmf_tail is None else pmf_tail)
    upper = max(g.epsilon(delta) for g in _upper_pmfs(comps, tail))
    lo = 0.0
    if _lower_delta(comps, 0.0) <= delta:
        return EpsilonBracket(0.0, upper)
    hi = upper if math.isfinite(upper) else max(g.losses[-1] for g in _upper_pmfs(comps, 0.0)) + 1.0
    if _lower_delta(comps, hi) > delta:  # the optimistic reading exceeds delta up to the top of the support
        return EpsilonBracket(hi, upper)
    while hi - lo > tol:  # invariant: lower delta at lo exceeds delta, at hi it does not
        mid = 0.5 * (lo + hi)
        if _lower_delta(comps, mid) > delta:
            lo = mid
        else:
            hi = mid
    return EpsilonBracket(lo, upper)
