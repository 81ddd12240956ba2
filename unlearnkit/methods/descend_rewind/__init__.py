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

from ...runtime import lazy_exports

__all__ = [
    "R2D", "R2DConfig", "D2D", "D2DConfig",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "R2D": ".r2d", "R2DConfig": ".r2d", "D2D": ".d2d", "D2DConfig": ".d2d",
})
