"""Generated Markdown tables of the seeded measurements, and the check that every headline number carries its seeds.

Two tables in the documentation are written from ``data/budget_quick.json`` (:mod:`.budget`) and never by hand:
the equal-budget table of ``docs/frontiers/budget.md`` (:func:`budget_block`) and the headline table of
``docs/results.md`` (:func:`headline_block`: the certified method of each paper, released, full and equal-budget
retraining's test accuracy and the advantage, each a mean with its 95 % t-interval over the seeds). Each sits
between the two HTML comments of :func:`block_markers`; :func:`write_docs` rewrites them from the committed
data and :func:`generated_docs` returns what it would write, so a test can compare. A third block of
``docs/frontiers/budget.md`` (:func:`regimes_block`) shows the regimes beyond the shipped profiles
(:data:`BUDGET_REGIMES`, measured by :func:`measure_regimes` into ``data/budget_regimes.json``).

:func:`unlabelled_claims` reads the Markdown tables of a text and names every accuracy or advantage cell that
holds a number but neither an interval (``[low, high]``) nor a label saying it is a diagnostic of one or three
draws (:data:`DIAGNOSTIC_WORDS`, in the cell, its column header or the paragraph just above the table).
"""

from __future__ import annotations

import json
import platform
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from .._io import atomic_write_text, json_text
from .budget import budget_retrain, budget_rows, load_budget, markdown_table, measure_seed, summarize
from .contract import cost_saved, json_safe


#: the words that label a number as a diagnostic of few draws rather than a seeded claim
DIAGNOSTIC_WORDS = ("single draw", "single-draw", "one draw", "three-draw", "3-draw", "three draws",
                    "diagnostic")

#: the sound method of each paper in the headline table, with the paper it stands for
HEADLINE_METHODS: dict[str, str] = {
    "d2d": "Descend or Rewind (D2D)", "r2d": "Descend or Rewind (R2D)",
    "gradient_clipping": "noisy fine-tuning, gradient clipping", "model_clipping": "noisy fine-tuning, model clipping",
    "output_perturbation": "noisy fine-tuning, output perturbation", "rrdu": "RR-DU, exact variant",
    "newton": "Newton/Fisher", "pdudt": "PDUDT, sum correction",
}

_REPO = Path(__file__).resolve().parents[2]


def block_markers(name: str) -> tuple[str, str]:
    """The HTML comments that open and close the generated block ``name`` in a Markdown file."""
    return (f"<!-- generated: unlearnkit.experiments.budget_tables, block {name!r}; do not edit by hand -->",
            f"<!-- end of generated block {name!r} -->")


def _ci(v: Optional[Mapping[str, float]], signed: bool = False) -> str:
    if not v:
        return "-"
    f = "{:+.3f}" if signed else "{:.3f}"
    return f"{f.format(v['mean'])} [{f.format(v['low'])}, {f.format(v['high'])}]"


def _seeds_text(seeds: list) -> str:
    s = sorted(seeds)
    if s == list(range(s[0], s[-1] + 1)) and len(s) > 2:
        return f"{len(s)} (seeds {s[0]}-{s[-1]})"
    return f"{len(s)} (seeds {', '.join(str(x) for x in s)})"


def _meta_line(data: Mapping[str, Any]) -> str:
    m = data.get("meta", {})
    load = " ".join(m.get("loadavg") or []) or "not recorded"
    return (f"Written from `unlearnkit/experiments/data/budget_quick.json` (`budget.write_budget()`, measured "
            f"{m.get('measured_at', '?')}, {m.get('machine', '?')}, load average after the run {load}; "
            f"{m.get('note', '')}). Means over seeds with the 95 % Student-t interval in brackets.")


def budget_block(data: Optional[Mapping[str, Any]] = None) -> str:
    """The equal-budget table of every registered method (:func:`.budget.markdown_table`), with its source."""
    data = load_budget() if data is None else data
    rows = list(budget_rows(data).values())
    return _meta_line(data) + "\n\n" + markdown_table(rows)


def headline_block(data: Optional[Mapping[str, Any]] = None) -> str:
    """The headline table of ``docs/results.md``: the sound method of each paper on its shipped quick profile."""
    data = load_budget() if data is None else data
    rows = budget_rows(data)
    lines = [_meta_line(data), "",
             "| method | seeds | released test acc | full retraining test acc | equal-budget retraining test acc "
             "| advantage [95 % CI] | label | cost saved |", "|---|---|---|---|---|---|---|---|"]
    for name, title in HEADLINE_METHODS.items():
        r = rows.get(name)
        if r is None:
            lines.append(f"| {title} | 0 | not measured | - | - | - | not measured | - |")
            continue
        saved = "-" if r.get("cost_saved") is None else f"{r['cost_saved']:.3f}"
        lines.append(f"| {title} | {_seeds_text(r['seeds'])} | {_ci(r.get('test_acc'))} | "
                     f"{_ci(r.get('retrain_test_acc'))} | {_ci(r.get('budget_test_acc'))} | "
                     f"{_ci(r.get('advantage'), signed=True)} | {r['reading']} | {saved} |")
    return "\n".join(lines) + "\n"


