"""An audit recipe for every method of the registry, and the table that audits them all.

:data:`AUDIT_RECIPES` says, for every name of :data:`unlearnkit.experiments.registry.METHODS`, how its
certificate is audited: which two worlds (the method's output and its certifier's, each redrawn with fresh
training randomness in every trial), what the observer sees (named in words: the threat model), and in which
modes. :func:`audit_registry` runs them and returns one row per (method, mode) with the certified epsilon,
the audit's lower bound, a point estimate and a verdict.

The worlds are the ones the package already had, reused as they are:

- the centralized methods on :class:`~unlearnkit.experiments.audits.methods.ToyTask` (:data:`~unlearnkit.experiments.audits.methods.METHOD_RECIPES`; retrain
  and R2D through the batched worlds of :mod:`unlearnkit.experiments.audits.vectorised`, sample for sample the same as the
  sequential loop);
- RR-DU and DDP on the walk task of :mod:`unlearnkit.experiments.rrdu.audit` (RR-DU's observer is client 1's first received model
  after the request);
- Newton/Fisher on the ring of :mod:`unlearnkit.experiments.newton.audit` (the observer sees the average of the released models:
  the broadcast correction applied to the network average, with its noise);

plus the ones :mod:`unlearnkit.experiments.audits.worlds` adds (model clipping and DP-SGD on the toy task, DP-SGD on the walk, PDUDT
on a small gradient-gossip world).

**Modes.** ``"paper"`` tests the epsilon the paper's calibration *claims*, ``"sound"`` the package's sound
certificate; ``finetune`` and ``gradient_ascent`` have no certificate (mode ``"none"``: epsilon = inf) and
are audited once against exact retraining, so the lower bound shows how far they are from forgetting. A mode
a method cannot be audited in raises :class:`~unlearnkit.experiments.audits.methods.ModeNotSupported`; its row says why
(``verdict = "not supported: <reason>"``), it is never silently dropped.

**Statistics.** The lower bound is the package's valid default (``"cp_split"``: the threshold chosen on half
of the trials, Clopper-Pearson on the other half; no assumption beyond independent trials). The rows of one
call are reported together, so each audit runs at ``alpha / k`` (Bonferroni over the ``k`` rows audited):
all verdicts hold jointly with confidence ``1 - alpha``. The point estimate is the GDP-shape estimate on the
same held-out statistics (epsilon of the mu that the AUROC implies; it *assumes* a Gaussian trade-off curve
and carries no confidence). "refuted" means lower bound > the stated epsilon; "not refuted" is weak
evidence (a few hundred trials cannot show more than an epsilon of about 3: :mod:`unlearnkit.audit.ceiling`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Optional, Union

from . import worlds as W
from ..._validate import check_int, check_positive, check_probability
from ...audit import AuditConfig, audit
from ...audit.run import bonferroni
from ...audit.statistics import estimate
from .recipes import METHOD_RECIPES, ModeNotSupported, ToyTask, toy_setup, unlearner_worlds
from ...core import MAX_TRIALS
from ...methods.baselines import Finetune, FinetuneConfig, GradientAscent, GradientAscentConfig
from ...methods.newton import NewtonConfig
from ...runtime import make_generator
from ..newton.audit import EXACT_SETTING, NewtonAuditTask, newton_worlds
from ..registry import METHODS
from ..rrdu.audit import WalkAuditTask, ddp_worlds, rrdu_worlds
from .vectorised import vectorised_worlds


AUDIT_ROW_KEYS = ("method", "mode", "observer", "certified_epsilon", "lower_bound", "point_estimate", "verdict",
                  "n_trials", "statistic")
"""The keys of every row :func:`audit_registry` returns, in this order (the capstone table reads them)."""

REGISTRY_STATISTIC = "cp_split (Bonferroni over the rows); point: gdp-shape (assumes a Gaussian trade-off curve)"

# (world_a, world_b, claimed epsilon or None, delta of the claim)
Worlds = tuple[Callable[..., Any], Callable[..., Any], Optional[float], float]


@dataclass(frozen=True)
class AuditRecipe:
    """How one registered method is audited.

    Attributes
    ----------
    method:
        The registry name.
    observer:
        What the audit's adversary sees, in words (the threat model of the worlds).
    modes:
        The modes the method has: ``("paper", "sound")``, ``("sound",)`` or ``("none",)`` (no certificate).
    task:
        The world the trials run on, in words.
    build:
        ``build(mode, epsilon, delta) -> (world_a, world_b, claimed_epsilon, delta)``; per-trial mechanisms
        ``(n, generator) -> (n, d)``; ``claimed_epsilon`` is ``None`` when the mode states none. Raises
        :class:`ModeNotSupported` (with the reason) for a mode it cannot audit.
    vectorised:
        Whether the worlds draw a batch of trials at once (:mod:`unlearnkit.experiments.audits.vectorised`).
    """

    method: str
    observer: str
    modes: tuple[str, ...]
    task: str
    build: Callable[[str, float, float], Worlds]
    vectorised: bool = False


def _claim(cert: Any, default_delta: float) -> tuple[Optional[float], float]:
    """The epsilon a certificate states in its mode (``None``: it states none) and its delta."""
    if cert is None or cert.mode == "none" or not math.isfinite(float(cert.epsilon)):
        return None, default_delta
    d = float(cert.delta)
    return float(cert.epsilon), d if 0 < d < 1 else default_delta


def _toy(key: str) -> Callable[[str, float, float], Worlds]:
    """A :data:`METHOD_RECIPES` entry on the default :class:`ToyTask`, sequential trials."""
    def build(mode: str, epsilon: float, delta: float) -> Worlds:
        task = ToyTask()
        consts = toy_setup(task)[4]
        try:
            fn, cfg, certifier = METHOD_RECIPES[key](mode, epsilon, delta, task, consts)
        except ValueError as exc:  # a config that rejects the mode (ModeNotSupported is a ValueError too)
            if isinstance(exc, ModeNotSupported) or str(exc).startswith("mode="):
                raise ModeNotSupported(str(exc)) from exc
            raise
        wa, wb, cert = unlearner_worlds(fn, cfg, task, certifier=certifier)
        return (wa, wb, *_claim(cert, delta))
    return build


def _vectorised(key: str) -> Callable[[str, float, float], Worlds]:
    def build(mode: str, epsilon: float, delta: float) -> Worlds:
        wa, wb, cert = vectorised_worlds(key, mode, epsilon=epsilon, delta=delta)
        return (wa, wb, *_claim(cert, delta))
    return build


def _uncertified(kind: str) -> Callable[[str, float, float], Worlds]:
    """Fine-tuning or gradient ascent on the toy task against exact retraining (no certificate)."""
    def build(mode: str, epsilon: float, delta: float) -> Worlds:
        if mode != "none":
            raise ModeNotSupported(f"mode={mode!r}: {kind} has no certificate in any mode (audited as 'none')")
        task = ToyTask()
        if kind == "finetune":
            fn, cfg = Finetune().unlearn, FinetuneConfig(steps=task.steps // 2, lr=task.lr, batch_size=task.batch_size,
                                                         weight_decay=task.weight_decay)
        else:
            fn, cfg = GradientAscent().unlearn, GradientAscentConfig(max_steps=task.steps, lr=task.lr,
                                                                     batch_size=task.m)
        wa, wb, _ = unlearner_worlds(fn, cfg, task, certifier="retrain")
        return wa, wb, None, delta
    return build


def _from_worlds(maker: Callable[..., Any]) -> Callable[[str, float, float], Worlds]:
    """A world maker of :mod:`unlearnkit.experiments.audits.worlds`: ``maker(mode, epsilon, delta) -> (a, b, claimed, cert)``."""
    def build(mode: str, epsilon: float, delta: float) -> Worlds:
        wa, wb, claimed, cert = maker(mode, epsilon, delta)
        d = _claim(cert, delta)[1]
        return wa, wb, (claimed if cert is None or cert.mode != "none" else None), d
    return build


def _walk(kind: str) -> Callable[[str, float, float], Worlds]:
    """RR-DU (paper: noise-free start, accountant C; sound: noisy start, accountant S) or DDP (paper:
    Algorithm 3's calibration from the noise-free original; sound: noisy training, deletion = nothing)."""
    def build(mode: str, epsilon: float, delta: float) -> Worlds:
        if mode not in ("paper", "sound"):
            raise ModeNotSupported(f"mode={mode!r}: {kind} has a paper and a sound mode only")
        task = WalkAuditTask(epsilon=epsilon, delta=delta)
        if kind == "rrdu":
            wa, wb, claimed, cert = rrdu_worlds(task, noisy_start=mode == "sound")
        else:
            wa, wb, claimed, cert = (ddp_worlds(task, noisy=True) if mode == "sound"
                                     else ddp_worlds(task, calibration="alg3"))
        return wa, wb, float(claimed), task.delta
    return build


def _newton(mode: str, epsilon: float, delta: float) -> Worlds:
    """Newton/Fisher: paper = the printed calibration (eq. 10, classic Gaussian, noise shared 1/N; local
    scope); sound = the proved sensitivity with a public gradient bound ``grad_tol = 0.5`` and the exact
    global step. The observer sees the average of the released models (:func:`unlearnkit.experiments.newton.audit.newton_worlds`)."""

    if mode == "paper":
        cfg = NewtonConfig(mode="paper", epsilon=epsilon, delta=delta)
    elif mode == "sound":
        cfg = NewtonConfig(mode="sound", grad_tol=0.5, epsilon=epsilon, delta=delta, **EXACT_SETTING)
    else:
        raise ModeNotSupported(f"mode={mode!r}: Newton has a paper and a sound mode only")
    wa, wb, cert, _ = newton_worlds(cfg, NewtonAuditTask(), observe="average")
    return (wa, wb, *_claim(cert, delta))


def _recipes() -> dict[str, AuditRecipe]:
    toy = "ToyTask: logistic regression, 60 points in 2-D, 6 flipped labels forgotten"
    walk = "WalkAuditTask: 4 clients x 50 points, 45 flipped labels of client 0 forgotten"
    released = "the released model (parameters after unlearning)"
    rows = [
        AuditRecipe("retrain", released, ("sound",), toy, _vectorised("retrain"), True),
        AuditRecipe("finetune", released + ", against exact retraining", ("none",), toy, _uncertified("finetune")),
        AuditRecipe("gradient_ascent", released + ", against exact retraining", ("none",), toy,
                    _uncertified("gradient ascent")),
        AuditRecipe("d2d", released, ("paper", "sound"), toy, _toy("d2d")),
        AuditRecipe("r2d", released, ("paper", "sound"), toy, _vectorised("r2d"), True),
        AuditRecipe("gradient_clipping", released + " (no clean fine-tuning)", ("paper", "sound"), toy,
                    _toy("noisy_finetune_gc")),
        AuditRecipe("model_clipping", released + " (no clean fine-tuning)", ("paper", "sound"), toy,
                    _from_worlds(W.model_clipping_worlds)),
        AuditRecipe("output_perturbation", released + " (no clean fine-tuning)", ("paper", "sound"), toy,
                    _toy("output_perturbation")),
        AuditRecipe("dp_sgd", "the final model (DP-SGD on D; the deletion itself is free)", ("paper", "sound"),
                    toy, _from_worlds(W.dp_sgd_worlds)),
        AuditRecipe("rrdu", "the messages client 1 receives: its first received model after the request",
                    ("paper", "sound"), walk, _walk("rrdu")),
        AuditRecipe("ddp", "the final model of the deletion walk", ("paper", "sound"), walk, _walk("ddp")),
        AuditRecipe("dp_sgd_walk", "the final model of the DP-SGD walk", ("paper", "sound"), walk,
                    _from_worlds(W.dp_sgd_walk_worlds)),
        AuditRecipe("newton", "the average of the released models (network average + broadcast correction + "
                    "noise)", ("paper", "sound"), "NewtonAuditTask: 4 clients on a ring, 6 flipped labels of "
                    "client 0 forgotten", _newton),
        AuditRecipe("pdudt", "the final released model (average of the remaining clients' models)",
                    ("paper", "sound"), "PDUDTAuditTask: 4 clients, gradient gossip on Erdos-Renyi graphs, "
                    "the label-flipped client 0 leaves", _from_worlds(W.pdudt_worlds)),
    ]
    return {r.method: r for r in rows}


AUDIT_RECIPES: dict[str, AuditRecipe] = _recipes()
"""One :class:`AuditRecipe` per name of :data:`unlearnkit.experiments.registry.METHODS` (a test enumerates it)."""


def _row(recipe: AuditRecipe, mode: str, **values: Any) -> dict[str, Any]:
    row = dict(method=recipe.method, mode=mode, observer=recipe.observer, certified_epsilon=math.inf,
               lower_bound=math.nan, point_estimate=math.nan, verdict="", n_trials=0, statistic=REGISTRY_STATISTIC)
    row.update(values)
    return {k: row[k] for k in AUDIT_ROW_KEYS}


def _plan(methods, modes, epsilon, delta):
    """Build every (method, mode)'s worlds; modes that cannot be audited become finished rows."""
    planned, rows = [], []
    for name in methods:
        recipe = AUDIT_RECIPES[name]
        wanted = ("none",) if recipe.modes == ("none",) else modes
        for mode in wanted:
            try:
                wa, wb, claimed, d = recipe.build(mode, epsilon, delta)
            except ModeNotSupported as exc:
                rows.append(_row(recipe, mode, verdict=f"not supported: {exc}"))
                continue
            planned.append((len(rows), recipe, mode, wa, wb, claimed, d))
            rows.append(None)
    return planned, rows


def run_registry_audits(methods=None, modes=("paper", "sound"), n_trials: Union[int, Mapping[str, int]] = 100,
                        epsilon: float = 1.0, delta: float = 1e-5, seed: int = 0, alpha: float = 0.05,
                        progress: bool = False) -> tuple[list[dict[str, Any]], list[float]]:
    """:func:`audit_registry` plus the seconds each row took (0 for rows not audited)."""

    check_positive("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    names = tuple(s.name for s in METHODS) if methods is None else tuple(methods)
    for n in names:
        if n not in AUDIT_RECIPES:
            raise ValueError(f"method={n!r} has no audit recipe: expected one of {tuple(AUDIT_RECIPES)}")
    for mo in modes:
        if mo not in ("paper", "sound", "none"):
            raise ValueError(f"mode={mo!r} is not valid: expected 'paper', 'sound' or 'none'")
    trials = {n: int(n_trials[n] if isinstance(n_trials, Mapping) else n_trials) for n in names}
    for n, t in trials.items():
        check_int(f"n_trials[{n!r}]", t, low=20, high=MAX_TRIALS)
    planned, rows = _plan(names, modes, epsilon, delta)
    seconds = [0.0] * len(rows)
    if not planned:
        return rows, seconds
    per = bonferroni(AuditConfig(alpha=alpha), len(planned))
    gen = make_generator(seed)
    for i, recipe, mode, wa, wb, claimed, d in planned:
        t0 = time.perf_counter()
        res = audit(wa, wb, delta=d, epsilon=claimed, config=replace(per, n_trials=trials[recipe.method]),
                    generator=gen, label=recipe.method, mode=mode, progress=progress,
                    chunk=0 if recipe.vectorised else 25)
        point = math.nan  # the GDP estimate needs at least 20 held-out scores per world (n_trials >= 40)
        if min(res.stat_a.size, res.stat_b.size) >= 20:
            point = estimate(res.stat_a, res.stat_b, delta=d, method="gdp", alpha=per.alpha).epsilon_point
        if claimed is None:
            verdict = "no certificate"
        else:
            verdict = "refuted" if res.violation else "not refuted"
        seconds[i] = time.perf_counter() - t0
        rows[i] = _row(recipe, mode, certified_epsilon=math.inf if claimed is None else float(claimed),
                       lower_bound=float(res.epsilon_lower), point_estimate=float(point), verdict=verdict,
                       n_trials=trials[recipe.method])
        if progress:
            print(f"{recipe.method:>20} [{mode}] eps_lb={res.epsilon_lower:.3f} ({verdict}) {seconds[i]:.1f}s")
    return rows, seconds


def audit_registry(methods=None, modes=("paper", "sound"), n_trials: Union[int, Mapping[str, int]] = 100,
                   epsilon: float = 1.0, delta: float = 1e-5, seed: int = 0, progress: bool = False,
                   alpha: float = 0.05) -> list[dict[str, Any]]:
    """Audit every registered method (or ``methods``) in ``modes``; one row per (method, mode).

    Parameters
    ----------
    methods:
        Registry names (default: all of :data:`unlearnkit.experiments.registry.METHODS`, in its order).
    modes:
        Modes to audit; a method without a certificate is audited once in mode ``"none"`` whatever is asked.
    n_trials:
        Trials per world (at least 20), or a mapping ``{method: n_trials}`` (the walk worlds are ~10x slower
        than the toy task). The default keeps a CI run short, at the price of power.
    epsilon, delta:
        The target every method is calibrated to (what each mode then *states* may differ: a paper-mode
        claim, or a certificate's own delta).
    seed:
        Seeds the one generator all trials draw from, in row order.
    alpha:
        Family-wise level: each of the ``k`` audited rows runs at ``alpha / k``.

    Returns
    -------
    list of dict
        Keys :data:`AUDIT_ROW_KEYS`: ``certified_epsilon`` is the epsilon the mode's certificate states (the
        claim tested: a paper mode's claim is *not* a sound certificate) and ``math.inf`` when it states
        none; ``lower_bound`` and ``point_estimate`` are ``nan`` for a mode not supported (``point_estimate``
        also below 40 trials: the GDP estimate needs 20 held-out scores per world); ``verdict`` is
        ``"refuted"``, ``"not refuted"``, ``"no certificate"`` or ``"not supported: <reason>"``.
    """
    return run_registry_audits(methods, modes, n_trials, epsilon, delta, seed, alpha, progress)[0]
