"""Run a paper's registered methods and put our numbers next to the paper's.

``python -m unlearnkit reproduce PAPER --profile quick|paper --out DIR --seed S`` calls
:func:`run_reproduction`. The methods are found through the experiment registry
(:func:`unlearnkit.experiments.available_methods`), so a method that registers itself later joins the
reproduction without any edit here; a paper whose methods are not registered yet gets a clear message and
the paper's reference table alone.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from .._io import atomic_write_text, ensure_writable_dir, json_text, output_lock, sync_file
from .._validate import check_choice
from ..benchmarks import machine_info
from ..experiments import available_methods
from ..experiments.contract import guarantee
from .reference import ANALOG, EXTRACTORS, PAPERS, RefValue, references


REPRODUCE_PROFILES = ("quick", "paper")


def methods_for_paper(paper: str) -> dict[str, Any]:
    """Registered methods that belong to ``paper`` (matched on the method's name and its ``paper`` field)."""

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


def _lookup(res: Mapping[str, Any], path: str) -> Any:
    """``res["a"]["b"]`` for ``"a.b"``; a bare key is looked up in ``res["setting"]`` first."""
    if "." not in path:
        setting = res.get("setting")
        if isinstance(setting, Mapping) and path in setting:
            return setting[path]
    d: Any = res
    for part in path.split("."):
        if d is None:  # e.g. no certificate at all: its sigma is None (no noise)
            return None
        if not isinstance(d, Mapping) or part not in d:
            return _MISSING
        d = d[part]
    return d


_MISSING = object()


def _differences(ref: RefValue, res: Mapping[str, Any]) -> list[str]:
    """What keeps our run ``res`` from being the paper's setting and metric of ``ref`` (empty: the same)."""
    out = []
    ds = str(res.get("dataset")).lower()
    if ds != ref.dataset:
        out.append(f"data: ours {ds}, paper {ref.dataset}")
    if res.get("profile") != "paper":
        out.append(f"profile {res.get('profile')!r}, not the paper's setting")
    if not ref.same_metric:
        out.append(f"metric: ours {ref.ours}, paper {ref.metric}")
    return out + _setting_differences(ref, res)


def _setting_differences(ref: RefValue, res: Mapping[str, Any]) -> list[str]:
    """The setting conditions of ``ref`` (``RefValue.requires``) that our run ``res`` does not meet."""
    out = []
    for path, want in ref.requires.items():
        got = _lookup(res, path)
        allowed = want if isinstance(want, tuple) else (want,)
        if got is _MISSING and None in allowed and "." in path:  # an absent noise parameter: no noise
            got = None
        if got is _MISSING or got not in allowed:
            shown = "not recorded" if got is _MISSING else f"{got:.4g}" if isinstance(got, float) else repr(got)
            out.append(f"{path}: ours {shown}, paper {' or '.join('none' if a is None else repr(a) for a in allowed)}")
    return out


# an MIA AUC of a destroyed model can be near 0.5 or anywhere else (0.0 for D2D/R2D's diverged paper run): it
# measures the noise, never the forgetting
_DESTROYED_SAYS = {"mia": "its MIA score shows the noise, not forgetting",
                   "forget": "a low forget accuracy shows the noise, not forgetting",
                   "saved": "the compute it saved bought a model retraining beats"}


_WARN_KIND = {"time_saved_pct": "saved", "grad_evals_saved_pct": "saved", "forget_acc_pct": "forget",
              "backdoor_asr_pct": "forget"}


def _destroyed(res: Mapping[str, Any], what: str = "mia") -> Optional[str]:
    """A warning for a metric of a released model more than 10 points less accurate than retraining."""
    acc, rt = _get_metric(res, "test_acc"), _get_metric(res, "retrain_test_acc")
    if acc is not None and rt is not None and acc < rt - 0.10:
        return f"released model destroyed (test accuracy {acc:.2f} vs retraining {rt:.2f}): {_DESTROYED_SAYS[what]}"
    return None


def _get_metric(res: Mapping[str, Any], key: str) -> Optional[float]:
    v = (res.get("metrics") or {}).get(key)
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def _closest(ref: RefValue, res: Mapping[str, Any], val: Optional[float], diffs: list[str]
             ) -> tuple[Optional[float], str]:
    """The closest column of a run that is not the paper's setting: its number only when it measures the paper's
    quantity in the paper's setting on the offline stand-in data (same metric, every ``requires`` condition met,
    a comparable request); otherwise none, and what a comparable run would need."""
    request = str(res.get("request") or "")
    excluded = [s for s in ref.closest_excludes if s in request]
    other_setting = bool(_setting_differences(ref, res))
    if not ref.same_metric or not ref.comparable_offline or excluded or other_setting or val is None:
        if not ref.same_metric or not ref.comparable_offline or excluded:
            why = "not comparable: our run measures another quantity" + (f" (its request: {request})"
                                                                        if excluded else "")
        elif other_setting:
            why = "not comparable: our run is another setting"
        else:
            why = "our run records no such number"
        needs = ref.needs or f"{ref.dataset}, {ref.setting}"
        return None, f"{why}; " + "; ".join(diffs) + f"; a comparable run needs: {needs}"
    return val, "; ".join(diffs)


def compare(paper: str, runs: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per reference number; ours next to it only where one of our runs is the same setting and metric.

    ``runs`` maps a method name to ``{"status": "ok", "result": result_dict}`` (other statuses are ignored).
    Like with like: ``ours`` is filled only by a run on the paper's own dataset, under a ``paper`` profile,
    measuring the paper's metric (``RefValue.same_metric``) in the paper's setting (``RefValue.requires``);
    ``same_data`` is then True. Otherwise a run on that dataset or its stand-in
    (:data:`~unlearnkit.reproduce.reference.ANALOG`: digits for MNIST, ...) goes to ``closest``, and
    ``closest_differs`` lists what differs (for an MIA row, also when the released model is destroyed). A run
    that measures another quantity (``RefValue.same_metric`` or ``comparable_offline`` False, a request
    ``RefValue.closest_excludes`` names), misses a setting condition (``RefValue.requires``) or records nothing
    leaves ``closest`` empty, and ``closest_differs``
    says so with what a comparable run needs (``RefValue.needs``).
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
            "ours_dataset": None, "same_data": None, "closest": None, "closest_differs": None, "note": ref.note,
        }
        if ref.calc is not None:
            row.update(_calc(ref))
        elif ref.ours is not None:
            for name, res in ok.items():
                if not any(m in name.lower() for m in ref.match):
                    continue
                ds = res.get("dataset")
                row["ours_method"], row["ours_dataset"] = name, ds
                row.update(_epsilon_delta(res))
                if _accepts(ref, ds):
                    val = _finite(EXTRACTORS[ref.ours](res))
                    diffs = _differences(ref, res)
                    what = _WARN_KIND.get(ref.ours, "mia" if "mia" in ref.ours else None)
                    if what and (warn := _destroyed(res, what)):
                        diffs.append(warn)
                    if diffs:
                        row["closest"], row["closest_differs"] = _closest(ref, res, val, diffs)
                    else:
                        row["ours"], row["same_data"] = val, True
                    placed.add((name, ref.ours))
                break
        rows.append(row)
    for name, res in ok.items():
        for key, metric, unit in (("test_acc_pct", "test accuracy", "%"), ("retrain_test_acc_pct", "retrain test accuracy", "%"),
                                  ("forget_acc_pct", "forget accuracy", "%"), ("mia_auc", "MIA AUC", "AUC"),
                                  ("grad_evals_saved_pct", "gradient evaluations saved vs retraining", "%"),
                                  ("budget_retrain_test_acc_pct", "test accuracy of retraining for the unlearning "
                                   "run's budget", "%")):
            val = _finite(EXTRACTORS[key](res))
            if val is None or (name, key) in placed or (key == "mia_auc" and (name, "mia_auc_pct") in placed):
                continue
            what = {"mia_auc": "mia", "forget_acc_pct": "forget", "grad_evals_saved_pct": "saved"}.get(key)
            warn = _destroyed(res, what) if what else None
            rows.append({"id": f"ours_{name}_{key}", "table": "-", "page": None, "locator": "not in the paper's tables",
                         "dataset": res.get("dataset"), "setting": f"profile {res.get('profile')}", "method": name,
                         "metric": metric, "unit": unit, "paper": None, "paper_std": None, "ours": val,
                         "ours_method": name, "ours_dataset": res.get("dataset"), "same_data": None,
                         "closest": None, "closest_differs": None, "note": warn or "", **_epsilon_delta(res)})
    return rows


def _epsilon_delta(res: Mapping[str, Any]) -> dict[str, Any]:
    """``{"ours_epsilon", "ours_delta"}`` of a run: its guarantee block, or one derived from its certificate."""

    g = res.get("guarantee") or guarantee(res.get("certificate"))
    return {"ours_epsilon": g.get("epsilon"), "ours_delta": g.get("delta")}


def _calc(ref: RefValue) -> dict[str, Any]:
    """Evaluate a reference row's formula with the package's own implementation (None if it is missing)."""

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
    """A plain-text table: the paper's number, ours (same setting and metric only), and, in a separate column,
    our closest setting with what differs."""
    head = ["table", "page", "dataset", "method", "metric", "unit", "paper", "ours", "our run",
            "closest (not the paper's setting)", "what differs", "note"]
    body = []
    for r in rows:
        run = "-" if r["ours_method"] is None else f"{r['ours_method']} on {r['ours_dataset']}"
        body.append([r["table"], _fmt(r["page"]), str(r["dataset"]), r["method"], r["metric"], r["unit"],
                     _fmt(r["paper"], r["paper_std"]), _fmt(r["ours"]), run, _fmt(r.get("closest")),
                     r.get("closest_differs") or "", r.get("note") or ""])
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(b, widths)).rstrip() for b in body]
    return "\n".join(lines)


