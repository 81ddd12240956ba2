"""``python -m unlearnkit bench pld``: our PLD accountant side by side with dp_accounting's, at 10^4 steps.

For each (sampling rate q, noise multiplier sigma) of :data:`POINTS` and each loss grid width, the epsilon at
``delta = 1e-5`` of 10^4 Poisson-subsampled Gaussian steps (add-or-remove neighbours) from

- unlearnkit's :func:`unlearnkit.privacy.pld_epsilon` (both ends of its bracket; ``upper`` is certified),
- dp_accounting's ``PLDAccountant`` (pessimistic connect-the-dots, its default), and
- the package's RDP accountant (:func:`unlearnkit.privacy.dpsgd_epsilon`) for scale,

each timed with :func:`unlearnkit.benchmarks.timeit` (best of ``repeat`` after a warm-up). A row carries the
seconds and the numbers, so a reader sees speed and agreement at once.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from . import register_bench, timeit


#: (q, sigma) points of the comparison; 10^4 steps at delta 1e-5
PLD_BENCH_POINTS = ((0.01, 1.1), (0.04, 1.5), (0.005, 0.8))
_STEPS, _DELTA = 10_000, 1e-5


def _dp_accounting_task(q: float, sigma: float, grid: float):
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    def task():
        acc = PLDAccountant(value_discretization_interval=grid)
        acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), _STEPS)
        return float(acc.get_epsilon(_DELTA))

    return task


@register_bench("pld", per_device=False,  # pure float math: no device to compare
                description="epsilon of 1e4 subsampled-Gaussian steps by PLD: unlearnkit vs dp_accounting "
                            "(and RDP for scale)")
def bench_pld(*, quick: bool = False) -> list[dict[str, Any]]:
    from ..privacy import dpsgd_epsilon, pld_epsilon

    repeat, warmup = (1, 0) if quick else (3, 1)
    grids = (1e-3,) if quick else (1e-3, 1e-4)
    points = PLD_BENCH_POINTS[:1] if quick else PLD_BENCH_POINTS
    have_dpa = importlib.util.find_spec("dp_accounting") is not None
    rows: list[dict[str, Any]] = []
    for q, sigma in points:
        rdp = dpsgd_epsilon(sigma, q, _STEPS, _DELTA)
        for grid in grids:
            ours = lambda q=q, sigma=sigma, grid=grid: pld_epsilon(q, sigma, _STEPS, _DELTA, grid=grid)
            t = timeit(ours, repeat=repeat, warmup=warmup)
            b = ours()
            row = {"q": q, "sigma": sigma, "steps": _STEPS, "delta": _DELTA, "grid": grid,
                   "unlearnkit_seconds": t, "unlearnkit_lower": b.lower, "unlearnkit_upper": b.upper,
                   "rdp_epsilon": rdp}
            if have_dpa:
                task = _dp_accounting_task(q, sigma, grid)
                row["dp_accounting_seconds"] = timeit(task, repeat=repeat, warmup=warmup)
                row["dp_accounting_epsilon"] = task()
            else:
                row["dp_accounting_epsilon"] = None  # not installed
            rows.append(row)
    return rows
