"""Hostile checkpoint and result files: the safe loader runs nothing, every bad file is a clear error naming
the file and the flag, and a walk resumed from a good file goes on as before.

The resume path itself runs in this process on a one-rank gloo group (no start-up of other processes)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from fuzzkit import time_limit
from hypothesis import given
from hypothesis import strategies as st

from unlearnkit.distributed import DistributedRunError
from unlearnkit.distributed.checkpoint_file import CheckpointError, RunIdentity, read_checkpoint, write_checkpoint
from unlearnkit.distributed.launch import _result

ROUTE = (0, 1, 0, 0, 1, 1, 0, 1)
WHO = RunIdentity(ROUTE, world_size=2, rank=0, seed=3, shape=(4,), dtype="float64")
MARKER_ENV = "UNLEARNKIT_TEST_MARKER"


def leave_marker(path: str) -> str:
    """What a crafted pickle would call on load: create ``path`` (so the test sees whether it ran)."""
    Path(path).write_text("ran")
    return "ran"


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (leave_marker, (self.marker,))


def _good(path: Path, *, theta=None, who: RunIdentity = WHO, hop: int = 4) -> Path:
    theta = torch.arange(4, dtype=torch.float64) if theta is None else theta
    hops = [t for t in range(hop) if who.route[t] == who.rank]
    log = [dict(kind="token", direction="send", src=0, dst=1, step=1, nbytes=48, time=1.5)]
    return write_checkpoint(path, who, hop=hop, theta=theta, noise=torch.Generator().get_state(),
                            hop_state=None, hops=hops, log=log)


def _read(path: Path, who: RunIdentity = WHO, hop: int = 4):
    with time_limit(2.0):
        return read_checkpoint(path, who, hop, flag="--resume")


def test_a_good_checkpoint_round_trips(tmp_path):
    st_ = _read(_good(tmp_path / "rank0-hop00000004.pt"))
    assert torch.equal(st_["theta"], torch.arange(4, dtype=torch.float64)) and st_["hops"] == [0, 2, 3]
    assert st_["noise"].dtype == torch.uint8 and st_["world_size"] == 2 and len(st_["checksum"]) == 64


def test_a_pickle_that_runs_code_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "marker"
    path = tmp_path / "rank0-hop00000004.pt"
    torch.save({"theta": _Payload(marker), "hop": 4}, path)
    with pytest.raises(CheckpointError, match="safe loader refuses") as err:
        _read(path)
    assert str(path) in str(err.value) and "--resume" in str(err.value)
    assert not marker.exists()


def test_a_plain_pickle_with_os_system_is_refused(tmp_path):
    marker = tmp_path / "touched"

    class _System:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    path = tmp_path / "rank0-hop00000004.pt"
    path.write_bytes(pickle.dumps({"state": _System()}))
    with pytest.raises(CheckpointError) as err:
        _read(path)
    assert str(path) in str(err.value) and not marker.exists()


def test_a_nan_checkpoint_is_refused(tmp_path):
    path = _good(tmp_path / "rank0-hop00000004.pt", theta=torch.tensor([0.0, float("nan"), 1.0, 2.0],
                                                                       dtype=torch.float64))
    with pytest.raises(CheckpointError, match=r"theta holds 1 NaN or infinite values of 4") as err:
        _read(path)
    assert str(path) in str(err.value)


def test_a_checkpoint_of_another_world_size_is_refused_with_both_sizes(tmp_path):
    path = _good(tmp_path / "rank0-hop00000004.pt")
    now = RunIdentity(ROUTE, world_size=3, rank=0, seed=3, shape=(4,), dtype="float64")
    with pytest.raises(CheckpointError, match="world size 2, but this run has world size 3") as err:
        _read(path, now)
    assert str(path) in str(err.value) and "--resume" in str(err.value)


@pytest.mark.parametrize("keep", [0, 10, 100, 400, -1], ids=lambda k: f"keep{k}")
def test_a_truncated_checkpoint_is_refused_naming_the_file_and_the_flag(tmp_path, keep):
    path = _good(tmp_path / "rank0-hop00000004.pt")
    data = path.read_bytes()
    path.write_bytes(data[:keep] if keep >= 0 else data[: len(data) // 2])
    with pytest.raises(CheckpointError) as err:
        _read(path)
    assert str(path) in str(err.value) and "--resume" in str(err.value)


@pytest.mark.parametrize("change", ["shape", "dtype", "extra_key", "missing_key", "checksum", "route", "hops",
                                    "noise_dtype", "bool_hop", "log"])
def test_a_tampered_checkpoint_is_refused(tmp_path, change):
    path = _good(tmp_path / "rank0-hop00000004.pt")
    state = torch.load(path, weights_only=True)
    if change == "shape":
        state["theta"] = torch.zeros(5, dtype=torch.float64)
    elif change == "dtype":
        state["theta"] = state["theta"].float()
    elif change == "extra_key":
        state["extra"] = 1
    elif change == "missing_key":
        del state["noise"]
    elif change == "checksum":
        state["theta"] = state["theta"] + 1.0
    elif change == "route":
        state["route"] = [0] * len(ROUTE)
    elif change == "hops":
        state["hops"] = [0]
    elif change == "noise_dtype":
        state["noise"] = state["noise"].float()
    elif change == "bool_hop":
        state["hop"] = True
    else:
        state["log"] = [{"kind": "token"}]
    torch.save(state, path)
    with pytest.raises(CheckpointError) as err:
        _read(path)
    assert str(path) in str(err.value)


@given(st.binary(max_size=300))
def test_random_bytes_are_a_clear_error(data):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rank0-hop00000004.pt"
        path.write_bytes(data)
        with pytest.raises(CheckpointError):
            _read(path)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    path = tmp_path / "rank0-hop00000004.pt"
    os.mkfifo(path)
    with pytest.raises(CheckpointError, match="not a regular file"):
        _read(path)


def test_a_rank_result_that_runs_code_is_refused(tmp_path):
    marker = tmp_path / "marker"
    torch.save({"theta": _Payload(marker)}, tmp_path / "rank1.pt")
    with pytest.raises(DistributedRunError, match="rank 1's result rank1.pt holds objects the safe loader"):
        _result(tmp_path / "rank1.pt", 1)
    assert not marker.exists()
    torch.save({"x": torch.ones(2), "log": [{"a": 1.0}], "t": (1, None)}, tmp_path / "rank0.pt")
    assert _result(tmp_path / "rank0.pt", 0)["t"] == (1, None)


# ----------------------------------------------------------------------------- the resume path, one rank
@pytest.fixture()
def one_rank():
    from unlearnkit.distributed import ProcessGroupNetwork

    dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
    try:
        yield ProcessGroupNetwork(seed=2)
    finally:
        dist.destroy_process_group()


def _hop(t, node, theta, generator):
    return theta * 0.5 + torch.randn(theta.shape, generator=generator, dtype=theta.dtype)


def test_a_walk_resumes_from_its_checkpoint_and_refuses_a_crafted_one(tmp_path, one_rank):
    from unlearnkit.distributed.resume import resumable_walk

    net, route, theta0 = one_rank, [0] * 7, torch.zeros(3, dtype=torch.float64)
    with time_limit(10):
        full = resumable_walk(net, route, theta0, _hop, checkpoint_dir=tmp_path / "a", every=3).theta
        net.reset()
        again = resumable_walk(net, route, theta0, _hop, checkpoint_dir=tmp_path / "a", every=3, resume=True).theta
    assert torch.equal(full, again)
    marker = tmp_path / "marker"
    crafted = tmp_path / "b"
    crafted.mkdir()
    torch.save({"theta": _Payload(marker)}, crafted / "rank0-hop00000006.pt")
    net.reset()
    with pytest.raises(CheckpointError, match="safe loader refuses") as err, time_limit(10):
        resumable_walk(net, route, theta0, _hop, checkpoint_dir=crafted, every=3, resume=True)
    assert "rank0-hop00000006.pt" in str(err.value) and not marker.exists()
