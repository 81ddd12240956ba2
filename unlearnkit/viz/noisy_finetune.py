"""Figures and explorers for certified noisy fine-tuning (Koloskova et al. 2025; notebook 04).

- :class:`CalibrationExplorer`: sliders for epsilon, delta, C0, C1, C2, gamma, lambda, T and d, showing the
  table of :func:`unlearnkit.experiments.noisy_finetune.lab.calibration_summary`; sigma against T (paper and
  sound, the U-shape of eq. 7) and the model-clipping delta decay (tight against printed recursion).
- :func:`race_figure`: the curves of :func:`unlearnkit.experiments.noisy_finetune.lab.accuracy_race`
  (retraining against the noisy fine-tuning methods, test accuracy per epoch: the paper's Table 2 on our data).
- :func:`noisy_phase_figure`: a metric through the noisy phase and the clean fine-tuning after it.

The numbers come from the experiments (:mod:`unlearnkit.experiments.noisy_finetune.lab`) and the public
formulas of :mod:`unlearnkit.methods.noisy_finetune`; this module only draws.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..experiments.noisy_finetune.lab import calibration_summary
from ..methods import noisy_finetune as nf
from ._explorer import Explorer
from ._style import styled
from .bands import add_seed_band, per_seed, seeds_text
from .descend_rewind import TrajectoryExplorer


@styled
def nf_frontier_figure(fr: Mapping[str, Any], *, interval: str = "t95") -> go.Figure:
    """Released test accuracy and attack-success gap against epsilon, next to retraining and fine-tuning.

    Parameters
    ----------
    fr : mapping
        The result of ``experiments.noisy_finetune.lab.nf_frontier``: ``points`` (rows with ``method``,
        ``mode``, ``epsilon``, ``test_acc``, ``asr_gap``) and the references ``retrain`` and ``finetune``.
        A frontier run on several seeds (``nf_frontier(seeds=...)``) carries ``test_acc_seeds`` and
        ``asr_gap_seeds``: each line is then the mean over the seeds, with a band.
    interval : str
        What the band shows (:data:`unlearnkit.viz.bands.INTERVALS`): ``"t95"`` (95 % Student-t interval for
        the mean over seeds) or ``"minmax"``.

    Returns
    -------
    plotly.graph_objects.Figure
        Two panels on a log epsilon axis: one line per method and calibration mode (``sound`` solid,
        ``paper`` dotted) with its band over seeds (legend and hover name the interval and the seeds), the
        two references (their mean over seeds) as dashed horizontal lines.
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=("released test accuracy", "attack success minus retraining's"))
    for method, color in (("gradient_clipping", "#1f77b4"), ("output_perturbation", "#d62728")):
        for mode, dash in (("sound", "solid"), ("paper", "dot")):
            pts = [p for p in fr["points"] if p["method"] == method and p["mode"] == mode]
            if not pts:
                continue
            for col, key in ((1, "test_acc"), (2, "asr_gap")):
                add_seed_band(fig, [p["epsilon"] for p in pts], [per_seed(p, key) for p in pts],
                              name=f"{method} ({mode})", group=f"{method}{mode}", color=color, dash=dash,
                              interval=interval, showlegend=col == 1, row=1, col=col)
    for ref, color in (("retrain", "black"), ("finetune", "gray")):
        for col, key in ((1, "test_acc"), (2, "asr_gap")):
            fig.add_hline(y=fr[ref][key], line=dict(color=color, dash="dash"), row=1, col=col,
                          annotation_text=ref if col == 2 else None)
    seeds = fr.get("seeds") or [fr.get("seed", 0)]
    fig.update_xaxes(type="log", title="epsilon")
    fig.update_layout(height=400, title=f"noisy fine-tuning frontier: {seeds_text(seeds, interval)}")
    return fig


