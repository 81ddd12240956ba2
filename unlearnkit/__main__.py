"""Command line: ``python -m unlearnkit {doctor, run, reproduce, bench, list}``."""

from __future__ import annotations

import argparse
import importlib.metadata as md
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import unlearnkit as uk
from unlearnkit._io import atomic_write_text, ensure_writable_dir, ensure_writable_file, json_text, output_lock, \
    retire_stale
from unlearnkit._validate import check_choice, check_int
from unlearnkit.benchmarks import available_benches, run_benches
from unlearnkit.data.parsers import DatasetCorruptError
from unlearnkit.experiments import available_methods
from unlearnkit.experiments.contract import cost_saved, guarantee, guarantee_line
from unlearnkit.experiments.registry import registry_errors
from unlearnkit.reproduce.reference import PAPERS
from unlearnkit.reproduce.runner import REPRODUCE_PROFILES


def _doctor(args: argparse.Namespace) -> int:
    print(f"unlearnkit {uk.__version__} on Python {platform.python_version()} ({platform.platform()})")
    for pkg in ["torch", "numpy", "scipy", "networkx", "plotly", "anywidget", "ipywidgets", "jupyterlab",
                "scikit-learn", "tqdm", "dp-accounting", "opacus", "nbval", "hypothesis", "playwright"]:
        try:
            print(f"  {pkg:14s} {md.version(pkg)}")
        except md.PackageNotFoundError:
            print(f"  {pkg:14s} (not installed)")
    try:
        dev = uk.device()
        extra = ""
        if dev.type == "cuda":
            import torch

            extra = f" ({torch.cuda.get_device_name(dev)})"
        print(f"device: {dev}{extra}")
    except ValueError as exc:
        print(f"device: ERROR {exc}")
    from unlearnkit.data import available  # deferred: imports torch
    from unlearnkit.data.datasets import data_root  # deferred: imports torch

    avail = available()
    print(f"datasets (root {data_root()}): " + ", ".join(f"{k}={'yes' if v else 'no'}" for k, v in avail.items()))
    try:
        from jupyter_core.paths import jupyter_path

        dirs = [Path(p) for p in jupyter_path("labextensions")]
        for name in ["jupyterlab-plotly", "@jupyter-widgets/jupyterlab-manager", "anywidget"]:
            found = any((d / name / "package.json").exists() for d in dirs)
            print(f"  lab extension {name}: {'installed' if found else 'MISSING (pip install the package)'}")
    except ImportError:
        print("  lab extensions: jupyter is not installed (pip install jupyterlab)")

    print("methods: " + ", ".join(available_methods()))
    for mod, err in registry_errors().items():
        print(f"  WARNING: the runner of {mod} failed to import: {err}")
    return 0


def _list(args: argparse.Namespace) -> int:
    print("methods (python -m unlearnkit run NAME):")
    for name, spec in available_methods().items():
        print(f"  {name:22s} profiles: {', '.join(spec.profiles):24s} {spec.description}")
    print("benchmarks (python -m unlearnkit bench NAME):")
    for name, spec in available_benches().items():
        print(f"  {name:22s} {spec.description}")
    return 0


def _print_result(result: dict) -> None:
    print(f"\n{result['method']} [{result['profile']}] on {result['dataset']}: {result.get('request', '')}")
    m = result["metrics"]
    rows = [("test accuracy", "test_acc"), ("forget accuracy", "forget_acc"), ("retain accuracy", "retain_acc"),
            ("membership-inference AUC", "mia_auc"), ("backdoor success", "backdoor_asr")]

    def cell(key: str) -> str:
        """``value``, or ``value [low, high]`` where the metrics carry its 95 % interval (as ``format_report``)."""
        v, lo, hi = m.get(key), m.get(f"{key}_low"), m.get(f"{key}_high")
        if not isinstance(v, float):
            return "-"
        if isinstance(lo, float) and isinstance(hi, float) and lo == lo and hi == hi:  # no interval when NaN
            return f"{v:.4f} [{lo:.3f}, {hi:.3f}]"
        return f"{v:.4f}"

    cells = [(label, key, [cell(f"{p}{key}") for p in ("", "retrain_", "original_")])
             for label, key in rows if key in m]
    width = max([10, *(len(c) for _, _, cs in cells for c in cs)])
    ci = [label for label, _, cs in cells if any("[" in c for c in cs)]
    print(f"  {'metric':26s} " + "  ".join(f"{h:>{width}s}" for h in ("unlearned", "retrained", "original")))
    for label, _, cs in cells:
        print(f"  {label:26s} " + "  ".join(f"{c:>{width}s}" for c in cs))
    if ci:
        print(f"  ({', '.join(ci)}: value [95 % interval])")
    if "dist_to_retrain" in m:
        print(f"  distance to retrain: {m['dist_to_retrain']:.4f} (original model: "
              f"{m.get('original_dist_to_retrain', float('nan')):.4f})")

    c = result["cost"]
    saved = [cost_saved(c.get(k), c.get(f"retrain_{k}")) for k in ("grad_evals", "seconds")]
    pct = [f"{100 * v:.1f} %" if v is not None else "-" for v in saved]
    print(f"  cost: {c['grad_evals']} gradient evaluations, {c['seconds']:.2f} s "
          f"(retraining: {c['retrain_grad_evals']}, {c['retrain_seconds']:.2f} s; saved {pct[0]} of the "
          f"gradient evaluations, {pct[1]} of the time)")
    cert = result.get("certificate")
    if cert:
        print(f"  certificate [{cert['mode']}]: ({cert['epsilon']:.4g}, {cert['delta']:.3g}), sigma={cert.get('sigma')}"
              f" from {cert.get('source', '-')}")
    else:
        print("  certificate: none (heuristic)")
    print(f"  guarantee: {guarantee_line(result.get('guarantee') or guarantee(cert))}")
    if result.get("diagnostics"):
        print(f"  diagnostics (models not released): {', '.join(result['diagnostics'])}")


