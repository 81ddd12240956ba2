"""Shared pytest setup: hypothesis profile, markers for slow / GPU tests, a fast CPU default."""

from __future__ import annotations

import os

import pytest

try:
    from hypothesis import HealthCheck, settings

    # CI runs on 2 shared cores: no per-example deadline, modest example counts
    settings.register_profile("ci", max_examples=40, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # pragma: no cover
    pass


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")


def pytest_collection_modifyitems(config, items):
    import torch

    skip_slow = pytest.mark.skip(reason="slow: pass --runslow to run")
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "slow" in item.keywords and not config.getoption("--runslow"):
            item.add_marker(skip_slow)
        if "gpu" in item.keywords and not torch.cuda.is_available():
            item.add_marker(skip_gpu)


@pytest.fixture(scope="session")
def digits():
    import unlearnkit as uk

    return uk.data.load("digits", device="cpu")


@pytest.fixture(scope="session")
def synthetic():
    import unlearnkit as uk

    return uk.data.load("synthetic", device="cpu", n_train=400, n_test=200, dim=10)
