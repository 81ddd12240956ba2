"""``--out`` is checked before any work, results are written atomically, stale results are retired, a truncated
``plotly.min.js`` is repaired, and data errors reach the user as one line (issue 18, findings 5 and 6)."""

import json
import os
import tempfile
from types import SimpleNamespace

import pytest

import unlearnkit as uk
import unlearnkit.experiments as E
import unlearnkit.reproduce as R
from unlearnkit import _io
from unlearnkit.__main__ import main
from unlearnkit.data.parsers import DatasetCorruptError
from unlearnkit.reproduce import runner


def _fake_result(profile, seed):
    return {"method": "fake", "profile": profile, "dataset": "digits", "request": "class 0", "seed": seed,
            "metrics": {"test_acc": 0.9, "forget_acc": 0.1},
            "cost": {"grad_evals": 1, "seconds": 0.1, "retrain_grad_evals": 2, "retrain_seconds": 0.2},
            "certificate": None}


@pytest.fixture
def fake_method(monkeypatch):
    """A registered method whose run is recorded (and can be told to fail)."""
    calls = []

    def run(profile, seed=0, progress=True):
        calls.append((profile, seed))
        if fake.fail is not None:
            raise fake.fail
        return _fake_result(profile, seed)

    fake = SimpleNamespace(name="fake", profiles=("quick", "paper"), run=run, calls=calls, fail=None)
    monkeypatch.setattr(E, "get_method", lambda name: fake)
    return fake


def _bad_outs(tmp_path):
    f = tmp_path / "a_file"
    f.write_text("x")
    return {"file": f, "below_file": f / "sub"}


