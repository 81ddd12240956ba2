"""Noisy fine-tuning on the retain set, the unlearning algorithms of Koloskova et al. (ICML 2025).

Each method is a class with the package's one entry point, ``Method().unlearn(state, request, config, *,
generator, callback=None, progress=False) -> Result``; the config dataclass carries the target guarantee and
computes its :class:`~unlearnkit.core.Certificate` from the formulas of :mod:`.bounds`:

- :class:`GradientClipping` (eq. 3, Theorem 4.1 / A.9): ``x0 = clip(x_hat, C0)``, then
  ``x <- x - gamma (clip(g, C1) + lam x) + N(0, sigma^2 I)`` for ``T`` steps;
- :class:`ModelClipping` (eq. 4, Theorem 4.2): ``x <- clip(x - gamma (g + lam x), C2) + N(0, sigma^2 I)``;
- :class:`OutputPerturbation` (eq. 1): ``clip(x_hat, C0) + N(0, sigma0^2 I)``.

All three then run clean fine-tuning (:class:`~.finetune.CleanFinetuneConfig`), which is post-processing.
``Result.extras["noisy"]`` is the model right after the noisy phase (what the certificate covers).
A method may be built with ``eval_fn`` (``x -> dict`` of metrics) to record metrics at every noisy step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Optional

import torch

from ..._validate import (check_choice, check_epsilon, check_int, check_number, check_positive, check_probability,
                          check_range)
from ...core import Certificate, NoisePoint, Plan, Request, TrainedState, emit
from ...privacy.noise import gaussian_noise
from ...privacy.trace import noisy_release
from .bounds import (CALIBRATION_MODES, SOURCE, check_gc_constants, gc_epsilon, gc_rdp_slope, gc_sigma, mc_delta_trace, mc_steps,
                     op_sigma, paper_T, theta_eps)
from .gc_accountant import GC_ACCOUNTANTS, gc_accountant_sigma, gc_first_step_sensitivity, gc_pld_epsilon
from .finetune import CleanFinetuneConfig, NoisyFinetuneMethod, at_requested_delta, clip_to_ball, noisy_loop, start_point


EvalFn = Callable[[torch.Tensor], Mapping[str, float]]


@dataclass(frozen=True, kw_only=True)
class GradientClippingConfig:
    """Gradient clipping, eq. (3) / Theorem 4.1 / Theorem A.9.

    Attributes
    ----------
    epsilon, delta:
        Target guarantee.
    C0, C1:
        Initial model clip radius and gradient clip threshold (global L2 norms).
    gamma, lam:
        Step size and weight decay inside the noisy steps (``gamma * lam < 1``; lam is added *after* clipping).
    T:
        Noisy steps; ``None`` = the paper's rule :func:`paper_T`.
    mode:
        ``"paper"`` (the tables' sigma, certifies much less than claimed) or ``"sound"``.
    sigma:
        Use this noise instead of calibrating; the certificate reports the epsilon it certifies.
    batch_size:
        Retain minibatch size of the noisy steps.
    init:
        ``"model"`` (clip the trained model) or ``"zeros"``: the **noise-only re-initialisation** ablation
        (digest 004 pitfall 16) that replaces x_hat by 0 with everything else unchanged.
    finetune:
        The clean fine-tuning phase that follows.
    accountant:
        ``"rdp"`` (Theorem A.9's linear Renyi curve, the default) or ``"pld"``: the smaller of that epsilon and
        the first noisy step's exact Gaussian reading through its PLD (:mod:`.gc_accountant`; the later steps
        are post-processing), never larger; both are reported in the certificate's constants.
    pld_grid:
        The PLD's loss grid width (``"pld"`` only).
    """

    epsilon: float = 1.0
    delta: float = 1e-5
    C0: float = 1.0
    C1: float = 1.0
    gamma: float = 0.01
    lam: float = 0.0
    T: Optional[int] = None
    mode: str = "sound"
    sigma: Optional[float] = None
    batch_size: int = 32
    init: str = "model"
    finetune: CleanFinetuneConfig = CleanFinetuneConfig()
    accountant: str = "rdp"
    pld_grid: float = 1e-3

    def __post_init__(self) -> None:
        check_epsilon("epsilon", self.epsilon)
        check_probability("delta", self.delta, allow_zero=False, allow_one=False)
        check_gc_constants(self.C0, self.C1, self.gamma, self.lam, self.T)
        check_choice("accountant", self.accountant, GC_ACCOUNTANTS)
        check_range("pld_grid", self.pld_grid, 1e-6, 1.0)
        check_choice("mode", self.mode, CALIBRATION_MODES)
        if self.sigma is not None:
            check_positive("sigma", self.sigma)
        check_int("batch_size", self.batch_size, low=1)
        check_choice("init", self.init, ("model", "zeros"))

    @property
    def steps(self) -> int:
        return self.T if self.T is not None else paper_T(self.C0, self.C1, self.gamma, self.lam)

    def calibrated_sigma(self) -> float:
        if self.sigma is not None:
            return self.sigma
        rdp = gc_sigma(self.epsilon, self.delta, C0=self.C0, C1=self.C1, gamma=self.gamma, lam=self.lam,
                       T=self.steps, mode=self.mode)
        if self.mode == "paper" or self.accountant == "rdp":
            return rdp
        return gc_accountant_sigma(self.epsilon, self.delta, C0=self.C0, C1=self.C1, gamma=self.gamma, lam=self.lam,
                                   T=self.steps, accountant="pld", grid=self.pld_grid, sigma_hint=rdp)

    def certificate(self) -> Certificate:
        T, sigma = self.steps, self.calibrated_sigma()
        kw = dict(C0=self.C0, C1=self.C1, gamma=self.gamma, lam=self.lam, T=T)
        sound = gc_epsilon(sigma, self.delta, **kw, mode="sound")
        consts = {**kw, "rho": gc_rdp_slope(sigma, **kw), "sound_epsilon": sound}
        if self.accountant == "pld":  # both readings; the smaller certifies (the PLD's upper end on its side)
            first = gc_pld_epsilon(sigma, self.delta, C0=self.C0, C1=self.C1, gamma=self.gamma, lam=self.lam,
                                   grid=self.pld_grid)
            consts.update(accountant="pld", rdp_epsilon=sound, pld_upper=first.upper, pld_lower=first.lower,
                          first_step_sensitivity=gc_first_step_sensitivity(self.C0, self.C1, self.gamma, self.lam),
                          pld_grid=self.pld_grid)
            sound = consts["sound_epsilon"] = min(sound, first.upper)
        if self.mode == "paper":
            claimed = gc_epsilon(sigma, self.delta, **kw, mode="paper")
            return Certificate(epsilon=claimed, delta=self.delta, sigma=sigma, mode="paper",
                               mechanism="noisy clipped SGD, shifted Renyi (amplification by iteration)",
                               source=f"{SOURCE}, Thm 4.1 / Tables 5, 7 (code calibration)", constants=consts,
                               note=f"claimed eps {claimed:.3g}; Thm A.9 (D_q <= q rho) certifies only "
                                    f"({sound:.3g}, {self.delta:g})")
        if self.accountant == "pld":
            return Certificate(epsilon=sound, delta=self.delta, sigma=sigma, mode="sound",
                               mechanism="noisy clipped SGD: shifted Renyi or the first step's Gaussian (PLD)",
                               source=f"{SOURCE}, Thm A.9 + Balle et al. 2020 Thm 21; first step: Dong, Roth & Su "
                                      "2022 Cor. 2.13 + post-processing", constants=consts,
                               note="the smaller of Thm A.9's epsilon and the first noisy step's PLD upper end "
                                    "(steps 2..T post-process it)")
        return Certificate(epsilon=sound, delta=self.delta, sigma=sigma, mode="sound",
                           mechanism="noisy clipped SGD, shifted Renyi (amplification by iteration)",
                           source=f"{SOURCE}, Thm A.9 + Balle et al. 2020 Thm 21", constants=consts,
                           note="linear Renyi curve D_q <= q rho converted at its best order")


@dataclass(frozen=True, kw_only=True)
class ModelClippingConfig:
    """Model clipping, eq. (4) / Theorem 4.2.

    ``sigma`` is an *input* (as in the paper); ``T=None`` takes the fewest steps that reach ``(epsilon,
    delta)`` by the tight recursion (``tight=True``, reproduces Tables 6/8) or by eq. (10) (``tight=False``).
    ``C0``/``sigma0``: optional initial clip and noise (default none: ``delta_0 = 1``). The certificate's
    delta is the one ``T`` steps reach; above the requested ``delta`` it is not certified (``mode="none"``).
    """

    epsilon: float = 1.0
    delta: float = 1e-5
    C2: float = 1.0
    sigma: float = 1.0
    gamma: float = 0.01
    lam: float = 0.0
    T: Optional[int] = None
    tight: bool = True
    C0: float = math.inf
    sigma0: float = 0.0
    batch_size: int = 32
    init: str = "model"
    finetune: CleanFinetuneConfig = CleanFinetuneConfig()

    def __post_init__(self) -> None:
        check_epsilon("epsilon", self.epsilon)
        check_probability("delta", self.delta, allow_zero=False, allow_one=False)
        check_positive("C2", self.C2)
        check_positive("sigma", self.sigma)
        check_positive("gamma", self.gamma)
        check_positive("lam", self.lam, allow_zero=True)
        if self.T is not None:
            check_int("T", self.T, low=1)
        if not (check_number("C0", self.C0) > 0):
            raise ValueError(f"C0={self.C0!r} is out of range: expected C0 in (0, inf]")
        check_positive("sigma0", self.sigma0, allow_zero=True)
        check_int("batch_size", self.batch_size, low=1)
        check_choice("init", self.init, ("model", "zeros"))

    @property
    def steps(self) -> int:
        if self.T is not None:
            return self.T
        return max(1, mc_steps(self.epsilon, self.delta, C2=self.C2, sigma=self.sigma, C0=self.C0,
                               sigma0=self.sigma0, tight=self.tight))

    def certificate(self) -> Certificate:
        T = self.steps
        tr = mc_delta_trace(self.epsilon, C2=self.C2, sigma=self.sigma, T=T, C0=self.C0, sigma0=self.sigma0,
                            tight=self.tight)
        d = float(tr[-1])
        cert = Certificate(epsilon=self.epsilon, delta=min(max(d, 0.0), 1.0), sigma=self.sigma, mode="sound",
                           mechanism="noisy projected SGD, hockey-stick contraction",
                           source=f"{SOURCE}, Thm 4.2" + (" with Balle et al. 2019 Thm 1 (tight)" if self.tight
                                                          else " / Lemma A.2 as printed"),
                           constants={"C2": self.C2, "C0": self.C0, "sigma0": self.sigma0, "T": T,
                                      "theta": theta_eps(self.epsilon, 2 * self.C2 / self.sigma)},
                           note=f"delta after {T} steps = {d:.3g} (target {self.delta:g})")
        return at_requested_delta(cert, self.delta)


@dataclass(frozen=True, kw_only=True)
class OutputPerturbationConfig:
    """Output perturbation, eq. (1): ``clip(x_hat, C0) + N(0, sigma0^2 I)``, then fine-tuning."""

    epsilon: float = 1.0
    delta: float = 1e-5
    C0: float = 1.0
    mode: str = "sound"
    init: str = "model"
    finetune: CleanFinetuneConfig = CleanFinetuneConfig()

    def __post_init__(self) -> None:
        check_epsilon("epsilon", self.epsilon)
        check_probability("delta", self.delta, allow_zero=False, allow_one=False)
        check_positive("C0", self.C0)
        check_choice("mode", self.mode, CALIBRATION_MODES)
        check_choice("init", self.init, ("model", "zeros"))

    def certificate(self) -> Certificate:
        sigma = op_sigma(self.epsilon, self.delta, C0=self.C0, mode=self.mode)
        note = "classic Gaussian formula, proved for eps < 1 only" if self.mode == "paper" else "analytic Gaussian"
        return Certificate(epsilon=self.epsilon, delta=self.delta, sigma=sigma, mode=self.mode,
                           mechanism="Gaussian output perturbation, sensitivity 2 C0",
                           source=f"{SOURCE}, eq. (1)", constants={"C0": self.C0}, note=note)


def gc_coupled_distance(t: int, config: GradientClippingConfig) -> float:
    """The largest distance between gradient clipping's noise-free step ``t`` (1-based) in two runs that
    share batches and noise but start from different models: ``(1 - gamma lam)^t 2 C0 + 2 gamma C1 sum_{k<t}
    (1 - gamma lam)^k`` (both starts lie in the ball of radius C0; a clipped gradient moves by at most
    ``gamma C1``).

    Parameters
    ----------
    t : int
        The step, 1-based (``t = 0`` gives the starts' distance ``2 C0``).
    config : GradientClippingConfig
        Its ``C0``, ``C1``, ``gamma`` and ``lam``.

    Returns
    -------
    float
        The bound on ``||x_t - x_t'||`` before the step's noise; monotone in ``t`` (it tends to ``2 C1 / lam``
        when ``lam > 0``).

    References
    ----------
    .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
       ICML 2025, Lemma A.8 (one step moves two points at most ``|1 - lam gamma| ||x - x'|| + 2 gamma C``) and
       Theorem A.9 with its proof (``rho_t = 1 - gamma_t lam``, ``s_t = 2 gamma_t C1``, ``z_0 = 2 C0``).
    """
    q = 1.0 - config.gamma * config.lam
    shift = 2 * config.gamma * config.C1 * (t if q == 1.0 else (1 - q ** t) / (1 - q))
    return q ** t * 2 * config.C0 + shift


class GradientClipping(NoisyFinetuneMethod):
    """Unlearn by gradient clipping (eq. 3), then clean fine-tuning (Theorem 4.1 / Theorem A.9).

    Requests: samples or a class (centralized): the noisy phase reads only the retain set, so the certificate
    holds for any forget set.
    """

    name = "gradient_clipping"
    config_type = GradientClippingConfig

    def noisy_phase(self, state: TrainedState, request: Request, config: GradientClippingConfig, plan: Plan, *,
                    generator: torch.Generator, callback=None) -> tuple[torch.Tensor, list[dict], int]:
        """``x0 = clip(x_hat, C0)``; ``x <- x - gamma (clip(g, C1) + lam x) + N(0, sigma^2 I)`` for T steps.

        Each step draws fresh noise; ``g`` is the mean gradient of a retain minibatch (no per-example clipping
        needed). Same batches and noise in both worlds: the starts differ by at most 2 C0, each step contracts
        by (1 - gamma lam) and the clipped gradients add at most 2 gamma C1 (:func:`gc_coupled_distance`).
        """
        sigma, T = plan.certificate.sigma, config.steps
        gam, lam, C1 = config.gamma, config.lam, config.C1
        x0 = clip_to_ball(start_point(state, config.init), config.C0)
        return noisy_loop(state, request, x0, T, lambda x, g: x - gam * (clip_to_ball(g, C1) + lam * x),
                          config.batch_size, sigma, generator=generator, callback=callback, eval_fn=self.eval_fn,
                          tag="gc", sensitivity=lambda t: gc_coupled_distance(t + 1, config))

    def certify(self, state: TrainedState, request: Request, config: GradientClippingConfig) -> Plan:
        """The certificate (Theorem 4.1 / A.9 at ``config``) and the T noisy steps, each declared at most
        :func:`gc_coupled_distance` apart (the largest over the steps; it is monotone in t).

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : GradientClippingConfig
            The run's settings.

        Returns
        -------
        Plan
            The certificate and the noise point ``"noisy step"`` (``config.steps`` of them).

        References
        ----------
        .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
           ICML 2025, Theorem 4.1, eqs. (5)-(6) (and Theorem A.9 in Appendix A), for the iteration of eq. (3).
        """
        cert = config.certificate()
        worst = max(gc_coupled_distance(1, config), gc_coupled_distance(config.steps, config))
        return Plan(cert, (NoisePoint("noisy step", worst, float(cert.sigma or 0.0), count=config.steps),))


class ModelClipping(NoisyFinetuneMethod):
    """Unlearn by model clipping (eq. 4), then clean fine-tuning (Theorem 4.2).

    Requests: samples or a class (centralized): the noisy phase reads only the retain set, so the certificate
    holds for any forget set.
    """

    name = "model_clipping"
    config_type = ModelClippingConfig

    def noisy_phase(self, state: TrainedState, request: Request, config: ModelClippingConfig, plan: Plan, *,
                    generator: torch.Generator, callback=None) -> tuple[torch.Tensor, list[dict], int]:
        """``x <- clip(x - gamma (g + lam x), C2) + N(0, sigma^2 I)`` for T steps.

        ``x0 = clip(x_hat, C0) + N(0, sigma0^2 I)`` (no clip and no noise by default, as in every reported run).
        """
        T, gam, lam, C2 = config.steps, config.gamma, config.lam, config.C2
        x0 = start_point(state, config.init)
        if math.isfinite(config.C0):
            x0 = clip_to_ball(x0, config.C0)
        if config.sigma0 > 0:  # no draw without initial noise: keeps the random stream of the default runs
            x0 = x0 + gaussian_noise(x0, config.sigma0, generator)
        return noisy_loop(state, request, x0, T, lambda x, g: clip_to_ball(x - gam * (g + lam * x), C2),
                          config.batch_size, config.sigma, generator=generator, callback=callback,
                          eval_fn=self.eval_fn, tag="mc", sensitivity=lambda t: 2 * C2)

    def certify(self, state: TrainedState, request: Request, config: ModelClippingConfig) -> Plan:
        """The certificate (Theorem 4.2 at ``config``) and the T noisy steps, each inside the ball of radius
        C2, so at most 2 C2 apart.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : ModelClippingConfig
            The run's settings.

        Returns
        -------
        Plan
            The certificate and the noise point ``"noisy step"`` (``config.steps`` of them).

        References
        ----------
        .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
           ICML 2025, Theorem 4.2, for the iteration of eq. (4).
        """
        cert = config.certificate()
        return Plan(cert, (NoisePoint("noisy step", 2 * config.C2, float(config.sigma), count=config.steps),))


class OutputPerturbation(NoisyFinetuneMethod):
    """Output perturbation (eq. 1), then clean fine-tuning.

    Requests: samples or a class (centralized): the noisy phase reads only the retain set, so the certificate
    holds for any forget set.
    """

    name = "output_perturbation"
    config_type = OutputPerturbationConfig

    def noisy_phase(self, state: TrainedState, request: Request, config: OutputPerturbationConfig, plan: Plan, *,
                    generator: torch.Generator, callback=None) -> tuple[torch.Tensor, list[dict], int]:
        """``clip(x_hat, C0) + N(0, sigma0^2 I)`` with :func:`~.bounds.op_sigma`: one release, no gradient."""
        point = plan.point("output perturbation")
        x0 = clip_to_ball(start_point(state, config.init), config.C0)
        x = noisy_release(x0, plan.certificate.sigma, generator, name=point.name, sensitivity=point.sensitivity)
        z = x - x0
        rec = {"step": 1, "phase": 0.0, "noise_norm": float(z.norm()), "param_norm": float(x.norm())}
        if self.eval_fn is not None:
            rec.update(self.eval_fn(x))
        emit(callback, "noise", 1, noise_norm=rec["noise_norm"])
        return x, [rec], 0

    def certify(self, state: TrainedState, request: Request, config: OutputPerturbationConfig) -> Plan:
        """The certificate (the analytic Gaussian at ``config``) and the one release: two models clipped to
        C0 are at most 2 C0 apart.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : OutputPerturbationConfig
            The run's settings.

        Returns
        -------
        Plan
            The certificate and the noise point ``"output perturbation"``.

        References
        ----------
        .. [1] A. Koloskova, Y. Allouah, A. Jha, R. Guerraoui, S. Koyejo, "Certified Unlearning for Neural Networks",
           ICML 2025, eq. (1) (output perturbation of the clipped model).
        .. [2] B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration
           and Optimal Denoising", ICML 2018, Theorem 8.
        """
        cert = config.certificate()
        return Plan(cert, (NoisePoint("output perturbation", 2 * config.C0, float(cert.sigma or 0.0)),))
