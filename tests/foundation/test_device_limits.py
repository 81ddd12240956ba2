"""The demos' slider maxima follow the device; the CPU's stay the small, fast ones (testable without a GPU)."""

from __future__ import annotations

import pytest
import torch

from unlearnkit.experiments.device_limits import DemoLimits, demo_limits


def test_cpu_limits_are_the_two_core_defaults():
    lim = demo_limits("cpu")
    assert lim.device == "cpu" and lim.dataset == "digits"
    assert lim.max_clients <= 64 and lim.max_seeds <= 8  # an explorer must stay live on 2 cores


def test_cuda_limits_are_larger_on_every_axis_without_a_gpu():
    """The table is a pure function of the device's type: a CUDA device object is enough to read it."""
    cpu, gpu = demo_limits(torch.device("cpu")), demo_limits(torch.device("cuda", 1))
    assert gpu.device == "cuda" and gpu.max_clients >= 1024 and gpu.dataset == "mnist"
    assert gpu.max_clients > cpu.max_clients and gpu.max_seeds > cpu.max_seeds and gpu.max_hops > cpu.max_hops
    assert demo_limits("cuda:0") == gpu


def test_default_follows_unlearnkit_device(monkeypatch):
    monkeypatch.setenv("UNLEARNKIT_DEVICE", "cpu")
    assert demo_limits() == demo_limits("cpu")


def test_errors_name_the_setting():
    with pytest.raises(ValueError, match="device='tpu'"):
        demo_limits("tpu")
    with pytest.raises(ValueError, match="max_clients"):
        DemoLimits(device="cpu", max_clients=2, max_seeds=1, max_hops=10, dataset="digits")
    with pytest.raises(ValueError, match="dataset='cifar'"):
        DemoLimits(device="cpu", max_clients=3, max_seeds=1, max_hops=10, dataset="cifar")