@pytest.mark.parametrize("kind", ["file", "below_file"])
def test_run_with_a_bad_out_fails_before_any_work(tmp_path, fake_method, capsys, kind):
    out = _bad_outs(tmp_path)[kind]
    assert main(["run", "fake", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--out=" in err and str(out) in err and "existing file" in err and len(err.strip().splitlines()) == 1
    assert fake_method.calls == []


def test_run_with_an_unwritable_out_fails_before_any_work(tmp_path, fake_method, capsys, monkeypatch):
    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert main(["run", "fake", "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--out=" in err and "cannot write" in err and "Permission denied" in err
    assert fake_method.calls == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_run_with_a_read_only_folder(tmp_path, fake_method, capsys):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    assert main(["run", "fake", "--out", str(ro / "out"), "--no-progress"]) == 2
    assert "--out=" in capsys.readouterr().err and fake_method.calls == []


def test_run_records_seed_version_and_status_and_leaves_no_temp_files(tmp_path, fake_method):
    assert main(["run", "fake", "--out", str(tmp_path), "--seed", "7", "--no-progress"]) == 0
    res = json.loads((tmp_path / "result.json").read_text())
    assert res["seed"] == 7 and res["profile"] == "quick" and res["unlearnkit_version"] == uk.__version__
    assert res["status"] == "complete"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]
    assert oct((tmp_path / "result.json").stat().st_mode & 0o777) != oct(0o600)  # a normal file's mode


@pytest.mark.parametrize("failure", [RuntimeError("boom"), KeyboardInterrupt()])
def test_interrupted_run_leaves_no_result_that_looks_current(tmp_path, fake_method, failure):
    (tmp_path / "result.json").write_text('{"method": "old"}')
    fake_method.fail = failure
    with pytest.raises(type(failure)):
        main(["run", "fake", "--out", str(tmp_path), "--no-progress"])
    assert not (tmp_path / "result.json").exists()
    assert json.loads((tmp_path / "result.stale.json").read_text()) == {"method": "old"}
    fake_method.fail = None
    assert main(["run", "fake", "--out", str(tmp_path), "--no-progress"]) == 0
    assert json.loads((tmp_path / "result.json").read_text())["status"] == "complete"


def test_corrupt_dataset_is_one_line_and_exit_3(tmp_path, fake_method, capsys):
    fake_method.fail = DatasetCorruptError("/data/mnist/train-images-idx3-ubyte.gz is truncated\n(re-download)")
    assert main(["run", "fake", "--out", str(tmp_path), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert err.strip() == "error: /data/mnist/train-images-idx3-ubyte.gz is truncated (re-download)"
    assert "Traceback" not in err


def test_cli_on_a_real_corrupt_mnist(tmp_path, monkeypatch, capsys):
    from unlearnkit.data import load

    folder = tmp_path / "mnist"
    folder.mkdir()
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                 "t10k-labels-idx1-ubyte.gz"):
        (folder / name).write_bytes(b"not gzip at all")
    fake = SimpleNamespace(profiles=("quick",), run=lambda profile, seed=0, progress=True: load("mnist", root=tmp_path))
    monkeypatch.setattr(E, "get_method", lambda name: fake)
    assert main(["run", "x", "--out", str(tmp_path / "o"), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert "train-images-idx3-ubyte.gz is not a gzip file" in err and len(err.strip().splitlines()) == 1


def test_reproduce_with_a_bad_out_fails_before_any_work(tmp_path, monkeypatch, capsys):
    called = []
    monkeypatch.setattr(R, "run_reproduction", lambda *a, **k: called.append(1))
    out = _bad_outs(tmp_path)["file"]
    assert main(["reproduce", "pdudt", "--out", str(out), "--no-progress"]) == 2
    assert "--out=" in capsys.readouterr().err and called == []


def test_interrupted_reproduce_retires_the_old_json(tmp_path, monkeypatch):
    (tmp_path / "pdudt_reproduction.json").write_text("{}")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(R, "run_reproduction", interrupted)
    with pytest.raises(KeyboardInterrupt):
        main(["reproduce", "pdudt", "--out", str(tmp_path), "--no-progress"])
    assert not (tmp_path / "pdudt_reproduction.json").exists()
    assert (tmp_path / "pdudt_reproduction.stale.json").exists()


def test_reproduce_repairs_a_truncated_plotly_bundle(tmp_path, monkeypatch):
    from plotly.offline import get_plotlyjs

    bundle = get_plotlyjs()
    (tmp_path / "plotly.min.js").write_text(bundle[:1000])  # as an interrupted run leaves it
    monkeypatch.setattr(runner, "methods_for_paper", lambda paper: {})
    rep = R.run_reproduction("d2d_r2d", out=tmp_path, echo=lambda s: None)
    assert (tmp_path / "plotly.min.js").read_text() == bundle
    mtime = (tmp_path / "plotly.min.js").stat().st_mtime_ns
    R.run_reproduction("d2d_r2d", out=tmp_path, echo=lambda s: None)
    assert (tmp_path / "plotly.min.js").stat().st_mtime_ns == mtime  # a complete bundle is left alone
    data = json.loads((tmp_path / "d2d_r2d_reproduction.json").read_text())
    assert data["seed"] == 0 and data["unlearnkit_version"] == uk.__version__
    assert {os.path.basename(f) for f in rep["files"]} == {"d2d_r2d_reproduction.json", "d2d_r2d_comparison.md",
                                                           "d2d_r2d_comparison.html", "d2d_r2d_comparison_table.html"}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_bench_out_checked_first_and_written_atomically(tmp_path, capsys, monkeypatch):
    from unlearnkit import benchmarks as B

    calls = []

    def _b(*, quick):
        calls.append(quick)
        return [{"n": 1}]

    B.available_benches()  # discover the real ones first, then add a throwaway one for this test only
    monkeypatch.setitem(B._BENCHES, "_clitest", B.BenchSpec("_clitest", _b, "cli self-test"))
    assert main(["bench", "_clitest", "--quick", "--out", str(tmp_path)]) == 2  # a folder, a file is needed
    assert "--out=" in capsys.readouterr().err and calls == []
    assert main(["bench", "_clitest", "--quick", "--out", str(_bad_outs(tmp_path)["below_file"])]) == 2
    assert calls == []
    assert main(["bench", "nope", "--out", str(tmp_path / "b.json")]) == 2
    out = tmp_path / "b.json"
    out.write_text("old")
    assert main(["bench", "_clitest", "--quick", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["benchmarks"]["_clitest"]["rows"] == [{"n": 1}]
    assert (tmp_path / "b.stale.json").read_text() == "old"


def test_atomic_write_keeps_the_old_file_when_the_rename_fails(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    target.write_text("old")

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        _io.atomic_write_text(target, "new")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_sync_file_rewrites_only_when_different(tmp_path):
    p = tmp_path / "asset.js"
    assert _io.sync_file(p, b"abc") and p.read_bytes() == b"abc"
    assert not _io.sync_file(p, b"abc")
    p.write_bytes(b"abd")  # same size, different content
    assert _io.sync_file(p, b"abc") and p.read_bytes() == b"abc"
