"""The replay check: a certified pipeline run end to end on D and on D minus the forget set, compared.

A certificate is about the whole pipeline (loading, preprocessing, training, unlearning, noise): what is
released after forgetting D_f must be (epsilon, delta)-close to what the *same pipeline* releases when D_f was
never there. :func:`replay` runs both from raw data with the same seeds, under a
:func:`~unlearnkit.privacy.trace.recording` each:

- **world A**: load D, preprocess, train, then unlearn the request;
- **world B**: load D, remove the forgotten rows *before any preprocessing*, preprocess, train with the same
  seeds, then run the same unlearning code with nothing left to forget (the certifier's counterfactual:
  R2D replays its K steps on D', D2D descends K more steps on D', the noisy fine-tuning methods run on the
  model trained on D').

and checks, mechanism by mechanism (each noisy release of :mod:`unlearnkit.privacy.trace`):

(a) **control flow**: the same mechanisms in the same order with the same shapes, and the same loop counts
    (``flow`` reports: training steps, replay steps, ...);
(b) **sensitivity**: the distance between the two worlds' noise-free values is at most the sensitivity the
    method declares at that mechanism;
(c) **calibration**: for a single Gaussian release, the noise drawn is at least what the declared
    sensitivity needs at the certificate's (epsilon, delta) (the analytic Gaussian mechanism);
(d) **noise**: both worlds drew the same standard-normal noise (the seeds do not depend on the data);
(e) **composition**: a certificate that composes noisy steps (``constants["train_rho"]``) counts every step at
    which the worlds differ;
(f) **plan**: where the method has ``certify`` (:class:`~unlearnkit.core.Plan`), world A released only at
    the planned noise points, within their declared sensitivities and counts, and issued the planned certificate.

A walk's noisy steps compose adaptively: world B then runs under world A's transcript
(:func:`~unlearnkit.privacy.trace.replaying`), each noisy step computed at the model world A released before it.

A data statistic in the preprocessing breaks (b), a loop count read from private data breaks (a), noise
calibrated to a smaller sensitivity than the declared one breaks (c), a seed derived from the data breaks
(d): ``tests/capstone/test_replay.py`` plants each. The audit (:mod:`unlearnkit.audit`) asks a different
question (is the released distribution what the certificate says, from samples); the replay asks whether
the certificate's inputs are what the pipeline computes.

Every (method, profile) of :data:`~unlearnkit.experiments.registry.METHODS` is in :data:`REPLAYS` (a
recipe), in :data:`UNCERTIFIED_ROWS` (the profile issues no certificate, with the reason) or in
:data:`PENDING` (certified, no recipe yet, with what is missing); a test enumerates the registry, so a new
method cannot skip the check silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

import numpy as np
import torch

from . import networks as replay_networks
from .. import centralized as C
from ..._validate import check_choice, check_int
from ...core import MAX_TRIALS, Request
from ...data.federated import without_rows
from ...privacy.trace import recording, replaying
from ...runtime import make_generator

__all__ = ["replay", "replay_table", "REPLAYS"]

#: relative slack on the distance and calibration checks (float32 round-off, not a budget)
RTOL = 1e-4


@dataclass
class ReplayReport:
    """The outcome of :func:`replay` for one method, profile and seed.

    ``rows`` has one dict per mechanism (name, measured distance, declared sensitivity, sigma, required
    sigma, same noise); ``problems`` lists every failed check in words (empty: passed).
    """

    method: str
    profile: str
    seed: int
    certificate: Any
    rows: list[dict[str, Any]] = field(default_factory=list)
    flow_a: dict[str, list] = field(default_factory=dict)
    flow_b: dict[str, list] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    composition: dict[str, Any] = field(default_factory=dict)
    trace_a: Any = field(default=None, repr=False)
    trace_b: Any = field(default=None, repr=False)

    @property
    def passed(self) -> bool:
        return not self.problems

    def summary(self) -> dict[str, Any]:
        worst = max((r["ratio"] for r in self.rows if r["ratio"] is not None), default=None)
        pair = self.rows[0]["epsilon_at_measured_shift"] if len(self.rows) == 1 else None
        return {"method": self.method, "profile": self.profile, "seed": self.seed, "passed": self.passed,
                "mechanisms": len(self.rows), "worst_distance_over_sensitivity": worst,
                "certified_epsilon": None if self.certificate is None else self.certificate.epsilon,
                "epsilon_at_measured_shift": pair, **self.composition,
                "problems": list(self.problems)}


# ----------------------------------------------------------------------------------------------------------
# world B's helpers
# ----------------------------------------------------------------------------------------------------------

def drop_rows(ds, rows: np.ndarray):
    """``ds`` with the training rows ``rows`` removed (:func:`unlearnkit.data.without_rows`): D minus D_f, raw."""

    return without_rows(ds, rows)


def nothing_to_forget(method: Any, state: Any, config: Any, *, generator: torch.Generator) -> Any:
    """Run ``method``'s unlearning on ``state`` with an empty forget set (the certifier's world).

    A :class:`~unlearnkit.core.Request` refuses to name nothing, so this calls the undecorated ``unlearn``
    with a request naming one index past the training data: its retain set is every training row.
    """

    empty = Request("samples", [int(state.dataset.n_train)])
    return type(method).unlearn.__wrapped__(method, state, empty, config, generator=generator)


# ----------------------------------------------------------------------------------------------------------
# recipes: (profile, seed, hooks) -> (trace A, trace B, certificate)
# ----------------------------------------------------------------------------------------------------------

def _central_pair(prof, method, make_config, *, seed: int, hooks: dict):
    """Both worlds of a centralized profile; ``make_config(state) -> config``."""

    fit = hooks.get("fit_world", C.fit_world)
    gen_for = hooks.get("generator", lambda state: make_generator(seed + 1))
    ds, backdoor, request = C.raw_world(prof, seed=seed)
    with recording() as trace_a:
        state_a = fit(prof, ds, backdoor, seed=seed)
        plan = method.certify(state_a, request, make_config(state_a))
        result = method.unlearn(state_a, request, make_config(state_a), generator=gen_for(state_a))
    ds_b = drop_rows(ds, request.indices)
    bd_b = None if backdoor is None else replace(backdoor, dataset=ds_b)
    with recording() as trace_b:
        state_b = fit(prof, ds_b, bd_b, seed=seed)
        nothing_to_forget(method, state_b, make_config(state_b), generator=gen_for(state_b))
    return trace_a, trace_b, result.certificate, plan


def _descend_rewind(name: str):
    def recipe(profile: str, seed: int, hooks: dict):
        from ...methods.descend_rewind import D2D, R2D, D2DConfig, R2DConfig  # deferred: imports scipy.optimize
        # deferred: imports scipy.optimize
        from ..descend_rewind.lab import PROFILE_K, central_profile, profile_constants

        prof = central_profile(profile)
        K = PROFILE_K[profile]

        def make_config(state):
            c = profile_constants(profile, state, generator=make_generator(seed + 7))
            if name == "r2d":
                return R2DConfig(K=K, epsilon=1.0, delta=1e-5, constants=c, mode="sound")
            return D2DConfig(K=K, epsilon=1.0, delta=1e-5, constants=c, mode="sound")

        return _central_pair(prof, R2D() if name == "r2d" else D2D(), make_config, seed=seed, hooks=hooks)
    return recipe


def _noisy_finetune(name: str):
    def recipe(profile: str, seed: int, hooks: dict):
        # deferred: imports scipy.optimize
        from ...methods.noisy_finetune import GradientClipping, ModelClipping, ModelClippingConfig, OutputPerturbation
        from ..noisy_finetune import lab as NF  # deferred: imports scipy.optimize

        prof = NF.nf_profile(profile)
        if name == "gradient_clipping":
            method, cfg = GradientClipping(), NF.gc_config(profile)
        elif name == "output_perturbation":
            method, cfg = OutputPerturbation(), NF.op_config(profile)
        else:  # the quick/logistic configuration of run_model_clipping
            method, cfg = ModelClipping(), ModelClippingConfig(epsilon=1.0, delta=1e-5, C2=0.1, sigma=0.1, gamma=0.1,
                                                               lam=0.0, finetune=NF.QUICK_FINETUNE)
        return _central_pair(prof, method, lambda state: cfg, seed=seed, hooks=hooks)
    return recipe


def _dp_sgd(profile: str, seed: int, hooks: dict):
    """DP-SGD + group privacy: world B (D minus D_f, group size and sampling rate public) runs under world A's
    transcript, each step at the model A released, the Poisson batches coupled by row identity."""
    from ..noisy_finetune import lab as NF  # deferred: imports scipy.optimize

    prof = NF.nf_profile(profile)
    release = hooks.get("fit_world", NF.dp_sgd_release)
    raw, backdoor, _ = C.raw_world(replace(prof, request="samples"), seed=seed)
    k = max(1, raw.n_train // 100)
    request = Request("samples", np.random.default_rng(seed).choice(raw.n_train, size=k, replace=False))
    with recording() as trace_a:
        run = release(prof, raw, backdoor, request, k=k, seed=seed, epsilon=50.0, mode="sound")
    raw_b = drop_rows(raw, request.indices)
    bd_b = None if backdoor is None else replace(backdoor, dataset=raw_b)
    with replaying(trace_a) as trace_b:
        release(prof, raw_b, bd_b, Request("samples", [raw_b.n_train]), k=k, seed=seed, epsilon=50.0, mode="sound")
    return trace_a, trace_b, run["certificate"]


def _networks(name: str):
    def recipe(profile: str, seed: int, hooks: dict):
        return getattr(replay_networks, name)(profile, seed, hooks)
    return recipe


#: a replay recipe for every certified (method, profile) with one: ``recipe(profile, seed, hooks)``
REPLAYS: dict[str, tuple[tuple[str, ...], Callable]] = {
    "r2d": (("quick", "class", "psgd", "synthetic"), _descend_rewind("r2d")),
    "d2d": (("quick", "class", "psgd", "synthetic"), _descend_rewind("d2d")),
    "output_perturbation": (("quick", "logistic"), _noisy_finetune("output_perturbation")),
    "gradient_clipping": (("quick", "logistic"), _noisy_finetune("gradient_clipping")),
    "model_clipping": (("quick", "logistic"), _noisy_finetune("model_clipping")),
    "newton": (("quick",), _networks("newton_recipe")),
    "pdudt": (("quick",), _networks("pdudt_recipe")),
    "rrdu": (("quick",), _networks("rrdu_recipe")),
    "dp_sgd": (("quick", "logistic"), _dp_sgd),
}

#: (method, profile) pairs whose runs issue no certificate, with the reason (nothing to replay)
UNCERTIFIED_ROWS: dict[tuple[str, str], str] = {
    ("retrain", "quick"): "exact retraining: no noise, no mechanism (epsilon = 0 by construction)",
    ("finetune", "quick"): "a heuristic: no certificate (epsilon = infinity)",
    ("gradient_ascent", "quick"): "a heuristic: no certificate (epsilon = infinity)",
    **{(m, p): "an MLP: constants estimated, mode 'none'" for m in ("r2d", "d2d") for p in ("mlp",)},
    **{(m, "paper"): "the paper's calibration (mode 'paper'): never certified" for m in
       ("r2d", "d2d", "gradient_clipping", "model_clipping", "output_perturbation", "rrdu", "ddp", "dp_sgd_walk",
        "newton", "pdudt")},
    ("newton", "grid"): "the paper-mode grid (mode 'paper')",
    ("pdudt", "timing"): "a timing profile in paper mode",
    ("pdudt", "demo"): "the paper-mode demonstration",
    ("ddp", "quick"): "DDPWalk's paper calibration (Algorithm 3's one-shot formula, mode 'paper'): never certified; "
                      "the sound DDP baseline (NoisyWalkTraining, rrdu_frontier's 'ddp') is not a registry row",
    ("dp_sgd_walk", "quick"): "DPSGDWalk issues no certificate (Poisson-sampled walk: the accounting is the usual "
                              "approximation)",
}

#: certified (method, profile) pairs without a recipe yet, and what the recipe needs
PENDING: dict[tuple[str, str], str] = {
}


# ----------------------------------------------------------------------------------------------------------
# the check
# ----------------------------------------------------------------------------------------------------------

def _required_sigma(cert: Any, sensitivity: float) -> Optional[float]:
    """The analytic-Gaussian sigma a single release of ``sensitivity`` needs at ``cert``'s guarantee."""
    from ...privacy import analytic_gaussian_sigma  # deferred: imports scipy.optimize

    if cert is None or not math.isfinite(cert.epsilon) or sensitivity == 0:
        return None
    consts = cert.constants or {}
    moment, R = consts.get("moment", "deterministic"), consts.get("R")
    capped = R is not None and math.isfinite(R) and sensitivity >= 2 * R * (1 - 1e-12)  # the diameter, surely
    delta = cert.delta / 2 if moment in ("first", "second") and not capped else cert.delta  # Lemma 4.4's tail
    return float(analytic_gaussian_sigma(cert.epsilon, delta, sensitivity))


