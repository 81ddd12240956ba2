"""Arithmetic of privacy loss distributions on a grid: composition by FFT, tails, and epsilon/delta readings.

A discretised privacy loss distribution (PLD) is a probability mass function on the losses ``k h`` (``h`` the
grid width, ``k`` an integer) plus a mass at ``+inf``. For the first distribution ``P`` of a dominating pair
``(P, Q)`` and the privacy loss ``L = log(dP/dQ)``, the hockey-stick divergence is

    ``delta(eps) = P(L = inf) + E_P[(1 - exp(eps - L))_+]``

(Meiser & Mohammadi 2018; Koskela et al. 2020, eq. (2.4)), and the loss of a composition is the sum of the
independent losses, so composing is convolving. :class:`GridPmf` is that object, either *pessimistic* (its
delta is an upper bound on the true one, for every epsilon and after any composition) or *optimistic* (a
lower bound); :mod:`unlearnkit.privacy.pld` builds them for the Gaussian mechanisms.

Soundness bookkeeping, per estimate:

- tails truncated while composing: a pessimistic pmf moves a lower tail up onto its lowest kept loss and an
  upper tail to ``+inf``; an optimistic one drops a lower tail and moves an upper tail down onto its highest
  kept loss. Both moves keep the bound's direction exactly.
- self-composition by FFT (Koskela et al. 2020, Sec. 5) computes a circular convolution on a window chosen by
  a Chernoff bound, so at most ``tail`` of mass wraps around: a pessimistic pmf adds ``tail`` to ``+inf``, an
  optimistic one records it as ``slack`` and subtracts it from every delta it reports.
- an optimistic pmf rounds each step's loss down by ``r_t in [0, h]``; it records the mean of those roundings
  under ``P`` (``shift``) and the number of rounded steps (``steps``), so that a reading may add back most of
  ``sum_t r_t`` by Hoeffding's or Bernstein's inequality (see :meth:`GridPmf.delta`); it also records the
  summed variance of the roundings (``spread``), which is what makes Bernstein's bound tight: every bucket
  rounds down by nearly h / 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import fft as sfft
from scipy import optimize, special


_MAX_FFT = 1 << 26  # points of a self-composition window (0.5 GB of float64)

# log of the Chernoff orders (in units of 1/loss) scanned when choosing the window of a self-composition
_LOG_ORDERS = np.linspace(math.log(1e-3), math.log(1e4), 16)


@dataclass(frozen=True)
class GridPmf:
    """A privacy loss distribution on the grid ``h Z`` plus a mass at ``+inf`` (see the module docstring).

    Attributes
    ----------
    h : float
        Grid width (``value_discretization_interval``).
    k0 : int
        ``probs[j]`` is the mass of the loss ``(k0 + j) h``.
    probs : ndarray
        Non-negative masses; ``probs.sum() + inf_mass <= 1`` (a pessimistic pmf may lose mass to ``-inf``).
    inf_mass : float
        Mass of the loss ``+inf``.
    pessimistic : bool
        Upper bound (True) or lower bound (False) on every delta.
    slack : float
        Optimistic only: mass that FFT wrap-around may have moved up; subtracted from every delta.
    shift, steps, spread : float, int, float
        Optimistic only: the summed mean rounding ``sum_t E_P[r_t]``, the number of rounded steps and the
        summed variance ``sum_t Var_P[r_t]``.
    """

    h: float
    k0: int
    probs: np.ndarray
    inf_mass: float
    pessimistic: bool
    slack: float = 0.0
    shift: float = 0.0
    steps: int = 0
    spread: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        """The finite losses ``(k0 + j) h`` the masses sit on."""
        return (self.k0 + np.arange(self.probs.size)) * self.h

    # -- composition ---------------------------------------------------------------------------------------

    def _check_other(self, other: "GridPmf") -> None:
        if not isinstance(other, GridPmf):
            raise TypeError(f"other={other!r} is not a GridPmf")
        if other.h != self.h or other.pessimistic != self.pessimistic:
            raise ValueError(f"cannot compose a pmf on grid {other.h!r} (pessimistic={other.pessimistic}) with one "
                             f"on grid {self.h!r} (pessimistic={self.pessimistic}): grids and estimates must match")

    def compose(self, other: "GridPmf", tail: float = 1e-15) -> "GridPmf":
        """The pmf of the sum of the two losses (a full linear convolution), tails cut at ``tail`` in all."""
        self._check_other(other)
        n = self.probs.size + other.probs.size - 1
        size = sfft.next_fast_len(n, real=True)  # a linear convolution (scipy.signal would pull in scipy.stats)
        probs = np.maximum(sfft.irfft(sfft.rfft(self.probs, size) * sfft.rfft(other.probs, size), size)[:n], 0.0)
        inf = 1.0 - (1.0 - self.inf_mass) * (1.0 - other.inf_mass)
        out = replace(self, k0=self.k0 + other.k0, probs=probs, inf_mass=inf, slack=self.slack + other.slack,
                      shift=self.shift + other.shift, steps=self.steps + other.steps,
                      spread=self.spread + other.spread)
        return out._truncated(tail)

    def _truncated(self, tail: float) -> "GridPmf":
        """Cut at most ``tail / 2`` of mass from each end, moving it as the module docstring says."""
        p = self.probs
        if tail <= 0 or p.size < 3:
            return self
        lo = int(np.searchsorted(np.cumsum(p), tail / 2.0, side="right"))
        hi = p.size - int(np.searchsorted(np.cumsum(p[::-1]), tail / 2.0, side="right"))
        if hi - lo < 1:
            return self
        kept = p[lo:hi].copy()
        low_mass, high_mass = float(p[:lo].sum()), float(p[hi:].sum())
        inf = self.inf_mass
        if self.pessimistic:
            kept[0] += low_mass  # rounded up onto the lowest kept loss
            inf = inf + high_mass
        else:
            kept[-1] += high_mass  # rounded down onto the highest kept loss; the lower tail is dropped
        return replace(self, k0=self.k0 + lo, probs=kept, inf_mass=min(inf, 1.0))

    def self_compose(self, times: int, tail: float = 1e-15) -> "GridPmf":
        """``times``-fold composition with itself by one FFT power on a Chernoff window (Koskela et al. 2020)."""
        p, n = self.probs, self.probs.size
        inf = -math.expm1(times * math.log1p(-self.inf_mass)) if self.inf_mass < 1 else 1.0
        full = times * (n - 1) + 1
        lo, hi = self._chernoff_window(times, tail)
        width = hi - lo + 1
        if width >= full:
            lo, size, wrapped = 0, sfft.next_fast_len(full, real=True), 0.0
        else:
            size, wrapped = sfft.next_fast_len(max(width, n), real=True), tail
        if size > _MAX_FFT:
            raise ValueError(f"times={times!r} composes to a loss range of {size} grid points (more than {_MAX_FFT}); "
                             f"expected a coarser grid than {self.h!r} or fewer steps")
        spectrum = sfft.rfft(p, size) ** times
        circ = np.maximum(sfft.irfft(spectrum, size), 0.0)
        window = np.roll(circ, -(lo % size))[: min(size, full - lo)]
        slack, shift, steps = self.slack * times, self.shift * times, self.steps * times
        if self.pessimistic:
            inf = min(inf + wrapped, 1.0)
        else:
            slack += wrapped
        out = replace(self, k0=self.k0 * times + lo, probs=window, inf_mass=inf, slack=slack, shift=shift,
                      steps=steps, spread=self.spread * times)
        return out._trimmed()

    def _chernoff_window(self, times: int, tail: float) -> tuple[int, int]:
        """Indices ``[lo, hi]`` of the composed pmf outside which at most ``tail / 2`` of mass lies on each side.

        ``P(S >= t) <= exp(times log M(lam) - lam t)`` for the moment generating function ``M`` of one loss
        (measured from the lowest loss, in grid units) and every ``lam > 0``; the mirror image for the lower
        tail. The best of a geometric range of orders is taken.
        """
        n = self.probs.size
        full_hi = times * (n - 1)
        if tail <= 0 or n == 1:
            return 0, full_hi
        pos = self.probs > 0
        logp = np.log(self.probs[pos])
        x = np.flatnonzero(pos) * self.h
        budget = math.log(2.0 / tail)

        def bound(log_lam: float, sign: float) -> float:  # the Chernoff end for one order; any order is valid
            lam = math.exp(log_lam)
            val = (times * special.logsumexp(sign * lam * x + logp) + budget) / lam
            return val if math.isfinite(val) else math.inf

        ends = []
        for sign in (1.0, -1.0):  # a coarse scan of the orders, then a bounded refinement around the best
            vals = [bound(g, sign) for g in _LOG_ORDERS]
            i = int(np.argmin(vals))
            lo_g, hi_g = _LOG_ORDERS[max(i - 1, 0)], _LOG_ORDERS[min(i + 1, _LOG_ORDERS.size - 1)]
            res = optimize.minimize_scalar(bound, bounds=(lo_g, hi_g), args=(sign,), method="bounded",
                                           options={"xatol": 0.05})
            ends.append(min(vals[i], float(res.fun)))
        hi_t, lo_t = ends[0], -ends[1]
        hi = full_hi if not np.isfinite(hi_t) else min(full_hi, int(math.ceil(hi_t / self.h)) + 1)
        lo = 0 if not np.isfinite(lo_t) else max(0, int(math.floor(lo_t / self.h)) - 1)
        return lo, max(hi, lo)

    def _trimmed(self) -> "GridPmf":
        nz = np.flatnonzero(self.probs > 0)
        if nz.size == 0:
            return replace(self, probs=np.zeros(1))
        return replace(self, k0=self.k0 + int(nz[0]), probs=self.probs[nz[0]: nz[-1] + 1].copy())

    # -- readings ------------------------------------------------------------------------------------------

    def _raw_delta(self, epsilon: float) -> float:
        l = self.losses
        above = l > epsilon
        return float(self.inf_mass + np.sum(self.probs[above] * -np.expm1(epsilon - l[above])))

    def _raw_epsilon(self, delta: float, floor: float = 0.0) -> float:
        """The smallest ``eps >= floor`` with ``_raw_delta(eps) <= delta``, exact for the discrete pmf.

        Between two neighbouring losses ``delta(eps) = m + A - e^eps B`` with ``A``, ``B`` the sums of ``p`` and
        ``p e^{-l}`` over the losses above; the interval is found from the values at the losses. ``B`` is kept
        as a logarithm, so losses beyond ``e^709`` (large epsilons) neither underflow nor overflow.
        """
        if self.inf_mass >= delta:
            return math.inf
        l = self.losses
        pos = l > floor
        lp, pp = l[pos], self.probs[pos]
        if lp.size == 0:
            return floor
        a = np.cumsum(pp[::-1])[::-1]
        with np.errstate(divide="ignore"):
            log_b = np.logaddexp.accumulate((np.log(pp) - lp)[::-1])[::-1]  # log sum_{i >= j} p_i e^{-l_i}
        if self.inf_mass + a[0] - math.exp(floor + log_b[0]) <= delta:
            return floor
        a1, log_b1 = np.append(a[1:], 0.0), np.append(log_b[1:], -np.inf)
        d_at = self.inf_mass + a1 - np.exp(lp + log_b1)  # delta at eps = l_j (non-increasing in j); exponent <= 0
        j = int(np.argmax(d_at <= delta))
        low = floor if j == 0 else float(lp[j - 1])
        eps = math.log(max(self.inf_mass + a[j] - delta, 1e-300)) - float(log_b[j])
        return float(min(max(eps, low), lp[j]))

    def _shifts(self, beta: float) -> float:
        """A value ``sum_t r_t`` exceeds except with probability ``beta``, for independent ``r_t in [0, h]``.

        The better of Hoeffding (``shift - h sqrt(steps log(1/beta) / 2)``) and Bernstein (``shift - t`` with
        ``t^2 / (2 (spread + h t / 3)) = log(1/beta)``).
        """
        if self.pessimistic or self.steps == 0 or beta <= 0:
            return 0.0
        log_b = math.log(1.0 / beta)
        hoeffding = self.h * math.sqrt(self.steps * log_b / 2.0)
        c = self.h * log_b / 3.0
        bernstein = c + math.sqrt(c * c + 2.0 * self.spread * log_b)
        return max(self.shift - min(hoeffding, bernstein), 0.0)

    def delta(self, epsilon: float) -> float:
        """Delta at ``epsilon``: an upper bound (pessimistic) or a lower bound (optimistic) on the true one.

        The optimistic reading uses that the true losses are the rounded ones plus ``r_t in [0, h]`` with
        ``sum_t E[r_t] = shift``: with probability ``1 - beta`` the sum is at least ``s`` (:meth:`_shifts`), so ``delta(eps) >= delta_rounded(eps - s) - beta``; the best of a few
        ``beta`` is reported, minus ``slack``.
        """
        if self.pessimistic:
            return min(self._raw_delta(epsilon), 1.0)
        best = self._raw_delta(epsilon)
        for beta in np.geomspace(1e-30, 1e-2, 15):
            s = self._shifts(float(beta))
            if s > 0:
                best = max(best, self._raw_delta(epsilon - s) - float(beta))
        return max(best - self.slack, 0.0)

    def epsilon(self, delta: float) -> float:
        """The smallest ``eps >= 0`` whose :meth:`delta` is at most ``delta`` (an upper or a lower bound)."""
        if self.pessimistic:
            return self._raw_epsilon(delta)
        best = self._raw_epsilon(delta + self.slack)
        for frac in (1e-1, 1e-2, 1e-3, 1e-4, 1e-6):
            beta = delta * frac
            s = self._shifts(beta)
            if s > 0:
                best = max(best, self._raw_epsilon(delta + beta + self.slack, floor=-s) + s)
        return best
