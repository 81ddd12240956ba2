"""Hostile output paths: a pipe, device, folder or symbolic link where a result file goes is refused with a
message naming the path (and, for a link, its target) before any work, never blocking; two runs on one
``--out`` do not both write: the second refuses, naming the first one's pid. The lock is re-entrant within a
thread (the command line holds it and the library function it calls takes it again), refused to another thread
or process; ``run_benches(out=...)`` and ``run_reproduction(out=...)`` take it themselves."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fuzzkit import time_limit

from unlearnkit._io import OutputPathError, atomic_write_text, ensure_writable_dir, ensure_writable_file, output_lock
from unlearnkit.__main__ import main
from unlearnkit.benchmarks import available_benches
from unlearnkit.experiments import available_methods


@pytest.fixture()
def odd(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    target = tmp_path / "target.json"
    target.write_text("precious")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere.json")
    return {"fifo": fifo, "dir": tmp_path, "link": link, "dangling": dangling, "device": "/dev/null",
            "target": target}


@pytest.mark.parametrize("kind, words", [("fifo", "named pipe"), ("dir", "is a folder"), ("device", "device"),
                                         ("link", "symbolic link to"), ("dangling", "symbolic link to")])
def test_a_file_output_that_is_not_a_regular_file_is_refused(odd, kind, words):
    with pytest.raises(OutputPathError, match=words) as err, time_limit(2.0):
        ensure_writable_file(odd[kind], name="--out")
    assert str(odd[kind]) in str(err.value) and "--out" in str(err.value)


def test_a_link_names_its_target_and_the_target_is_untouched(odd):
    with pytest.raises(OutputPathError) as err, time_limit(2.0):
        atomic_write_text(odd["link"], "new")
    assert str(odd["target"]) in str(err.value) and "not followed" in str(err.value)
    assert odd["target"].read_text() == "precious" and odd["link"].is_symlink()


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_an_atomic_write_onto_a_pipe_or_device_is_refused_without_blocking(odd, kind):
    with pytest.raises(OutputPathError, match="not a regular file") as err, time_limit(2.0):
        atomic_write_text(odd[kind], "x")
    assert str(odd[kind]) in str(err.value)


def test_a_folder_output_that_is_a_pipe_is_refused_naming_it(odd):
    with pytest.raises(OutputPathError, match="named pipe .* not a folder"), time_limit(2.0):
        ensure_writable_dir(odd["fifo"] / "sub")


@contextlib.contextmanager
def held_by_another_process(path):
    """A separate Python process holding ``output_lock(path)`` until the block ends; yields its pid."""
    code = ("import sys; from unlearnkit._io import output_lock\n"
            "with output_lock(sys.argv[1]):\n    print('held', flush=True); sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stdout.readline().strip() == "held"
        yield proc.pid
    finally:
        proc.stdin.close()
        proc.wait(10)


def test_the_lock_is_reentrant_in_a_thread_and_released_by_the_outermost_hold(tmp_path):
    out = tmp_path / "out"
    with output_lock(out) as lock:
        with output_lock(out, name="out") as inner:      # the CLI's hold, then the library's: no deadlock
            assert inner == lock and lock.exists()
        assert lock.exists()                             # the inner hold's end keeps the outer one's file
    assert not lock.exists()
    with output_lock(out):                               # free again
        pass


def test_another_thread_of_the_same_process_is_refused(tmp_path):
    out = tmp_path / "out"
    errors = []

    def second():
        try:
            with output_lock(out):
                errors.append(None)
        except OutputPathError as exc:
            errors.append(str(exc))

    with output_lock(out):
        t = threading.Thread(target=second)
        t.start()
        t.join(5)
    assert errors and errors[0] and "another thread of this process" in errors[0] and str(os.getpid()) in errors[0]


def test_a_second_process_is_refused_naming_the_first_pid(tmp_path):
    out = tmp_path / "out"
    with held_by_another_process(out) as pid:
        with pytest.raises(OutputPathError, match=f"in use by another run \\(pid {pid}"), time_limit(5.0):
            with output_lock(out):
                pass
    with output_lock(out) as lock:                       # released when the other process let go
        assert lock.read_text().split()[0] == str(os.getpid())


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path):
    import socket

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    out = tmp_path / "out"
    (tmp_path / "out.lock").write_text(f"{int(dead.stdout)} {socket.gethostname()}\n")
    with output_lock(out) as lock:
        assert lock.read_text().split()[0] == str(os.getpid())


def _cli(argv):
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err), time_limit(5.0):
        code = main(argv)
    return code, err.getvalue()


@pytest.fixture()
def tiny_bench(monkeypatch):
    """A registered benchmark that records its calls and returns one row."""
    import unlearnkit.benchmarks as B

    calls = []
    B.available_benches()
    monkeypatch.setitem(B._BENCHES, "_tiny", B.BenchSpec("_tiny", lambda quick: calls.append(1) or [{"x": 1}],
                                                         "one row", False))
    return calls


def test_a_second_bench_on_the_same_out_refuses_before_running(tmp_path, tiny_bench):
    out = tmp_path / "bench.json"
    out.write_text("first run's result")
    with held_by_another_process(out) as pid:
        code, err = _cli(["bench", "_tiny", "--out", str(out), "--quick"])
    assert code == 2 and f"pid {pid}" in err and str(out) in err and not tiny_bench
    assert out.read_text() == "first run's result"       # neither retired nor overwritten


def test_the_bench_command_holds_the_lock_the_library_takes_again(tmp_path, tiny_bench):
    out = tmp_path / "bench.json"
    code, err = _cli(["bench", "_tiny", "--out", str(out), "--quick"])
    assert code == 0 and tiny_bench == [1], err
    assert json.loads(out.read_text())["benchmarks"]["_tiny"]["rows"] == [{"x": 1}]
    assert not (tmp_path / "bench.json.lock").exists()


def test_run_benches_takes_the_lock_before_running(tmp_path, tiny_bench):
    from unlearnkit.benchmarks import run_benches

    out = tmp_path / "bench.json"
    with held_by_another_process(out) as pid:
        with pytest.raises(OutputPathError, match=f"out=.*in use by another run \\(pid {pid}"), time_limit(5.0):
            run_benches(["_tiny"], out=out, echo=lambda s: None)
    assert not tiny_bench and not out.exists()


def test_run_reproduction_takes_the_lock_before_running(tmp_path, monkeypatch):
    import unlearnkit.reproduce.runner as R

    ran = []
    monkeypatch.setattr(R, "_reproduce", lambda *a: ran.append(a) or {"status": "ok"})
    with held_by_another_process(tmp_path) as pid:
        with pytest.raises(OutputPathError, match=f"in use by another run \\(pid {pid}"), time_limit(5.0):
            R.run_reproduction("d2d_r2d", out=tmp_path, echo=lambda s: None)
    assert not ran
    with output_lock(tmp_path):                          # the command line's hold: the library re-enters it
        assert R.run_reproduction("d2d_r2d", out=tmp_path, echo=lambda s: None) == {"status": "ok"}
    assert ran and not Path(str(tmp_path) + ".lock").exists()


_CONCURRENT = """
import os, sys, time
import unlearnkit.benchmarks as B
from unlearnkit._io import OutputPathError
out, me = sys.argv[1], sys.argv[2]
def slow(quick):  # the writer holds the lock until the other process has been refused (at most 60 s)
    deadline = time.monotonic() + 60
    while not os.path.exists(out + ".refused") and time.monotonic() < deadline:
        time.sleep(0.05)
    return [{"writer": me}]
