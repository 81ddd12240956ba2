"""Newton/Fisher certified unlearning in decentralized FL (Wu et al. 2026): the experiments behind the CLI."""

from __future__ import annotations

from typing import Any

from ..methods.newton import run_newton_experiment

__all__ = ["run_newton"]


def run_newton(*, profile: str, seed: int, progress: bool, **kw: Any) -> dict[str, Any]:
    return run_newton_experiment(profile=profile, seed=seed, progress=progress, **kw)
