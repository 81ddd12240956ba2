"""Descend or Rewind? (Mu & Klabjan 2025): the D2D and R2D experiments behind ``python -m unlearnkit run``."""

from __future__ import annotations

from typing import Optional

from .. import make_generator
from ..methods.d2d import D2D, D2DConfig
from ..methods.r2d import R2D, R2DConfig, central_profile, profile_constants
from .centralized import centralized_setup, run_centralized

__all__ = ["run_descend_rewind", "run_d2d", "run_r2d"]


def run_descend_rewind(method, make_config, *, profile: str, seed: int, progress: bool, **kw) -> dict:
    """Train on the profile, compute its constants, then unlearn with ``method`` and compare to retraining."""
    prof = central_profile(profile)
    state, request = centralized_setup(prof, seed=seed, progress=progress)
    c = profile_constants(profile, state, generator=make_generator(seed + 7))
    out = run_centralized(method, make_config(state, c, **kw), profile=prof, seed=seed, progress=progress,
                          setup=(state, request))
    out["profile"] = profile
    return out


def run_r2d(*, profile: str, seed: int, progress: bool, K: int = 100, epsilon: float = 1.0, delta: float = 1e-5,
            mode: str = "sound", **kw) -> dict:
    def make(state, c):
        return R2DConfig(K=K, epsilon=epsilon, delta=delta, constants=c, mode=mode)

    return run_descend_rewind(R2D(), make, profile=profile, seed=seed, progress=progress)


def run_d2d(*, profile: str, seed: int, progress: bool, K: int = 100, epsilon: Optional[float] = 1.0,
            delta: float = 1e-5, mode: str = "sound", **kw) -> dict:
    def make(state, c):
        if c.regime != "strongly_convex":
            return D2DConfig(K=K, epsilon=None)  # no D2D guarantee outside strong convexity: fine-tuning
        return D2DConfig(K=K, epsilon=epsilon, delta=delta, constants=c, mode=mode)

    return run_descend_rewind(D2D(), make, profile=profile, seed=seed, progress=progress)
