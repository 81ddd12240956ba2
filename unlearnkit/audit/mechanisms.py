"""Mechanisms to audit: a world is ``sample(n, generator) -> (n, d)`` outputs with fresh randomness."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from .._validate import check_scale, check_probability
from ..privacy import analytic_gaussian_epsilon, analytic_gaussian_sigma
from ..privacy.noise import gaussian_noise


Mechanism = Callable[[int, torch.Generator], torch.Tensor]
"""A world to audit: ``sample(n, generator) -> (n, d)`` outputs, each drawn with fresh randomness."""


# --------------------------------------------------------------------------------------------------------
# Gaussian mechanism (the audit's own oracle)
# --------------------------------------------------------------------------------------------------------

def gaussian_epsilon(sensitivity: float, sigma: float, delta: float) -> float:
    """Exact epsilon of the Gaussian mechanism at ``delta`` (Balle & Wang 2018, Thm 8).

    With ``mu = sensitivity / sigma`` the mechanism is (eps, delta)-DP iff
    ``Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) <= delta``; solved here by bisection in log space.
    The audit's oracle is the privacy package's accountant,
    :func:`unlearnkit.privacy.analytic_gaussian_epsilon` (solved in log space to machine precision).
    """
    check_scale("sensitivity", sensitivity)
    check_scale("sigma", sigma)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    return float(analytic_gaussian_epsilon(sigma, delta, sensitivity))


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest sigma making the Gaussian mechanism (epsilon, delta)-DP (analytic calibration, Balle & Wang).

    This is :func:`unlearnkit.privacy.analytic_gaussian_sigma`, with the audit's argument order.
    """
    check_scale("sensitivity", sensitivity)
    check_scale("epsilon", epsilon)
    check_probability("delta", delta, allow_zero=False, allow_one=False)
    return float(analytic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=sensitivity))


@dataclass(frozen=True, kw_only=True)
class GaussianMechanism:
    """``center + N(0, sigma^2 I_d)``: the simplest thing a certificate can be about.

    Two of these with centres ``sensitivity`` apart are exactly the pair every output-perturbation
    certificate (D2D, R2D, Newton, PDUDT) reasons about: the unlearned model and the retrained one, each
    plus the same noise.
    """

    center: tuple[float, ...]
    sigma: float

    def __post_init__(self) -> None:
        check_scale("sigma", self.sigma)
        if len(self.center) == 0:
            raise ValueError("center=() is empty: give at least one coordinate")

    def __call__(self, n: int, generator: torch.Generator) -> torch.Tensor:
        c = torch.tensor(self.center, dtype=torch.float64, device=generator.device)
        return c + gaussian_noise(c, self.sigma, generator, shape=(n, c.numel()))


def per_trial(fn: Callable[[torch.Generator], torch.Tensor]) -> Mechanism:
    """Wrap a one-output mechanism ``fn(generator) -> (d,)`` (e.g. train, then unlearn) as a batched one.

    Each trial gets its own generator, seeded from the caller's generator, so trials are independent and
    the whole audit is reproducible from one seed.
    """

    def sample(n: int, generator: torch.Generator) -> torch.Tensor:
        seeds = torch.randint(0, 2**62, (n,), generator=generator, device=generator.device).tolist()
        outs = []
        for s in seeds:
            g = torch.Generator(device=generator.device)
            g.manual_seed(int(s))
            outs.append(torch.as_tensor(fn(g)).detach().reshape(-1).to("cpu", torch.float64))
        return torch.stack(outs)

    sample.__name__ = getattr(fn, "__name__", "per_trial")
    return sample