#: the generated blocks: file (relative to the repository) -> {block name: writer}
DOC_BLOCKS: dict[str, dict[str, Callable[[Optional[Mapping[str, Any]]], str]]] = {
    "docs/frontiers/budget.md": {"budget": budget_block, "regimes": lambda data=None: regimes_block()},
    "docs/results.md": {"headline": headline_block},
}


def splice(text: str, name: str, body: str) -> str:
    """``text`` with the generated block ``name`` replaced by ``body``; ``ValueError`` when its markers are
    missing or out of order."""
    begin, end = block_markers(name)
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"name={name!r}: the markers of this generated block are missing or out of order")
    return text[: i + len(begin)] + "\n" + body.rstrip("\n") + "\n" + text[j:]


def generated_docs(root: str | Path = _REPO, data: Optional[Mapping[str, Any]] = None) -> dict[Path, str]:
    """What :func:`write_docs` would write: every file of :data:`DOC_BLOCKS` with its blocks regenerated."""
    data = load_budget() if data is None else data
    out = {}
    for rel, blocks in DOC_BLOCKS.items():
        p = Path(root) / rel
        text = p.read_text(encoding="utf-8")
        for name, writer in blocks.items():
            text = splice(text, name, writer(data))
        out[p] = text
    return out


def write_docs(root: str | Path = _REPO, data: Optional[Mapping[str, Any]] = None) -> list[Path]:
    """Regenerate every block of :data:`DOC_BLOCKS` from the committed measurements; the files written."""
    written = []
    for p, text in generated_docs(root, data).items():
        if p.read_text(encoding="utf-8") != text:
            atomic_write_text(p, text)
            written.append(p)
    return written


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown_tables(text: str) -> list[dict[str, Any]]:
    """The pipe tables of ``text``: ``{"line", "caption", "header", "rows"}`` (caption: the paragraph just above,
    ``line``: 1-based line of the header)."""
    lines = text.splitlines()
    tables, i = [], 0
    while i < len(lines) - 1:
        if lines[i].lstrip().startswith("|") and re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i + 1]):
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            cap = []
            while k >= 0 and lines[k].strip() and not lines[k].lstrip().startswith("|"):
                cap.insert(0, lines[k])
                k -= 1
            j, rows = i + 2, []
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                rows.append(_cells(lines[j]))
                j += 1
            tables.append({"line": i + 1, "caption": " ".join(cap), "header": _cells(lines[i]), "rows": rows})
            i = j
        else:
            i += 1
    return tables


_CLAIM_HEADER = re.compile(r"\bacc\b|\baccuracy\b|advantage", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])\d*\.\d+|(?<![\w.])\d+(?:\.\d+)?\s?%")
_INTERVAL = re.compile(r"\[\s*[+-]?\d*\.?\d+\s*,\s*[+-]?\d*\.?\d+\s*\]")


def _labelled(*texts: str) -> bool:
    low = " ".join(texts).lower()
    return any(w in low for w in DIAGNOSTIC_WORDS)


def unlabelled_claims(text: str) -> list[str]:
    """Every cell of an accuracy or advantage column (header with the word ``acc``, ``accuracy`` or
    ``advantage``) of the tables of ``text`` that holds a number without an interval or a diagnostic label:
    ``"line N, column C: cell"``."""
    bad = []
    for t in markdown_tables(text):
        for c, head in enumerate(t["header"]):
            if not _CLAIM_HEADER.search(head):
                continue
            for r, row in enumerate(t["rows"]):
                cell = row[c] if c < len(row) else ""
                if not _NUMBER.search(cell) or _INTERVAL.search(cell) or _labelled(cell, head, t["caption"]):
                    continue
                bad.append(f"line {t['line'] + 2 + r}, column {head!r}: {cell!r}")
    return bad


#: the regimes beyond the shipped profiles measured against equal-budget retraining: label -> (method, profile,
#: overrides of PDUDT's runner); ``rrdu_light`` is RR-DU's lightweight variant (:func:`rrdu_light_seed`)
BUDGET_REGIMES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "gradient clipping, softmax regression (logistic)": ("gradient_clipping", "logistic", {}),
    "model clipping, softmax regression (logistic)": ("model_clipping", "logistic", {}),
    "output perturbation, softmax regression (logistic)": ("output_perturbation", "logistic", {}),
    "model clipping, the paper's setting on digits (paper)": ("model_clipping", "paper", {}),
    "PDUDT, eta t1 = 0.2 (lr 1e-3)": ("pdudt", "quick", {"lr": 1e-3}),
    "PDUDT, eta t1 = 0.4 (lr 2e-3)": ("pdudt", "quick", {"lr": 2e-3}),
    "RR-DU lightweight (p = 0.05), epsilon 4": ("rrdu_light", "quick", {"epsilon": 4.0}),
    "RR-DU lightweight (p = 0.05), epsilon 8": ("rrdu_light", "quick", {"epsilon": 8.0}),
}
#: the committed regime measurements (regenerate with :func:`write_regimes`)
REGIMES_PATH = Path(__file__).resolve().parent / "data" / "budget_regimes.json"


