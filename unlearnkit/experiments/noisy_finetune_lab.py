"""Certified Unlearning for Neural Networks (Koloskova et al. 2025): the experiments behind the CLI."""

from __future__ import annotations

from ..methods.noisy_finetune import (QUICK_FINETUNE, GradientClipping, GradientClippingConfig, ModelClipping,
                                      ModelClippingConfig, OutputPerturbation, OutputPerturbationConfig, _nf_run,
                                      dp_sgd_experiment)

__all__ = ["run_gradient_clipping", "run_model_clipping", "run_output_perturbation", "run_dp_sgd"]


def run_gradient_clipping(*, profile: str, seed: int, progress: bool, epsilon: float = 1.0, mode: str = "sound",
                          **kw) -> dict:
    cfg = GradientClippingConfig(epsilon=epsilon, delta=1e-5, C0=1.0, C1=0.1, gamma=0.1, lam=5.0, mode=mode,
                                 finetune=QUICK_FINETUNE)
    return _nf_run(GradientClipping(), cfg, profile=profile, seed=seed, progress=progress, ablation=True)


def run_model_clipping(*, profile: str, seed: int, progress: bool, epsilon: float = 1.0, **kw) -> dict:
    cfg = ModelClippingConfig(epsilon=epsilon, delta=1e-5, C2=0.1, sigma=0.1, gamma=0.1, lam=0.0,
                              finetune=QUICK_FINETUNE)
    return _nf_run(ModelClipping(), cfg, profile=profile, seed=seed, progress=progress, ablation=True)


def run_output_perturbation(*, profile: str, seed: int, progress: bool, epsilon: float = 1.0, mode: str = "sound",
                            **kw) -> dict:
    cfg = OutputPerturbationConfig(epsilon=epsilon, delta=1e-5, C0=0.1, mode=mode, finetune=QUICK_FINETUNE)
    return _nf_run(OutputPerturbation(), cfg, profile=profile, seed=seed, progress=progress)


def run_dp_sgd(*, profile: str, seed: int, progress: bool, epsilon: float = 50.0, mode: str = "sound", **kw) -> dict:
    return dp_sgd_experiment(profile=profile, seed=seed, epsilon=epsilon, mode=mode, progress=progress)
