"""``python -m unlearnkit bench accountant``: our accountant side by side with dp_accounting (and Opacus).

Two tasks, each timed with :func:`unlearnkit.benchmarks.timeit` (best of ``repeat`` after a warm-up):

1. **epsilon**: the (epsilon, delta = 1e-5) of 10^4 composed Poisson-subsampled Gaussian steps
   (q = 0.01, noise multiplier 1.1) over each library's default orders (ours and dp_accounting share
   ``DEFAULT_ORDERS``; Opacus uses its ``DEFAULT_ALPHAS``, and we also run on those for a like-for-like row);
2. **calibrate**: the noise multiplier for a target (epsilon = 2, delta = 1e-5) with the same q and steps.
   Opacus' and our ``get_noise_multiplier`` share the bisection (tolerance 0.01 in epsilon); dp_accounting's
   ``calibrate_dp_mechanism`` and our ``calibrate_sigma`` bisect to a relative tolerance in sigma.

Each row reports the library, the task, the seconds, and the numbers it produced, so a reader sees both the
speed and that the answers agree (our epsilon is exact at fractional orders; dp_accounting's is slightly
larger there, see :mod:`unlearnkit.privacy.rdp`).
"""

from __future__ import annotations

import importlib.util
import warnings
from typing import Any

from . import register_bench, timeit

Q, SIGMA, STEPS, DELTA, TARGET_EPS = 0.01, 1.1, 10_000, 1e-5, 2.0


def _ours(rows: list[dict[str, Any]], repeat: int, warmup: int) -> None:
    # deferred: imports scipy.special
    from ..privacy import RDPAccountant, calibrate_sigma, dpsgd_epsilon, get_noise_multiplier
    from ..privacy.rdp import DEFAULT_ORDERS  # deferred: imports scipy.special
    from ..privacy.calibrate import OPACUS_ORDERS  # deferred: imports scipy.special
    from ..privacy.accountant import SubsampledGaussianEvent  # deferred: imports scipy.special

    for label, orders, method in (("unlearnkit", DEFAULT_ORDERS, "cks"),
                                  ("unlearnkit (Opacus orders)", OPACUS_ORDERS, "balle")):
        def eps_task(orders=orders, method=method):
            acc = RDPAccountant(orders)
            acc.compose(SubsampledGaussianEvent(Q, SIGMA), STEPS)
            return acc.epsilon_and_order(DELTA, method, warn_edge=False)

        t = timeit(eps_task, repeat=repeat, warmup=warmup)
        eps, order = eps_task()
        rows.append({"library": label, "task": f"epsilon, {STEPS} steps ({method})", "seconds": t,
                     "epsilon": eps, "order": order, "sigma": SIGMA})
        nm = lambda orders=orders, method=method: get_noise_multiplier(
            target_epsilon=TARGET_EPS, target_delta=DELTA, sample_rate=Q, steps=STEPS, orders=orders, method=method)
        t = timeit(nm, repeat=repeat, warmup=warmup)
        s = nm()
        rows.append({"library": label, "task": "get_noise_multiplier (tol 0.01 eps)", "seconds": t,
                     "epsilon": dpsgd_epsilon(s, Q, STEPS, DELTA, orders=orders, method=method), "sigma": s})
    cal = lambda: calibrate_sigma(lambda s: dpsgd_epsilon(s, Q, STEPS, DELTA), TARGET_EPS, rtol=1e-4)
    t = timeit(cal, repeat=repeat, warmup=warmup)
    s = cal()
    rows.append({"library": "unlearnkit", "task": "calibrate_sigma (rtol 1e-4 sigma)", "seconds": t,
                 "epsilon": dpsgd_epsilon(s, Q, STEPS, DELTA), "sigma": s})


def _dp_accounting(rows: list[dict[str, Any]], repeat: int, warmup: int) -> None:
    if importlib.util.find_spec("dp_accounting") is None:
        rows.append({"library": "dp_accounting", "task": "not installed"})
        return
    import dp_accounting  # deferred: imports scipy.stats
    from dp_accounting.rdp import RdpAccountant  # deferred: imports scipy.stats

    def event(s: float):
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(Q, dp_accounting.GaussianDpEvent(s)), STEPS)

    def eps_task():
        acc = RdpAccountant()
        acc.compose(event(SIGMA))
        return acc.get_epsilon_and_optimal_order(DELTA)

    t = timeit(eps_task, repeat=repeat, warmup=warmup)
    eps, order = eps_task()
    rows.append({"library": "dp_accounting", "task": f"epsilon, {STEPS} steps (cks)", "seconds": t,
                 "epsilon": float(eps), "order": float(order), "sigma": SIGMA})

    def cal():
        return dp_accounting.calibrate_dp_mechanism(
            RdpAccountant, event, TARGET_EPS, DELTA,
            bracket_interval=dp_accounting.ExplicitBracketInterval(0.3, 30.0), tol=1e-4)

    t = timeit(cal, repeat=repeat, warmup=warmup)
    s = float(cal())
    acc = RdpAccountant()
    acc.compose(event(s))
    rows.append({"library": "dp_accounting", "task": "calibrate_dp_mechanism (tol 1e-4 sigma)", "seconds": t,
                 "epsilon": float(acc.get_epsilon(DELTA)), "sigma": s})


def _opacus(rows: list[dict[str, Any]], repeat: int, warmup: int) -> None:
    if importlib.util.find_spec("opacus") is None:
        rows.append({"library": "opacus", "task": "not installed (optional)"})
        return

    from opacus.accountants import RDPAccountant as OpacusRDP  # deferred: imports torch
    from opacus.accountants.utils import get_noise_multiplier  # deferred: imports torch

    def eps_task():
        acc = OpacusRDP()
        acc.history = [(SIGMA, Q, STEPS)]
        return acc.get_privacy_spent(delta=DELTA)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = timeit(eps_task, repeat=repeat, warmup=warmup)
        eps, order = eps_task()
        rows.append({"library": "opacus", "task": f"epsilon, {STEPS} steps (balle)", "seconds": t,
                     "epsilon": float(eps), "order": float(order), "sigma": SIGMA})
        nm = lambda: get_noise_multiplier(target_epsilon=TARGET_EPS, target_delta=DELTA, sample_rate=Q, steps=STEPS)
        t = timeit(nm, repeat=repeat, warmup=warmup)
        s = float(nm())
        acc = OpacusRDP()
        acc.history = [(s, Q, STEPS)]
        rows.append({"library": "opacus", "task": "get_noise_multiplier (tol 0.01 eps)", "seconds": t,
                     "epsilon": float(acc.get_epsilon(delta=DELTA)), "sigma": s})


@register_bench("accountant", per_device=False,  # pure float math: no device to compare
                description="epsilon of 1e4 subsampled-Gaussian steps and sigma calibration: "
                            "unlearnkit vs dp_accounting vs Opacus")
def bench_accountant(*, quick: bool = False) -> list[dict[str, Any]]:
    repeat, warmup = (1, 0) if quick else (3, 1)
    rows: list[dict[str, Any]] = []
    _ours(rows, repeat, warmup)
    _dp_accounting(rows, repeat, warmup)
    _opacus(rows, repeat, warmup)
    return rows