def _pair_epsilon(sigma: float, cert: Any, dist: float) -> Optional[float]:
    """epsilon at the certificate's delta of the Gaussian pair ``N(a, sigma^2 I)`` vs ``N(b, sigma^2 I)`` with
    ``||a - b|| = dist``: the exact privacy loss between the two worlds when both are deterministic given the
    seeds (full-batch training), one coupled draw's otherwise (a diagnostic)."""
    from ...privacy import analytic_gaussian_epsilon  # deferred: imports scipy.optimize

    if cert is None or sigma <= 0 or dist == 0:
        return 0.0 if dist == 0 else None
    return float(analytic_gaussian_epsilon(sigma, cert.delta, dist))


def replay(method: str, profile: str = "quick", *, seed: int = 0, hooks: Optional[dict] = None) -> ReplayReport:
    """Run ``method`` on ``profile`` end to end in both worlds and check (a)-(d) of the module docstring.

    ``hooks`` replaces pipeline steps (``"fit_world"``: preprocessing and training; ``"generator"``: the
    unlearning call's generator from the trained state), for planting bugs in tests.
    """
    check_choice("method", method, tuple(REPLAYS))
    profiles, recipe = REPLAYS[method]
    check_choice("profile", profile, profiles)
    trace_a, trace_b, cert, *planned = recipe(profile, seed, dict(hooks or {}))
    report = ReplayReport(method, profile, seed, cert, flow_a=trace_a.flow, flow_b=trace_b.flow, trace_a=trace_a,
                          trace_b=trace_b)
    if cert is None or not cert.certified:
        report.problems.append(f"world A issued no certified certificate ({getattr(cert, 'mode', None)}): a "
                               "replay checks certified runs")
    if trace_a.shape() != trace_b.shape():
        report.problems.append(f"control flow: world A released {trace_a.shape()[:4]}... ({len(trace_a.mechanisms)}"
                               f" mechanisms), world B {trace_b.shape()[:4]}... ({len(trace_b.mechanisms)})")
    if trace_a.flow != trace_b.flow:
        diff = {k: (trace_a.flow.get(k), trace_b.flow.get(k)) for k in set(trace_a.flow) | set(trace_b.flow)
                if trace_a.flow.get(k) != trace_b.flow.get(k)}
        report.problems.append(f"control flow: loop counts differ between the worlds: {diff}")
    if not trace_a.mechanisms:
        report.problems.append("world A released nothing through a traced mechanism")
    single = len(trace_a.mechanisms) == 1
    for i, (ma, mb) in enumerate(zip(trace_a.mechanisms, trace_b.mechanisms)):
        dist = float((ma.value.double() - mb.value.double()).norm()) if ma.value.shape == mb.value.shape else math.inf
        sens = ma.sensitivity
        same_noise = bool(torch.equal(ma.draw, mb.draw))
        need = _required_sigma(cert, sens) if (single and sens is not None) else None
        row = {"index": i, "name": ma.name, "distance": dist, "sensitivity": sens, "sigma": ma.sigma,
               "required_sigma": need, "same_noise": same_noise,
               "ratio": None if not sens else dist / sens,
               "epsilon_at_measured_shift": _pair_epsilon(ma.sigma, cert, dist) if single else None}
        report.rows.append(row)
        if sens is None:
            report.problems.append(f"mechanism {i} ({ma.name}) declares no sensitivity")
        elif dist > sens * (1 + RTOL) + 1e-12:
            report.problems.append(f"sensitivity: mechanism {i} ({ma.name}) moved {dist:.4g} between the worlds, "
                                   f"above the declared {sens:.4g} ({dist / sens:.3g}x)")
        if need is not None and ma.sigma < need * (1 - RTOL):
            report.problems.append(f"calibration: mechanism {i} ({ma.name}) drew sigma {ma.sigma:.4g}, below the "
                                   f"{need:.4g} its declared sensitivity {sens:.4g} needs at ({cert.epsilon:g}, "
                                   f"{cert.delta:g})")
        if not same_noise:
            report.problems.append(f"noise: mechanism {i} ({ma.name}) drew different noise in the two worlds "
                                   "(a seed that depends on the data)")
    _check_composition(report, trace_a, cert)
    if planned:
        _check_plan(report, trace_a, cert, planned[0])
    return report


