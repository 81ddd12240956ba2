"""The certificate every certified unlearning method returns.

A certificate is a *claim*: the unlearned model is (epsilon, delta)-indistinguishable from retraining,
under stated assumptions (constants L, beta, mu, C0, ...), by a named theorem. unlearnkit keeps the paper's
claim (``mode="paper"``) apart from the one we can prove (``mode="sound"``); heuristics carry
``mode="none"`` and no certificate at all is ``None``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Optional

from .._validate import check_choice

__all__ = ["Certificate", "MODES"]

MODES = ("paper", "sound", "none")


@dataclass(frozen=True)
class Certificate:
    """An (epsilon, delta) unlearning guarantee and where it comes from.

    Attributes
    ----------
    epsilon, delta:
        The guarantee. ``epsilon = inf`` means "no guarantee" (e.g. constants only estimated).
    sigma:
        Standard deviation of the Gaussian noise that was added (``None`` if none).
    mechanism:
        What was privatised, e.g. ``"Gaussian output perturbation"``, ``"subsampled Gaussian (RDP)"``.
    source:
        The theorem or equation, e.g. ``"Mu & Klabjan 2025, Thm 3.3"``.
    mode:
        ``"paper"`` (the paper's formula as printed), ``"sound"`` (a bound we can prove) or ``"none"``
        (heuristic: the numbers are reported, not guaranteed).
    constants:
        The constants the bound assumed (``{"L": 1.0, "beta": 0.25, ...}``).
    note:
        One line a student should read (what the certificate does *not* cover, for example).
    """

    epsilon: float
    delta: float
    sigma: Optional[float] = None
    mechanism: str = ""
    source: str = ""
    mode: str = "sound"
    constants: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""

    def __post_init__(self) -> None:
        check_choice("mode", self.mode, MODES)
        if not (self.epsilon >= 0):
            raise ValueError(f"epsilon={self.epsilon!r} is out of range: expected epsilon in [0, inf]")
        if not (0 <= self.delta <= 1):
            raise ValueError(f"delta={self.delta!r} is out of range: expected delta in [0, 1]")
        if self.sigma is not None and not (self.sigma >= 0):
            raise ValueError(f"sigma={self.sigma!r} is out of range: expected sigma in [0, inf)")

    @property
    def certified(self) -> bool:
        """True when the certificate is a finite guarantee backed by a proof (paper or sound mode)."""
        return self.mode != "none" and math.isfinite(self.epsilon)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["constants"] = dict(self.constants)
        return d

    def __str__(self) -> str:
        sig = "-" if self.sigma is None else f"{self.sigma:.4g}"
        consts = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.constants.items())
        lines = [
            f"Certificate [{self.mode}]: ({self.epsilon:.4g}, {self.delta:.3g})-unlearning, sigma={sig}",
            f"  mechanism: {self.mechanism or '-'}",
            f"  source:    {self.source or '-'}",
        ]
        if consts:
            lines.append(f"  assumes:   {consts}")
        if self.note:
            lines.append(f"  note:      {self.note}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td></tr>"
            for k, v in [
                ("guarantee", f"({self.epsilon:.4g}, {self.delta:.3g})"),
                ("sigma", "-" if self.sigma is None else f"{self.sigma:.4g}"),
                ("mode", self.mode),
                ("mechanism", self.mechanism or "-"),
                ("source", self.source or "-"),
                ("assumes", ", ".join(f"{k}={v}" for k, v in self.constants.items()) or "-"),
                ("note", self.note or "-"),
            ]
        )
        return f"<table><caption style='text-align:left'><b>Certificate</b></caption>{rows}</table>"
