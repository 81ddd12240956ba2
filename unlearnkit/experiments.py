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
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ._validate import check_choice

__all__ = ["MethodSpec", "register_method", "get_method", "available_methods", "discovery_errors", "RESULT_METRICS",
           "CentralProfile", "CENTRAL_PROFILES", "centralized_setup", "centralized_backdoor_setup",
           "run_centralized"]

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
_DISCOVERY_ERRORS: dict[str, str] = {}


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
            try:
                importlib.import_module(f"{pkg.__name__}.{info.name}")
            except Exception as exc:  # one broken module must not hide every other method
                _DISCOVERY_ERRORS[info.name] = f"{type(exc).__name__}: {exc}"
                warnings.warn(f"unlearnkit.methods.{info.name} failed to import ({exc}); its methods are missing",
                              RuntimeWarning, stacklevel=2)


def discovery_errors() -> dict[str, str]:
    """Method modules that failed to import, with the error (a test asserts this is empty)."""
    _discover()
    return dict(_DISCOVERY_ERRORS)


def available_methods() -> dict[str, MethodSpec]:
    """All registered methods, by name."""
    _discover()
    return dict(sorted(_REGISTRY.items()))


def get_method(name: str) -> MethodSpec:
    methods = available_methods()
    check_choice("method", name, tuple(methods))
    return methods[name]


# ----------------------------------------------------------------------------------------------------------
# The centralized pipeline: train -> unlearn -> retrain -> evaluate
# ----------------------------------------------------------------------------------------------------------

from dataclasses import field  # noqa: E402


@dataclass(frozen=True, kw_only=True)
class CentralProfile:
    """A centralized experiment: data, model, training and the forget request.

    ``request="class"`` forgets every training sample of ``label``; ``"samples"`` forgets ``m`` random
    training samples. ``unit_ball=True`` scales features into the unit ball (the convex theory's
    assumption).
    """

    dataset: str = "digits"
    dataset_kwargs: Mapping[str, Any] = field(default_factory=dict)
    model: str = "mlp"
    model_kwargs: Mapping[str, Any] = field(default_factory=lambda: {"hidden": (64,)})
    loss: str = "cross_entropy"
    train: Any = None
    request: str = "class"
    label: int = 3
    m: int = 30
    unit_ball: bool = False

    def __post_init__(self) -> None:
        check_choice("request", self.request, ("class", "samples"))
        if self.train is None:
            from .train import SGDConfig

            object.__setattr__(self, "train", SGDConfig(steps=600, lr=0.5, batch_size=32, weight_decay=1e-4,
                                                        checkpoint_every=50))


CENTRAL_PROFILES: dict[str, CentralProfile] = {
    # digits MLP, a forgotten class: a few seconds on 2 CPU cores
    "quick": CentralProfile(),
}


def centralized_setup(profile: "str | CentralProfile" = "quick", *, seed: int = 0, progress: bool = False,
                      device=None, callback=None):
    """Load data, build the model, train it and make the forget request.

    Returns ``(state, request)``: a :class:`~unlearnkit.methods.base.TrainedState` (with checkpoints) and a
    :class:`~unlearnkit.methods.base.Request`.
    """
    import numpy as np

    from . import data as D
    from . import make_generator
    from .methods.base import Request
    from .models import FlatParams, make_model
    from .train import train_sgd

    prof = CENTRAL_PROFILES[check_choice("profile", profile, tuple(CENTRAL_PROFILES))] if isinstance(profile, str) \
        else profile
    ds = D.load(prof.dataset, device=device, seed=seed, **dict(prof.dataset_kwargs))
    if prof.unit_ball:
        ds = D.scale_to_unit_ball(ds)
    gen = make_generator(seed)
    n_out = 1 if prof.loss == "logistic" else ds.n_classes
    flat = FlatParams(make_model(prof.model, ds.input_shape, n_out, generator=gen, **dict(prof.model_kwargs)),
                      loss=prof.loss).to(ds.device)
    state = train_sgd(flat, ds, None, prof.train, generator=gen, progress=progress, callback=callback)
    if prof.request == "class":
        request = D.forget_class(ds, prof.label)
    else:
        rng = np.random.default_rng(seed)
        request = Request("samples", rng.choice(ds.n_train, size=prof.m, replace=False))
    return state, request


def run_centralized(method, config, *, profile: "str | CentralProfile" = "quick", seed: int = 0,
                    progress: bool = False, device=None, setup=None, retrain_config=None) -> dict:
    """Train, unlearn with ``method`` (any object with the shared ``unlearn`` signature), retrain on the same
    request and evaluate: returns the ``result.json`` dictionary described in this module's docstring.

    ``setup`` may pass a precomputed ``(state, request)`` (e.g. to compare several methods on one
    trained model).
    """
    from . import make_generator
    from .evaluate import report
    from .methods.baselines import Retrain, RetrainConfig

    state, request = setup if setup is not None else centralized_setup(profile, seed=seed, progress=progress,
                                                                        device=device)
    result = method.unlearn(state, request, config, generator=make_generator(seed + 1))
    retrained = Retrain().unlearn(state, request, retrain_config or RetrainConfig(),
                                  generator=make_generator(seed + 2))
    metrics = report(state.flat, result.params, state.dataset, request, retrained=retrained.params,
                     original=state.params, train_indices=state.train_indices)
    cert = result.certificate
    prof_name = profile if isinstance(profile, str) else "custom"
    return {
        "method": getattr(method, "name", type(method).__name__),
        "profile": prof_name,
        "dataset": state.dataset.name,
        "request": request.describe(),
        "metrics": metrics,
        "certificate": None if cert is None else cert.to_dict(),
        "cost": {
            "grad_evals": int(result.cost.grad_evals),
            "seconds": float(result.cost.seconds),
            "messages": int(result.cost.messages),
            "retrain_grad_evals": int(retrained.cost.grad_evals),
            "retrain_seconds": float(retrained.cost.seconds),
            "train_grad_evals": int(state.cost.grad_evals),
        },
    }


def centralized_backdoor_setup(profile: "str | CentralProfile" = "quick", *, m: int = 40, target: int = 0,
                               patch: int = 2, seed: int = 0, device=None, progress: bool = False):
    """Plant a BadNets backdoor on ``m`` random training samples, train on the poisoned data, and return
    ``(state, request, backdoor)`` where ``request`` forgets exactly the poisoned samples.

    Forgetting the poisoned samples should remove the backdoor: the attack success rate
    (:func:`unlearnkit.evaluate.backdoor_success`) of a good unlearning method falls to retraining's.
    """
    import numpy as np

    from . import data as D
    from . import make_generator
    from .models import FlatParams, make_model
    from .train import train_sgd

    prof = CENTRAL_PROFILES[check_choice("profile", profile, tuple(CENTRAL_PROFILES))] if isinstance(profile, str) \
        else profile
    ds = D.load(prof.dataset, device=device, seed=seed, **dict(prof.dataset_kwargs))
    rng = np.random.default_rng(seed)
    poisoned = rng.choice(np.flatnonzero(ds.y_train.cpu().numpy() != target), size=m, replace=False)
    bd = D.add_backdoor(ds, poisoned, target=target, patch=patch)
    gen = make_generator(seed)
    flat = FlatParams(make_model(prof.model, ds.input_shape, ds.n_classes, generator=gen,
                                 **dict(prof.model_kwargs)), loss=prof.loss).to(bd.dataset.device)
    state = train_sgd(flat, bd.dataset, None, prof.train, generator=gen, progress=progress)
    return state, bd.request(), bd