def rrdu_light_seed(seed: int, epsilon: float) -> dict[str, Any]:
    """RR-DU's lightweight variant (``p = 0.05``, sound accountant, the quick world) at ``epsilon`` on one seed,
    against the retraining walk with its gradient evaluations: a row shaped like :func:`.budget.measure_seed`'s."""

    from .rrdu.frontier import sound_run  # deferred: imports torch
    from .rrdu.lab import RRDU_PROFILES, build_world  # deferred: imports torch

    t0 = time.perf_counter()
    world = build_world(RRDU_PROFILES["quick"], seed=seed)
    run = sound_run(world, "rrdu_light", float(epsilon), seed=seed)
    ge, rge = int(run["cost"]["grad_evals"]), int(world.retrained.cost.grad_evals)
    ref = budget_retrain("rrdu", seed, {"cost": {"grad_evals": ge, "retrain_grad_evals": rge}})
    m, rt = world.metrics(run["params"]), world.metrics(world.retrained.params)
    return json_safe({"method": "rrdu_light", "seed": seed, "test_acc": float(m["clean_acc"]),
                      "retrain_test_acc": float(rt["clean_acc"]), "budget_test_acc": float(ref["test_acc"]),
                      "advantage": float(m["clean_acc"]) - float(ref["test_acc"]), "grad_evals": ge,
                      "retrain_grad_evals": rge, "budget_grad_evals": ref["grad_evals"],
                      "budget_steps": ref["steps"], "full_steps": ref["full_steps"], "procedure": ref["procedure"],
                      "cost_saved": cost_saved(ge, rge), "certified": bool(run["certificate"]["certified"]),
                      "backdoor_asr": m.get("asr"), "retrain_backdoor_asr": rt.get("asr"),
                      "run_seconds": time.perf_counter() - t0})


def measure_regimes(labels: Optional[Sequence[str]] = None, *, seeds: Sequence[int] = (0, 1, 2, 3, 4)
                    ) -> dict[str, Any]:
    """Every regime of :data:`BUDGET_REGIMES` (default: all) on ``seeds``: ``{"meta", "per_seed", "summary"}``
    shaped like ``data/budget_quick.json``, keyed by the regime's label."""


    names = list(BUDGET_REGIMES) if labels is None else list(labels)
    t0 = time.perf_counter()
    per_seed = {}
    for lab in names:
        method, profile, over = BUDGET_REGIMES[lab]
        one = ((lambda s: rrdu_light_seed(s, over["epsilon"])) if method == "rrdu_light"
               else (lambda s: measure_seed(method, s, profile=profile, **over)))
        per_seed[lab] = [dict(one(s), method=lab, registered=method, profile=profile, overrides=over)
                         for s in seeds]
    load = Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3] if Path("/proc/loadavg").is_file() else None
    meta = {"seeds": list(seeds), "seconds": time.perf_counter() - t0, "loadavg": load,
            "machine": f"{platform.machine()}, {platform.processor() or platform.system()}",
            "measured_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    return {"meta": meta, "per_seed": per_seed, "summary": summarize(per_seed)}


def write_regimes(path: str | Path = REGIMES_PATH, *, note: str = "") -> Path:
    """Measure :data:`BUDGET_REGIMES` on seeds 0-4 and commit the result."""

    data = measure_regimes()
    data["meta"]["note"] = note or "measured by unlearnkit.experiments.budget_tables.write_regimes"
    return atomic_write_text(path, json_text(data, indent=1, ensure_ascii=False) + "\n")


def regimes_block(data: Optional[Mapping[str, Any]] = None) -> str:
    """The regimes' table of ``docs/frontiers/budget.md`` from the committed measurements."""


    data = json.loads(REGIMES_PATH.read_text(encoding="utf-8")) if data is None else data
    m = data["meta"]
    load = " ".join(m.get("loadavg") or []) or "not recorded"
    rows = summarize(data["per_seed"])
    return (f"Written from `unlearnkit/experiments/data/budget_regimes.json` (`budget_tables.write_regimes()`, "
            f"measured {m['measured_at']}, {m['machine']}, {m['seconds']:.0f} s for all rows, load average after "
            f"the run {load}; {m.get('note', '')}). Means over seeds with the 95 % Student-t interval in brackets."
            "\n\n" + markdown_table(rows))
