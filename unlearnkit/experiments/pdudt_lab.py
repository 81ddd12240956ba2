"""PDUDT (Qiao et al., ICML 2025): the experiments behind ``python -m unlearnkit run``."""

from __future__ import annotations

from typing import Any

from ..methods.pdudt import run_profile

__all__ = ["run_pdudt"]


def run_pdudt(*, profile: str = "quick", seed: int = 0, progress: bool = False, **overrides: Any) -> dict:
    return run_profile(profile=profile, seed=seed, progress=progress, **overrides)
