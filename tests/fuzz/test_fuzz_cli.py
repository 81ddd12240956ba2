"""Fuzz the command line in process (``unlearnkit.__main__.main``): every bad argument ends in a one-line
``error:`` and exit code 2 (3 for data, 4 for I/O), or argparse's usage error; never a traceback, and never
any work started (fully valid command lines are not drawn: they would run an experiment)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile

import pytest
from fuzzkit import FUZZ, time_limit
from hypothesis import assume, example, given
from hypothesis import strategies as st

from unlearnkit.__main__ import main
from unlearnkit.benchmarks import available_benches
from unlearnkit.experiments import available_methods
from unlearnkit.reproduce.reference import PAPERS

METHODS = available_methods()
OUT_OK = tempfile.mkdtemp(prefix="unlearnkit-fuzz-cli-")
_file = os.path.join(OUT_OK, "a-file")
open(_file, "w").close()
OUTS = [OUT_OK, _file, os.path.join(_file, "below-a-file"), "/proc/no/such/dir", ""]
words = st.one_of(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                          max_size=6), st.sampled_from(["quick", "paper", "--help-me", "-x", "1e9"]))
seeds = st.one_of(st.integers(-3, 3), st.sampled_from([-(2**70), 2**64, 2**63 - 1]), st.just(None))


def _invoke(argv):
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err), time_limit(20):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: usage line and exit code 2
            assert exc.code == 2, (argv, exc.code, err.getvalue())
            return 2, err.getvalue()
    return code, err.getvalue()


def _assert_refused(argv):
    code, err = _invoke(argv)
    assert code in (2, 3, 4), (argv, code, err)
    assert "Traceback" not in err and err.strip(), (argv, err)
    assert err.strip().splitlines()[-1].startswith(("error:", "python -m unlearnkit")), (argv, err)


def _valid_seed(seed):
    return seed is None or 0 <= seed < 2**63


@FUZZ
@given(method=st.one_of(st.sampled_from(sorted(METHODS)), words), profile=st.one_of(st.just("quick"), words),
       seed=seeds, out=st.sampled_from(OUTS))
@example(method="retrain", profile="quick", seed=-1, out=OUT_OK)  # ran the experiment, then crashed on the seed
@example(method="retrain", profile="quick", seed=2**64, out=OUT_OK)
@example(method="d2d", profile="quick", seed=0, out="")  # ran and wrote result.json into the cwd before the fix
def test_run_arguments(method, profile, seed, out):
    valid = method in METHODS and profile in METHODS[method].profiles and _valid_seed(seed) and out == OUT_OK
    assume(not valid)
    argv = ["run", method, "--profile", profile, "--out", out, "--no-progress"]
    _assert_refused(argv + ([] if seed is None else ["--seed", str(seed)]))


@FUZZ
@given(paper=st.one_of(st.sampled_from(sorted(PAPERS)), words), profile=st.one_of(st.just("quick"), words),
       seed=seeds, out=st.sampled_from(OUTS))
@example(paper="rrdu", profile="quick", seed=-1, out=OUT_OK)  # ran the whole reproduction before the fix
def test_reproduce_arguments(paper, profile, seed, out):
    from unlearnkit.reproduce.runner import REPRODUCE_PROFILES

    assume(not (paper in PAPERS and profile in REPRODUCE_PROFILES and _valid_seed(seed) and out == OUT_OK))
    argv = ["reproduce", paper, "--profile", profile, "--out", out, "--no-progress"]
    _assert_refused(argv + ([] if seed is None else ["--seed", str(seed)]))


@FUZZ
@given(names=st.lists(st.one_of(st.sampled_from(sorted(available_benches())), words), min_size=1, max_size=2),
       out=st.sampled_from(OUTS[1:] + [None]))
@example(names=["accountant"], out="")  # wrote into the current folder before the fix
def test_bench_arguments(names, out):
    assume(not (all(n in available_benches() for n in names) and out in (None, _file)))
    _assert_refused(["bench", "--quick", *names] + ([] if out is None else ["--out", out]))


@FUZZ
@given(argv=st.lists(words, max_size=3))
def test_any_argv(argv):
    assume(not argv or argv[0] not in ("run", "reproduce", "bench", "doctor", "list"))
    _assert_refused(argv)


@pytest.mark.parametrize("value", ["tpu", "cuda:99", "", "cpu"])
def test_doctor_survives_any_device_setting(monkeypatch, value):
    """``UNLEARNKIT_DEVICE=tpu`` crashed ``doctor`` with torch's RuntimeError before the fix."""
    monkeypatch.setenv("UNLEARNKIT_DEVICE", value)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["doctor"]) == 0
    assert "device:" in out.getvalue()
    if value in ("tpu", "cuda:99"):
        assert f"device: ERROR device={value!r}" in out.getvalue()


def test_smoke_subprocess():
    """One real process: a bad method name is one line on stderr and exit code 2, no traceback."""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    p = subprocess.run([sys.executable, "-m", "unlearnkit", "run", "no-such-method", "--out", OUT_OK],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 2 and p.stderr.startswith("error: method='no-such-method'") and "Traceback" not in p.stderr
