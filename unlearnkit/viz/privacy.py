"""Figures and explorers for notebook 02 (noise calibration): see the Gaussian mechanism, its privacy
profile, the Renyi curve of the subsampled Gaussian with three conversions, our accountant next to
dp_accounting, and a calibrator.

The figure builders are pure (numbers in, ``go.Figure`` out); the explorers wire sliders to them and redraw
their ``FigureWidget``s inside ``batch_update`` (every explorer keeps a fixed set of traces, so a redraw only
replaces x/y arrays). Everything an explorer shows is computed by :mod:`unlearnkit.privacy`; the sweeps and
the dp_accounting cross-check are run by :mod:`unlearnkit.experiments.labs.privacy`.
"""

from __future__ import annotations

import html
import math
from typing import Mapping, Sequence

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from .._validate import check_positive, check_probability
from ..experiments.labs.privacy import CALIBRATION_PLOT_ORDERS, calibration_sweep, renyi_comparison
from ..privacy import analytic_gaussian_sigma, classic_gaussian_sigma
from ..privacy.rdp import DEFAULT_ORDERS, rdp_to_dp
from ..privacy.gaussian import gaussian_delta
from ..privacy.rdp import epsilons_per_order, gaussian_rdp
from ._explorer import Explorer
from ._style import styled


_C = {"analytic": "#1f77b4", "classic": "#d62728", "ours": "#2ca02c", "dp_accounting": "#ff7f0e",
      "mironov": "#9467bd", "balle": "#1f77b4", "cks": "#2ca02c"}
#: the RDP curve of the same noise and steps without subsampling, drawn beside the subsampled one
NO_SUBSAMPLING = "same noise, no subsampling (q = 1)"
_C[NO_SUBSAMPLING] = "#7f7f7f"


# -- pure figure builders ---------------------------------------------------------------------------------

@styled
def gaussian_densities_figure(epsilon: float, delta: float, sensitivity: float = 1.0) -> go.Figure:
    """The mechanism's two output distributions, without (mean 0) and with (mean Delta) one person, for the
    analytic and the classic sigma; the title compares the two sigmas."""
    s_a = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    s_c = classic_gaussian_sigma(epsilon, delta, sensitivity, warn=False)
    span = 4.0 * max(s_a, s_c)
    x = np.linspace(-span, sensitivity + span, 400)
    fig = go.Figure()
    for name, s, dash in (("analytic", s_a, "solid"), ("classic", s_c, "dash")):
        for who, mu in (("without", 0.0), ("with", sensitivity)):
            y = np.exp(-((x - mu) ** 2) / (2 * s * s)) / (s * math.sqrt(2 * math.pi))
            fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=f"{name}: {who} the person",
                                     line=dict(color=_C[name], dash=dash, width=3 if who == "with" else 1.5)))
    valid = "valid" if gaussian_delta(epsilon, s_c, sensitivity) <= delta else "INVALID (under-noised)"
    fig.update_layout(
        title=f"sigma: analytic {s_a:.4g} vs classic {s_c:.4g} ({valid}{', eps >= 1' if epsilon >= 1 else ''})",
        xaxis_title="mechanism output", yaxis_title="density", height=360, margin=dict(l=50, r=10, t=50, b=40),
        legend=dict(orientation="h", y=-0.25))
    return fig


@styled
def privacy_profile_figure(sigmas: Mapping[str, float], sensitivity: float, target: tuple[float, float],
                           eps_max: float | None = None) -> go.Figure:
    """delta(epsilon) of the Gaussian mechanism for each named sigma (log scale, from three decades below the
    target's delta to 1), with the target point."""
    eps_t, delta_t = target
    eps_max = eps_max or max(3.0 * eps_t, 2.0)
    e = np.linspace(0.0, eps_max, 300)
    fig = go.Figure()
    for name, s in sigmas.items():
        d = np.maximum(gaussian_delta(e, s, sensitivity), 1e-300)
        fig.add_trace(go.Scatter(x=e, y=d, mode="lines", name=f"{name} (sigma={s:.3g})",
                                 line=dict(color=_C.get(name))))
    fig.add_trace(go.Scatter(x=[eps_t], y=[delta_t], mode="markers", name="target (eps, delta)",
                             marker=dict(size=12, symbol="x", color="black")))
    fig.update_layout(title="privacy profile delta(eps): the smallest delta at each eps",
                      xaxis_title="epsilon", yaxis_title="delta", yaxis_type="log", height=360,
                      yaxis_range=[math.floor(math.log10(delta_t)) - 3, 0], margin=dict(l=50, r=10, t=50, b=40))
    return fig