@styled
def sigma_t_figure(epsilon: float, delta: float, *, C0: float, C1: float, gamma: float, lam: float,
                   T_max: int = 200, T_mark: int | None = None) -> go.Figure:
    Ts = np.unique(np.linspace(1, T_max, min(T_max, 120)).astype(int))
    sound = [nf.bounds.gc_sigma(epsilon, delta, C0=C0, C1=C1, gamma=gamma, lam=lam, T=int(t)) for t in Ts]
    paper = [nf.bounds.gc_sigma(epsilon, delta, C0=C0, C1=C1, gamma=gamma, lam=lam, T=int(t), mode="paper") for t in Ts]
    fig = go.Figure()
    fig.add_scatter(x=Ts, y=sound, mode="lines", name="sound (Thm A.9 + Balle 2020)")
    fig.add_scatter(x=Ts, y=paper, mode="lines", name="paper (tables' code)", line={"dash": "dash"})
    if T_mark is not None:
        fig.add_vline(x=T_mark, line_dash="dot", annotation_text="T")
    fig.update_layout(title="noise per step against the number of noisy steps T", xaxis={"title": "T"},
                      yaxis={"type": "log", "title": "sigma"}, width=560, height=380)
    return fig


@styled
def mc_delta_figure(epsilon: float, delta: float, *, C2: float, sigma: float, T: int = 60) -> go.Figure:
    fig = go.Figure()
    for tight, name in ((True, "tight recursion (Balle 2019 Thm 1; the tables)"), (False, "Lemma A.2 as printed")):
        tr = nf.bounds.mc_delta_trace(epsilon, C2=C2, sigma=sigma, T=T, tight=tight)
        fig.add_scatter(x=np.arange(T + 1), y=np.log10(np.maximum(tr, 1e-300)), mode="lines", name=name)
    fig.add_hline(y=math.log10(delta), line_dash="dash", annotation_text="target delta")
    fig.update_layout(title=f"model clipping: delta after t steps (C2/sigma = {C2 / sigma:.3g})",
                      xaxis={"title": "t"}, yaxis={"title": "log10 delta_t", "range": [-12, 0.2]}, width=560,
                      height=380)
    return fig


@styled
def race_figure(curves: Mapping[str, Mapping[str, Sequence[float]]]) -> go.Figure:
    fig = go.Figure()
    for name, c in curves.items():
        fig.add_scatter(x=c["epoch"], y=c["test_acc"], mode="lines+markers", name=name)
    fig.update_layout(title="test accuracy against fine-tuning epochs on the retain set", xaxis={"title": "epochs"},
                      yaxis={"title": "test accuracy", "range": [0, 1]}, width=620, height=400)
    return fig


@styled
def noisy_phase_figure(history: Sequence[Mapping[str, float]], *, key: str = "test_acc") -> go.Figure:
    """Accuracy (or any recorded metric) through the noisy phase (shaded) and the clean fine-tuning after it."""
    xs = [h["step"] for h in history if key in h]
    ys = [h[key] for h in history if key in h]
    fig = go.Figure()
    fig.add_scatter(x=xs, y=ys, mode="lines+markers", name=key)
    noisy = [h["step"] for h in history if h.get("phase", 0) == 0]
    if noisy:
        fig.add_vrect(x0=0, x1=max(noisy), fillcolor="orange", opacity=0.15, annotation_text="noisy phase")
    fig.update_layout(title=f"{key} during unlearning", xaxis={"title": "step"}, yaxis={"title": key}, width=560,
                      height=360)
    return fig


