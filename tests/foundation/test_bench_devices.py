"""``python -m unlearnkit bench`` names the device of every benchmark, and puts CPU and GPU side by side.

This machine has no GPU, so the side-by-side path is exercised with ``bench_devices`` patched to return
``["cpu", "cuda"]`` and a probe benchmark that reads ``UNLEARNKIT_DEVICE`` rather than computing on it (the
harness only sets that variable per run and interleaves the rows; :func:`unlearnkit.device` would refuse
"cuda" here). Real benchmarks on a GPU machine take the same path.
"""

from __future__ import annotations

import json
import os

import pytest
import torch

import unlearnkit as uk
from unlearnkit import benchmarks as B


@pytest.fixture
def probe_bench():
    seen: list[str] = []

    @B.register_bench("_devprobe", description="reports the device it ran on")
    def _probe(*, quick: bool = False):
        dev = os.environ.get("UNLEARNKIT_DEVICE") or str(uk.device())
        seen.append(dev)
        return [{"i": 0, "device": dev}, {"i": 1}]

    @B.register_bench("_devfree", description="device-free", per_device=False)
    def _free(*, quick: bool = False):
        return [{"n": 1}]

    yield seen
    B._BENCHES.pop("_devprobe", None)
    B._BENCHES.pop("_devfree", None)


def test_bench_devices_follow_cuda_and_the_environment(monkeypatch):
    monkeypatch.delenv("UNLEARNKIT_DEVICE", raising=False)
    want = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    assert B.bench_devices() == want
    monkeypatch.setenv("UNLEARNKIT_DEVICE", "cpu")
    assert B.bench_devices() == ["cpu"]


def test_one_device_keeps_the_rows_and_names_the_device_in_the_header(probe_bench, monkeypatch, tmp_path):
    monkeypatch.setattr(B, "bench_devices", lambda: ["cpu"])
    lines: list[str] = []
    rep = B.run_benches(["_devprobe", "_devfree"], quick=True, out=tmp_path / "b.json", echo=lines.append)
    assert rep["benchmarks"]["_devprobe"]["rows"] == [{"i": 0, "device": "cpu"}, {"i": 1}]
    assert rep["benchmarks"]["_devprobe"]["devices"] == ["cpu"]
    assert any(line.startswith("\n== bench _devprobe") and "[device cpu]" in line for line in lines)
    assert any("_devfree" in line and "(the benchmark picks its own)" in line for line in lines)
    assert json.loads((tmp_path / "b.json").read_text())["benchmarks"]["_devfree"]["rows"] == [{"n": 1}]


def test_two_devices_run_side_by_side(probe_bench, monkeypatch):
    monkeypatch.setattr(B, "bench_devices", lambda: ["cpu", "cuda"])
    monkeypatch.delenv("UNLEARNKIT_DEVICE", raising=False)
    lines: list[str] = []
    rep = B.run_benches(["_devprobe", "_devfree"], quick=True, echo=lines.append)
    assert probe_bench == ["cpu", "cuda"]  # each run saw its device through unlearnkit.device()
    assert rep["benchmarks"]["_devprobe"]["rows"] == [
        {"device": "cpu", "i": 0}, {"device": "cuda", "i": 0}, {"device": "cpu", "i": 1}, {"device": "cuda", "i": 1}]
    assert rep["benchmarks"]["_devfree"]["rows"] == [{"n": 1}]  # per_device=False: run once
    assert "[device cpu and cuda]" in "".join(lines)
    table = B.format_table(rep["benchmarks"]["_devprobe"]["rows"])
    assert table.splitlines()[0].startswith("device")
    assert "UNLEARNKIT_DEVICE" not in os.environ  # restored
