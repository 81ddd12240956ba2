"""Figures for privacy loss distributions and trade-off curves (pure builders: numbers in, ``go.Figure`` out).

- :func:`gdp_tradeoff_figure`: the type II error an adversary cannot beat, ``beta = G_mu(alpha)``, for a few
  Gaussian-family certificates (Dong, Roth & Su 2019), next to the diagonal ``1 - alpha`` of perfect privacy;
- :func:`pld_pmf_figure`: one direction of a :class:`unlearnkit.privacy.PLD`, its pessimistic and optimistic
  discretisations on one log axis, with the epsilon bracket in the title.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import plotly.graph_objects as go

from ..privacy import PLD, gdp_tradeoff
from ..privacy.pld import PLD_DIRECTIONS
from .._validate import check_choice, check_delta, check_int
from ._style import styled

__all__ = ["gdp_tradeoff_figure", "pld_pmf_figure"]


@styled
def gdp_tradeoff_figure(mus: Mapping[str, float], *, points: int = 201) -> go.Figure:
    """Trade-off curves ``beta = Phi(Phi^{-1}(1 - alpha) - mu)`` for named ``mu`` values (e.g. certificates)."""
    points = check_int("points", points, low=3)
    alpha = np.linspace(0.0, 1.0, points)
    fig = go.Figure(go.Scatter(x=alpha, y=1.0 - alpha, mode="lines", name="perfect privacy (mu = 0)",
                               line=dict(color="#7f7f7f", dash="dot")))
    for name, mu in mus.items():
        fig.add_trace(go.Scatter(x=alpha, y=gdp_tradeoff(mu, alpha), mode="lines", name=f"{name}: mu = {mu:.3g}"))
    fig.update_layout(title="The best test against a Gaussian certificate (GDP trade-off)",
                      xaxis_title="type I error alpha", yaxis_title="type II error beta", height=380,
                      margin=dict(l=50, r=10, t=50, b=40), legend=dict(orientation="h", y=-0.25))
    return fig


@styled
def pld_pmf_figure(pld: PLD, *, direction: str = "remove", delta: float = 1e-5) -> go.Figure:
    """The discretised privacy loss distribution of one direction, pessimistic and optimistic, on a log axis."""
    check_choice("direction", direction, PLD_DIRECTIONS)
    delta = check_delta("delta", delta)
    fig = go.Figure()
    for pessimistic, name, color in ((True, "pessimistic (connect the dots)", "#d62728"),
                                     (False, "optimistic (rounded down)", "#1f77b4")):
        pmf = pld.pmf(direction, pessimistic=pessimistic)
        ok = pmf.probs > 1e-30
        fig.add_trace(go.Scatter(x=pmf.losses[ok], y=pmf.probs[ok], mode="lines", name=name,
                                 line=dict(color=color)))
    b = pld.epsilon(delta)
    fig.update_layout(title=f"privacy loss ({direction}); epsilon at delta={delta:g} in [{b.lower:.4g}, "
                            f"{b.upper:.4g}]", xaxis_title="privacy loss", yaxis_title="mass per grid point",
                      yaxis_type="log", height=380, margin=dict(l=50, r=10, t=50, b=40),
                      legend=dict(orientation="h", y=-0.25))
    return fig