def _fail(exc: BaseException | str, code: int) -> int:
    """One line on stderr, no traceback."""
    print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
    return code


def _guarded(work: Callable[[], int]) -> int:
    """Run ``work`` and map the package's errors to one-line messages and exit codes.

    2: a bad argument (ValueError, including a bad --out); 3: a dataset is missing or corrupt; 4: another
    input/output error (a full disk, say).
    """
    from unlearnkit.data import DatasetUnavailableError  # deferred: imports torch

    try:
        return work()
    except (DatasetCorruptError, DatasetUnavailableError) as exc:
        return _fail(exc, 3)
    except ValueError as exc:
        return _fail(exc, 2)
    except OSError as exc:
        return _fail(f"input/output error: {exc}", 4)


def _run(args: argparse.Namespace) -> int:
    def work() -> int:
        from unlearnkit.experiments import get_method  # deferred: read when called (tests patch experiments.get_method)

        spec = get_method(args.method)
        check_choice("profile", args.profile, tuple(spec.profiles))
        check_int("--seed", args.seed, low=0, high=2**63 - 1)  # before the run, not at the first seeded draw
        out = ensure_writable_dir(args.out)  # before any work: a bad --out fails now, not after the run
        with output_lock(out):  # a second run on this --out refuses now instead of overwriting this one's result
            return _run_locked(args, spec, out)

    return _guarded(work)


def _run_locked(args: argparse.Namespace, spec: Any, out: Path) -> int:
    """The body of ``run`` once ``--out`` is checked and locked."""

    retire_stale(out / "result.json")  # an interrupted run must not leave an old result that looks current
    t0 = time.perf_counter()
    result = spec.run(args.profile, seed=args.seed, progress=not args.no_progress)
    result.setdefault("wall_seconds", time.perf_counter() - t0)
    result.setdefault("seed", args.seed)
    result.setdefault("profile", args.profile)
    result["unlearnkit_version"] = uk.__version__
    result["status"] = "complete"
    atomic_write_text(out / "result.json", json_text(result, indent=2, default=float))
    _print_result(result)
    print(f"\nwrote {out / 'result.json'}")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    try:
        from unlearnkit.reproduce import run_reproduction  # deferred: reported if missing
    except ImportError as exc:
        print(f"error: reproduction is not available ({exc})", file=sys.stderr)
        return 2

    def work() -> int:
        check_choice("paper", args.paper, tuple(PAPERS))
        check_choice("profile", args.profile, REPRODUCE_PROFILES)
        check_int("--seed", args.seed, low=0, high=2**63 - 1)
        out = ensure_writable_dir(args.out)
        with output_lock(out):
            retire_stale(out / f"{args.paper}_reproduction.json")
            rep = run_reproduction(args.paper, profile=args.profile, out=out, seed=args.seed,
                                   progress=not args.no_progress)
        return 1 if rep["status"] in ("nothing_ran", "no_methods") else 0  # nothing ran: a failure, not a pass

    return _guarded(work)


def _bench(args: argparse.Namespace) -> int:
    def work() -> int:
        for name in args.names:
            check_choice("bench", name, tuple(available_benches()))
        if args.out is None:
            run_benches(args.names, quick=args.quick, out=None)
            return 0
        with output_lock(ensure_writable_file(args.out)):
            retire_stale(args.out)
            run_benches(args.names, quick=args.quick, out=args.out)
        return 0

    return _guarded(work)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m unlearnkit",
                                description="Certified machine unlearning, centralized and decentralized.")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("doctor", help="versions, device, datasets, JupyterLab extensions")
    d.set_defaults(fn=_doctor)

    ls = sub.add_parser("list", help="registered methods and benchmarks")
    ls.set_defaults(fn=_list)

    r = sub.add_parser("run", help="train, unlearn with METHOD, retrain on the same request, write result.json")
    r.add_argument("method")
    r.add_argument("--profile", default="quick", help="quick (seconds on CPU) or paper (the paper's settings)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--out", default="artifacts/run", help="output folder for result.json")
    r.add_argument("--no-progress", action="store_true", help="no progress bars")
    r.set_defaults(fn=_run)

    rp = sub.add_parser("reproduce", help="run a paper's experiments and print ours next to the paper's numbers")
    rp.add_argument("paper", help="rrdu, newton, pdudt, d2d_r2d or noisy_finetune")
    rp.add_argument("--profile", default="quick")
    rp.add_argument("--seed", type=int, default=0)
    rp.add_argument("--out", default="artifacts/reproduce")
    rp.add_argument("--no-progress", action="store_true")
    rp.set_defaults(fn=_reproduce)

    b = sub.add_parser("bench", help="benchmarks: print a table, write JSON with machine info")
    b.add_argument("names", nargs="*", help="benchmark names (default: all)")
    b.add_argument("--out", default=None, help="JSON file to write")
    b.add_argument("--quick", action="store_true", help="smaller sizes (for smoke tests)")
    b.set_defaults(fn=_bench)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.fn(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
