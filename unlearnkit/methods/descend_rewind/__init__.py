"""Descend or Rewind? (Mu & Klabjan 2025): Descent-to-Delete (D2D) and Rewind-to-Delete (R2D).

- :mod:`.bounds`: the certificates as plain formulas (sensitivities of Theorems 4.5, 4.9, 4.10, Neel et al.'s
  full-batch D2D, Lemma 4.4's noise and its inverse, Corollary 4.6), shared by both methods.
- :mod:`.r2d`: :class:`R2DConfig`, :func:`r2d_certificate`, :class:`R2D` (Algorithm 2a).
- :mod:`.coverage`: what a certificate assumes about the training (weight decay = the constants' lambda,
  the start where ``F0`` holds and inside the ball, the bound matching the projection) and the projected
  SGD-D2D bound.
- :mod:`.d2d`: :class:`D2DConfig`, :func:`d2d_certificate`, :class:`D2D` (Algorithm 2b).

The experiments (profiles, sweeps, runners) live in :mod:`unlearnkit.experiments.descend_rewind.lab`.
"""

from .bounds import (
    DESCEND_REWIND_PAPER,
    PAPER_NEEL,
    PAPER_SGD,
    R2D_PROVENANCE,
    REGIMES,
    contraction_factor,
    descend_rewind_epsilon,
    descend_rewind_sigma,
    diameter_cap_sigma,
    gd_d2d_contraction,
    gd_d2d_sensitivity,
    gd_r2d_sensitivity,
    geometric_sum,
    k_for_sigma_sc,
    k_infinity,
    neel_initial_iterations,
    neel_sigma,
    psgd_r2d_sensitivity,
    r2d_sensitivity,
    r2d_sigma_curve,
    sgd_d2d_sensitivity_derived,
    sgd_r2d_sensitivity_derived,
)
from .coverage import coverage_problems, psgd_d2d_sensitivity
from .d2d import D2D, D2DConfig, d2d_certificate
from .r2d import R2D, R2DConfig, add_output_noise, initial_norm, r2d_certificate

__all__ = [
    "R2D", "R2DConfig", "r2d_certificate", "D2D", "D2DConfig", "d2d_certificate", "add_output_noise",
    "REGIMES", "DESCEND_REWIND_PAPER", "PAPER_SGD", "PAPER_NEEL", "R2D_PROVENANCE", "contraction_factor", "geometric_sum",
    "psgd_r2d_sensitivity", "sgd_r2d_sensitivity_derived", "gd_r2d_sensitivity", "r2d_sensitivity",
    "diameter_cap_sigma", "descend_rewind_sigma", "descend_rewind_epsilon", "r2d_sigma_curve", "k_for_sigma_sc",
    "k_infinity", "gd_d2d_contraction", "sgd_d2d_sensitivity_derived", "gd_d2d_sensitivity",
    "neel_initial_iterations", "neel_sigma", "coverage_problems", "psgd_d2d_sensitivity", "initial_norm",
]
