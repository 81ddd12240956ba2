"""The worker started the way a user starts it: torchrun in a subprocess (slow: a torchrun start-up)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from unlearnkit.decentral.gossip import simulate_averaging
from unlearnkit.distributed import launch_torchrun
from unlearnkit.distributed.seeds import initial_vector
from unlearnkit.graphs.topology import ring


@pytest.mark.slow
def test_torchrun_gossip_writes_rank_files_equal_to_the_simulator(tmp_path):
    proc = launch_torchrun(2, ["gossip", "--topology", "ring", "--rounds", "4", "--dim", "8", "--seed", "5",
                               "--out", str(tmp_path)], timeout=180)
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["task"] == "gossip" and summary["ranks"] == 2 and summary["ms_per_round"] > 0
    got = np.stack([torch.load(tmp_path / f"rank{r}.pt", weights_only=False)["x"].numpy() for r in range(2)])
    X0 = torch.stack([initial_vector(5, r, 8) for r in range(2)]).numpy()
    assert np.abs(got - simulate_averaging(ring(2), X0, 4)[-1]).max() < 1e-12


@pytest.mark.slow
def test_torchrun_walk_prints_ms_per_hop():
    proc = launch_torchrun(2, ["walk", "--hops", "6", "--dim", "4", "--route-kind", "rrdu", "--u", "0"],
                           timeout=180)
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["task"] == "walk" and summary["hops"] == 6 and summary["ms_per_hop"] > 0


@pytest.mark.slow
def test_torchrun_flood_and_dynamic_gossip(tmp_path):
    proc = launch_torchrun(3, ["flood", "--topology", "ring", "--dim", "4", "--reduce", "mean", "--out",
                               str(tmp_path)], timeout=180)
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["task"] == "flood" and summary["messages"] == 3 * 4   # per source 2|E| - (N - 1) = 4
    X0 = torch.stack([initial_vector(0, r, 4) for r in range(3)])
    for r in range(3):
        got = torch.load(tmp_path / f"rank{r}.pt", weights_only=False)["x"]
        assert torch.abs(got - X0.mean(0)).max() < 1e-12
    proc = launch_torchrun(3, ["gossip", "--schedule", "random_k_out", "--rounds", "3", "--dim", "4"], timeout=180)
    assert json.loads(proc.stdout.strip().splitlines()[-1])["topology"] == "random_k_out"
