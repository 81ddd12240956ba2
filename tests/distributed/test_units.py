"""Pieces that need no process group: seeds, validation, the command line, the launcher's guards."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from unlearnkit.distributed import ProcessGroupNetwork, spawn
from unlearnkit.distributed.tasks import QuadraticHop, round_matrix
from unlearnkit.distributed.launch import free_port, torchrun_command
from unlearnkit.distributed.network import init_process_group
from unlearnkit.distributed.seeds import rank_generator, rank_seed
from unlearnkit.distributed.run import parse_args
from unlearnkit.graphs import make_schedule, mixing_matrix
from unlearnkit.graphs.topology import ring


@given(st.integers(0, 2**31), st.integers(0, 63))
def test_rank_seeds_are_reproducible_and_distinct_across_ranks_and_streams(seed, rank):
    assert rank_seed(seed, rank) == rank_seed(seed, rank)
    assert rank_seed(seed, rank) != rank_seed(seed, rank + 1)
    assert rank_seed(seed, rank, "noise") != rank_seed(seed, rank, "init")
    assert 0 <= rank_seed(seed, rank) < 2**63


def test_rank_generator_draws_are_fixed_by_seed_and_rank():
    a = torch.randn(5, generator=rank_generator(3, 2))
    b = torch.randn(5, generator=rank_generator(3, 2))
    c = torch.randn(5, generator=rank_generator(3, 1))
    assert torch.equal(a, b) and not torch.equal(a, c)


@pytest.mark.parametrize("kwargs, word", [(dict(seed=-1, rank=0), "seed"), (dict(seed=0, rank=-2), "rank"),
                                          (dict(seed=0, rank=0, stream="oops"), "stream")])
def test_rank_seed_names_the_bad_parameter(kwargs, word):
    with pytest.raises(ValueError, match=word):
        rank_seed(**kwargs)


def test_quadratic_hop_validates_and_moves_towards_the_clients_centre():
    with pytest.raises(ValueError, match="lr"):
        QuadraticHop(seed=0, dim=3, lr=0.0)
    hop = QuadraticHop(seed=0, dim=3, lr=1.0)
    theta = hop(0, 2, torch.zeros(3, dtype=torch.float64), rank_generator(0, 2))
    from unlearnkit.distributed.seeds import initial_vector
    assert torch.equal(theta, initial_vector(0, 2, 3))


def test_round_matrix_static_dynamic_and_fixed():
    np.testing.assert_allclose(round_matrix(ring(5), 3), mixing_matrix(ring(5)))
    sched = make_schedule("random_k_out", 5, seed=1)
    np.testing.assert_allclose(round_matrix(sched, 2), sched.mixing(2))
    with pytest.raises(ValueError):
        round_matrix(np.ones((3, 3)), 0)


def test_without_a_process_group_errors_say_how_to_launch(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(RuntimeError, match="torchrun"):
        init_process_group()
    with pytest.raises(RuntimeError, match="init_process_group"):
        ProcessGroupNetwork()
    with pytest.raises(ValueError, match="backend"):
        init_process_group(backend="mpi")


def test_launcher_guards_and_command_line():
    with pytest.raises(ValueError, match="n_ranks"):
        spawn(print, 0)
    with pytest.raises(ValueError, match="timeout"):
        spawn(print, 2, timeout=0)
    cmd = torchrun_command(4, ["gossip", "--rounds", 3], port=free_port())
    assert "--nproc-per-node=4" in cmd and cmd[-4:] == ["unlearnkit.distributed.run", "gossip", "--rounds", "3"]
    assert any(c.startswith("--rdzv-endpoint=127.0.0.1:") for c in cmd)
    a = parse_args(["walk", "--route", "0,1,2", "--sigma", "0.5"])
    assert a.task == "walk" and a.route == "0,1,2" and a.sigma == 0.5 and a.backend == "gloo"
    a = parse_args(["flood", "--sources", "0,2", "--reduce", "stack"])
    assert a.task == "flood" and a.sources == "0,2" and a.reduce == "stack"
    assert parse_args(["gossip", "--schedule", "random_k_out"]).schedule == "random_k_out"


@pytest.mark.parametrize("argv,fragment", [
    (["walk", "--route", ""], "--route='' has an empty entry"),
    (["walk", "--route", "a,b"], "entry 'a' is not an integer"),
    (["gossip", "--rounds", "0"], "--rounds=0 is out of range"),
    (["walk", "--resume"], "--resume needs --checkpoint-dir"),
    (["walk", "--dim", "10000000000"], "--dim=10000000000 is out of range"),
])
def test_worker_arguments_are_refused_before_any_rank_starts(argv, fragment, capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(argv)
    assert exc.value.code == 2 and fragment in capsys.readouterr().err


def test_client_indices_are_checked_against_the_world_size(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(SystemExit):
        parse_args(["walk", "--u", "9"])
    assert "--u names client 9, out of range: expected clients in [0, 1]" in capsys.readouterr().err
    afile = tmp_path / "a-file"
    afile.write_text("x")
    with pytest.raises(SystemExit):
        parse_args(["walk", "--out", str(afile)])
    assert "exists and is not a folder" in capsys.readouterr().err
    assert parse_args(["walk", "--u", "1", "--route", "0,1,1"]).u == 1
