"""Run a paper's registered methods and put our numbers next to the paper's.

``python -m unlearnkit reproduce PAPER --profile quick|paper --out DIR --seed S`` calls
:func:`run_reproduction`. The methods are found through the experiment registry
(:func:`unlearnkit.experiments.available_methods`), so a method that registers itself later joins the
reproduction without any edit here; a paper whose methods are not registered yet gets a clear message and
the paper's reference table alone.
"""

from __future__ import annotations

import json
import math
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from .._validate import check_choice
from .reference import ANALOG, EXTRACTORS, PAPERS, RefValue, references

__all__ = ["REPRODUCE_PROFILES", "methods_for_paper", "compare", "format_rows", "run_reproduction"]

REPRODUCE_PROFILES = ("quick", "paper")


def methods_for_paper(paper: str) -> dict[str, Any]:
    """Registered methods that belong to ``paper`` (matched on the method's name and its ``paper`` field)."""
    from ..experiments import available_methods

    check_choice("paper", paper, tuple(PAPERS))
    hints = PAPERS[paper].method_hints
    found = {}
    for name, spec in available_methods().items():
        hay = f"{name} {getattr(spec, 'paper', '')}".lower()
        if getattr(spec, "paper", "").strip().lower() == paper or any(h in hay for h in hints):
            found[name] = spec
    return found


def _finite(x: Optional[float]) -> Optional[float]:
    return x if x is not None and math.isfinite(x) else None


def _accepts(ref: RefValue, dataset: Optional[str]) -> bool:
    if dataset is None:
        return False
    dataset = str(dataset).lower()
    return dataset == ref.dataset or ANALOG.get(ref.paper, {}).get(dataset) == ref.dataset


def compare(paper: str, runs: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per reference number, with ours next to it where one of our runs measures the same thing.

    ``runs`` maps a method name to ``{"status": "ok", "result": result_dict}`` (other statuses are ignored).
    Our number goes to a row only when our run's dataset is the paper's dataset or its stand-in
    (:data:`~unlearnkit.reproduce.reference.ANALOG`: digits for MNIST, ...); ``same_data`` says which.
    Methods of the paper that no reference row covers get rows of their own (paper column empty).
    """
    ok = {n: r["result"] for n, r in runs.items() if r.get("status") == "ok"}
    rows: list[dict[str, Any]] = []
    placed: set[tuple[str, str]] = set()  # (method, extractor) already next to a paper number
    for ref in references(paper):
        row = {
            "id": ref.id, "table": ref.table, "page": ref.page, "locator": ref.locator, "dataset": ref.dataset,
            "setting": ref.setting, "method": ref.method, "metric": ref.metric, "unit": ref.unit,
            "paper": _finite(ref.value), "paper_std": ref.std, "ours": None, "ours_method": None,
            "ours_dataset": None, "same_data": None, "note": ref.note,
        }
        if ref.calc is not None:
            row.update(_calc(ref))
        elif ref.ours is not None:
            for name, res in ok.items():
                if not any(m in name.lower() for m in ref.match):
                    continue
                ds = res.get("dataset")
                row["ours_method"], row["ours_dataset"] = name, ds
                if _accepts(ref, ds):
                    row["ours"] = _finite(EXTRACTORS[ref.ours](res))
                    row["same_data"] = str(ds).lower() == ref.dataset
                    placed.add((name, ref.ours))
                break
        rows.append(row)
    for name, res in ok.items():
        for key, metric, unit in (("test_acc_pct", "test accuracy", "%"), ("retrain_test_acc_pct", "retrain test accuracy", "%"),
                                  ("forget_acc_pct", "forget accuracy", "%"), ("mia_auc", "MIA AUC", "AUC"),
                                  ("grad_evals_saved_pct", "gradient evaluations saved vs retraining", "%")):
            val = _finite(EXTRACTORS[key](res))
            if val is None or (name, key) in placed or (key == "mia_auc" and (name, "mia_auc_pct") in placed):
                continue
            rows.append({"id": f"ours_{name}_{key}", "table": "-", "page": None, "locator": "not in the paper's tables",
                         "dataset": res.get("dataset"), "setting": f"profile {res.get('profile')}", "method": name,
                         "metric": metric, "unit": unit, "paper": None, "paper_std": None, "ours": val,
                         "ours_method": name, "ours_dataset": res.get("dataset"), "same_data": None, "note": ""})
    return rows


def _calc(ref: RefValue) -> dict[str, Any]:
    """Evaluate a reference row's formula with the package's own implementation (None if it is missing)."""
    import importlib

    module, func, kwargs = ref.calc  # type: ignore[misc]
    label = f"{module.rsplit('.', 1)[-1]}.{func}"
    try:
        value = float(getattr(importlib.import_module(module), func)(**dict(kwargs)))
    except (ImportError, AttributeError, TypeError, ValueError) as exc:
        return {"ours": None, "ours_method": f"{label} unavailable ({type(exc).__name__})", "ours_dataset": "formula"}
    return {"ours": _finite(value), "ours_method": label, "ours_dataset": "formula", "same_data": True}


def _fmt(v: Any, std: Any = None) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        s = f"{v:.6g}"
        return s if std is None else f"{s} ± {std:.2g}"
    return str(v)


def format_rows(rows: list[dict[str, Any]]) -> str:
    """A plain-text table with the paper's column and ours side by side."""
    head = ["table", "page", "dataset", "method", "metric", "unit", "paper", "ours", "our run"]
    body = []
    for r in rows:
        run = "-" if r["ours_method"] is None else f"{r['ours_method']} on {r['ours_dataset']}"
        body.append([r["table"], _fmt(r["page"]), str(r["dataset"]), r["method"], r["metric"], r["unit"],
                     _fmt(r["paper"], r["paper_std"]), _fmt(r["ours"]), run])
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(b, widths)) for b in body]
    return "\n".join(lines)


