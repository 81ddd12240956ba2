"""Checkers for the exercises of notebooks 03 (descend or rewind) and 04 (noisy fine-tuning)."""

from __future__ import annotations

from typing import Any

from ._common import needs_answer, as_number, verdict


#: Notebook 03's digits run trains T = 200 steps; its solution finds K = T (sigma below 1 only at full retraining).
R2D_STEPS = 200


def check_rewind_depth(answer: Any, *, steps: int = R2D_STEPS) -> bool:
    """Notebook 03, exercise: smallest rewind depth ``K`` whose uncapped first-moment sigma at ``(1, 1e-5)``
    drops below 1 on the digits constants.

    The right answer, ``K = T = 200`` (the whole training cost), is taken from the solution's loop: recomputing
    it needs the trained digits state and its constants, which the notebook has and a checker should not
    rebuild (the solution's loop gives 200 on the "psgd" profile, seed 0, in ~4 s). With ``eta mu = 0.004``
    the contraction per step is 0.996 and the Markov factor ``2/delta`` keeps sigma above 1 until the rewind
    is a full retraining.
    """
    if needs_answer(answer):
        return False
    k = as_number(answer, "K")
    if k is None:
        return False
    if k == steps:
        return verdict(True, f"K = {steps} = T: 100% of the training cost. With a contraction of 0.996 per step "
                              "and the Markov factor 2/delta = 2e5, R2D saves nothing under this certificate.")
    if 0 < k <= 1:
        return verdict(False, f"{k:g} looks like the fraction: answer K, the number of rewound steps "
                               f"(the fraction is K / {steps}).")
    if k < steps:
        return verdict(False, f"At K = {k:g} the uncapped sigma is still above 1: compute "
                               "dr.descend_rewind_sigma(d1, 1.0, 1e-5) at your K, and keep the loop going to T.")
    return verdict(False, f"K cannot exceed the T = {steps} training steps (rewinding past the start is retraining).")


def check_small_sigma_settings(answer: Any, *, d: int = 2410) -> bool:
    """Notebook 04, exercise: settings ``{"C0", "C1", "gamma", "lam", "T"}`` whose sound sigma at ``(1, 1e-5)``
    is below 0.02 with ``T <= 100``; recomputed with ``calibration_summary``, which also gives the noise norm
    for ``d`` parameters and the surviving signal ``C0 (1 - gamma lam)^T`` that the verdict compares.
    """
    if needs_answer(answer):
        return False
    keys = ("C0", "C1", "gamma", "lam", "T")
    try:
        vals = {k: float(answer[k]) for k in keys}
    except (KeyError, TypeError, ValueError, IndexError):
        print("Not yet. Pass a dict {'C0': ..., 'C1': ..., 'gamma': ..., 'lam': ..., 'T': ...} of numbers.")
        return False
    if vals["T"] > 100 or vals["T"] < 1 or vals["T"] != int(vals["T"]):
        return verdict(False, f"T = {answer['T']!r}: the exercise asks for a whole number of noisy steps, 1 to 100.")
    from ..experiments.noisy_finetune.lab import calibration_summary  # deferred: imports torch

    try:
        s = calibration_summary(1.0, 1e-5, C0=vals["C0"], C1=vals["C1"], gamma=vals["gamma"], lam=vals["lam"],
                                T=int(vals["T"]), d=d)
    except (ValueError, ArithmeticError) as err:
        return verdict(False, f"These settings are refused: {err}. Keep gamma*lam below 1 and all of them positive.")
    sigma = float(s["sigma_sound"])
    if sigma >= 0.02:
        return verdict(False, f"sound sigma = {sigma:.4f} >= 0.02. Small C1/lam is the lever: with lam > 0 the C0 "
                               "term decays like (1 - gamma lam)^T and sigma^2 tends to gamma C1^2 / (lam rho*).")
    return verdict(True, f"sound sigma = {sigma:.4f}; the noise norm is {s['noise_norm']:.3g} against a surviving "
                          f"signal of {s['signal_norm']:.3g} (C0 = {vals['C0']:g}): the noise dwarfs what is left "
                          "of the model, which is forgotten entirely, and every noisy step moves it by at most "
                          "gamma*C1.")