def _check_plan(report: ReplayReport, trace_a: Any, cert: Any, plan: Any) -> None:
    """(f) the run is the one ``certify`` planned: the certificate it issued, and noise only at the planned
    points, each declared at most as the plan declares it and released at most the planned number of times."""
    def guarantee(c: Any) -> Any:  # what a certificate promises (constants may add what the run measured)
        return None if c is None else (c.epsilon, c.delta, c.sigma, c.mode, c.mechanism)

    if guarantee(plan.certificate) != guarantee(cert):
        report.problems.append(f"plan: unlearn issued {guarantee(cert)}, certify planned {guarantee(plan.certificate)}")
    points = {p.name: p for p in plan.noise}
    used: dict[str, int] = {}
    for m in trace_a.mechanisms:
        p = points.get(m.name)
        if p is None:
            report.problems.append(f"plan: mechanism {m.name!r} is not among the planned noise points {list(points)}")
            continue
        used[m.name] = used.get(m.name, 0) + 1
        if p.sensitivity is not None and (m.sensitivity is None or m.sensitivity > p.sensitivity * (1 + RTOL)):
            report.problems.append(f"plan: mechanism {m.name!r} declared sensitivity {m.sensitivity}, above the "
                                   f"planned {p.sensitivity:.4g}")
    for name, k in used.items():
        if k > points[name].count:
            report.problems.append(f"plan: {k} releases at {name!r}, more than the planned {points[name].count}")