def _data_note(profile: str) -> str:
    if profile != "paper":
        return "quick profile: digits and synthetic data (offline), the papers' MNIST/CIFAR-10 rows show '-' for ours"
    from ..data import available

    have = available()
    missing = [n for n in ("mnist", "cifar10") if not have.get(n)]
    if not missing:
        return "paper profile: MNIST and CIFAR-10 files are present"
    return (f"paper profile: {', '.join(missing)} not present on this machine (methods that need them report it "
            "below); fetch with unlearnkit.data.load(name, download=True) when online, or set UNLEARNKIT_DATA")


def run_reproduction(paper: str, *, profile: str = "quick", out: str | Path | None = None, seed: int = 0,
                     progress: bool = True, echo: Callable[[str], None] = print) -> dict[str, Any]:
    """Run every registered method of ``paper`` under ``profile`` and compare with the paper's numbers.

    Parameters
    ----------
    paper:
        One of ``"rrdu"``, ``"newton"``, ``"pdudt"``, ``"d2d_r2d"``, ``"noisy_finetune"``.
    profile:
        ``"quick"`` (digits/synthetic, minutes on CPU) or ``"paper"`` (the paper's settings where the data is
        present). A method that lacks the profile is skipped with a message.
    out:
        Folder for ``PAPER_reproduction.json``, ``PAPER_comparison.md`` and the interactive
        ``PAPER_comparison.html`` / ``PAPER_comparison_table.html`` (plotly; ``plotly.min.js`` is written once
        next to them, so the pages work offline). ``None`` writes nothing.

    Returns
    -------
    dict
        ``{"paper", "profile", "seed", "status", "messages", "methods": {name: {"status", "seconds",
        "error"?, "result"?}}, "rows": [...], "files": [...]}``. ``status`` is ``"ok"``, ``"partial"`` (some
        method failed or was skipped) or ``"no_methods"`` (none of the paper's methods is registered yet).
    """
    check_choice("paper", paper, tuple(PAPERS))
    check_choice("profile", profile, REPRODUCE_PROFILES)
    info = PAPERS[paper]
    messages = [f"{info.title} ({info.venue})", _data_note(profile)]
    specs = methods_for_paper(paper)
    runs: dict[str, dict[str, Any]] = {}
    if not specs:
        from ..experiments import available_methods

        messages.append(f"No method of '{paper}' is registered yet (registered: "
                        f"{', '.join(available_methods()) or 'none'}); showing the paper's numbers only.")
    for name, spec in specs.items():
        if profile not in spec.profiles:
            runs[name] = {"status": "skipped", "seconds": 0.0,
                          "error": f"profile {profile!r} not offered (has {', '.join(spec.profiles)})"}
            messages.append(f"{name}: skipped, {runs[name]['error']}")
            continue
        t0 = time.perf_counter()
        try:
            result = spec.run(profile, seed=seed, progress=progress)
            runs[name] = {"status": "ok", "seconds": time.perf_counter() - t0, "result": result}
        except Exception as exc:  # one failing method (e.g. MNIST missing) must not hide the others
            err = f"{type(exc).__name__}: {exc}"
            runs[name] = {"status": "error", "seconds": time.perf_counter() - t0, "error": err,
                          "traceback": traceback.format_exc(limit=4)}
            messages.append(f"{name}: failed, {err}")
    rows = compare(paper, runs)
    statuses = {r["status"] for r in runs.values()}
    status = "no_methods" if not runs else ("ok" if statuses == {"ok"} else "partial")
    for m in messages:
        echo(m)
    echo(f"\n== {paper}: ours next to the paper ({profile} profile, seed {seed})")
    echo(format_rows(rows))
    report: dict[str, Any] = {"paper": paper, "title": info.title, "venue": info.venue, "profile": profile,
                              "seed": seed, "status": status, "messages": messages, "methods": runs, "rows": rows,
                              "files": []}
    if out is not None:
        report["files"] = _write(report, Path(out))
        echo(f"\nwrote {', '.join(report['files'])}")
    return report


