"""Shared setup for the simulator tests."""

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # tiny per-client ops: OpenMP threads only contend on a shared 2-core machine
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
