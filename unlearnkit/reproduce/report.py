"""``docs/frontiers/reproduction.md``, written from committed runs: the papers' numbers beside ours, like with like.

:func:`measure_reproduction` runs every paper's registered methods (:func:`.runner.run_reproduction`, one seed,
the ``quick`` profile) and keeps of each result what :func:`.runner.compare` reads (:func:`compact_result`);
:func:`write_reproduction` commits that to ``unlearnkit/experiments/data/reproduction_quick.json``.
:func:`reproduction_markdown` turns the committed runs into the page: for each paper, one row per reference
number, compared again from the committed results (so the page follows the like-with-like rules of
:func:`.runner.compare`, not a copy of an older table). :func:`write_reproduction_doc` writes it;
``tests/capstone/test_reproduction_doc.py`` checks that the committed page is what this module writes.
"""

from __future__ import annotations

import json
import platform
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .._io import atomic_write_text, json_text
from .._validate import check_choice
from ..experiments.contract import json_safe
from .reference import PAPERS
from .runner import REPRODUCE_PROFILES, compare, run_reproduction


_ROOT = Path(__file__).resolve().parents[2]
#: the committed runs the page is written from (regenerate with :func:`write_reproduction`)
REPRODUCTION_PATH = Path(__file__).resolve().parents[1] / "experiments" / "data" / "reproduction_quick.json"
#: the page :func:`write_reproduction_doc` writes
REPRODUCTION_DOC = _ROOT / "docs" / "frontiers" / "reproduction.md"

_KEEP = ("method", "profile", "dataset", "request", "metrics", "cost", "certificate", "guarantee", "setting")


def compact_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """What :func:`.runner.compare` reads of a result: its identity, metrics, cost, certificate, guarantee and
    setting, and the equal-budget retraining's test accuracy when the run has one (plain JSON)."""

    out = {k: result[k] for k in _KEEP if k in result}
    budget = ((result.get("diagnostics") or {}).get("budget_retrain_model") or {}).get("test_acc")
    if budget is not None:
        out["diagnostics"] = {"budget_retrain_model": {"test_acc": budget}}
    return json_safe(out)


