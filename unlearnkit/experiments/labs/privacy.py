"""Experiments of notebook 02 (noise calibration): the Renyi curve of DP-SGD with its three conversions, a
live cross-check against Google's ``dp_accounting``, and a calibration sweep.

- :func:`dp_accounting_curve`: ``dp_accounting``'s RDP curve of the same subsampled Gaussian (optional
  dependency; ``None`` when it is missing);
- :func:`rdp_oracle_rows`: our RDP and ``dp_accounting``'s at single orders against an exact 30-digit
  integration (fractional orders are where ``dp_accounting`` 0.6.0 drops the signs of its series);
- :func:`renyi_comparison`: our RDP curve of ``steps`` Poisson-subsampled Gaussian steps (Mironov, Talwar &
  Zhang 2019), its conversion to (epsilon, delta) by Mironov 2017 (Prop. 3), Balle et al. 2020 (Thm 21) and
  Canonne, Kamath & Steinke 2020 (Prop. 12), next to ``dp_accounting``'s curve and epsilon;
- :func:`gaussian_sigma_rows`: the analytic and the classic Gaussian-mechanism sigma for several epsilons,
  and the delta the classic sigma really gives;
- :func:`relaxed_sigma_rows`: the Gaussian noise when only a first or a second moment of the sensitivity is
  bounded, next to a deterministic sensitivity of the same value;
- :func:`calibration_sweep`: the smallest noise multiplier meeting a target epsilon under two conversions,
  and epsilon(sigma) on a grid around them.

Everything is computed by :mod:`unlearnkit.privacy`; the figures and explorers are in
:mod:`unlearnkit.viz.privacy`.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ...privacy import analytic_gaussian_sigma, calibrate_sigma, classic_gaussian_sigma, dpsgd_epsilon
from ...privacy.gaussian import gaussian_delta, relaxed_gaussian_sigma
from ...privacy.rdp import rdp_to_dp, subsampled_gaussian_rdp
from ...privacy.rdp import subsampled_gaussian_rdp_mpmath


CALIBRATION_PLOT_ORDERS = np.array(list(range(2, 65)) + [128, 256], dtype=float)
"""Integer orders 2..64 (and 128, 256): the fast closed form used to draw epsilon(sigma) curves."""


def gaussian_sigma_rows(epsilons: Sequence[float], delta: float = 1e-5) -> list[dict[str, float]]:
    """The Gaussian mechanism's noise for sensitivity 1 by the analytic and by the classic calibration.

    Parameters
    ----------
    epsilons : sequence of float
        The target epsilons, one row each.
    delta : float
        The target delta.

    Returns
    -------
    list of dict
        Per epsilon: ``epsilon``, ``analytic sigma`` (Balle & Wang 2018, exact), ``classic sigma``
        (``sqrt(2 ln(1.25/delta)) / epsilon``, computed even where epsilon > 1, outside its proof) and
        ``classic really gives delta`` (the exact delta of the classic sigma at that epsilon).
    """
    rows = []
    for eps in epsilons:
        c = classic_gaussian_sigma(eps, delta, warn=False)
        rows.append({"epsilon": eps, "analytic sigma": analytic_gaussian_sigma(eps, delta), "classic sigma": c,
                     "classic really gives delta": gaussian_delta(eps, c)})
    return rows


def relaxed_sigma_rows(epsilon: float, delta: float, bound: float = 1.0) -> list[dict[str, Any]]:
    """The Gaussian noise for a random sensitivity whose first, then second, moment is bounded.

    Parameters
    ----------
    epsilon, delta : float
        The target privacy.
    bound : float
        The bound on the moment (and the deterministic sensitivity compared with).

    Returns
    -------
    list of dict
        Per moment (``first_moment``, ``second_moment``): ``moment``, ``sigma``
        (:func:`~unlearnkit.privacy.relaxed_gaussian_sigma`) and ``deterministic sensitivity needs`` (the
        classic sigma of a sensitivity fixed at ``bound``).
    """
    det = classic_gaussian_sigma(epsilon, delta) * bound
    return [{"moment": moment, "sigma": relaxed_gaussian_sigma(epsilon, delta, **{moment: bound}).sigma,
             "deterministic sensitivity needs": det} for moment in ("first_moment", "second_moment")]


def dp_accounting_curve(q: float, sigma: float, orders: Sequence[float], steps: int = 1) -> Optional[np.ndarray]:
    """dp_accounting's RDP curve for the same subsampled Gaussian (``None`` if dp_accounting is missing)."""
    try:
        import dp_accounting
        from dp_accounting.rdp import RdpAccountant
    except ImportError:  # optional dependency
        return None
    ev = dp_accounting.GaussianDpEvent(sigma)
    if q < 1:
        ev = dp_accounting.PoissonSampledDpEvent(q, ev)
    acc = RdpAccountant(list(orders))
    acc.compose(dp_accounting.SelfComposedDpEvent(ev, int(steps)))
    return np.asarray(acc._rdp, dtype=float)