@styled
def rdp_curves_figure(orders: np.ndarray, curves: Mapping[str, np.ndarray]) -> go.Figure:
    """RDP curves rdp(alpha) on log-log axes (infinite entries dropped)."""
    fig = go.Figure()
    for name, c in curves.items():
        c = np.asarray(c, dtype=float)
        ok = np.isfinite(c) & (c > 0)
        fig.add_trace(go.Scatter(x=orders[ok], y=c[ok], mode="lines+markers", name=name, marker=dict(size=4),
                                 line=dict(color=_C.get(name))))
    fig.update_layout(title="Renyi DP curve of the composed mechanism", xaxis_title="order alpha",
                      yaxis_title="RDP epsilon(alpha)", xaxis_type="log", yaxis_type="log", height=360,
                      margin=dict(l=50, r=10, t=50, b=40))
    return fig


@styled
def conversions_figure(orders: np.ndarray, rdp: np.ndarray, delta: float) -> go.Figure:
    """epsilon obtained at each order by each conversion, with the best order marked (one marker each)."""
    fig = go.Figure()
    for m in ("mironov", "balle", "cks"):
        e = epsilons_per_order(orders, rdp, delta, m)
        ok = np.isfinite(e)
        fig.add_trace(go.Scatter(x=orders[ok], y=e[ok], mode="lines", name=m, line=dict(color=_C[m])))
    for m in ("mironov", "balle", "cks"):
        eps, a = rdp_to_dp(orders, rdp, delta, method=m, warn_edge=False)
        fig.add_trace(go.Scatter(x=[a], y=[eps], mode="markers", name=f"{m}: eps={eps:.4g} at alpha={a:g}",
                                 marker=dict(size=11, color=_C[m], symbol="diamond")))
    best = min(rdp_to_dp(orders, rdp, delta, method=m, warn_edge=False)[0] for m in ("mironov", "balle", "cks"))
    fig.update_layout(title=f"RDP -> (eps, {delta:.0e}): eps at each order", xaxis_title="order alpha",
                      yaxis_title="epsilon", xaxis_type="log", height=360, margin=dict(l=50, r=10, t=50, b=40),
                      yaxis_range=[0, max(4 * best, 1e-3)])
    return fig


@styled
def calibration_figure(sigmas: np.ndarray, eps: Mapping[str, np.ndarray], target: float,
                       chosen: Mapping[str, float]) -> go.Figure:
    """epsilon(sigma) for each conversion, the target line, and the calibrated sigmas."""
    fig = go.Figure()
    for name, e in eps.items():
        fig.add_trace(go.Scatter(x=sigmas, y=e, mode="lines", name=f"eps(sigma), {name}",
                                 line=dict(color=_C.get(name))))
    fig.add_trace(go.Scatter(x=[sigmas[0], sigmas[-1]], y=[target, target], mode="lines", name="target eps",
                             line=dict(color="black", dash="dot")))
    for name, s in chosen.items():
        fig.add_trace(go.Scatter(x=[s], y=[target], mode="markers", name=f"{name}: sigma={s:.4g}",
                                 marker=dict(size=12, color=_C.get(name), symbol="diamond")))
    fig.update_layout(title="calibration: the smallest sigma whose epsilon is at most the target",
                      xaxis_title="noise multiplier sigma", yaxis_title="epsilon", xaxis_type="log",
                      yaxis_type="log", height=360, margin=dict(l=50, r=10, t=50, b=40))
    return fig


# -- explorers ----------------------------------------------------------------------------------------------

def _sync(fw: go.FigureWidget, fig: go.Figure) -> None:
    """Copy a freshly built figure into a FigureWidget with the same number of traces, in one batch."""
    with fw.batch_update():
        for tr, new in zip(fw.data, fig.data):
            tr.x, tr.y, tr.name = new.x, new.y, new.name
        fw.layout.title.text = fig.layout.title.text
        if fig.layout.yaxis.range is not None:
            fw.layout.yaxis.range = fig.layout.yaxis.range