def measure_reproduction(papers: Optional[Sequence[str]] = None, *, profile: str = "quick", seed: int = 0
                         ) -> dict[str, Any]:
    """Every paper's methods under ``profile`` on ``seed``: ``{"meta", "papers": {paper: {"status", "messages",
    "methods": {name: {"status", "seconds", "error"?, "result"?}}}}}`` with compact results."""
    check_choice("profile", profile, REPRODUCE_PROFILES)
    names = tuple(PAPERS) if papers is None else tuple(papers)
    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    for p in names:
        rep = run_reproduction(p, profile=profile, seed=seed, progress=False, echo=lambda _s: None)
        methods = {}
        for name, run in rep["methods"].items():
            m = {k: run[k] for k in ("status", "seconds", "error") if k in run}
            if run.get("result") is not None:
                m["result"] = compact_result(run["result"])
            methods[name] = m
        out[p] = {"status": rep["status"], "messages": list(rep["messages"]), "methods": methods}
    try:
        load = Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3]
    except OSError:
        load = None
    meta = {"profile": profile, "seed": seed, "seconds": time.perf_counter() - t0,
            "machine": f"{platform.machine()}, {platform.processor() or platform.system()}", "loadavg": load,
            "measured_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "draws": f"seed {seed}, single draw per method (a diagnostic run of the {profile} profiles)"}
    return {"meta": meta, "papers": out}


def write_reproduction(path: str | Path = REPRODUCTION_PATH, *, profile: str = "quick", seed: int = 0,
                       note: str = "") -> Path:
    """Measure (:func:`measure_reproduction`) and commit the runs the page is written from."""
    data = measure_reproduction(profile=profile, seed=seed)
    data["meta"]["note"] = note or "measured by unlearnkit.reproduce.report.write_reproduction"
    return atomic_write_text(path, json_text(data, indent=1, ensure_ascii=False) + "\n")


def load_reproduction(path: str | Path = REPRODUCTION_PATH) -> dict[str, Any]:
    """The committed runs; ``FileNotFoundError`` names the way out."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"path={str(p)!r}: no committed reproduction runs; run "
                                "unlearnkit.reproduce.report.write_reproduction()")
    return json.loads(p.read_text(encoding="utf-8"))


_INTRO = """# Reproduction, like with like

Written by `unlearnkit.reproduce.report.write_reproduction_doc()` from the committed runs in
`unlearnkit/experiments/data/reproduction_quick.json` (`write_reproduction()`); never edited by hand.
`tests/capstone/test_reproduction_doc.py` checks that this page is what the writer produces from that file, with
every row compared again by `unlearnkit.reproduce.runner.compare`.

## The rule

A paper's row gets a number in the **ours** column only from our run of the *same setting and the same metric*:
the paper's own dataset (not a stand-in), a `paper` profile, the same quantity (`RefValue.same_metric`) and every
setting condition the row states (`RefValue.requires`). A run of ours on the offline stand-in (digits for MNIST,
digits or the synthetic task for eICU) that measures **the same quantity** under every setting condition of the row
goes into the separate **closest** column, with what differs (the data and the profile only). A row whose quantity or
setting our offline runs **cannot** match (another test set, forget set or attack statistic: `RefValue.same_metric`
or `comparable_offline` False; another graph, partition or request kind: a `RefValue.requires` condition unmet; or
our run measured nothing) shows **no number of ours**: its last column says which setting and metric a comparable
run would need (`RefValue.needs`, else the row's dataset and setting). Only the formula rows (our calibrators on the paper's constants) and, where the data is
present, a `paper` profile fill the **ours** column; Koloskova et al.'s noise levels are the rows reproduced like
with like.

Seed 0, one draw per method: a diagnostic of the quick profiles, not a seeded claim (the means over five seeds
with intervals are in [budget.md](budget.md)).
"""


def _fmt(v: Any, std: Any = None) -> str:
    if v is None:
        return "-"
    s = f"{float(v):.4g}"
    return s if std is None else f"{s} ± {float(std):.2g}"


def _paper_table(paper: str, entry: Mapping[str, Any]) -> list[str]:
    rows = [r for r in compare(paper, entry["methods"]) if r["paper"] is not None]
    statuses = ", ".join(f"{n} {m['status']}" for n, m in entry["methods"].items()) or "none registered"
    lines = [f"## {PAPERS[paper].title}", "", f"{PAPERS[paper].venue}. `python -m unlearnkit reproduce {paper}` "
             f"(status {entry['status']}; methods: {statuses}).", "",
             "| table | dataset | method | metric | paper | ours (same setting and metric) | closest of ours "
             "(same metric, stand-in data) | what differs, or what a comparable run needs |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = "" if r["unit"] in ("AUC", "sigma", "steps", "epochs", "eps") else f" ({r['unit']})"
        ours = "-" if r["ours"] is None else f"{_fmt(r['ours'])} ({r['ours_method']})"
        closest = "-" if r.get("closest") is None else f"{_fmt(r['closest'])} ({r['ours_method']})"
        why = r.get("closest_differs") or ("" if r["ours"] is not None else
                                           f"no run of ours in this setting: it needs {r['dataset']}, {r['setting']}")
        lines.append(f"| {r['table']} | {r['dataset']} | {r['method']} | {r['metric']}{unit} | "
                     f"{_fmt(r['paper'], r['paper_std'])} | {ours} | {closest} | {why} |")
    return lines


def reproduction_markdown(data: Optional[Mapping[str, Any]] = None) -> str:
    """The page, from the committed runs (default: :data:`REPRODUCTION_PATH`)."""
    data = load_reproduction() if data is None else data
    m = data["meta"]
    load = " ".join(m.get("loadavg") or []) or "not recorded"
    parts = [_INTRO, f"Measured {m['measured_at']} ({m['machine']}, no GPU, `{m['profile']}` profiles, seed "
             f"{m['seed']}, {m['seconds']:.0f} s for all papers, load average after the run {load}; "
             f"{m.get('note', '')}).", ""]
    for paper, entry in data["papers"].items():
        parts += _paper_table(paper, entry) + [""]
    return "\n".join(parts).rstrip("\n") + "\n"


def write_reproduction_doc(data: Optional[Mapping[str, Any]] = None, path: str | Path = REPRODUCTION_DOC) -> Path:
    """Write :func:`reproduction_markdown` to ``docs/frontiers/reproduction.md``."""
    return atomic_write_text(path, reproduction_markdown(data))