class CalibrationExplorer(Explorer):
    """Sliders: epsilon, delta, C0, C1, C2, gamma, lambda, T (0 = paper's rule), d; live sigma and delta plots."""

    def __init__(self, *, d: int = 2410) -> None:
        super().__init__()

        F = dict(continuous_update=False, readout_format=".3g")
        self.eps = W.FloatLogSlider(value=1.0, base=10, min=-1.3, max=1.3, description="epsilon", **F)
        self.log_delta = W.FloatSlider(value=-5, min=-8, max=-2, step=0.5, description="log10 delta",
                                       continuous_update=False)
        self.C0 = W.FloatLogSlider(value=1.0, base=10, min=-2, max=1.5, description="C0", **F)
        self.C1 = W.FloatLogSlider(value=0.1, base=10, min=-2, max=2, description="C1", **F)
        self.C2 = W.FloatLogSlider(value=0.1, base=10, min=-3, max=1, description="C2", **F)
        self.sigma_mc = W.FloatLogSlider(value=0.1, base=10, min=-3, max=1, description="sigma (MC)", **F)
        self.gamma = W.FloatLogSlider(value=0.1, base=10, min=-4, max=0, description="gamma", **F)
        self.lam = W.FloatText(value=5.0, description="lambda")
        self.T = W.IntSlider(value=0, min=0, max=300, description="T (0=rule)", continuous_update=False)
        self.d = W.IntText(value=d, description="d")
        self.table = W.HTML()
        self.fig_sigma = go.FigureWidget()
        self.fig_mc = go.FigureWidget()
        self.summary: dict[str, float] = {}
        for w in (self.eps, self.log_delta, self.C0, self.C1, self.C2, self.sigma_mc, self.gamma, self.lam, self.T,
                  self.d):
            self.observe(w, self.update)
        self._layout(W.HBox([W.VBox([self.eps, self.log_delta, self.C0, self.C1, self.gamma]),
                             W.VBox([self.lam, self.T, self.d, self.C2, self.sigma_mc])]),
                     self.table, W.HBox([self.fig_sigma, self.fig_mc]))
        self.refresh()

    def update(self) -> None:
        if self.d.value < 1:
            raise ValueError(f"d={self.d.value} is out of range: expected d >= 1 (number of model parameters)")
        delta = 10.0 ** self.log_delta.value
        kw = dict(C0=self.C0.value, C1=self.C1.value, gamma=self.gamma.value, lam=float(self.lam.value))
        s = calibration_summary(self.eps.value, delta, T=self.T.value or None, d=self.d.value, **kw)
        self.summary = s
        rows = [("noisy steps T (paper rule / used / best)", f"{s['T_paper']} / {s['T']} / {s['T_best']}"),
                ("sigma, paper mode (tables)", f"{s['sigma_paper']:.4g}"),
                ("sigma, sound mode", f"{s['sigma_sound']:.4g} (x{s['ratio_sound_over_paper']:.2f})"),
                ("sigma, sound at best T", f"{s['sigma_best']:.4g}"),
                ("epsilon the paper's sigma claims / certifies", f"{s['claimed_eps_of_paper_sigma']:.3g} / "
                                                                f"{s['eps_of_paper_sigma']:.3g}"),
                ("noise norm left after T steps vs clipped model", f"{s['noise_norm']:.3g} vs {s['signal_norm']:.3g}")]
        if "sigma_closed_form" in s:
            rows.insert(3, ("sigma, Thm 4.1 closed form", f"{s['sigma_closed_form']:.4g}"))
        self.table.value = "<table>" + "".join(f"<tr><td>{a}</td><td><b>{b}</b></td></tr>" for a, b in rows) + "</table>"
        T_max = max(50, min(2 * max(s["T"], s["T_best"]), 400))
        TrajectoryExplorer._copy(self.fig_sigma, sigma_t_figure(self.eps.value, delta, T_max=T_max, T_mark=s["T"],
                                                                **kw))
        TrajectoryExplorer._copy(self.fig_mc, mc_delta_figure(self.eps.value, delta, C2=self.C2.value,
                                                              sigma=self.sigma_mc.value))
        n_mc = nf.bounds.mc_steps(self.eps.value, delta, C2=self.C2.value, sigma=self.sigma_mc.value, T_max=5000)
        self.status.value = f"model clipping needs {n_mc} steps (tight recursion)"