class GaussianExplorer(Explorer):
    """(a) + (b): drag epsilon, delta and the sensitivity; see sigma (classic vs analytic), the two output
    distributions and the privacy profile. ``log10_delta`` is a slider over the exponent."""

    def __init__(self, epsilon: float = 1.0, log10_delta: float = -5.0, sensitivity: float = 1.0) -> None:
        super().__init__()

        self.epsilon = W.FloatLogSlider(value=epsilon, base=10, min=-2, max=1.3, step=0.05, description="epsilon")
        self.log10_delta = W.FloatSlider(value=log10_delta, min=-12, max=-1, step=0.1, description="log10 delta")
        self.sensitivity = W.FloatLogSlider(value=sensitivity, base=10, min=-2, max=2, step=0.05,
                                            description="sensitivity")
        self.sigma_text = W.HTML()
        self.fig = go.FigureWidget(gaussian_densities_figure(epsilon, 10**log10_delta, sensitivity))
        self.profile = go.FigureWidget(privacy_profile_figure({"analytic": 1.0, "classic": 1.0}, 1.0, (1.0, 1e-5)))
        for w in (self.epsilon, self.log10_delta, self.sensitivity):
            self.observe(w)
        self._layout(W.HBox([self.epsilon, self.log10_delta, self.sensitivity]), self.sigma_text,
                     W.HBox([self.fig, self.profile]))
        self.refresh()

    def values(self) -> dict:
        eps = check_positive("epsilon", self.epsilon.value)
        delta = check_probability("delta", 10.0 ** self.log10_delta.value, allow_zero=False, allow_one=False)
        sens = check_positive("sensitivity", self.sensitivity.value)
        s_a = analytic_gaussian_sigma(eps, delta, sens)
        s_c = classic_gaussian_sigma(eps, delta, sens, warn=False)
        return {"epsilon": eps, "delta": delta, "sensitivity": sens, "sigma_analytic": s_a, "sigma_classic": s_c,
                "classic_delta": gaussian_delta(eps, s_c, sens)}

    def update(self) -> None:
        v = self.values()
        _sync(self.fig, gaussian_densities_figure(v["epsilon"], v["delta"], v["sensitivity"]))
        _sync(self.profile, privacy_profile_figure({"analytic": v["sigma_analytic"], "classic": v["sigma_classic"]},
                                                   v["sensitivity"], (v["epsilon"], v["delta"])))
        lie = v["classic_delta"] > v["delta"]
        self.sigma_text.value = (
            f"<b>analytic sigma</b> = {v['sigma_analytic']:.5g} &nbsp; <b>classic sigma</b> = "
            f"{v['sigma_classic']:.5g} &nbsp; (classic / analytic = {v['sigma_classic'] / v['sigma_analytic']:.3f}); "
            f"the classic sigma really gives delta = {v['classic_delta']:.3g}"
            + (" <span style='color:#a00'><b>&gt; target: the classic formula lies here</b></span>" if lie else ""))
        self.current = v


class RenyiExplorer(Explorer):
    """(c) + (d): the RDP curve of ``steps`` Poisson-subsampled Gaussian steps, its three conversions with the
    best order marked, and dp_accounting's curve and epsilon on the same grid, live. Beside it, the curve of
    the same noise and steps without subsampling (q = 1), and a sentence with both epsilons: what
    subsampling buys, drawn."""

    def __init__(self, q: float = 0.04, sigma: float = 1.5, steps: int = 2250, log10_delta: float = -5.0,
                 orders: Sequence[float] = DEFAULT_ORDERS) -> None:
        super().__init__()

        self.orders = np.asarray(orders, dtype=float)
        self.q = W.FloatLogSlider(value=q, base=10, min=-4, max=0, step=0.05, description="q")
        self.sigma = W.FloatLogSlider(value=sigma, base=10, min=-0.5, max=1.5, step=0.05, description="sigma")
        self.steps = W.IntSlider(value=steps, min=1, max=20000, step=1, description="steps")
        self.log10_delta = W.FloatSlider(value=log10_delta, min=-12, max=-1, step=0.1, description="log10 delta")
        self.table = W.HTML()
        placeholder = {"ours": self.orders, "dp_accounting": self.orders, NO_SUBSAMPLING: self.orders}
        self.lesson = W.HTML()
        self.curve_fig = go.FigureWidget(rdp_curves_figure(self.orders, placeholder))
        r0 = self.orders * 0.01
        self.conv_fig = go.FigureWidget(conversions_figure(self.orders, r0, 1e-5))
        for w in (self.q, self.sigma, self.steps, self.log10_delta):
            self.observe(w)
        self._layout(W.HBox([self.q, self.sigma]), W.HBox([self.steps, self.log10_delta]), self.table,
                     self.lesson, W.HBox([self.curve_fig, self.conv_fig]))
        self.refresh()

    def compute(self) -> dict:
        q = check_probability("q", self.q.value, allow_zero=False)
        sigma = check_positive("sigma", self.sigma.value)
        steps = int(self.steps.value)
        if steps < 1:
            raise ValueError(f"steps={steps!r} is out of range: expected steps in [1, inf)")
        delta = check_probability("delta", 10.0 ** self.log10_delta.value, allow_zero=False, allow_one=False)
        return renyi_comparison(q, sigma, steps, delta, self.orders)

    def update(self) -> None:
        v = self.compute()
        lib = v["rdp_dp_accounting"]
        # without dp_accounting its trace stays empty and says why: never our curve under its name
        second = ("dp_accounting", lib) if lib is not None else \
            ("dp_accounting (not installed)", np.full_like(v["rdp"], np.nan))
        full = int(self.steps.value) * gaussian_rdp(float(self.sigma.value), self.orders)
        eps_full = rdp_to_dp(self.orders, full, v["delta"], warn_edge=False)[0]
        _sync(self.curve_fig, rdp_curves_figure(self.orders, {"ours": v["rdp"], second[0]: second[1],
                                                              NO_SUBSAMPLING: full}))
        v["epsilon_no_subsampling"] = eps_full
        self.lesson.value = (
            f"<b>Subsampling, drawn:</b> the same sigma and steps give epsilon = {v['cks'][0]:.3g} when each "
            f"step uses each record with probability q = {v['q']:g} (green) and {eps_full:.3g} when every step "
            f"uses every record (gray): a record that most steps never see is far better hidden.")
        _sync(self.conv_fig, conversions_figure(self.orders, v["rdp"], v["delta"]))
        rows = "".join(f"<tr><td>ours, {m}</td><td>{v[m][0]:.6g}</td><td>{v[m][1]:g}</td></tr>"
                       for m in ("mironov", "balle", "cks"))
        if lib is not None:
            ok = np.isfinite(lib) & (v["rdp"] > 0)
            gap = float(np.max(np.where(ok, lib / np.where(ok, v["rdp"], 1.0) - 1.0, 0.0)))
            rows += (f"<tr><td>dp_accounting (cks)</td><td>{v['dp_accounting'][0]:.6g}</td>"
                     f"<td>{v['dp_accounting'][1]:g}</td></tr>")
            note = f"largest relative excess of dp_accounting's curve over the exact one: {gap:.2e}"
        else:
            note = "dp_accounting is not installed: only our accountant is shown"
        self.table.value = (f"<table><tr><th>accountant</th><th>epsilon</th><th>best order</th></tr>{rows}</table>"
                            f"<small>{html.escape(note)}</small>")
        self.current = v


