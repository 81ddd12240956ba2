"""Figures for privacy loss distributions and trade-off curves (pure builders: numbers in, ``go.Figure`` out).

- :func:`gdp_tradeoff_figure`: the type II error an adversary cannot beat, ``beta = G_mu(alpha)``, for a few
  Gaussian-family certificates (Dong, Roth & Su 2019), next to the diagonal ``1 - alpha`` of perfect privacy;
- :func:`tradeoff_audit_figure`: a certificate's trade-off curves (its GDP curve ``G_mu`` and, optionally, the
  weaker curve of its ``(epsilon, delta)`` pair) with an empirical audit's operating points and their joint
  confidence boxes on the same axes (:func:`audit_operating_points` reads them off an audit's result): what a
  certificate promises and what the audit saw;
- :func:`pld_bracket_sweep` / :func:`pld_bracket_figure` / :class:`PLDBracketExplorer`: the PLD's epsilon
  bracket against the grid width, beside the RDP epsilon and (for ``q = 1``) the exact GDP value, with a slider
  for the grid: the bracket closes around the truth as the grid shrinks, RDP stays above it;
- :func:`pld_pmf_figure`: one direction of a :class:`unlearnkit.privacy.PLD`, its pessimistic and optimistic
  discretisations on one log axis, with the epsilon bracket in the title.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from ..privacy import PLD, dp_tradeoff, dpsgd_epsilon, gaussian_composition_epsilon, pld_epsilon
from ..privacy.tradeoff import gdp_tradeoff, pld_tradeoff
from ..privacy.tradeoff import OperatingPoints, tradeoff_operating_points
from ..privacy.pld import PLD_DIRECTIONS
from .._validate import check_choice, check_delta, check_int, check_probability, check_range, check_scale
from ._explorer import Explorer
from ._style import styled


#: grid widths of the bracket sweep (the explorer's slider reaches finer, one grid at a time)
SWEEP_GRIDS = tuple(10.0 ** np.arange(-1.0, -3.01, -0.5))


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
                          dp: Optional[Mapping[str, tuple[float, float]]] = None,
                          plds: Optional[Mapping[str, PLD]] = None, curve_points: int = 201,
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
    plds : mapping of str to PLD, optional
        Named composed PLDs: each draws the curve its certified profile promises
        (:func:`unlearnkit.privacy.pld_tradeoff`, dash-dot), e.g. DP-SGD's subsampled steps.
    curve_points : int >= 3
        Points per curve.
    log_axes : bool
        Log-log axes (the low-FPR corner, where large epsilons live).

    Returns
    -------
    plotly.graph_objects.Figure
        The curves, the diagonal of perfect privacy and the points with their boxes (a red box lies entirely
        under the first GDP curve, or the first PLD curve when there is none: a refutation).
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
    for name, pld in (plds or {}).items():
        fig.add_trace(go.Scatter(x=alpha, y=pld_tradeoff(pld, alpha), mode="lines", line=dict(dash="dashdot"),
                                 name=f"{name} (PLD profile)"))
    if mus:
        bad = points.refutes(lambda a: gdp_tradeoff(next(iter(mus.values())), a))
    elif plds:
        bad = points.refutes(lambda a: pld_tradeoff(next(iter(plds.values())), a))
    else:
        bad = np.zeros(points.fpr.size, bool)
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


def pld_bracket_sweep(q: float, sigma: float, steps: int, delta: float, *, grids=SWEEP_GRIDS) -> dict:
    """The PLD epsilon bracket at each grid width, the RDP epsilon and the exact value where one is known.

    Parameters
    ----------
    q : float in (0, 1]
        Sampling rate (``q = 1``: plain Gaussian steps, whose composition is exactly ``sqrt(steps)/sigma``-GDP).
    sigma : float in [1e-3, 1e6]
        Noise multiplier.
    steps : int >= 1
        Composed steps.
    delta : float in (0, 1)
        Target delta.
    grids : sequence of float in [1e-6, 1]
        Grid widths.

    Returns
    -------
    dict
        ``{"grids", "lower", "upper"}`` (arrays), ``"rdp"`` (the RDP accountant's epsilon) and ``"exact"``
        (the GDP value for ``q = 1``, else ``None``).
    """
    q = check_probability("q", q, allow_zero=False)
    sigma = check_scale("sigma", sigma, low=1e-3, high=1e6)
    steps = check_int("steps", steps, low=1, high=10**6)
    delta = check_delta("delta", delta)
    g = np.asarray([check_range("grid", float(h), 1e-6, 1.0) for h in grids])
    brackets = [pld_epsilon(q, sigma, steps, delta, grid=float(h)) for h in g]
    exact = gaussian_composition_epsilon([np.sqrt(steps) / sigma], delta) if q == 1.0 else None
    return {"grids": g, "lower": np.array([b.lower for b in brackets]), "upper": np.array([b.upper for b in brackets]),
            "rdp": float(dpsgd_epsilon(sigma, q, steps, delta)), "exact": exact}


@styled
def pld_bracket_figure(sweep: Mapping[str, Any], current: Optional[tuple[float, float, float]] = None) -> go.Figure:
    """The bracket against the grid width (log axis), RDP and the exact value as levels, the current grid marked.

    Parameters
    ----------
    sweep : dict
        From :func:`pld_bracket_sweep`.
    current : (grid, lower, upper), optional
        One more bracket to mark (the explorer's slider).

    Returns
    -------
    plotly.graph_objects.Figure
        Five traces, always in this order: upper end, lower end, RDP, exact (empty without one), current grid.
    """
    g = np.asarray(sweep["grids"], dtype=float)
    ends = [g.min(), g.max()] if current is None else [min(g.min(), current[0]), max(g.max(), current[0])]
    exact = sweep["exact"]
    fig = go.Figure([
        go.Scatter(x=g, y=sweep["upper"], mode="lines+markers", name="PLD upper end (certifies)",
                   line=dict(color="#d62728")),
        go.Scatter(x=g, y=sweep["lower"], mode="lines+markers", name="PLD lower end", line=dict(color="#1f77b4")),
        go.Scatter(x=ends, y=[sweep["rdp"]] * 2, mode="lines", name=f"RDP: {sweep['rdp']:.4g}",
                   line=dict(color="#9467bd", dash="dash")),
        go.Scatter(x=ends if exact is not None else [], y=[exact] * 2 if exact is not None else [], mode="lines",
                   name="exact (GDP)" if exact is None else f"exact (GDP): {exact:.4g}",
                   line=dict(color="#2ca02c", dash="dot")),
        go.Scatter(x=[] if current is None else [current[0]] * 2, y=[] if current is None else list(current[1:]),
                   mode="lines+markers", name="this grid" if current is None else
                   f"grid {current[0]:.2g}: [{current[1]:.4g}, {current[2]:.4g}]",
                   line=dict(color="#000000", width=4), marker=dict(size=9, symbol="line-ew-open")),
    ])
    fig.update_layout(title="The PLD bracket closes as the grid shrinks; RDP stays above the truth",
                      xaxis_title="grid width h (value_discretization_interval)", yaxis_title="epsilon",
                      xaxis_type="log", xaxis_autorange="reversed", height=380, margin=dict(l=50, r=10, t=50, b=40),
                      legend=dict(orientation="h", y=-0.3))
    return fig


class PLDBracketExplorer(Explorer):
    """Slide the PLD's grid width and watch its epsilon bracket close around the truth, RDP above it.

    The sweep over :data:`SWEEP_GRIDS` is recomputed when ``q``, ``sigma``, ``steps`` or ``delta`` move; the
    grid slider (``log10_grid``, down to ``10^-3.5``) only recomputes its own bracket. ``current`` holds the
    last sweep and bracket (for checks).
    """

    def __init__(self, q: float = 1.0, sigma: float = 10.0, steps: int = 100, log10_delta: float = -5.0,
                 log10_grid: float = -2.0) -> None:
        super().__init__()

        self.log10_grid = W.FloatSlider(value=log10_grid, min=-3.5, max=-1.0, step=0.25, description="log10 grid")
        self.q = W.FloatLogSlider(value=q, base=10, min=-3, max=0, step=0.05, description="q")
        self.sigma = W.FloatLogSlider(value=sigma, base=10, min=-0.3, max=1.5, step=0.05, description="sigma")
        self.steps = W.IntSlider(value=steps, min=1, max=2000, description="steps")
        self.log10_delta = W.FloatSlider(value=log10_delta, min=-10, max=-2, step=0.5, description="log10 delta")
        self.result = W.HTML()
        self._sweep: Optional[dict] = None
        self.fig = go.FigureWidget(pld_bracket_figure(
            {"grids": np.array(SWEEP_GRIDS), "lower": np.zeros(len(SWEEP_GRIDS)), "upper": np.zeros(len(SWEEP_GRIDS)),
             "rdp": 0.0, "exact": None}))
        for w in (self.q, self.sigma, self.steps, self.log10_delta):
            self.observe(w, self._new_sweep)
        self.observe(self.log10_grid)
        self._layout(W.HBox([self.log10_grid, self.q]), W.HBox([self.sigma, self.steps, self.log10_delta]),
                     self.result, self.fig)
        self.guard(self._counted, self._new_sweep)

    def _new_sweep(self) -> None:
        self._sweep = None
        self.update()

    def update(self) -> None:
        delta = 10.0 ** self.log10_delta.value
        if self._sweep is None:
            self._sweep = pld_bracket_sweep(self.q.value, self.sigma.value, int(self.steps.value), delta)
        h = 10.0 ** self.log10_grid.value
        b = pld_epsilon(self.q.value, self.sigma.value, int(self.steps.value), delta, grid=h)
        new = pld_bracket_figure(self._sweep, (h, b.lower, b.upper))
        with self.fig.batch_update():
            for tr, nt in zip(self.fig.data, new.data):
                tr.x, tr.y, tr.name = nt.x, nt.y, nt.name
        exact = self._sweep["exact"]
        truth = "" if exact is None else f"; the truth {exact:.5g} is {'inside' if b.lower <= exact <= b.upper else 'OUTSIDE'}"
        self.result.value = (f"grid {h:.3g}: epsilon in <b>[{b.lower:.5g}, {b.upper:.5g}]</b> (width {b.width:.3g}; "
                             f"the upper end certifies); RDP {self._sweep['rdp']:.5g}{truth}")
        self.current = {"sweep": self._sweep, "grid": h, "bracket": b}
