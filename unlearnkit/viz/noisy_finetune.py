"""Figures and explorers for certified noisy fine-tuning (Koloskova et al. 2025; notebook 04).

- :func:`calibration_summary`: for (epsilon, delta, C0, C1, gamma, lambda, T) the paper's T and the best T,
  sigma in paper mode (the tables' code), in sound mode (Theorem A.9 + Balle et al. 2020) and from the closed
  form of Theorem 4.1, the epsilon the paper's sigma really certifies, and the noise norm next to the clipped
  model's norm.
- :class:`CalibrationExplorer`: sliders for all of them (C2 for model clipping too); sigma against T (paper
  and sound, the U-shape of eq. 7) and the model-clipping delta decay (tight against printed recursion).
- :func:`accuracy_race`: retraining against noisy fine-tuning methods on the same retain set, test accuracy per
  epoch of fine-tuning, and :func:`epochs_to_accuracy` (the paper's Table 2 on our data).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from .._validate import check_int
from ..methods import noisy_finetune as nf
from ._explorer import Explorer

__all__ = ["calibration_summary", "sigma_t_figure", "mc_delta_figure", "accuracy_race", "epochs_to_accuracy",
           "race_figure", "noisy_phase_figure", "CalibrationExplorer"]


def calibration_summary(epsilon: float, delta: float, *, C0: float, C1: float, gamma: float, lam: float,
                        T: int | None = None, d: int = 2410) -> dict[str, float]:
    """All the numbers notebook 04 shows for one gradient-clipping setting (``T=None``: the paper's rule)."""
    T_paper = nf.paper_T(C0, C1, gamma, lam)
    T = T_paper if T is None else check_int("T", T, low=1)
    kw = dict(C0=C0, C1=C1, gamma=gamma, lam=lam, T=T)
    s_paper = nf.gc_sigma(epsilon, delta, **kw, mode="paper")
    s_sound = nf.gc_sigma(epsilon, delta, **kw, mode="sound")
    T_best, s_best = nf.best_T(epsilon, delta, C0=C0, C1=C1, gamma=gamma, lam=lam, T_max=max(2000, 2 * T))
    r = 1.0 - gamma * lam
    # the noise still present after T steps (each step's noise shrinks by r per later step) vs the clipped
    # model's contribution, which weight decay shrinks to at most C0 r^T (indicative: gradient steps are nonlinear)
    noise = s_sound * math.sqrt(d * sum(r ** (2 * k) for k in range(T)))
    out = {"T": T, "T_paper": T_paper, "T_best": T_best, "sigma_paper": s_paper, "sigma_sound": s_sound,
           "sigma_best": s_best, "eps_of_paper_sigma": nf.gc_epsilon(s_paper, delta, **kw, mode="sound"),
           "claimed_eps_of_paper_sigma": nf.gc_epsilon(s_paper, delta, **kw, mode="paper"),
           "ratio_sound_over_paper": s_sound / s_paper, "noise_norm": noise, "signal_norm": C0 * r**T}
    if lam == 0 or 0.5 < gamma * lam < 1:
        out["sigma_closed_form"] = nf.gc_sigma_closed_form(epsilon, delta, **kw)
    return out


def sigma_t_figure(epsilon: float, delta: float, *, C0: float, C1: float, gamma: float, lam: float,
                   T_max: int = 200, T_mark: int | None = None) -> go.Figure:
    Ts = np.unique(np.linspace(1, T_max, min(T_max, 120)).astype(int))
    sound = [nf.gc_sigma(epsilon, delta, C0=C0, C1=C1, gamma=gamma, lam=lam, T=int(t)) for t in Ts]
    paper = [nf.gc_sigma(epsilon, delta, C0=C0, C1=C1, gamma=gamma, lam=lam, T=int(t), mode="paper") for t in Ts]
    fig = go.Figure()
    fig.add_scatter(x=Ts, y=sound, mode="lines", name="sound (Thm A.9 + Balle 2020)")
    fig.add_scatter(x=Ts, y=paper, mode="lines", name="paper (tables' code)", line={"dash": "dash"})
    if T_mark is not None:
        fig.add_vline(x=T_mark, line_dash="dot", annotation_text="T")
    fig.update_layout(title="noise per step against the number of noisy steps T", xaxis={"title": "T"},
                      yaxis={"type": "log", "title": "sigma"}, width=560, height=380)
    return fig


def mc_delta_figure(epsilon: float, delta: float, *, C2: float, sigma: float, T: int = 60) -> go.Figure:
    fig = go.Figure()
    for tight, name in ((True, "tight recursion (Balle 2019 Thm 1; the tables)"), (False, "Lemma A.2 as printed")):
        tr = nf.mc_delta_trace(epsilon, C2=C2, sigma=sigma, T=T, tight=tight)
        fig.add_scatter(x=np.arange(T + 1), y=np.log10(np.maximum(tr, 1e-300)), mode="lines", name=name)
    fig.add_hline(y=math.log10(delta), line_dash="dash", annotation_text="target delta")
    fig.update_layout(title=f"model clipping: delta after t steps (C2/sigma = {C2 / sigma:.3g})",
                      xaxis={"title": "t"}, yaxis={"title": "log10 delta_t", "range": [-12, 0.2]}, width=560,
                      height=380)
    return fig


def accuracy_race(state, request, starts: Mapping[str, Any], *, epochs: int, batch_size: int = 32, lr: float = 0.5,
                  weight_decay: float = 5e-4, seed: int = 0) -> dict[str, dict[str, list[float]]]:
    """Fine-tune every start point on the retain set and record test accuracy after each epoch.

    ``starts`` maps a name to a :class:`~unlearnkit.core.Result` of a noisy method (its noisy-phase
    model ``extras["noisy"]`` is the start; its noisy steps are charged as a fraction of an epoch) or to a
    tensor (e.g. the training initialisation: that curve is *retraining from scratch*).
    """
    import torch

    from .. import make_generator
    from ..evaluate import accuracy
    from ..train import SGDConfig, run_sgd

    check_int("epochs", epochs, low=1)
    retain = request.retain(state.train_indices)
    xr, yr = state.dataset.train_subset(retain)
    spe = int(math.ceil(len(retain) / batch_size))
    cfg = SGDConfig(steps=spe, lr=lr, batch_size=batch_size, weight_decay=weight_decay)
    ds = state.dataset
    out: dict[str, dict[str, list[float]]] = {}
    for name, start in starts.items():
        if isinstance(start, torch.Tensor):
            x, offset = start.clone(), 0.0
        else:
            x, offset = start.extras["noisy"].clone(), start.extras.get("noisy_grad_evals", 0) / len(retain)
        g = make_generator(seed)
        accs = [accuracy(state.flat, x, ds.x_test, ds.y_test)]
        for _ in range(epochs):
            x, _, _ = run_sgd(state.flat, x, xr, yr, cfg, generator=g)
            accs.append(accuracy(state.flat, x, ds.x_test, ds.y_test))
        out[name] = {"epoch": [offset + e for e in range(epochs + 1)], "test_acc": accs}
    return out


def epochs_to_accuracy(curves: Mapping[str, Mapping[str, Sequence[float]]], targets: Sequence[float]
                       ) -> list[dict[str, Any]]:
    """Epochs each method needs to reach each target test accuracy (``None``: not reached), Table 2 style."""
    rows = []
    for t in targets:
        row: dict[str, Any] = {"target": t}
        for name, c in curves.items():
            hit = [e for e, a in zip(c["epoch"], c["test_acc"]) if a >= t]
            row[name] = round(hit[0], 2) if hit else None
        rows.append(row)
    return rows


def race_figure(curves: Mapping[str, Mapping[str, Sequence[float]]]) -> go.Figure:
    fig = go.Figure()
    for name, c in curves.items():
        fig.add_scatter(x=c["epoch"], y=c["test_acc"], mode="lines+markers", name=name)
    fig.update_layout(title="test accuracy against fine-tuning epochs on the retain set", xaxis={"title": "epochs"},
                      yaxis={"title": "test accuracy", "range": [0, 1]}, width=620, height=400)
    return fig


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
        import ipywidgets as W

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
        from .descend_rewind import TrajectoryExplorer

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
        n_mc = nf.mc_steps(self.eps.value, delta, C2=self.C2.value, sigma=self.sigma_mc.value, T_max=5000)
        self.status.value = f"model clipping needs {n_mc} steps (tight recursion)"