def _data_note(profile: str) -> str:
    if profile != "paper":
        return ("quick profile: digits and synthetic data (offline), not the papers' settings: the 'ours' column "
                "stays empty, our closest runs are in the separate 'closest' column with what differs")
    from ..data import available  # deferred: imports torch

    have = available()
    missing = [n for n in ("mnist", "cifar10") if not have.get(n)]
    if not missing:
        return "paper profile: MNIST and CIFAR-10 files are present"
    return (f"paper profile: {', '.join(missing)} not present on this machine: a paper profile that needs it fails "
            "and says so below, one on an offline stand-in runs and its rows say what differs; fetch with "
            "unlearnkit.data.load(name, download=True) when online, or set UNLEARNKIT_DATA")


def _offers(spec: Any, profile: str) -> bool:
    """Whether ``spec`` runs ``profile``: listed in its registry row, or (for a lab that defines its profiles
    itself, e.g. ``descend_rewind.lab.central_profile``) known to its lab's profile function."""
    if profile in spec.profiles:
        return True
    target = getattr(spec, "target", "")
    if not target:
        return False

    try:
        probe = getattr(importlib.import_module(target.partition(":")[0]), "central_profile", None)
        return probe is not None and probe(profile) is not None
    except Exception:  # the lab does not know the profile (ValueError) or cannot be imported: not offered
        return False