def rdp_oracle_rows(q: float, sigma: float, alphas: Sequence[float]) -> list[dict[str, Any]]:
    """One subsampled Gaussian step's RDP at each order by us and by ``dp_accounting``, against the exact value.

    Parameters
    ----------
    q : float
        The Poisson sampling rate.
    sigma : float
        The noise multiplier.
    alphas : sequence of float
        The Renyi orders, one row each (fractional ones included).

    Returns
    -------
    list of dict
        Per order: ``alpha``, ``exact`` (:func:`~unlearnkit.privacy.rdp.subsampled_gaussian_rdp_mpmath`, the
        defining integral in 30-digit arithmetic), ``ours`` (:func:`~unlearnkit.privacy.subsampled_gaussian_rdp`)
        and ``ours / exact - 1``, ``dp_accounting`` and ``dp_accounting / exact - 1`` (both ``None`` when
        dp_accounting is not installed).
    """
    rows = []
    for alpha in alphas:
        exact = subsampled_gaussian_rdp_mpmath(q, sigma, alpha)
        ours = float(subsampled_gaussian_rdp(q, sigma, [alpha])[0])
        lib = dp_accounting_curve(q, sigma, [alpha])
        lib_value = None if lib is None else float(lib[0])
        rows.append({"alpha": alpha, "exact": exact, "ours": ours, "ours / exact - 1": ours / exact - 1,
                     "dp_accounting": lib_value,
                     "dp_accounting / exact - 1": None if lib_value is None else lib_value / exact - 1})
    return rows


def renyi_comparison(q: float, sigma: float, steps: int, delta: float, orders: np.ndarray) -> dict[str, Any]:
    """Our RDP curve of ``steps`` subsampled Gaussian steps, its three conversions, and dp_accounting's.

    Returns ``{"q", "sigma", "steps", "delta", "rdp", "rdp_dp_accounting", "mironov", "balle", "cks"[,
    "dp_accounting"]}``: each conversion is ``(epsilon, best order)``; the ``dp_accounting`` entries are
    None / absent when the library is not installed.
    """
    ours = subsampled_gaussian_rdp(q, sigma, orders) * steps
    lib = dp_accounting_curve(q, sigma, orders, steps)
    out = {"q": q, "sigma": sigma, "steps": steps, "delta": delta, "rdp": ours, "rdp_dp_accounting": lib}
    for m in ("mironov", "balle", "cks"):
        out[m] = rdp_to_dp(orders, ours, delta, method=m, warn_edge=False)
    if lib is not None:
        from dp_accounting.rdp import compute_epsilon  # deferred: imports scipy.stats

        out["dp_accounting"] = tuple(float(v) for v in compute_epsilon(orders, lib, delta))
    return out


def calibration_sweep(epsilon: float, delta: float, q: float, steps: int, *, n_grid: int = 16,
                      plot_orders: np.ndarray = CALIBRATION_PLOT_ORDERS) -> dict[str, Any]:
    """Calibrate DP-SGD's noise multiplier to ``epsilon`` under the CKS and Mironov conversions, and sweep.

    The calibrated sigmas use the full default order grid (:func:`unlearnkit.privacy.calibrate_sigma`, which
    never overshoots the target); the curves use ``plot_orders`` on ``n_grid`` sigmas from a third of the
    smaller to three times the larger calibrated sigma.

    Returns ``{"epsilon", "delta", "q", "steps", "sigma": {method: sigma}, "grid", "curves": {method: eps
    array}, "achieved": {method: epsilon at the calibrated sigma}}``.
    """
    chosen = {m: calibrate_sigma(lambda s, m=m: dpsgd_epsilon(s, q, steps, delta, method=m), epsilon, rtol=1e-4)
              for m in ("cks", "mironov")}
    lo, hi = min(chosen.values()) / 3.0, max(chosen.values()) * 3.0
    grid = np.geomspace(lo, hi, n_grid)
    curves = {m: np.array([dpsgd_epsilon(s, q, steps, delta, orders=plot_orders, method=m) for s in grid])
              for m in ("cks", "mironov")}
    return {"epsilon": epsilon, "delta": delta, "q": q, "steps": steps, "sigma": chosen, "grid": grid,
            "curves": curves,
            "achieved": {m: dpsgd_epsilon(s, q, steps, delta, method=m) for m, s in chosen.items()}}
