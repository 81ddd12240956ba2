"""``python -m unlearnkit bench audit_registry``: the audit of every registered method in paper and sound mode.

One row per (method, mode), the keys of :data:`unlearnkit.experiments.audits.registry.AUDIT_ROW_KEYS` plus the
seconds it took; ``--quick`` runs 40 trials per world (a smoke run, no power), the full run the per-method
trial counts of :data:`unlearnkit.experiments.audits.registry_report.DOC_TRIALS` (about five minutes on one
idle core). The Markdown page is :func:`~unlearnkit.experiments.audits.registry_report.write_audit_registry`.
"""

from __future__ import annotations

from typing import Any

from . import register_bench


@register_bench("audit_registry", description="audit lower bound vs stated epsilon, every registered method x mode")
def bench_audit_registry(*, quick: bool = False) -> list[dict[str, Any]]:
    from ..experiments.audits.registry import run_registry_audits  # deferred: imports torch
    from ..experiments.audits.registry_report import DOC_TRIALS  # deferred: imports torch

    rows, secs = run_registry_audits(n_trials=40 if quick else DOC_TRIALS)
    return [dict(r, seconds=s) for r, s in zip(rows, secs)]