B.available_benches()
B.register_bench("_slow", per_device=False)(slow)
try:
    B.run_benches(["_slow"], out=out, echo=lambda s: None)
    print("wrote")
except OutputPathError as exc:
    print("refused", exc)
    open(out + ".refused", "w").close()
"""


def test_two_processes_on_one_out_lose_nothing(tmp_path):
    out = tmp_path / "bench.json"
    root = Path(__file__).resolve().parents[2]
    procs = [subprocess.Popen([sys.executable, "-c", _CONCURRENT, str(out), str(i)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=root) for i in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    said = sorted(o.strip().split()[0] for o, _ in outs)
    assert said == ["refused", "wrote"], outs
    writer = next(i for i, (o, _) in enumerate(outs) if o.startswith("wrote"))
    refused = outs[1 - writer][0]
    assert f"pid {procs[writer].pid}" in refused   # the refusal names the process that writes
    rows = json.loads(out.read_text())["benchmarks"]["_slow"]["rows"]
    assert rows == [{"writer": str(writer)}] and not (tmp_path / "bench.json.lock").exists()


def test_a_second_run_on_the_same_out_refuses_before_running(tmp_path):
    out = tmp_path / "run"
    with held_by_another_process(out.resolve()) as pid:
        code, err = _cli(["run", next(iter(available_methods())), "--out", str(out)])
    assert code == 2 and f"pid {pid}" in err


def test_bench_out_through_a_link_is_refused_on_the_command_line(odd):
    code, err = _cli(["bench", next(iter(available_benches())), "--out", str(odd["link"]), "--quick"])
    assert code == 2 and "symbolic link to" in err and odd["target"].read_text() == "precious"