class CalibratorExplorer(Explorer):
    """(e): target (epsilon, delta), sampling rate q and steps -> the noise multiplier, never overshooting.

    The plotted eps(sigma) curves use the integer orders 2..64 (fast closed form); the marked sigmas are
    calibrated on the full :data:`DEFAULT_ORDERS` grid.
    """

    PLOT_ORDERS = CALIBRATION_PLOT_ORDERS

    def __init__(self, epsilon: float = 1.0, log10_delta: float = -5.0, q: float = 0.01, steps: int = 1000,
                 n_grid: int = 16) -> None:
        super().__init__()

        self.n_grid = n_grid
        self.epsilon = W.FloatLogSlider(value=epsilon, base=10, min=-1, max=1.3, step=0.05, description="target eps")
        self.log10_delta = W.FloatSlider(value=log10_delta, min=-12, max=-1, step=0.1, description="log10 delta")
        self.q = W.FloatLogSlider(value=q, base=10, min=-4, max=0, step=0.05, description="q")
        self.steps = W.IntSlider(value=steps, min=1, max=20000, description="steps")
        self.result = W.HTML()
        s = np.geomspace(0.3, 30, n_grid)
        self.fig = go.FigureWidget(calibration_figure(s, {"cks": s, "mironov": s}, 1.0, {"cks": 1.0, "mironov": 1.0}))
        for w in (self.epsilon, self.log10_delta, self.q, self.steps):
            self.observe(w)
        self._layout(W.HBox([self.epsilon, self.log10_delta]), W.HBox([self.q, self.steps]), self.result, self.fig)
        self.refresh()

    def compute(self) -> dict:
        eps = check_positive("target epsilon", self.epsilon.value)
        delta = check_probability("delta", 10.0 ** self.log10_delta.value, allow_zero=False, allow_one=False)
        q = check_probability("q", self.q.value, allow_zero=False)
        steps = int(self.steps.value)
        return calibration_sweep(eps, delta, q, steps, n_grid=self.n_grid, plot_orders=self.PLOT_ORDERS)

    def update(self) -> None:
        v = self.compute()
        _sync(self.fig, calibration_figure(v["grid"], v["curves"], v["epsilon"], v["sigma"]))
        self.result.value = "; ".join(
            f"<b>{m}</b>: sigma = {v['sigma'][m]:.5g} (achieves eps = {v['achieved'][m]:.5g} &le; {v['epsilon']:.4g})"
            for m in ("cks", "mironov"))
        self.current = v
