"""Benchmarks behind ``python -m unlearnkit bench [NAME] [--out FILE]``.

Speed and memory targets live here, never in timed unit tests. Each module in this package registers one
or more benchmarks with :func:`register_bench`; a benchmark returns a list of row dicts (one per measured
configuration) that the harness prints as a table and writes as JSON next to machine and device info.

Every benchmark's output names its device. A benchmark registered ``per_device=True`` (the default: it
computes on :func:`unlearnkit.device`) runs once per device of :func:`bench_devices`, with
``UNLEARNKIT_DEVICE`` set for the run: on a machine with CUDA that is the CPU and the GPU, and the table
shows them side by side (a leading ``device`` column, row ``i`` of each device next to the other's).
A benchmark that does not compute on the device (the accountant) or that compares devices itself (the
audit) registers ``per_device=False`` and runs once.
"""

from __future__ import annotations

import importlib
import os
import platform
import pkgutil
import time
from dataclasses import dataclass
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator

from .._io import atomic_write_text, ensure_writable_file, json_text, output_lock
from .._validate import check_choice
from ..core import cuda_sync as sync
from ..runtime import VERSION, device

__all__ = ["register_bench", "available_benches", "run_benches"]

BenchFn = Callable[..., list[dict[str, Any]]]


@dataclass(frozen=True)
class BenchSpec:
    name: str
    fn: BenchFn
    description: str = ""
    per_device: bool = True


_BENCHES: dict[str, BenchSpec] = {}
_DISCOVERED = False


def register_bench(name: str, *, description: str = "", per_device: bool = True) -> Callable[[BenchFn], BenchFn]:
    """Decorator: ``fn(quick: bool) -> list[dict]`` becomes ``python -m unlearnkit bench NAME``; with
    ``per_device`` it runs once per device of :func:`bench_devices` (see the module docstring)."""

    def deco(fn: BenchFn) -> BenchFn:
        _BENCHES[name] = BenchSpec(name, fn, description, bool(per_device))
        return fn

    return deco


def available_benches() -> dict[str, BenchSpec]:
    global _DISCOVERED
    if not _DISCOVERED:
        _DISCOVERED = True
        for info in pkgutil.iter_modules(__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{__name__}.{info.name}")
    return dict(sorted(_BENCHES.items()))


def timeit(fn: Callable[[], Any], *, repeat: int = 3, warmup: int = 1) -> float:
    """Best wall time in seconds of ``fn()`` over ``repeat`` runs after ``warmup`` runs (CUDA synchronised when
    CUDA is in use: a CPU run on a machine with a GPU neither waits for nor creates a CUDA context)."""

    for _ in range(warmup):
        fn()
    sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def machine_info() -> dict[str, Any]:
    import torch  # deferred: imports torch


    dev = device()
    info = {
        "unlearnkit": VERSION,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "device": str(dev),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if dev.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(dev)
    return info


def format_table(rows: Iterable[dict[str, Any]]) -> str:
    rows = list(rows)
    if not rows:
        return "(no rows)"
    cols: list[str] = []
    for r in rows:
        cols += [c for c in r if c not in cols]

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return "" if v is None else str(v)

    table = [[fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(t[i]) for t in table)) for i, c in enumerate(cols)]
    line = "  ".join(c.ljust(w) for c, w in zip(cols, widths))
    sep = "  ".join("-" * w for w in widths)
    body = "\n".join("  ".join(t[i].ljust(widths[i]) for i in range(len(cols))) for t in table)
    return f"{line}\n{sep}\n{body}"


def bench_devices() -> list[str]:
    """The devices a per-device benchmark runs on: the one ``UNLEARNKIT_DEVICE`` names when it is set (a
    deliberate choice), else the CPU and, when torch sees CUDA, the GPU as well."""
    import torch  # deferred: imports torch


    if os.environ.get("UNLEARNKIT_DEVICE"):
        return [str(device())]
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@contextmanager
def _on_device(dev: str) -> Iterator[None]:
    """``UNLEARNKIT_DEVICE=dev`` for the duration (notebook kernels started inside inherit it), then restored."""
    old = os.environ.get("UNLEARNKIT_DEVICE")
    os.environ["UNLEARNKIT_DEVICE"] = dev
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("UNLEARNKIT_DEVICE", None)
        else:
            os.environ["UNLEARNKIT_DEVICE"] = old


def _side_by_side(per_device: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Rows of several devices interleaved (row i of each device together), each led by its ``device``."""
    out: list[dict[str, Any]] = []
    for i in range(max(len(rows) for rows in per_device.values())):
        for dev, rows in per_device.items():
            if i < len(rows):
                out.append({"device": dev, **{k: v for k, v in rows[i].items() if k != "device"}})
    return out


def run_benches(names: Iterable[str] | None = None, *, quick: bool = False, out: str | os.PathLike | None = None,
                echo: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the named benchmarks (all when ``names`` is empty), print tables, optionally write JSON to ``out``.

    ``out`` is checked (a new path or a regular file) and locked (:func:`unlearnkit._io.output_lock`: a
    second run on the same ``out`` in another process raises ``OutputPathError`` naming this one's pid)
    before any benchmark runs; the lock is held until the JSON is written.
    """
    benches = available_benches()
    names = list(names or benches)
    for n in names:
        check_choice("bench", n, tuple(benches))
    if out is None:
        return _run(benches, names, quick, echo)

    path = ensure_writable_file(out, name="out")
    with output_lock(path, name="out"):
        report = _run(benches, names, quick, echo)
        atomic_write_text(ensure_writable_file(out, name="out"), json_text(report, indent=2, default=str))
    echo(f"\nwrote {out}")
    return report


def _run(benches: dict[str, BenchSpec], names: list[str], quick: bool,
         echo: Callable[[str], None]) -> dict[str, Any]:
    """The benchmarks' report: machine info and, per benchmark, its rows, seconds and devices."""
    report: dict[str, Any] = {"machine": machine_info(), "quick": quick, "benchmarks": {}}
    for n in names:
        spec = benches[n]
        devices = bench_devices() if spec.per_device else [report["machine"]["device"]]
        where = "device " + " and ".join(devices) + ("" if spec.per_device else " (the benchmark picks its own)")
        echo(f"\n== bench {n}: {spec.description} [{where}]")
        t0 = time.perf_counter()
        if len(devices) == 1:  # one device: the rows as the benchmark returns them, the device in the header
            rows = spec.fn(quick=quick)
        else:
            runs = {}
            for dev in devices:
                with _on_device(dev):
                    runs[dev] = spec.fn(quick=quick)
            rows = _side_by_side(runs)
        report["benchmarks"][n] = {"rows": rows, "seconds": time.perf_counter() - t0, "devices": devices}
        echo(format_table(rows))
    return report
