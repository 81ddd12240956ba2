"""Hostile output paths: a pipe, device, folder or symbolic link where a result file goes is refused with a
message naming the path (and, for a link, its target) before any work, never blocking; two runs on one
``--out`` do not both write: the second refuses, naming the first one's pid."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys

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


def test_the_lock_refuses_a_second_holder_naming_the_first_pid_and_is_released(tmp_path):
    out = tmp_path / "out"
    with output_lock(out) as lock:
        assert lock.exists()
        with pytest.raises(OutputPathError, match=f"in use by another run \\(pid {os.getpid()}"):
            with output_lock(out):
                pass
    assert not lock.exists()
    with output_lock(out):                      # free again
        pass


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


def test_a_second_bench_on_the_same_out_refuses_before_running(tmp_path):
    out = tmp_path / "bench.json"
    out.write_text("first run's result")
    with output_lock(out):
        code, err = _cli(["bench", next(iter(available_benches())), "--out", str(out), "--quick"])
    assert code == 2 and f"pid {os.getpid()}" in err and str(out) in err
    assert out.read_text() == "first run's result"       # neither retired nor overwritten


def test_a_second_run_on_the_same_out_refuses_before_running(tmp_path):
    out = tmp_path / "run"
    with output_lock(out.resolve()):
        code, err = _cli(["run", next(iter(available_methods())), "--out", str(out)])
    assert code == 2 and f"pid {os.getpid()}" in err


def test_bench_out_through_a_link_is_refused_on_the_command_line(odd):
    code, err = _cli(["bench", next(iter(available_benches())), "--out", str(odd["link"]), "--quick"])
    assert code == 2 and "symbolic link to" in err and odd["target"].read_text() == "precious"
