"""Figures for privacy loss distributions and trade-off curves (pure builders: numbers in, ``go.Figure`` out).

- :func:`gdp_tradeoff_figure`: the type II error an adversary cannot beat, ``beta = G_mu(alpha)``, for a few
  Gaussian-family certificates (Dong, Roth & Su 2019), next to the diagonal ``1 - alpha`` of perfect privacy;
- :func:`tradeoff_audit_figure`: a certificate's trade-off curves (its GDP curve ``G_mu`` and, optionally, the
  weaker curve of its ``(epsilon, delta)`` pair) with an empirical audit's operating points and their joint
  confidence boxes on the same axes (:func:`audit_operating_points` reads them off an audit's result): what a
  certificate promises and what the audit saw;
- :func:`pld_pmf_figure`: one direction of a :class:`unlearnkit.privacy.PLD`, its pessimistic and optimistic
  discretisations on one log axis, with the epsilon bracket in the title.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np
import plotly.graph_objects as go

from ..privacy import PLD, dp_tradeoff, gdp_tradeoff
from ..privacy.tradeoff import OperatingPoints, tradeoff_operating_points
from ..privacy.pld import PLD_DIRECTIONS
from .._validate import check_choice, check_delta, check_int
from ._style import styled

__all__ = ["gdp_tradeoff_figure", "audit_operating_points", "tradeoff_audit_figure", "pld_pmf_figure"]


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


def audit_operating_points(result: Any, *, n_points: int = 12, alpha: Optional[float] = None) -> OperatingPoints:
    """The operating points of an audit (:class:`unlearnkit.audit.AuditResult`) in the trade-off plane.

    The held-out scores ``result.stat_b`` (world B, the certifier's: the record is out) and ``result.stat_a``
    (world A, the unlearned model) go to :func:`unlearnkit.privacy.tradeoff_operating_points`; its boxes hold
    jointly at ``1 - alpha`` (default: the audit's own ``alpha``).

    Parameters
    ----------
    result : AuditResult
        Any object with 1-D ``stat_a``, ``stat_b`` and ``alpha`` (an audit's held-out scores).
    n_points : int >= 1
        Thresholds tried.
    alpha : float in (0, 1), optional
        Joint miss probability of the boxes; ``None`` uses ``result.alpha``.

    Returns
    -------
    OperatingPoints
        FPR/FNR estimates and their simultaneous boxes.
    """
    for name in ("stat_a", "stat_b", "alpha"):
        if not hasattr(result, name):
            raise TypeError(f"result={type(result).__name__} has no {name!r}: expected an audit result "
                            "(unlearnkit.audit.AuditResult)")
    return tradeoff_operating_points(result.stat_b, result.stat_a, n_points=n_points,
                                     alpha=result.alpha if alpha is None else alpha)


@styled
def tradeoff_audit_figure(mus: Mapping[str, float], points: OperatingPoints, *,
                          dp: Optional[Mapping[str, tuple[float, float]]] = None, curve_points: int = 201,
                          log_axes: bool = False) -> go.Figure:
    """Trade-off curves of certificates with an audit's operating points and their joint boxes.

    Parameters
    ----------
    mus : mapping of str to float
        Named GDP parameters: each draws ``G_mu``.
    points : OperatingPoints
        From :func:`audit_operating_points` or :func:`unlearnkit.privacy.tradeoff_operating_points`.
    dp : mapping of str to (epsilon, delta), optional
        Named ``(epsilon, delta)`` certificates: each draws ``f_{epsilon, delta}`` (dashed).
    curve_points : int >= 3
        Points per curve.
    log_axes : bool
        Log-log axes (the low-FPR corner, where large epsilons live).

    Returns
    -------
    plotly.graph_objects.Figure
        The curves, the diagonal of perfect privacy and the points with their boxes (a red box lies entirely
        under the first GDP curve: a refutation).
    """
    curve_points = check_int("curve_points", curve_points, low=3)
    if not isinstance(points, OperatingPoints):
        raise TypeError(f"points={type(points).__name__} is not OperatingPoints: expected the result of "
                        "audit_operating_points or tradeoff_operating_points")
    alpha = np.geomspace(1e-4, 1.0, curve_points) if log_axes else np.linspace(0.0, 1.0, curve_points)
    fig = go.Figure(go.Scatter(x=alpha, y=1.0 - alpha, mode="lines", name="perfect privacy (mu = 0)",
                               line=dict(color="#7f7f7f", dash="dot")))
    for name, mu in mus.items():
        fig.add_trace(go.Scatter(x=alpha, y=gdp_tradeoff(mu, alpha), mode="lines", name=f"{name}: mu = {mu:.3g}"))
    for name, (eps, delta) in (dp or {}).items():
        fig.add_trace(go.Scatter(x=alpha, y=dp_tradeoff(eps, delta, alpha), mode="lines", line=dict(dash="dash"),
                                 name=f"{name}: ({eps:.3g}, {delta:.2g})-DP"))
    bad = (points.refutes(lambda a: gdp_tradeoff(next(iter(mus.values())), a)) if mus
           else np.zeros(points.fpr.size, bool))
    conf = f"{100 * (1 - points.alpha):.4g}%"
    for sel, name, color in ((~bad, f"audit tests, joint {conf} boxes", "#2ca02c"),
                             (bad, "box below the curve: refuted", "#d62728")):
        if not np.any(sel):
            continue
        fig.add_trace(go.Scatter(
            x=points.fpr[sel], y=points.fnr[sel], mode="markers", name=name, marker=dict(color=color, size=7),
            error_x=dict(type="data", symmetric=False, array=(points.fpr_high - points.fpr)[sel],
                         arrayminus=(points.fpr - points.fpr_low)[sel], color=color),
            error_y=dict(type="data", symmetric=False, array=(points.fnr_high - points.fnr)[sel],
                         arrayminus=(points.fnr - points.fnr_low)[sel], color=color)))
    fig.update_layout(title=f"What the certificate promises (curves) and what the audit saw (boxes); the audit "
                            f"refutes mu < {points.mu_lower:.3g}",
                      xaxis_title="type I error alpha (false positives)",
                      yaxis_title="type II error beta (false negatives)", height=420,
                      margin=dict(l=50, r=10, t=50, b=40), legend=dict(orientation="h", y=-0.25))
    if log_axes:
        fig.update_xaxes(type="log")
        fig.update_yaxes(type="log")
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
