"""``python -m unlearnkit bench audit``: audit throughput (vectorised vs sequential trials), the validation of
the audit statistics on Gaussian mechanisms of known epsilon, and the audit ceilings.

Rows (``kind``):

- ``"throughput"``: R2D's two worlds on :class:`~unlearnkit.experiments.audits.methods.ToyTask` (train,
  rewind-and-replay, noise; against retraining plus noise), 10,000 trials per world (2,000 in quick mode),
  vectorised (:mod:`unlearnkit.experiments.audits.vectorised`) on the CPU and on the GPU when one is present,
  and the sequential per-trial loop on a few trials; ``trials_per_second`` counts both worlds;
- ``"validation"``: :func:`unlearnkit.audit.validate_statistics` (a calibrated Gaussian must be refuted in at
  most ``alpha`` of the repetitions, an under-noised one in all);
- ``"ceiling"``: :func:`unlearnkit.audit.ceiling.audit_ceiling` at 100 to 100,000 trials per world;
- ``"one_run"`` and ``"forgetting"``: the one-run canary audit and the per-example forgetting scores, when
  those experiments are present.
"""

from __future__ import annotations

import importlib
from typing import Any

import torch

from . import register_bench
from ..audit.ceiling import CEILING_STATISTICS, audit_ceiling


@register_bench("audit", per_device=False,  # it runs the CPU and the GPU side by side itself
                description="audit trials/s (vectorised vs loop, CPU/GPU), statistics validation, ceilings")
def bench_audit(*, quick: bool = False) -> list[dict[str, Any]]:
    from ..audit.validation import validate_statistics  # deferred: imports scipy.optimize
    from ..experiments.audits.vectorised import trials_per_second  # deferred: imports scipy.optimize

    rows: list[dict[str, Any]] = []
    n = 2_000 if quick else 10_000
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for dev in devices:
        r = trials_per_second("r2d", n_trials=n, device=dev, sequential_trials=(20 if quick else 100)
                              if dev == "cpu" else 0)
        rows.append(dict(kind="throughput", method="r2d", device=dev, threads=torch.get_num_threads(),
                         n_trials_per_world=n, seconds=r["seconds"], trials_per_second=r["trials_per_second"],
                         sequential_trials_per_second=r.get("sequential_trials_per_second"),
                         speedup=(r["trials_per_second"] / r["sequential_trials_per_second"]
                                  if r.get("sequential_trials_per_second") else None)))
    for v in validate_statistics(n_trials=(1000,) if quick else (1000, 10_000), reps=5 if quick else 40):
        rows.append(dict(kind="validation", **v))
    for s in CEILING_STATISTICS:
        for nt in (100, 1_000, 10_000, 100_000):
            rows.append(dict(kind="ceiling", method=s, n_trials=nt, ceiling=audit_ceiling(nt, s)))
    for mod, fn in (("audits.canaries", "canary_bench_rows"), ("audits.forgetting", "forgetting_bench_rows")):
        try:
            m = importlib.import_module(f"..experiments.{mod}", __package__)
        except ModuleNotFoundError:
            continue
        rows += getattr(m, fn)(quick=quick)
    return rows