def _run_spec(spec: Any, profile: str, *, seed: int, progress: bool) -> dict[str, Any]:
    if profile not in spec.profiles and dataclasses.is_dataclass(spec):
        spec = dataclasses.replace(spec, profiles=(*spec.profiles, profile))  # offered by its lab (_offers)
    return spec.run(profile, seed=seed, progress=progress)


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
        next to them, so the pages work offline). ``None`` writes nothing. Checked and locked before any method
        runs (:func:`unlearnkit._io.output_lock`: another process on it gets an error naming this pid).

    Returns
    -------
    dict
        ``{"paper", "profile", "seed", "status", "messages", "methods": {name: {"status", "seconds",
        "error"?, "result"?}}, "rows": [...], "files": [...]}``. ``status`` is ``"ok"``, ``"partial"`` (some
        method failed or was skipped), ``"nothing_ran"`` (methods are registered but none ran: e.g. none has
        the profile; the CLI then exits non-zero) or ``"no_methods"`` (none of the paper's methods is
        registered yet). ``messages`` names the methods without the profile.
    """
    check_choice("paper", paper, tuple(PAPERS))
    check_choice("profile", profile, REPRODUCE_PROFILES)
    if out is None:
        return _reproduce(paper, profile, None, seed, progress, echo)
    folder = ensure_writable_dir(out, name="out")  # before any work; held until the last file is written
    with output_lock(folder, name="out"):
        return _reproduce(paper, profile, folder, seed, progress, echo)


def _reproduce(paper: str, profile: str, out: Optional[Path], seed: int, progress: bool,
               echo: Callable[[str], None]) -> dict[str, Any]:
    """:func:`run_reproduction` once its arguments are checked and ``out`` (when given) is locked."""
    info = PAPERS[paper]
    messages = [f"{info.title} ({info.venue})", _data_note(profile)]
    specs = methods_for_paper(paper)
    runs: dict[str, dict[str, Any]] = {}
    if not specs:
        messages.append(f"No method of '{paper}' is registered yet (registered: "
                        f"{', '.join(available_methods()) or 'none'}); showing the paper's numbers only.")
    lacking = [name for name, spec in specs.items() if not _offers(spec, profile)]
    if lacking:
        messages.append(f"no {profile!r} profile yet: {', '.join(lacking)} (not run)")
    for name, spec in specs.items():
        if name in lacking:
            runs[name] = {"status": "skipped", "seconds": 0.0,
                          "error": f"profile {profile!r} not offered (has {', '.join(spec.profiles)})"}
            continue
        t0 = time.perf_counter()
        try:
            result = _run_spec(spec, profile, seed=seed, progress=progress)
            runs[name] = {"status": "ok", "seconds": time.perf_counter() - t0, "result": result}
        except Exception as exc:  # one failing method (e.g. MNIST missing) must not hide the others
            err = f"{type(exc).__name__}: {exc}"
            runs[name] = {"status": "error", "seconds": time.perf_counter() - t0, "error": err,
                          "traceback": traceback.format_exc(limit=4)}
            messages.append(f"{name}: failed, {err}")
    differs: dict[str, list[str]] = {}  # what a run's profile changes from the paper (its "setting" block)
    for name, run in runs.items():
        text = ((run.get("result") or {}).get("setting") or {}).get("differs")
        if text:
            differs.setdefault(str(text), []).append(name)
    messages += [f"{', '.join(names)}: differs from the paper: {text}" for text, names in differs.items()]
    rows = compare(paper, runs)
    statuses = {r["status"] for r in runs.values()}
    status = ("no_methods" if not runs else "ok" if statuses == {"ok"} else
              "partial" if "ok" in statuses else "nothing_ran")
    if status == "nothing_ran":
        messages.append(f"nothing ran: no method of '{paper}' completed the {profile!r} profile")
    for m in messages:
        echo(m)
    echo(f"\n== {paper}: ours next to the paper ({profile} profile, seed {seed})")
    echo(format_rows(rows))
    report: dict[str, Any] = {"paper": paper, "title": info.title, "venue": info.venue, "profile": profile,
                              "seed": seed, "status": status, "messages": messages, "methods": runs, "rows": rows,
                              "files": []}
    if out is not None:
        report["files"] = _write(report, out)
        echo(f"\nwrote {', '.join(report['files'])}")
    return report


def _write(report: dict[str, Any], out: Path) -> list[str]:
    """Write the report's files atomically; ``plotly.min.js`` is rewritten when it differs from plotly's own."""
    from plotly.offline import get_plotlyjs  # deferred: imports plotly

    from ..viz.capstone import reproduction_figure, reproduction_table  # deferred: imports plotly

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
    # the figures show 'ours' only for the same setting; the closest run and what differs go in the note
    shown = [dict(r, note="; ".join(x for x in (r.get("note"), r.get("closest") is not None and
                                                  f"closest of ours: {_fmt(r['closest'])} ({r['closest_differs']})")
                                    if x)) for r in report["rows"]]
    html = {name: fig.to_html(include_plotlyjs="directory", full_html=True) for name, fig in (
        (f"{key}_comparison_table.html", reproduction_table(shown, title=title)),
        (f"{key}_comparison.html", reproduction_figure(shown, title=title)))}
    md_path = atomic_write_text(out / f"{key}_comparison.md", md)
    html_paths = [atomic_write_text(out / name, page) for name, page in html.items()]
    # the JSON last: when it is there, every other file of this run is complete
    json_path = atomic_write_text(out / f"{key}_reproduction.json",
                                  json_text(payload, indent=2, default=_json_default))
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
