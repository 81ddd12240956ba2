"""RR-DU (Lamri & Maniatakos): the backdoor experiments behind ``python -m unlearnkit run``."""

from __future__ import annotations

from typing import Optional

from ..methods.rrdu import _cli_result

__all__ = ["run_rrdu", "run_ddp", "run_dp_sgd_walk"]


def run_rrdu(*, profile: str, seed: int = 0, progress: bool = False, dataset: Optional[str] = None) -> dict:
    return _cli_result("rrdu", profile, seed, progress, dataset)


def run_ddp(*, profile: str, seed: int = 0, progress: bool = False, dataset: Optional[str] = None) -> dict:
    return _cli_result("ddp", profile, seed, progress, dataset)


def run_dp_sgd_walk(*, profile: str, seed: int = 0, progress: bool = False, dataset: Optional[str] = None) -> dict:
    return _cli_result("dp_sgd_walk", profile, seed, progress, dataset)