def _check_composition(report: ReplayReport, trace_a: Any, cert: Any) -> None:
    """(e) a composed certificate (``constants["train_rho"]``, the Renyi slope of the noisy steps it counts)
    must count every mechanism at which the worlds differ: the slope of those, at their declared sensitivity,
    is at most the declared one."""
    declared = (cert.constants or {}).get("train_rho") if cert is not None else None
    if declared is None:
        return
    moved = [(m, r) for m, r in zip(trace_a.mechanisms, report.rows) if r["distance"] > 0 and m.sigma > 0]
    need = sum((m.sensitivity or math.inf) ** 2 / (2 * m.sigma ** 2) for m, _ in moved)
    measured = sum(r["distance"] ** 2 / (2 * m.sigma ** 2) for m, r in moved)
    report.composition = {"mechanisms_that_moved": len(moved), "rho_counted": need, "rho_declared": float(declared),
                          "rho_measured": measured}
    if need > float(declared) * (1 + RTOL) + 1e-15:
        report.problems.append(f"composition: {len(moved)} mechanisms moved between the worlds, a Renyi slope of "
                               f"{need:.4g} at their declared sensitivities, above the {float(declared):.4g} the "
                               "certificate composes")


def replay_table(*, seeds=(0,), methods: Optional[tuple[str, ...]] = None) -> list[dict[str, Any]]:
    """:func:`replay` over every recipe's profiles (``methods``: a subset) and ``seeds``: summary rows."""
    rows = []
    for name, (profiles, _) in REPLAYS.items():
        if methods is not None and name not in methods:
            continue
        for profile in profiles:
            for seed in seeds:
                rows.append(replay(name, profile, seed=seed).summary())
    return rows