def _write(report: dict[str, Any], out: Path) -> list[str]:
    """Write the report's files atomically; ``plotly.min.js`` is rewritten when it differs from plotly's own."""
    from plotly.offline import get_plotlyjs

    from .._io import atomic_write_text, ensure_writable_dir, sync_file
    from ..benchmarks import machine_info
    from ..viz.capstone import reproduction_figure, reproduction_table

    ensure_writable_dir(out, name="out")
    payload = dict(report, machine=machine_info())
    payload.pop("files", None)
    payload["unlearnkit_version"] = payload["machine"].get("unlearnkit")
    key = report["paper"]  # one folder can hold all five papers' results side by side
    md = (f"# {report['title']}\n\nProfile `{report['profile']}`, seed {report['seed']}.\n\n"
          + "\n".join(f"- {m}" for m in report["messages"]) + "\n\n```\n" + format_rows(report["rows"]) + "\n```\n")
    # a truncated plotly.min.js from an interrupted run is repaired (plotly itself skips an existing file)
    sync_file(out / "plotly.min.js", get_plotlyjs().encode("utf-8"))
    title = f"{report['paper']} ({report['profile']} profile): paper vs ours"
    html = {name: fig.to_html(include_plotlyjs="directory", full_html=True) for name, fig in (
        (f"{key}_comparison_table.html", reproduction_table(report["rows"], title=title)),
        (f"{key}_comparison.html", reproduction_figure(report["rows"], title=title)))}
    md_path = atomic_write_text(out / f"{key}_comparison.md", md)
    html_paths = [atomic_write_text(out / name, page) for name, page in html.items()]
    # the JSON last: when it is there, every other file of this run is complete
    json_path = atomic_write_text(out / f"{key}_reproduction.json",
                                  json.dumps(payload, indent=2, default=_json_default))
    return [str(p) for p in (json_path, md_path, *html_paths)]


def _json_default(o: Any) -> Any:
    try:
        import numpy as np
        import torch

        if isinstance(o, torch.Tensor):
            return o.detach().cpu().tolist()
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, np.generic):
            return o.item()
    except ImportError:  # pragma: no cover
        pass
    if hasattr(o, "to_dict"):
        return o.to_dict()
    return str(o)
