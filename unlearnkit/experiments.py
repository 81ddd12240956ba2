"""Named, versioned experiment configurations and the registry behind ``python -m unlearnkit run``.

Every method registers a *runner* with :func:`register_method`. A runner takes a profile name
(``"quick"``: seconds on 2 CPU cores on digits; ``"paper"``: the paper's settings where it gives them) and a
seed, trains, unlearns, retrains on the same request and returns the result dictionary that the CLI writes to
``DIR/result.json``::

    {"method", "profile", "dataset",
     "metrics": {"test_acc", "forget_acc", "mia_auc", "dist_to_retrain", "retrain_test_acc",
                 "retrain_forget_acc", "original_dist_to_retrain", ["backdoor_asr"]},
     "certificate": null | {"epsilon", "delta", "sigma", "mode", "source", ...},
     "cost": {"grad_evals", "seconds", "retrain_grad_evals", "retrain_seconds"}}

Method modules live in :mod:`unlearnkit.methods` and are imported (and so registered) on first use of the
registry, so adding a method never means editing a central list.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ._validate import check_choice

__all__ = ["MethodSpec", "register_method", "get_method", "available_methods", "RESULT_METRICS"]

RESULT_METRICS = (
    "test_acc",
    "forget_acc",
    "mia_auc",
    "dist_to_retrain",
    "retrain_test_acc",
    "retrain_forget_acc",
    "original_dist_to_retrain",
)

Runner = Callable[..., Mapping[str, Any]]


@dataclass(frozen=True)
class MethodSpec:
    """A registered experiment: ``runner(profile=..., seed=..., progress=...) -> result dict``."""

    name: str
    runner: Runner
    profiles: tuple[str, ...]
    description: str = ""
    paper: str = ""

    def run(self, profile: str = "quick", *, seed: int = 0, progress: bool = True, **kwargs: Any) -> dict:
        check_choice("profile", profile, self.profiles)
        result = dict(self.runner(profile=profile, seed=seed, progress=progress, **kwargs))
        result.setdefault("method", self.name)
        result.setdefault("profile", profile)
        return result


_REGISTRY: dict[str, MethodSpec] = {}
_DISCOVERED = False


def register_method(name: str, *, profiles: tuple[str, ...] = ("quick",), description: str = "",
                    paper: str = "") -> Callable[[Runner], Runner]:
    """Decorator: register ``runner`` under ``name`` for the CLI and the capstone."""

    def deco(runner: Runner) -> Runner:
        _REGISTRY[name] = MethodSpec(name, runner, tuple(profiles), description, paper)
        return runner

    return deco


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    import unlearnkit.methods as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{pkg.__name__}.{info.name}")


def available_methods() -> dict[str, MethodSpec]:
    """All registered methods, by name."""
    _discover()
    return dict(sorted(_REGISTRY.items()))


def get_method(name: str) -> MethodSpec:
    methods = available_methods()
    check_choice("method", name, tuple(methods))
    return methods[name]
