"""Sizes and counts at the boundaries of the experiments, the audit and the reproduction: trials, repeats,
seeds, samples, steps, clients and dimensions past their named limit (``unlearnkit.core.MAX_*``,
``MAX_SPARSE_CLIENTS``, ``MAX_HOPS``) are refused at once, by a ``ValueError`` naming the parameter, the
value, the range and the limit, before anything is allocated or run; the limit itself is accepted."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
import torch
from fuzzkit import time_limit
from hypothesis import given, settings
from hypothesis import strategies as st

import unlearnkit.experiments as experiments
from unlearnkit.core import MAX_DIM, MAX_REPEATS, MAX_SAMPLES, MAX_SEED, MAX_STEPS, MAX_TRIALS
from unlearnkit.graphs.sparse import MAX_SPARSE_CLIENTS
from unlearnkit.graphs.walks import MAX_HOPS


def _experiment_class(name: str):
    """A class of ``unlearnkit.experiments`` by name, wherever in the package it lives."""
    for info in pkgutil.walk_packages(experiments.__path__, "unlearnkit.experiments."):
        obj = vars(importlib.import_module(info.name)).get(name)
        if obj is not None and getattr(obj, "__module__", "") == info.name:
            return obj
    raise LookupError(name)


def _config(cls_name: str, **over):
    if cls_name in ("AuditConfig",):
        from unlearnkit.audit.run import AuditConfig as cls
    elif cls_name == "CapstoneTask":
        from unlearnkit.reproduce.frontier import CapstoneTask as cls
    else:
        cls = _experiment_class(cls_name)
    if cls_name == "DemoLimits":
        over = {"device": "cpu", "max_clients": 10, "max_seeds": 2, "max_hops": 100, "dataset": "digits", **over}
    return cls(**over)


#: (configuration class, parameter, its named limit)
CONFIG_CASES = [
    ("AuditConfig", "n_trials", MAX_TRIALS), ("AuditConfig", "n_thresholds", MAX_TRIALS),
    ("CapstoneTask", "n_train", MAX_SAMPLES), ("CapstoneTask", "steps", MAX_STEPS), ("CapstoneTask", "dim", MAX_DIM),
    ("PDUDTExperiment", "T", MAX_STEPS), ("PDUDTExperiment", "mia_repeats", MAX_REPEATS),
    ("PDUDTExperiment", "batch_size", MAX_SAMPLES),
    ("BackdoorSetup", "T_train", MAX_STEPS), ("BackdoorSetup", "n_clients", MAX_SPARSE_CLIENTS),
    ("CentralProfile", "m", MAX_SAMPLES),
    ("PDUDTAuditTask", "n_clients", MAX_SPARSE_CLIENTS), ("PDUDTAuditTask", "n_per_client", MAX_SAMPLES),
    ("PDUDTAuditTask", "rounds", MAX_STEPS),
    ("WalkAuditTask", "n_per_client", MAX_SAMPLES), ("WalkAuditTask", "train_hops", MAX_STEPS),
    ("NewtonAuditTask", "dim", MAX_DIM), ("NewtonAuditTask", "n_train", MAX_SAMPLES),
    ("ToyTask", "steps", MAX_STEPS), ("ToyTask", "n_train", MAX_SAMPLES),
    ("DemoLimits", "max_hops", MAX_HOPS), ("DemoLimits", "max_seeds", MAX_REPEATS),
    ("DemoLimits", "max_clients", MAX_SPARSE_CLIENTS),
    ("FrontierSetting", "rounds", MAX_STEPS), ("FrontierSetting", "m", MAX_SAMPLES),
    ("CertifiedPDUDT", "local_steps", MAX_STEPS),
    ("CanaryTask", "base_dim", MAX_DIM), ("CanaryTask", "m", MAX_SAMPLES),
    ("DigitsForgetConfig", "nft_steps", MAX_STEPS), ("DigitsForgetConfig", "T", MAX_STEPS),
]

too_big = st.sampled_from([1, 2, 10**6, 10**12, 2**63, 10**30])


def _refused(limit, name, call):
    with pytest.raises(ValueError, match=rf"{name}=\d+ is out of range: expected an integer in \[-?\d+, "
                                         rf"{int(limit)}\] \({limit.name}\)"), time_limit(2.0):
        call()


@pytest.mark.parametrize("cls_name, name, limit", CONFIG_CASES, ids=[f"{c}.{n}" for c, n, _ in CONFIG_CASES])
@settings(max_examples=4, deadline=None, derandomize=True)
@given(extra=too_big)
def test_a_config_refuses_a_size_past_its_named_limit(cls_name, name, limit, extra):
    _refused(limit, name, lambda: _config(cls_name, **{name: int(limit) + extra}))


@pytest.mark.parametrize("cls_name, name, limit", CONFIG_CASES[:4], ids=[f"{c}.{n}" for c, n, _ in CONFIG_CASES[:4]])
def test_the_limit_itself_passes_the_check(cls_name, name, limit):
    try:
        _config(cls_name, **{name: int(limit)})
    except ValueError as exc:             # another field's consistency check may object: never this limit's
        assert f"({limit.name})" not in str(exc)


@settings(max_examples=6, deadline=None, derandomize=True)
@given(extra=too_big)
def test_audit_functions_refuse_counts_past_their_named_limits(extra):
    from unlearnkit.audit import audit_ceiling, audit_gaussian
    from unlearnkit.audit.validation import validate_statistics

    _refused(MAX_TRIALS, "n_trials", lambda: audit_ceiling(int(MAX_TRIALS) + extra))
    _refused(MAX_DIM, "dim", lambda: audit_gaussian(sensitivity=1.0, sigma=1.0, epsilon=1.0, delta=1e-5,
                                                    dim=int(MAX_DIM) + extra, generator=torch.Generator()))
    _refused(MAX_REPEATS, "reps", lambda: validate_statistics(reps=int(MAX_REPEATS) + extra))
    _refused(MAX_TRIALS, "n_trials", lambda: validate_statistics(n_trials=(int(MAX_TRIALS) + extra,)))


@settings(max_examples=6, deadline=None, derandomize=True)
@given(extra=too_big)
def test_experiment_functions_refuse_counts_and_seeds_past_their_named_limits(extra):
    from unlearnkit.experiments import available_methods

    honest_audit, forgetting_scores = _experiment_class("honest_audit"), _experiment_class("forgetting_scores")
    measure_seed, measure_budget = _experiment_class("measure_seed"), _experiment_class("measure_budget")
    method = next(iter(available_methods()))
    _refused(MAX_TRIALS, "n_trials", lambda: honest_audit(method, n_trials=int(MAX_TRIALS) + extra))
    _refused(MAX_TRIALS, "n_models", lambda: forgetting_scores(n_models=int(MAX_TRIALS) + extra))
    _refused(MAX_REPEATS, "n_repeats", lambda: forgetting_scores(n_repeats=int(MAX_REPEATS) + extra))
    name = next(iter(vars(importlib.import_module(measure_seed.__module__))["FAMILY"]))
    _refused(MAX_SEED, "seed", lambda: measure_seed(name, int(MAX_SEED) + extra))
    _refused(MAX_SEED, "seeds", lambda: measure_budget([name], seeds=(0, int(MAX_SEED) + extra)))


@settings(max_examples=4, deadline=None, derandomize=True)
@given(extra=too_big)
def test_local_launchers_refuse_more_ranks_than_a_machine_holds(extra):
    from unlearnkit.distributed import launch_torchrun, spawn
    from unlearnkit.distributed.launch import MAX_LOCAL_RANKS
    from unlearnkit.distributed.tasks import walk_task

    side_by_side = _experiment_class("side_by_side")
    n = int(MAX_LOCAL_RANKS) + extra
    _refused(MAX_LOCAL_RANKS, "n_ranks", lambda: spawn(walk_task, n))        # before any process starts
    _refused(MAX_LOCAL_RANKS, "n_ranks", lambda: launch_torchrun(n, ["gossip"]))
    _refused(MAX_LOCAL_RANKS, "n_ranks", lambda: side_by_side(n_ranks=n))
