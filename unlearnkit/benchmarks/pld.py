"""``python -m unlearnkit bench pld``: our PLD accountant side by side with dp_accounting's and the others.

Three kinds of rows (``kind``), each with the seconds and the epsilon at ``delta = 1e-5`` of every accountant:

- ``"add_remove"``: for each (sampling rate q, noise multiplier sigma) of :data:`PLD_BENCH_POINTS` and each
  loss grid width, 10^4 Poisson-subsampled Gaussian steps under add-or-remove neighbours from unlearnkit's
  :func:`unlearnkit.privacy.pld.pld_epsilon` (both ends of its bracket; ``upper`` is certified),
  dp_accounting's ``PLDAccountant`` (pessimistic connect-the-dots, its default) and the package's RDP
  accountant (:func:`unlearnkit.privacy.calibrate.dpsgd_epsilon`) for scale;
- ``"substitution"``: the same steps (:data:`PLD_SUBSTITUTION_POINTS`) under the replace-one relation,
  ``pld_epsilon(..., relation="substitution")`` against dp_accounting's
  ``NeighboringRelation.REPLACE_ONE`` (when the installed dp_accounting has it);
- ``"mixture"``: a step composed a random, data-independent number ``K ~ Bin(T, p)`` of times
  (:data:`PLD_MIXTURE_POINTS`), :func:`unlearnkit.privacy.pld_mixture.pld_mixture_epsilon` beside RR-DU's
  accountant M (:func:`unlearnkit.privacy.mixture.mixture_epsilon`, exact for plain Gaussian steps, ``None``
  for subsampled ones, which it cannot express) and the capped RDP path (the count capped at its
  ``(1 - delta/4)``-quantile, the rest composed at ``3 delta / 4``).

Each timing is :func:`unlearnkit.benchmarks.timeit` (best of ``repeat`` after a warm-up). A row carries the
seconds and the numbers, so a reader sees speed and agreement at once.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from . import register_bench, timeit


#: (q, sigma) points of the add/remove comparison; 10^4 steps at delta 1e-5
PLD_BENCH_POINTS = ((0.01, 1.1), (0.04, 1.5), (0.005, 0.8))
#: (q, sigma, steps) points of the substitution comparison (q = 1: the Gaussian of sensitivity 2)
PLD_SUBSTITUTION_POINTS = ((0.01, 1.1, 1000), (0.04, 1.5, 2250), (1.0, 10.0, 100))
#: (per-visit step, T, p): ("gaussian", Delta / sigma) or ("subsampled", q, sigma), visits K ~ Bin(T, p)
PLD_MIXTURE_POINTS = ((("gaussian", 0.2), 100, 0.25), (("subsampled", 0.1, 1.0), 100, 0.25))
_STEPS, _DELTA = 10_000, 1e-5


def _dp_accounting_task(q: float, sigma: float, grid: float, steps: int = _STEPS, relation: str = "add_remove"):
    import dp_accounting  # deferred: imports scipy.stats
    from dp_accounting.pld import PLDAccountant  # deferred: imports scipy.stats

    rel = dp_accounting.NeighboringRelation.REPLACE_ONE if relation == "substitution" else \
        dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE

    def task():
        acc = PLDAccountant(neighboring_relation=rel, value_discretization_interval=grid)
        acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
        return float(acc.get_epsilon(_DELTA))

    return task


def _has_replace_one() -> bool:
    if importlib.util.find_spec("dp_accounting") is None:
        return False
    import dp_accounting  # deferred: imports scipy.stats

    return hasattr(getattr(dp_accounting, "NeighboringRelation", None), "REPLACE_ONE")


def _add_remove_rows(points, grids, repeat: int, warmup: int, have_dpa: bool) -> list[dict[str, Any]]:
    from ..privacy.calibrate import dpsgd_epsilon  # deferred: imports scipy.special
    from ..privacy.pld import pld_epsilon  # deferred: imports scipy.optimize

    rows = []
    for q, sigma in points:
        rdp = dpsgd_epsilon(sigma, q, _STEPS, _DELTA)
        for grid in grids:
            ours = lambda q=q, sigma=sigma, grid=grid: pld_epsilon(q, sigma, _STEPS, _DELTA, grid=grid)
            t = timeit(ours, repeat=repeat, warmup=warmup)
            b = ours()
            row = {"kind": "add_remove", "q": q, "sigma": sigma, "steps": _STEPS, "delta": _DELTA, "grid": grid,
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


def _substitution_rows(points, grid: float, repeat: int, warmup: int) -> list[dict[str, Any]]:
    from ..privacy.pld import pld_epsilon  # deferred: imports scipy.optimize

    have = _has_replace_one()
    rows = []
    for q, sigma, steps in points:
        ours = lambda q=q, sigma=sigma, steps=steps: pld_epsilon(q, sigma, steps, _DELTA, grid=grid,
                                                               relation="substitution")
        t = timeit(ours, repeat=repeat, warmup=warmup)
        b = ours()
        row = {"kind": "substitution", "q": q, "sigma": sigma, "steps": steps, "delta": _DELTA, "grid": grid,
               "unlearnkit_seconds": t, "unlearnkit_lower": b.lower, "unlearnkit_upper": b.upper,
               "add_remove_upper": pld_epsilon(q, sigma, steps, _DELTA, grid=grid).upper}
        if have:
            task = _dp_accounting_task(q, sigma, grid, steps, "substitution")
            row["dp_accounting_seconds"] = timeit(task, repeat=repeat, warmup=warmup)
            row["dp_accounting_epsilon"] = task()
        else:
            row["dp_accounting_epsilon"] = None  # dp_accounting missing or without REPLACE_ONE
        rows.append(row)
    return rows


def _mixture_rows(points, grid: float, repeat: int, warmup: int) -> list[dict[str, Any]]:
    from ..methods.rrdu.mixture import rrdu_visit_pmf  # deferred: imports scipy.optimize
    from ..privacy.calibrate import dpsgd_epsilon  # deferred: imports scipy.special
    from ..privacy.mixture import capped_epsilon, mixture_epsilon  # deferred: imports scipy.optimize
    from ..privacy.pld import PLD  # deferred: imports scipy.optimize
    from ..privacy.pld_mixture import pld_mixture_epsilon  # deferred: imports scipy.optimize

    rows = []
    for step, T, p in points:
        pmf = rrdu_visit_pmf(T, p)
        if step[0] == "gaussian":
            mu = step[1]
            one = PLD.gaussian(1.0 / mu, grid=grid)
            exact = lambda pmf=pmf, mu=mu: mixture_epsilon(_DELTA, pmf, mu)
            capped = lambda pmf=pmf, mu=mu: capped_epsilon(_DELTA, pmf, mu, tail_delta=_DELTA / 4,
                                                           conversion="rdp")
            row = {"kind": "mixture", "step": f"Gaussian Delta/sigma {mu:g}"}
        else:
            q, sigma = step[1], step[2]
            one = PLD.subsampled_gaussian(q, sigma, grid=grid)
            exact = None  # the GDP form cannot express a subsampled step
            cap = next(k for k in range(len(pmf)) if 1.0 - pmf[: k + 1].sum() <= _DELTA / 4)
            capped = lambda q=q, sigma=sigma, cap=cap: dpsgd_epsilon(sigma, q, cap, 3 * _DELTA / 4) if cap else 0.0
            row = {"kind": "mixture", "step": f"subsampled q {q:g} sigma {sigma:g}"}
        ours = lambda pmf=pmf, one=one: pld_mixture_epsilon(_DELTA, pmf, one)
        t = timeit(ours, repeat=repeat, warmup=warmup)
        b = ours()
        row.update({"T": T, "p": p, "delta": _DELTA, "grid": grid, "unlearnkit_seconds": t,
                    "unlearnkit_lower": b.lower, "unlearnkit_upper": b.upper,
                    "accountant_m_seconds": None if exact is None else timeit(exact, repeat=repeat, warmup=warmup),
                    "accountant_m_epsilon": None if exact is None else exact(),
                    "capped_rdp_seconds": timeit(capped, repeat=repeat, warmup=warmup),
                    "capped_rdp_epsilon": capped()})
        rows.append(row)
    return rows


@register_bench("pld", per_device=False,  # pure float math: no device to compare
                description="epsilon of subsampled-Gaussian compositions by PLD: unlearnkit vs dp_accounting "
                            "(add/remove, substitution), and the PLD mixture vs accountant M and capped RDP")
def bench_pld(*, quick: bool = False) -> list[dict[str, Any]]:
    repeat, warmup = (1, 0) if quick else (3, 1)
    grids = (1e-3,) if quick else (1e-3, 1e-4)
    have_dpa = importlib.util.find_spec("dp_accounting") is not None
    rows = _add_remove_rows(PLD_BENCH_POINTS[:1] if quick else PLD_BENCH_POINTS, grids, repeat, warmup, have_dpa)
    rows += _substitution_rows(PLD_SUBSTITUTION_POINTS[:1] if quick else PLD_SUBSTITUTION_POINTS, 1e-3, repeat,
                               warmup)
    rows += _mixture_rows(PLD_MIXTURE_POINTS, 1e-2 if quick else 1e-3, repeat, warmup)
    return rows
