"""Descent-to-Delete (D2D): keep descending from the final model on the retain set, then add noise.

Two certified versions, both for strongly convex losses only (D2D has **no** guarantee on convex or
nonconvex losses: it can stall at a stationary point; digest 003 section 3.5):

- **SGD-D2D** (Mu & Klabjan 2025, Theorem 4.10; digest 003 section 3.4). The seed lost the statement; we use
  the explicit *derived* second-moment bound of the digest (independent runs, with-replacement batches,
  ``eta <= 1/(2L)``): with ``q = 1 - eta mu``, ``R0^2 = 2 F0 / mu``, SGD noise ball ``N = 4 eta L F0 / (b mu)``
  and ``beta_m = (m / (n mu)) sqrt(2 L F0) (1 + sqrt(L/mu))``::

      E_T      = 2 (q^T R0^2 + N) + 2 beta_m^2
      Delta_2^2 = 2 (q^K E_T + N) + 2 (q^T R0^2 + N)

  then Lemma 4.4 (second moment). The floor ``2 q^T R0^2 + 4N`` does not vanish as K grows: the "constant
  term that cannot be eliminated" of the paper.
- **Projected SGD-D2D** [derived, :func:`.coverage.psgd_d2d_sensitivity`]: the bound above is for
  *unprojected* SGD (Gower et al.'s bound around the unconstrained minimiser); projected training uses the
  projected-SGD recursion ``E||w_{t+1} - w*||^2 <= (1 - 2 eta mu) E||w_t - w*||^2 + eta^2 G^2`` (Nemirovski,
  Juditsky, Lan & Shapiro 2009, Sec. 2.1) around the constrained minimiser instead. ``theorem="auto"`` picks it
  for projected minibatch training; ``"sgd_derived"`` on projected training is reported as not certified.
- **Full-batch D2D** (Neel, Roth & Sharifi-Malvajerdi, ALT 2021, perturbed projected GD). ``mode="paper"`` is
  the widely copied formula (peers.md A.4, ``descent-to-delete`` ``compute_sigma``; ``gamma = (L - mu)/(L + mu)``,
  ``M = G``) ``sigma = 4 sqrt(2) M gamma^I / (mu n (1 - gamma^I) (sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta))))``,
  scaled by ``m`` for a batch of m deletions (the formula is per single deletion). ``mode="sound"`` is our
  derived single-request bound: training ``T`` projected GD steps from a start in the ball of radius R, then
  ``I`` steps on ``D'``, against retraining ``T`` steps on ``D'``:
  ``||u - w'_T|| <= gamma^I (2R gamma^T + 2 G m / (mu n)) + 2R gamma^T`` (deterministic), analytic Gaussian.

Publishing modes (Neel et al.'s distinction, peers.md A.4): ``"imperfect"`` continues from the *secret*
un-noised state; ``"perfect"`` continues from the *published noisy* model, so no secret state exists. For
"perfect" the noise ``Z`` already added enters the sensitivity; we solve ``sigma = s * Delta(sigma)`` exactly
(second moment: ``E||Z||^2 = d sigma^2``; deterministic: a Gaussian norm tail ``||Z|| <= sigma (sqrt d +
sqrt(2 ln(1/delta_z)))`` except with probability ``delta_z``, charged to delta) [derived].

``epsilon=None`` gives **D2D without noise = the fine-tuning baseline** (no certificate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Optional, Sequence

import torch

from ..._validate import check_choice
from ...constants import NOT_CERTIFIED_NOTE
from ...core import Callback, Certificate, Cost, NoisePoint, Plan, Request, Result, Stopwatch, TrainedState, emit
from ...core import checked_unlearn
from ...models import project_l2_ball
from ...train import run_sgd
from .bounds import PAPER_NEEL, PAPER_SGD, descend_rewind_sigma, diameter_cap_sigma, gd_d2d_contraction, \
    gd_d2d_sensitivity, neel_initial_iterations, neel_sigma, sgd_d2d_sensitivity_derived
from .coverage import PAPER_PSGD_D2D, classic_range_note, coverage_problems, psgd_d2d_sensitivity
from .r2d import DescendRewindConfig, add_output_noise, declared_sensitivity, initial_norm


@dataclass(frozen=True, kw_only=True)
class D2DConfig(DescendRewindConfig):
    """How to unlearn with D2D.

    Attributes
    ----------
    K:
        Unlearning steps on the retain set, starting from the final model.
    epsilon, delta:
        Target; ``epsilon=None`` is noise-free fine-tuning (the uncertified baseline).
    constants:
        :class:`~unlearnkit.constants.Constants` (strongly convex regime required for a certificate).
    theorem:
        ``"auto"`` (``"neel"`` for full-batch training, ``"psgd"`` for projected minibatch training, else
        ``"sgd_derived"``), ``"psgd"`` (projected SGD-D2D, :func:`.coverage.psgd_d2d_sensitivity`),
        ``"sgd_derived"`` (unprojected SGD only), ``"neel"``.
    mode:
        ``"paper"`` or ``"sound"`` (see the module docstring).
    publish:
        ``"imperfect"`` (continue from the secret un-noised state) or ``"perfect"`` (from the noisy model).
    published_sigma:
        Noise that was on the published model (perfect mode); default: the same sigma (fixed point).
    """

    THEOREMS: ClassVar[tuple[str, ...]] = ("psgd", "sgd_derived", "neel")
    METHOD: ClassVar[str] = "D2D"

    publish: str = "imperfect"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("publish", self.publish, ("imperfect", "perfect"))


def _resolve_theorem(theorem: str, train_cfg) -> str:
    if theorem != "auto":
        return theorem
    if train_cfg.sampling == "full":
        return "neel"
    return "psgd" if math.isfinite(train_cfg.radius) else "sgd_derived"


def d2d_certificate(config: D2DConfig, train_cfg, *, m: int, n: int, d: int, init_norm: Optional[float] = None
                    ) -> tuple[float, Optional[Certificate]]:
    """sigma and certificate of a D2D run (``None`` certificate for the noise-free fine-tuning baseline).

    ``init_norm`` is ``||w0||`` of the training's initialisation (``None``: unknown, not certified). A
    training the bound does not describe (:func:`.coverage.coverage_problems`: weight decay other than the
    constants' lambda, start outside the ball or outside where ``F0`` holds, the unprojected SGD-D2D bound on
    projected training) gives ``mode="none"``, ``epsilon=inf`` and a note that says why.

    Parameters
    ----------
    config : D2DConfig
        The unlearning run (K, target, constants, theorem, mode, publish).
    train_cfg : object
        The training config (``sampling``, ``radius``, ``steps``, step size, batch size, ``weight_decay``).
    m : int
        Number of deleted samples (group size), ``>= 1``.
    n : int
        Training-set size.
    d : int
        Number of model parameters (the perfect-publishing condition uses it).
    init_norm : float, optional
        ``||w0||`` of the training's initialisation; ``None`` (unknown) fails the start checks.

    Returns
    -------
    tuple of (float, Certificate or None)
        The output-noise std and the certificate; ``(config.sigma or 0.0, None)`` when ``config.epsilon`` is
        ``None``.

    Raises
    ------
    ValueError
        When the regime is not strongly convex, the theorem does not match the training's sampling or projection,
        or the training/K are too short for the chosen theorem and publishing mode.

    References
    ----------
    Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Theorem 4.10 (derived substitute) and
    Lemma 4.4; Neel, Roth & Sharifi-Malvajerdi, "Descent-to-Delete" (ALT 2021), Theorem 3.1.
    """
    if config.epsilon is None:
        return (config.sigma or 0.0), None
    c = config.constants
    if c.regime != "strongly_convex":
        raise ValueError(f"constants.regime={c.regime!r}: D2D is only certified for strongly convex losses "
                         "(use R2D, or epsilon=None for the uncertified fine-tuning baseline)")
    theorem = _resolve_theorem(config.theorem, train_cfg)
    if theorem == "neel" and train_cfg.sampling != "full":
        raise ValueError(f"theorem='neel' is full-batch GD: train with sampling='full', got {train_cfg.sampling!r}")
    if theorem in ("neel", "psgd") and not math.isfinite(train_cfg.radius):
        raise ValueError(f"theorem={theorem!r} needs projected training: train with a finite radius")
    if theorem in ("neel", "psgd") and train_cfg.radius > c.radius:
        raise ValueError(f"radius={train_cfg.radius!r}: training projected on a larger ball than the constants "
                         f"hold on (constants.radius={c.radius!r})")
    problems = coverage_problems(c, train_cfg, init_norm=init_norm, uses_F0=theorem == "sgd_derived",
                                 needs_ball=theorem in ("neel", "psgd"))
    if theorem == "sgd_derived" and math.isfinite(train_cfg.radius):
        problems.append(f"the derived SGD-D2D bound (Thm 4.10 substitute) is for unprojected SGD, but training "
                        f"projected on radius={train_cfg.radius:g} (use theorem='psgd', the projected-SGD bound)")
    r0 = min(init_norm or 0.0, train_cfg.radius)
    eps, delta = config.epsilon, config.delta
    T, eta, b = train_cfg.steps, train_cfg.lr, train_cfg.batch_size
    perfect = config.publish == "perfect"
    consts = {**c.as_dict(), "eta": eta, "T": T, "K": config.K, "m": m, "n": n, "publish": config.publish,
              "theorem": theorem, "train_weight_decay": train_cfg.weight_decay, "init_norm_used": init_norm}
    if theorem == "neel" and config.mode == "paper":
        if perfect:
            raise ValueError("publish='perfect' with mode='paper': Neel et al.'s perfect-unlearning iteration count "
                             "is not reproduced here; use mode='sound' (derived fixed point)")
        T0 = neel_initial_iterations(G=c.G, L=c.L, mu=c.mu, n=n, I=max(config.K, 1), radius=train_cfg.radius)
        if T < T0:
            raise ValueError(f"steps={T!r}: Neel et al.'s formula assumes at least T0={T0} training steps")
        sigma = neel_sigma(eps, delta, G=c.G, L=c.L, mu=c.mu, n=n, I=max(config.K, 1), m=m)
        source, provenance, kind, dsum = PAPER_NEEL, "paper (code formula, x m)", "zCDP Gaussian", math.nan
    elif theorem == "neel":
        delta_z = delta / 2 if perfect else 0.0
        unit = descend_rewind_sigma(1.0, eps, delta - delta_z, kind="deterministic", mode="sound")
        base = gd_d2d_sensitivity(G=c.G, L=c.L, mu=c.mu, eta=eta, radius=train_cfg.radius, T=T, I=config.K, m=m, n=n)
        slope = 0.0
        if perfect:  # Delta(sigma) = base + gamma^K sigma (sqrt d + sqrt(2 ln(1/delta_z)))
            slope = gd_d2d_contraction(eta, c.L, c.mu) ** config.K * (math.sqrt(d) + math.sqrt(2 * math.log(1 / delta_z)))
        if unit * slope >= 1:
            raise ValueError(f"K={config.K!r} is too small for publish='perfect': the published noise is not "
                             "contracted enough (need gamma^K * (sqrt d + ...) * sigma-per-unit < 1)")
        sigma = unit * base / (1.0 - unit * slope)
        dsum = base + slope * sigma
        source, provenance, kind = "full-batch projected GD-D2D, derived single-request bound", "derived", "deterministic"
    else:
        kind = "second"
        unit = descend_rewind_sigma(1.0, eps, delta, kind="second", mode=config.mode)
        if theorem == "psgd":
            base = psgd_d2d_sensitivity(G=c.G, mu=c.mu, eta=eta, radius=train_cfg.radius, T=T, K=config.K, m=m, n=n,
                                        init_norm=r0)
            q = (1.0 - 2.0 * eta * c.mu) ** config.K
        else:
            base = sgd_d2d_sensitivity_derived(L=c.L, mu=c.mu, F0=c.F0, eta=eta, b=b, T=T, K=config.K, m=m, n=n)
            q = (1.0 - eta * c.mu) ** config.K
        if perfect:  # Delta^2 = base^2 + 2 q^K d sigma^2
            coef = 2.0 * q * d
            if unit**2 * coef >= 1:
                raise ValueError(f"K={config.K!r} is too small for publish='perfect': 2 q^K d sigma-per-unit^2 >= 1")
            sigma = unit * base / math.sqrt(1.0 - unit**2 * coef)
            dsum = math.sqrt(base**2 + coef * sigma**2)
        else:
            sigma, dsum = unit * base, base
        source, provenance = (PAPER_PSGD_D2D if theorem == "psgd" else PAPER_SGD), "derived"
    capped = False
    if config.mode == "sound" and math.isfinite(train_cfg.radius) and config.sigma is None:
        # both outputs lie in the ball after projection, so ||u - w'|| <= 2R always (derived, digest 003 3.1)
        cap = diameter_cap_sigma(train_cfg.radius, eps, delta)
        capped, sigma = cap < sigma, min(sigma, cap)
    if train_cfg.sampling == "without_replacement":
        problems.insert(0, "batches without replacement: not certified")
    if not c.certified:
        problems.insert(0, NOT_CERTIFIED_NOTE)
    if problems:
        cert_mode, note = "none", "not certified: " + "; ".join(problems)
    else:
        cert_mode, note = config.mode, f"{provenance} bound ({theorem}), {config.publish} publishing" + (
            "; diameter cap 2R is the binding sensitivity" if capped else "")
        if kind != "zCDP Gaussian" and classic_range_note(config.mode, eps):
            note += "; " + classic_range_note(config.mode, eps)
    consts.update({"Delta": dsum, "moment": kind, "provenance": provenance})
    if config.sigma is not None:
        note += f"; sigma overridden to {config.sigma:g} (certificate is for the calibrated sigma {sigma:.4g})"
        cert_mode = "none" if config.sigma < sigma else cert_mode
        sigma = config.sigma
    return float(sigma), Certificate(epsilon=eps if cert_mode != "none" else math.inf, delta=delta,
                                     sigma=float(sigma), mechanism="Gaussian output noise", source=source,
                                     mode=cert_mode, constants=consts, note=note)


def d2d_plan(state: TrainedState, request: Request, config: D2DConfig) -> Plan:
    """D2D's certificate for ``request`` and its noise point ``"output noise"`` (before any work; the
    published model's noise under ``publish="perfect"`` is training's release, not this certificate's).

    Parameters
    ----------
    state : TrainedState
        The trained model; ``state.config`` must be its training config.
    request : Request
        What to forget.
    config : D2DConfig
        The unlearning run.

    Returns
    -------
    Plan
        The certificate of :func:`d2d_certificate` and one :class:`NoisePoint` ``"output noise"``.

    References
    ----------
    .. [1] S. Mu, D. Klabjan, "Descend or Rewind? Stochastic Gradient Descent Unlearning", arXiv 2511.15983, 2025,
       Theorem 4.10 (the derived substitute for it is the certificate) and Lemma 4.4 (the Gaussian noise for an expected
       sensitivity).
    .. [2] S. Neel, A. Roth, S. Sharifi-Malvajerdi, "Descent-to-Delete: Gradient-Based Methods for Machine Unlearning",
       ALT 2021, Theorem 3.1.
    """
    cfg = state.config
    if cfg is None:
        raise ValueError("state.config is None: D2D needs the training config (step size, batch size, radius)")
    n = len(state.train_indices)
    m = max(n - len(request.retain(state.train_indices)), 1)
    sigma, cert = d2d_certificate(config, cfg, m=m, n=n, d=state.params.numel(), init_norm=initial_norm(state))
    return Plan(cert, (NoisePoint("output noise", declared_sensitivity(cert, cfg.radius), float(sigma)),))


def _unlearn(state: TrainedState, request: Request, config: D2DConfig, *, generator: torch.Generator,
             callback: Optional[Callback] = None, progress: bool = False,
             published: Optional[torch.Tensor] = None, batches=None) -> Result:
    """SGD-D2D / GD-D2D (Algorithm 2b): K steps on the retain set from the final model, then noise.

    ``publish="perfect"`` starts from ``published`` (the noisy model that was released; drawn here with the
    same sigma when not given). ``batches`` (positions into the retain set) replaces the drawn minibatches,
    for coupled simulations. ``extras["noiseless"]`` holds the iterate before the final noise.
    """

    cfg = state.config
    retain = request.retain(state.train_indices)
    plan = d2d_plan(state, request, config)
    sigma, cert = plan.sigma or 0.0, plan.certificate
    with Stopwatch() as sw:
        start = state.params
        if config.publish == "perfect":
            start = published if published is not None else add_output_noise(state.params, sigma, generator)
            # projecting the published model is post-processing; the projected bounds need the start in the ball
            start = project_l2_ball(start, radius=cfg.radius)
        x, y = state.dataset.train_subset(retain)
        if config.K > 0:
            u, cost, hist = run_sgd(state.flat, start, x, y, replace(cfg, checkpoint_every=0), generator=generator,
                                    steps=config.K, start_step=cfg.steps, callback=callback, progress=progress,
                                    desc="D2D", batches=batches)
        else:
            u, cost, hist = start.clone(), Cost(), []
        out = add_output_noise(u, sigma, generator, sensitivity=plan.point("output noise").sensitivity)
    emit(callback, "noise", cfg.steps + config.K, sigma=sigma, noise_norm=float((out - u).norm()))
    return Result(params=out, certificate=cert, history=hist, cost=Cost(grad_evals=cost.grad_evals, seconds=sw.seconds),
                  extras={"noiseless": u, "sigma": sigma})


class D2D:
    """Descent-to-Delete: ``D2D().unlearn(state, request, D2DConfig(...), generator=g)``.

    Parameters
    ----------
    published:
        ``publish="perfect"`` only: the noisy model that was released, where unlearning starts. ``None``
        (default) draws it here from ``generator`` with the run's sigma.
    batches:
        For a coupled simulation (digest 003 Algorithm 6): the K minibatches to run, positions into the retain
        set, instead of batches drawn from ``generator``. ``None`` (default) draws them.

    Requests: samples or a class (centralized); the certificate covers any forget set of m samples (group size m).
    """

    name = "d2d"
    request_kinds = ("samples", "class")

    def __init__(self, *, published: Optional[torch.Tensor] = None, batches: Optional[Sequence[Any]] = None) -> None:
        self.published = published
        self.batches = batches

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: D2DConfig, *, generator: torch.Generator,
                callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Unlearn ``request`` from ``state`` (Algorithm 2b); ``extras["noiseless"]`` holds the iterate before noise.

        Parameters
        ----------
        state : TrainedState
            The trained model, with its training config.
        request : Request
            What to forget (samples or a class).
        config : D2DConfig
            The unlearning run.
        generator : torch.Generator
            Source of minibatches and noise.
        callback : Callback, optional
            Called during the descent.
        progress : bool, default False
            Show a progress bar.

        Returns
        -------
        Result
            The noisy unlearned model, its certificate (:func:`d2d_certificate`) and extras.

        References
        ----------
        Mu & Klabjan, "Descend or Rewind?" (arXiv 2511.15983, digest 003), Algorithm 2b.
        """
        return _unlearn(state, request, config, generator=generator, callback=callback, progress=progress,
                        published=self.published, batches=self.batches)

    def certify(self, state: TrainedState, request: Request, config: D2DConfig) -> Plan:
        """The certificate and noise point of :meth:`unlearn` (:func:`d2d_plan`), without a descent step.

        Parameters
        ----------
        state : TrainedState
            The trained model, with its training config.
        request : Request
            What to forget.
        config : D2DConfig
            The unlearning run.

        Returns
        -------
        Plan
            As :func:`d2d_plan`.

        References
        ----------
        .. [1] S. Mu, D. Klabjan, "Descend or Rewind? Stochastic Gradient Descent Unlearning", arXiv 2511.15983, 2025,
           Algorithm 2b (SGD-D2D), Theorem 4.10 (derived substitute) and Lemma 4.4.
        .. [2] S. Neel, A. Roth, S. Sharifi-Malvajerdi, "Descent-to-Delete: Gradient-Based Methods for Machine
           Unlearning", ALT 2021, Theorem 3.1.
        """
        return d2d_plan(state, request, config)
