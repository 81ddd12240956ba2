"""Hostile disk-cache entries: a bad entry (foreign key, wrong shape, NaN, missing entry, changed bytes, a
pickle that runs code) is reported and recomputed, never served; a cache folder that cannot hold entries is
refused before any work."""

from __future__ import annotations

import os

import pytest
import torch
from fuzzkit import time_limit

from unlearnkit._io import OutputPathError
from unlearnkit.experiments.world_cache import cached_tensors


class _Compute:
    def __init__(self, value=None):
        self.calls = 0
        self.value = value

    def __call__(self):
        self.calls += 1
        return self.value if self.value is not None else {"params": torch.arange(4.0), "n": torch.tensor([7])}


def _leave(path):
    open(path, "w").close()


class _Payload:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (_leave, (self.marker,))


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("UNLEARNKIT_CACHE", str(tmp_path))
    compute = _Compute()
    cached_tensors("w", 1, compute)
    (entry,) = tmp_path.glob("w-*.pt")
    return tmp_path, entry, compute


def _again(compute, required=None):
    with time_limit(2.0):
        return cached_tensors("w", 1, compute, required=required)


def test_a_sound_entry_is_served_without_computing(cache):
    _, _, compute = cache
    got = _again(compute, required={"params": (4,), "n": None})
    assert compute.calls == 1 and torch.equal(got["params"], torch.arange(4.0))


@pytest.mark.parametrize("change", ["nan", "shape", "key", "kind", "missing", "bytes", "extra_field", "not_dict"])
def test_a_bad_entry_is_reported_and_recomputed(cache, change):
    _, entry, compute = cache
    st = torch.load(entry, weights_only=True)
    if change == "nan":
        st["tensors"]["params"] = torch.tensor([0.0, float("nan"), 2.0, 3.0])
    elif change == "shape":
        st["tensors"]["params"] = torch.arange(5.0)
    elif change == "key":
        st["key"] = "0" * 64
    elif change == "kind":
        st["kind"] = "other"
    elif change == "missing":
        del st["tensors"]["params"], st["shapes"]["params"]
    elif change == "bytes":
        st["tensors"]["params"] = torch.arange(4.0) + 1
    elif change == "extra_field":
        st["x"] = 1
    else:
        st = {"params": torch.arange(4.0)}
    torch.save(st, entry)
    with pytest.warns(RuntimeWarning, match=f"ignoring the bad entry {entry}"):
        got = _again(compute, required={"params": (4,)})
    assert compute.calls == 2 and torch.equal(got["params"], torch.arange(4.0))
    _again(compute)                                            # rewritten: served again
    assert compute.calls == 2


def test_a_required_entry_of_the_wrong_shape_is_recomputed(cache):
    _, _, compute = cache
    with pytest.warns(RuntimeWarning, match="entry 'params' has shape \\[4\\], expected \\[3\\]"):
        _again(compute, required={"params": (3,)})
    assert compute.calls == 2


def test_an_entry_whose_pickle_runs_code_runs_nothing(cache, tmp_path):
    _, entry, compute = cache
    marker = tmp_path / "marker"
    torch.save({"params": _Payload(marker)}, entry)
    with pytest.warns(RuntimeWarning, match="safe loader"):
        _again(compute)
    assert not marker.exists() and compute.calls == 2


def test_a_nan_result_is_returned_but_not_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("UNLEARNKIT_CACHE", str(tmp_path))
    compute = _Compute({"params": torch.tensor([float("nan")])})
    with pytest.warns(RuntimeWarning, match="not stored"):
        cached_tensors("n", 1, compute)
    assert not list(tmp_path.glob("n-*.pt"))


def test_a_cache_folder_that_is_a_file_is_refused_before_computing(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for where in (blocker, blocker / "below"):
        monkeypatch.setenv("UNLEARNKIT_CACHE", str(where))
        compute = _Compute()
        with pytest.raises(OutputPathError, match="UNLEARNKIT_CACHE"), time_limit(2.0):
            cached_tensors("w", 1, compute)
        assert compute.calls == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_cache_folder_is_refused_before_computing(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    monkeypatch.setenv("UNLEARNKIT_CACHE", str(ro))
    compute = _Compute()
    with pytest.raises(OutputPathError, match="cannot write"):
        cached_tensors("w", 1, compute)
    assert compute.calls == 0


@pytest.mark.parametrize("kind", ["dir", "fifo"])
def test_an_entry_that_is_not_a_regular_file_is_refused_without_blocking(cache, kind):
    _, entry, compute = cache
    entry.unlink()
    os.mkdir(entry) if kind == "dir" else os.mkfifo(entry)
    with pytest.raises(OutputPathError, match="not a regular file"), time_limit(2.0):
        _again(compute)
    assert compute.calls == 1
