"""The centralized pipeline, train -> unlearn -> retrain -> evaluate, and the baselines' runners.

A runner (see :mod:`unlearnkit.experiments.registry`) trains on a profile, unlearns, retrains on the same
request and returns the result dictionary that ``python -m unlearnkit run`` writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np

from .. import data as D
from .._validate import check_choice, check_int
from .contract import Released, finish_result
from ..core import MAX_DIM, MAX_SAMPLES, Request
from ..evaluate import accuracy, report
from ..methods.baselines import Finetune, FinetuneConfig, GradientAscent, GradientAscentConfig, Retrain, RetrainConfig
from ..models import FlatParams, make_model
from ..runtime import device as default_device, make_generator
from ..train import SGDConfig, train_sgd
from .memo import memoized
from .world_cache import train_sgd_cached


# ----------------------------------------------------------------------------------------------------------
# The centralized pipeline: train -> unlearn -> retrain -> evaluate
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class CentralProfile:
    """A centralized experiment: data, model, training and the forget request.

    ``request="class"`` forgets every training sample of ``label``; ``"samples"`` forgets ``m`` random
    training samples; ``"backdoor"`` stamps a BadNets trigger (a ``patch x patch`` corner square) on ``m``
    random training samples whose label is not ``target``, relabels them ``target``, and forgets exactly
    those: the original model answers ``target`` on triggered test images, retraining does not, so the
    attack success (``backdoor_asr``) and the accuracy on the forget set measure forgetting where a random
    sample request has no signal. ``unit_ball=True`` maps features into the unit ball (the convex
    theory's assumption) by a public affine map, after the trigger is stamped, and the triggered test set by
    the same map; ``center=True`` also centres at the midpoint of the public pixel range (:func:`preprocess`).
    Neither reads a training statistic, so the certificates' neighbouring relation covers the preprocessing.
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
    target: int = 0
    patch: int = 2
    unit_ball: bool = False
    center: bool = False

    def __post_init__(self) -> None:
        check_choice("request", self.request, ("class", "samples", "backdoor"))
        check_int("m", self.m, low=1, high=MAX_SAMPLES)
        check_int("patch", self.patch, low=1, high=MAX_DIM)
        check_int("target", self.target, low=0)
        if self.train is None:
            object.__setattr__(self, "train", SGDConfig(steps=600, lr=0.5, batch_size=32, weight_decay=1e-4,
                                                        checkpoint_every=50))


CENTRAL_PROFILES: dict[str, CentralProfile] = {
    # digits MLP, a forgotten class: a few seconds on 2 CPU cores
    "quick": CentralProfile(),
}


def centralized_setup(profile: "str | CentralProfile" = "quick", *, seed: int = 0, progress: bool = False,
                      device=None, callback=None):
    """Load data, build the model, train it and make the forget request.

    Returns ``(state, request)``: a :class:`~unlearnkit.core.TrainedState` (with checkpoints) and a
    :class:`~unlearnkit.core.Request`. Without a ``callback``, a second call with the same profile, seed and
    device returns a copy of the first call's world instead of training again (:mod:`.memo`).
    """
    prof = CENTRAL_PROFILES[check_choice("profile", profile, tuple(CENTRAL_PROFILES))] if isinstance(profile, str) \
        else profile
    if callback is not None:  # a callback expects training's events: train afresh for it
        return _train_setup(prof, seed=seed, progress=progress, device=device, callback=callback)

    where = str(device) if device is not None else f"default:{default_device()}"
    return memoized("centralized_setup", (prof, int(seed), where),
                    lambda: _train_setup(prof, seed=seed, progress=progress, device=device, callback=None))


def _train_setup(prof: CentralProfile, *, seed: int, progress: bool, device, callback):
    ds, backdoor, request = raw_world(prof, seed=seed, device=device)
    state = fit_world(prof, ds, backdoor, seed=seed, progress=progress, callback=callback, cached=callback is None)
    return state, request


def raw_world(prof: CentralProfile, *, seed: int, device=None):
    """The profile's data before any preprocessing: ``(dataset, backdoor or None, request)``.

    The backdoor's trigger is stamped here (the poisoned rows are rows of D); the request names rows of this
    dataset and reads nothing the preprocessing computes.
    """


    ds = D.load(prof.dataset, device=device, seed=seed, **dict(prof.dataset_kwargs))
    backdoor = None
    if prof.request == "backdoor":
        backdoor = _plant_backdoor(ds, prof, seed=seed)
        ds = backdoor.dataset
        request = backdoor.request()
    elif prof.request == "class":
        request = D.forget_class(ds, prof.label)
    else:
        request = Request("samples", np.random.default_rng(seed).choice(ds.n_train, size=prof.m, replace=False))
    return ds, backdoor, request


def fit_world(prof: CentralProfile, ds, backdoor, *, seed: int, progress: bool = False, callback=None,
              cached: bool = False):
    """Preprocess ``ds`` (:func:`preprocess`), build the model from ``seed`` and train: the state.

    ``cached=True`` reads and writes the disk cache of :mod:`.world_cache` (when ``UNLEARNKIT_CACHE`` is set).
    """

    ds, backdoor = preprocess(ds, backdoor, prof)
    gen = make_generator(seed)
    n_out = 1 if prof.loss == "logistic" else ds.n_classes
    flat = FlatParams(make_model(prof.model, ds.input_shape, n_out, generator=gen, **dict(prof.model_kwargs)),
                      loss=prof.loss).to(ds.device)
    if cached:  # the disk cache, when UNLEARNKIT_CACHE turns it on (world_cache: tensors only)
        state = train_sgd_cached(flat, ds, prof.train, generator=gen, key=(prof, seed, str(ds.device)),
                                 progress=progress)
    else:
        state = train_sgd(flat, ds, None, prof.train, generator=gen, progress=progress, callback=callback)
    if backdoor is not None:
        state.extras["backdoor"] = backdoor
    return state


def describe_request(request, backdoor=None) -> str:
    """``request.describe()``, saying that the samples are backdoored when they are ``backdoor``'s poisoned ones
    (e.g. "forget 60 backdoored samples (trigger 3x3, target 0)"): "forget 60 samples" hides the signal."""

    if backdoor is None or not np.array_equal(np.sort(np.asarray(backdoor.indices)), np.sort(request.indices)):
        return request.describe()
    return (f"forget {request.m} backdoored samples (trigger {backdoor.patch}x{backdoor.patch}, "
            f"target {backdoor.target})")


def _plant_backdoor(ds, prof: CentralProfile, *, seed: int):
    """BadNets on ``prof.m`` random training samples not already labelled ``prof.target``."""


    check_int("target", prof.target, low=0, high=ds.n_classes - 1)
    candidates = np.flatnonzero(ds.y_train.cpu().numpy() != prof.target)
    check_int("m", prof.m, low=1, high=candidates.size)
    poisoned = np.random.default_rng(seed).choice(candidates, size=prof.m, replace=False)
    return D.federated.add_backdoor(ds, poisoned, target=prof.target, patch=prof.patch)


def preprocess(ds, backdoor, prof: CentralProfile):
    """The profile's preprocessing, a public map (:func:`unlearnkit.data.scale_to_unit_ball`): with
    ``prof.unit_ball``, ``x -> (x - c) / B`` where ``c`` is the midpoint of the public pixel range when
    ``prof.center`` (without it a linear model under strong L2 scores every class mostly along the shared
    direction of nonnegative pixels, and the poisoned samples' weight on the target class makes it win
    everywhere) and ``B`` the largest norm a row in that range can have. No training statistic is read, so the
    same pipeline run on D minus a forget set applies the same map. The triggered test rows get the same map
    and the same clip to the unit ball as every test row."""


    if prof.center and not prof.unit_ball:
        raise ValueError("center=True needs unit_ball=True: the public centre comes with the public unit-ball map")
    if not prof.unit_ball:
        return ds, backdoor
    scaled = D.preprocess.scale_to_unit_ball(ds, center=prof.center)
    if backdoor is None:
        return scaled, None
    c, scale = scaled.info["unit_ball_center"], scaled.info["unit_ball_scale"]
    x = (backdoor.x_test_triggered - c) / scale
    norms = x.reshape(x.shape[0], -1).norm(dim=1).clamp_min(1.0)
    x = x / norms.view(-1, *([1] * (x.dim() - 1)))
    return scaled, replace(backdoor, dataset=scaled, x_test_triggered=x, value=(backdoor.value - c) / scale)


def run_centralized(method, config, *, profile: "str | CentralProfile" = "quick", seed: int = 0,
                    progress: bool = False, device=None, setup=None, retrain_config=None) -> dict:
    """Train, unlearn with ``method`` (any object with the shared ``unlearn`` signature), retrain on the same
    request and evaluate: returns the ``result.json`` dictionary described in this module's docstring.

    ``setup`` may pass a precomputed ``(state, request)`` (e.g. to compare several methods on one
    trained model).
    """

    state, request = setup if setup is not None else centralized_setup(profile, seed=seed, progress=progress,
                                                                        device=device)
    result = method.unlearn(state, request, config, generator=make_generator(seed + 1))
    retrained = Retrain().unlearn(state, request, retrain_config or RetrainConfig(),
                                  generator=make_generator(seed + 2))
    backdoor = state.extras.get("backdoor")
    metrics = report(state.flat, result.params, state.dataset, request, retrained=retrained.params,
                     original=state.params, train_indices=state.train_indices, backdoor=backdoor)
    cert = result.certificate
    prof_name = profile if isinstance(profile, str) else "custom"
    out = {
        "method": getattr(method, "name", type(method).__name__),
        "profile": prof_name,
        "dataset": state.dataset.name,
        "request": describe_request(request, backdoor),
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
    return finish_result(out, Released(result.params, state.flat, state.dataset, request, backdoor=backdoor),
                         diagnostics=_intermediate_models(state, request, result), config=config)


def _intermediate_models(state, request, result) -> dict:
    """Test and forget accuracy of the models a method computed but did not release (its noise-free step,
    ``extras["noiseless"]``; its noisy phase before clean fine-tuning, ``extras["noisy"]``)."""

    ds, out = state.dataset, {}
    for key, name in (("noiseless", "noise_free_model"), ("noisy", "noisy_phase_model")):
        theta = result.extras.get(key)
        if theta is not None and hasattr(theta, "shape") and theta.shape[-1] == state.flat.d:
            xf, yf = ds.train_subset(request.indices)
            out[name] = {"test_acc": accuracy(state.flat, theta, ds.x_test, ds.y_test),
                         "forget_acc": accuracy(state.flat, theta, xf, yf)}
    return out


def centralized_backdoor_setup(profile: "str | CentralProfile" = "quick", *, m: int = 40, target: int = 0,
                               patch: int = 2, seed: int = 0, device=None, progress: bool = False):
    """Plant a BadNets backdoor on ``m`` random training samples, train on the poisoned data, and return
    ``(state, request, backdoor)`` where ``request`` forgets exactly the poisoned samples.

    Forgetting the poisoned samples should remove the backdoor: the attack success rate
    (:func:`unlearnkit.evaluate.backdoor_success`) of a good unlearning method falls to retraining's.
    """

    prof = CENTRAL_PROFILES[check_choice("profile", profile, tuple(CENTRAL_PROFILES))] if isinstance(profile, str) \
        else profile
    prof = replace(prof, request="backdoor", m=m, target=target, patch=patch)
    state, request = centralized_setup(prof, seed=seed, progress=progress, device=device)
    return state, request, state.extras["backdoor"]


# ---------------------------------------------------------------------------------------------------------
# The baselines' runners
# ---------------------------------------------------------------------------------------------------------

def run_retrain(*, profile: str, seed: int, progress: bool, **kw):
    return run_centralized(Retrain(), RetrainConfig(), profile=profile, seed=seed, progress=progress, **kw)


def run_finetune(*, profile: str, seed: int, progress: bool, **kw):
    return run_centralized(Finetune(), FinetuneConfig(steps=100, lr=0.1), profile=profile, seed=seed,
                           progress=progress, **kw)


def run_gradient_ascent(*, profile: str, seed: int, progress: bool, **kw):
    return run_centralized(GradientAscent(), GradientAscentConfig(), profile=profile, seed=seed, progress=progress,
                           **kw)
