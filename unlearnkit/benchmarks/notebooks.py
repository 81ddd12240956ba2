"""Benchmark: each course notebook's Run All time and peak memory (Binder gives 1 to 2 GB), in quick and full mode.

Each notebook is executed headlessly with ``nbclient`` in a fresh kernel, under ``UNLEARNKIT_QUICK=1`` (quick
mode, what Binder and CI run) and, unless ``--quick``, again under ``UNLEARNKIT_QUICK=0`` (full mode). The goals:
Run All under 10 s in quick mode and under 20 s in full mode on 2 CPU cores (column ``meets_goal``). A
last cell, appended to an in-memory copy (the file is never modified), reads the kernel's own peak resident
memory (``resource.getrusage(RUSAGE_SELF).ru_maxrss``), so the number is the notebook's peak, not the
harness's. Wall time includes kernel start-up, as a student would wait for it.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Optional

from . import register_bench


PEAK_MARK = "__UNLEARNKIT_PEAK_KB__"
_PEAK_CELL = ("import resource as _r, sys as _s\n"
              f"print('{PEAK_MARK}', _r.getrusage(_r.RUSAGE_SELF).ru_maxrss * (1 if _s.platform != 'darwin' else 1 / 1024))")


def notebook_paths(root: Optional[str | os.PathLike] = None) -> list[Path]:
    """The course notebooks (``notebooks/NN_*.ipynb``), in order."""
    base = Path(root) if root is not None else Path(__file__).resolve().parents[2] / "notebooks"
    return sorted(p for p in base.glob("[0-9][0-9]_*.ipynb"))


GOAL_S = {"quick": 10.0, "full": 20.0}


def _run_one(path: Path, timeout: int, mode: str = "quick") -> dict[str, Any]:
    import nbformat  # deferred: imports nbformat
    from nbclient import NotebookClient  # deferred: imports jupyter_core

    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(_PEAK_CELL))
    env_before = os.environ.get("UNLEARNKIT_QUICK")
    os.environ["UNLEARNKIT_QUICK"] = "1" if mode == "quick" else "0"
    t0 = time.perf_counter()
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        error = None
    except Exception as exc:  # report the failure as a row, keep benchmarking the others
        error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
    finally:
        if env_before is None:
            os.environ.pop("UNLEARNKIT_QUICK", None)
        else:
            os.environ["UNLEARNKIT_QUICK"] = env_before
    wall = time.perf_counter() - t0
    peak_kb = None
    for out in nb.cells[-1].get("outputs", []):
        m = re.search(rf"{PEAK_MARK} ([0-9.]+)", out.get("text", ""))
        if m:
            peak_kb = float(m.group(1))
    return {"notebook": path.name, "mode": mode, "seconds": wall, "meets_goal": error is None and wall < GOAL_S[mode],
            "peak_mb": None if peak_kb is None else peak_kb / 1024.0,
            "cells": len(nb.cells) - 1, "ok": error is None, "error": error,
            "under_60s": wall < 60.0, "under_1gb": None if peak_kb is None else peak_kb / 1024.0 < 1024.0}


def notebook_rows(paths: Optional[Iterable[str | os.PathLike]] = None, *, timeout: int = 300,
                  modes: Iterable[str] = ("quick",)) -> list[dict[str, Any]]:
    """Run each notebook in each mode (``"quick"``, ``"full"``) and return ``{"notebook", "mode", "seconds",
    "meets_goal", "peak_mb", "ok", ...}`` rows."""
    modes = tuple(modes)
    for m in modes:
        if m not in GOAL_S:
            raise ValueError(f"mode={m!r} is out of range: expected one of {tuple(GOAL_S)}")
    paths = [Path(p) for p in paths] if paths is not None else notebook_paths()
    return [_run_one(p, timeout, m) for m in modes for p in paths]


@register_bench("notebooks", description="each notebook's Run All time (quick and full mode) and kernel peak memory")
def _bench(*, quick: bool) -> list[dict[str, Any]]:
    rows = notebook_rows(timeout=180 if quick else 600, modes=("quick",) if quick else ("quick", "full"))
    if not rows:
        return [{"notebook": "-", "error": f"no notebooks found (python {sys.version.split()[0]})"}]
    return rows
