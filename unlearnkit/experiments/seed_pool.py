"""One frontier from several seeds: rows matched across seeds, each metric the mean with its per-seed values.

The frontier functions of the labs (``nf_frontier``, ``newton_frontier``, ``descend_rewind_frontier``,
``rrdu_frontier``, ``pdudt_frontier``) take ``seeds=``: they run the whole pipeline (training, retraining,
unlearning, noise) once per seed and pool the runs with :func:`pool_rows`. A pooled row keeps the shape of a
one-seed row (its metric is the mean over seeds, so tables and checks read it as before) and adds
``<metric>_seeds`` (one value per seed, in the order of ``seeds``) and ``seeds``; the figure builders draw a
band from those lists (:mod:`unlearnkit.viz.bands`).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from .._validate import check_int
from ..core import MAX_SEED


def check_seeds(seeds: Sequence[int]) -> tuple[int, ...]:
    """``seeds`` as a tuple of distinct seeds in ``[0, MAX_SEED]`` (at least one)."""
    out = tuple(check_int("seed", s, low=0, high=MAX_SEED) for s in seeds)
    if not out:
        raise ValueError("seeds=() is out of range: give at least one seed")
    if len(set(out)) != len(out):
        raise ValueError(f"seeds={out!r} repeats a seed: the band would count one run twice")
    return out


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))


def pool_rows(runs: Sequence[Sequence[Mapping[str, Any]]], seeds: Sequence[int], *, by: Sequence[str],
              metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Pool ``runs`` (one list of rows per seed, in the order of ``seeds``) into one list of rows.

    Rows are matched on the keys ``by`` (e.g. method, mode, epsilon); the first seed's rows give the order
    and every non-metric field. Each of ``metrics`` present in a row becomes the mean over the seeds that
    have a number for it, with the per-seed values in ``<metric>_seeds`` (``None`` where a seed has none);
    ``seeds`` lists the seeds. A row missing from some seed's run is kept with the seeds that have it."""
    seeds = check_seeds(seeds)
    if len(runs) != len(seeds):
        raise ValueError(f"runs has {len(runs)} entries for {len(seeds)} seeds: give one run per seed")
    index = [{tuple(r.get(k) for k in by): r for r in run} for run in runs]
    out = []
    for row in runs[0]:
        key = tuple(row.get(k) for k in by)
        pooled = dict(row)
        pooled["seeds"] = [s for s, idx in zip(seeds, index) if key in idx]
        for m in metrics:
            if m not in row:
                continue
            vals = [idx[key].get(m) if key in idx else None for idx in index]
            nums = [float(v) for v in vals if _num(v)]
            pooled[f"{m}_seeds"] = [float(v) if _num(v) else None for v in vals]
            pooled[m] = sum(nums) / len(nums) if nums else row.get(m)
        out.append(pooled)
    return out