def honest_audit(method: str, profile: str = "quick", *, seed: int = 0, n_trials: int = 2000,
                 hooks: Optional[dict] = None, report: Optional[ReplayReport] = None) -> Any:
    """A sampled audit of ``method`` under the honest relation: world B is the pipeline re-run from raw data on
    D minus D_f (:func:`replay`'s two worlds), ``n_trials`` fresh noise draws of the release in each world.

    Both worlds' noise-free releases are fixed by the shared seeds (full-batch training, the polished Newton
    optimum), and the certificate holds for every such coupling, so drawing only the release noise afresh is
    a valid audit of it. Returns the :class:`~unlearnkit.audit.AuditResult` (``extras``: the replay's
    measured distance and the exact epsilon of the Gaussian pair at that distance). Single-release recipes only.
    """
    from ...audit.run import audit_samples  # deferred: imports scipy.optimize

    check_int("n_trials", n_trials, low=20, high=MAX_TRIALS)
    rep = report if report is not None else replay(method, profile, seed=seed, hooks=hooks)
    if len(rep.trace_a.mechanisms) != 1 or len(rep.trace_b.mechanisms) != 1:
        raise ValueError(f"method={method!r}, profile={profile!r} releases {len(rep.trace_a.mechanisms)} "
                         "mechanisms: the honest audit covers single-release recipes")
    ma, mb = rep.trace_a.mechanisms[0], rep.trace_b.mechanisms[0]
    a, b = ma.value.double().reshape(1, -1), mb.value.double().reshape(1, -1)
    gen = make_generator(10_000 + seed)
    noise = torch.randn((2, n_trials, a.shape[1]), generator=gen, dtype=torch.float64, device=gen.device).cpu()
    cert = rep.certificate
    res = audit_samples(a + ma.sigma * noise[0], b + ma.sigma * noise[1], delta=cert.delta, epsilon=cert.epsilon,
                        label=f"{method} {profile}: D vs D minus D_f from raw data", mode=cert.mode)
    res.extras.update({"distance": rep.rows[0]["distance"], "sensitivity": rep.rows[0]["sensitivity"],
                       "epsilon_at_measured_shift": rep.rows[0]["epsilon_at_measured_shift"],
                       "replay_passed": rep.passed})
    return res
