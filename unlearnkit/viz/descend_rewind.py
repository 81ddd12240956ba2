"""Figures and explorers for "Descend or Rewind?" (notebook 03).

Pure figure builders (data -> ``go.Figure``) and two explorers:

- :class:`TrajectoryExplorer`: a regime toggle (strongly convex / convex / nonconvex) on the 2-D toy losses of
  :mod:`unlearnkit.toy`, contours of the loss on ``D``, and training, retraining, R2D and D2D trajectories
  drawn on the *same coupled batches* (:func:`unlearnkit.experiments.descend_rewind.coupled.simulate`); a slider scrubs time; a second
  panel shows the distance to retraining on a log axis (shrinks, stays or grows).
- :class:`SigmaExplorer`: sigma against K for all three regimes (PSGD-R2D, Lemma 4.4) with the
  diameter cap, for the chosen epsilon, delta and deletion size.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from .._validate import check_int
from ..evaluate import accuracy, backdoor_success
from ..experiments.descend_rewind.coupled import CoupledRun, coupled_retrain_batches, simulate
from ..experiments.descend_rewind.lab import coupled_k_sweep
from ..methods.descend_rewind.bounds import (descend_rewind_sigma, diameter_cap_sigma, k_for_sigma_sc,
                                             psgd_r2d_sensitivity)
from ..runtime import make_generator
from ..toy import TOY_REGIMES, make_toy
from ._explorer import Explorer
from ._style import OFF_SCALE, fmt_power, mark_bound, styled
from .bands import add_seed_band
from .tables import certificate_row


DR_COLORS = {"train": "#1f77b4", "retrain": "#2ca02c", "r2d": "#d62728", "d2d": "#9467bd", "bound": "#7f7f7f"}

#: step sizes and lengths that make each regime's behaviour visible in a few hundred steps
TOY_SETTINGS = {"strongly_convex": dict(eta=0.5, T=240), "convex": dict(eta=0.5, T=240),
                "nonconvex": dict(eta=0.15, T=240)}


def _grid(problem, lim: float = 2.6, n: int = 60):
    g = np.linspace(-lim, lim, n)
    W = np.stack(np.meshgrid(g, g), -1)
    return g, problem.loss(W)


@styled
def contour_figure(problem, run: CoupledRun, t: int, *, trial: int = 0) -> go.Figure:
    """Loss contours on D with the four trajectories up to time ``t`` (``0..T``; R2D and D2D start at T-K / T)."""
    g, Z = _grid(problem)
    fig = go.Figure()
    fig.add_contour(x=g, y=g, z=Z, colorscale="Greys", showscale=False, ncontours=25, opacity=0.55,
                    contours={"coloring": "lines"}, name="loss on D", hoverinfo="skip")
    X = problem.X
    keep = problem.retain
    fig.add_scatter(x=X[keep, 0], y=X[keep, 1], mode="markers", marker={"size": 5, "color": "#555"},
                    name="retained data" if problem.regime == "nonconvex" else "retained features")
    fig.add_scatter(x=X[problem.forget, 0], y=X[problem.forget, 1], mode="markers",
                    marker={"size": 7, "color": "orange", "symbol": "x"}, name="forget set U")
    T, K = run.T, run.K
    t = int(min(max(t, 0), T + K))
    tr = run.train[trial, :min(t, T) + 1]
    rt = run.retrain[trial, :min(t, T) + 1]
    fig.add_scatter(x=tr[:, 0], y=tr[:, 1], mode="lines", line={"color": DR_COLORS["train"]}, name="training on D")
    fig.add_scatter(x=rt[:, 0], y=rt[:, 1], mode="lines", line={"color": DR_COLORS["retrain"]},
                    name="retraining on D'")
    k_r = min(max(t - (T - K), -1), K)
    u = run.r2d[trial, :k_r + 1] if k_r >= 0 else np.empty((0, 2))
    fig.add_scatter(x=u[:, 0], y=u[:, 1], mode="lines", line={"color": DR_COLORS["r2d"], "width": 3},
                    name=f"R2D (rewind to T-K={T - K})")
    k_d = min(max(t - T, -1), run.d2d.shape[1] - 1)
    dd = run.d2d[trial, :k_d + 1] if k_d >= 0 else np.empty((0, 2))
    fig.add_scatter(x=dd[:, 0], y=dd[:, 1], mode="lines", line={"color": DR_COLORS["d2d"], "width": 3, "dash": "dot"},
                    name="D2D (from w_T)")
    fig.update_layout(title=f"{problem.regime.replace('_', ' ')}: step {t}", width=520, height=480,
                      xaxis={"range": [-2.6, 2.6], "title": "w1"}, yaxis={"range": [-2.6, 2.6], "title": "w2",
                                                                           "scaleanchor": "x"},
                      legend={"font": {"size": 10}}, margin={"l": 40, "r": 10, "t": 40, "b": 40})
    return fig


@styled
def distance_figure(run: CoupledRun) -> go.Figure:
    """Mean distance to the retraining run: R2D (same step) and D2D (against w'_T), log axis, with the bound."""
    T, K = run.T, run.K
    fig = go.Figure()
    steps = np.arange(T - K, T + 1)
    fig.add_scatter(x=steps, y=np.maximum(run.r2d_gap.mean(0), 1e-12), mode="lines", name="R2D: ||u_t - w'_t||",
                    line={"color": DR_COLORS["r2d"]})
    fig.add_scatter(x=T + np.arange(run.d2d.shape[1]), y=np.maximum(run.d2d_gap.mean(0), 1e-12), mode="lines",
                    name="D2D: ||d_k - w'_T||", line={"color": DR_COLORS["d2d"], "dash": "dot"})
    fig.add_scatter(x=[T], y=[max(run.mean_original_distance, 1e-12)], mode="markers", name="original ||w_T - w'_T||",
                    marker={"color": DR_COLORS["train"], "size": 10})
    if run.bound is not None and run.bound > 0:  # the nonconvex bound (~3e35) would flatten the curves
        top = max(float(np.max(tr.y)) for tr in fig.data)
        mark_bound(fig, T, float(run.bound), name="PSGD-R2D bound on E||u_T - w'_T||", data_max=top,
                   marker={"color": DR_COLORS["bound"], "symbol": "triangle-down", "size": 11})
    fig.update_layout(title="distance to retraining (mean over trials)", yaxis={"type": "log", "title": "distance"},
                      xaxis={"title": "step"}, width=520, height=480, legend={"font": {"size": 10}},
                      margin={"l": 50, "r": 10, "t": 40, "b": 40})
    return fig


@styled
def sigma_k_figure(curves: dict[str, np.ndarray], Ks: np.ndarray, *, cap: float, K_mark: int | None = None) -> go.Figure:
    """sigma against K per regime (log y) and the diameter-cap line."""
    fig = go.Figure()
    for reg, ys in curves.items():
        fig.add_scatter(x=Ks, y=np.where(ys > 0, ys, np.nan), mode="lines", name=reg.replace("_", " "))
    if math.isfinite(cap):
        fig.add_scatter(x=[Ks[0], Ks[-1]], y=[cap, cap], mode="lines", name="diameter cap 2R",
                        line={"dash": "dash", "color": DR_COLORS["bound"]})
    if K_mark is not None:
        fig.add_vline(x=K_mark, line_dash="dot")
    fig.update_layout(title="noise needed for (epsilon, delta) against rewind depth K", width=620, height=420,
                      xaxis={"title": "K (unlearning steps)"}, yaxis={"type": "log", "title": "sigma"})
    return fig


@styled
def k_saturation_figure(sigma: float, Ts: Sequence[int], *, G: float, mu: float, eta: float, m: int, n: int,
                        epsilon: float, delta: float) -> go.Figure:
    """The unlearning steps K that noise ``sigma`` needs against the training steps T (strongly convex, log T).

    Each K is :func:`~unlearnkit.methods.descend_rewind.k_for_sigma_sc` (Neel et al. 2021, Corollary 4.6) at
    that T with the other arguments: K grows with T at first, then saturates.
    """
    Ks = [k_for_sigma_sc(sigma, G=G, mu=mu, eta=eta, T=int(T), m=m, n=n, epsilon=epsilon, delta=delta) for T in Ts]
    return go.Figure(go.Scatter(x=np.asarray(Ts), y=Ks, mode="lines", name="K"),
                     layout=dict(title=f"K needed at sigma = {sigma:g} (strongly convex)",
                                 xaxis=dict(type="log", title="training steps T"), yaxis=dict(title="K"),
                                 width=560, height=340))


def certified_release_rows(state: Any, request: Any, runs: Mapping[str, tuple[Any, Any]], *, backdoor: Any = None,
                 seed: int = 3) -> list[dict[str, Any]]:
    """Each certified method of ``runs`` unlearns ``request`` once; its certificate and released model, as rows.

    ``runs`` maps a name to ``(method, config)``; every run draws from a fresh generator seeded ``seed``. A row
    is :func:`~unlearnkit.viz.tables.certificate_row` with ``test_acc`` and, given a ``backdoor``,
    ``backdoor_asr`` (the released model's backdoor success).
    """
    rows = []
    for name, (method, config) in runs.items():
        res = method.unlearn(state, request, config, generator=make_generator(seed))
        extra = {"test_acc": accuracy(state.flat, res.params, state.dataset.x_test, state.dataset.y_test)}
        if backdoor is not None:
            extra["backdoor_asr"] = backdoor_success(state.flat, res.params, backdoor)
        rows.append(certificate_row(name, res.certificate, **extra))
    return rows


def bound_vs_simulated(regime: str, Ks: Sequence[int], *, trials: int = 40, seed: int = 0) -> list[dict[str, float]]:
    """For each K: the simulated ``E||u_T - w'_T||`` of the toy problem against the PSGD-R2D bound."""
    p = make_toy(regime)
    s = TOY_SETTINGS[regime]
    rows = []
    for K in Ks:
        run = simulate(p, T=s["T"], K=int(K), eta=s["eta"], trials=trials, seed=seed, constants=p.constants())
        rows.append({"K": int(K), "simulated": run.mean_r2d_distance, "bound": float(run.bound),
                     "original": run.mean_original_distance})
    return rows


@styled
def bound_vs_simulated_figure(rows: Sequence[dict[str, float]], *, title: str = "") -> go.Figure:
    K = [r["K"] for r in rows]
    fig = go.Figure()
    sim = [max(r["simulated"], 1e-12) for r in rows]
    bound = [max(r["bound"], 1e-12) for r in rows]
    top = max(sim, default=0.0)
    far = [b for b in bound if not b <= OFF_SCALE * top]  # drawn as a note: it would flatten the simulation
    fig.add_scatter(x=K, y=[None if b in far else b for b in bound], mode="lines+markers", name="bound (Thm 4.5)")
    fig.add_scatter(x=K, y=sim, mode="lines+markers", name="simulated E||u_T - w'_T||")
    if far:
        fig.add_annotation(x=0.5, y=0.98, xref="paper", yref="paper", yanchor="top", showarrow=False,
                           text=f"bound (Thm 4.5) up to {fmt_power(max(far))} at {len(far)} of {len(bound)} K: "
                                "off the scale", font={"size": 11, "color": DR_COLORS["bound"]})
    fig.update_layout(title=title or "bound against the coupled simulation", yaxis={"type": "log"},
                      xaxis={"title": "K"}, width=620, height=400)
    return fig


def digits_k_sweep(state, request, Ks: Sequence[int], *, epsilon: float | None = None, constants=None,
                   seed: int = 0) -> tuple[list[dict[str, float]], Any]:
    """Noise-free R2D and D2D for each K, on batches coupled to training (digest 003 Algorithm 6 on real data).

    Draws the retraining batches with :func:`~unlearnkit.experiments.descend_rewind.coupled.coupled_retrain_batches` and runs
    :func:`~unlearnkit.experiments.descend_rewind.lab.coupled_k_sweep` on them: R2D replays their last K batches
    from the checkpoint ``T - K`` and D2D runs the same K batches from ``w_T``. Returns ``(rows, retrained_params)``.
    """

    batches = coupled_retrain_batches(state, request, rng=np.random.default_rng(seed))
    return coupled_k_sweep(state, request, Ks, batches=batches, epsilon=epsilon, constants=constants, seed=seed)


@styled
def k_sweep_figure(rows: Sequence[dict[str, Any]], metric: str = "forget_acc") -> go.Figure:
    fig = go.Figure()
    for name, dash in (("R2D", "solid"), ("D2D", "dot")):
        rr = [r for r in rows if r["method"] == name]
        fig.add_scatter(x=[r["K"] for r in rr], y=[r[metric] for r in rr], mode="lines+markers", name=name,
                        line={"dash": dash})
    fig.update_layout(title=f"{metric} against K (digits)", xaxis={"title": "K"}, yaxis={"title": metric},
                      width=560, height=380)
    return fig


def stall_sweep(regime: str = "nonconvex", Ks: Sequence[int] = (0, 30, 60, 90, 120, 150, 180, 210, 240), *,
                trials: int = 8, seed: int = 0) -> list[dict[str, Any]]:
    """For each number of unlearning steps K: how far R2D (rewind K steps, replay them) and D2D (K more steps
    from ``w_T``) end from retraining, trial by trial, on the coupled toy runs of ``regime``
    (:func:`~unlearnkit.experiments.descend_rewind.coupled.simulate`, the toy's :data:`TOY_SETTINGS`).

    Returns rows ``{"regime", "method", "K", "distance" (mean over trials), "distance_trials" (one per trial),
    "original" (mean ``||w_T - w'_T||``)}``. R2D's distance is ``||u_T - w'_T||``, D2D's ``||d_K - w'_T||``."""
    p = make_toy(regime)
    s = TOY_SETTINGS[regime]
    rows = []
    for K in Ks:
        run = simulate(p, T=s["T"], K=int(K), eta=s["eta"], trials=trials, seed=seed)
        for name, gap in (("R2D", run.r2d_gap[:, -1]), ("D2D", run.d2d_gap[:, -1])):
            rows.append({"regime": regime, "method": name, "K": int(K), "distance": float(gap.mean()),
                         "distance_trials": [float(v) for v in gap], "original": run.mean_original_distance})
    return rows


@styled
def stall_figure(rows: Sequence[dict[str, Any]], *, interval: str = "t95") -> go.Figure:
    """Distance to retraining against the number of unlearning steps K: R2D and D2D (rows of
    :func:`stall_sweep`), each the mean over the coupled trials with a band (``interval``: ``"t95"``, the 95 %
    Student-t interval for the mean over trials, or ``"minmax"``), and the original model's distance dashed."""

    if not rows:
        raise ValueError("rows is empty: give the rows of stall_sweep")
    fig = go.Figure()
    for name, key, dash in (("R2D", "r2d", "solid"), ("D2D", "d2d", "dot")):
        rr = sorted((r for r in rows if r["method"] == name), key=lambda r: r["K"])
        add_seed_band(fig, [r["K"] for r in rr], [r["distance_trials"] for r in rr], name=name, color=DR_COLORS[key],
                      dash=dash, interval=interval, x_label="K", unit="trial")
    orig = rows[0]["original"]
    Ks = [r["K"] for r in rows]
    fig.add_scatter(x=[min(Ks), max(Ks)], y=[orig, orig], mode="lines", name="original model ||w_T - w'_T||",
                    line={"color": DR_COLORS["train"], "dash": "dash"})
    regime = rows[0]["regime"].replace("_", " ")
    fig.update_layout(title=f"{regime} toy: distance to retraining after K unlearning steps (no noise)",
                      xaxis={"title": "K (unlearning steps: R2D rewinds K and replays them, D2D takes K more)"},
                      yaxis={"title": "distance to retraining ||. - w'_T||"}, width=640, height=420)
    return fig


class TrajectoryExplorer(Explorer):
    """Regime toggle + time slider + K slider over coupled toy runs (cached per regime and K)."""

    def __init__(self, *, trials: int = 20, seed: int = 0) -> None:
        super().__init__()

        self.trials, self.seed = check_int("trials", trials, low=1), seed
        self.regime = W.ToggleButtons(options=list(TOY_REGIMES), value="strongly_convex", description="regime")
        self.K = W.IntSlider(value=120, min=0, max=240, step=10, description="K", continuous_update=False)
        self.time = W.IntSlider(value=240, min=0, max=480, step=5, description="time", continuous_update=True)
        self._cache: dict[tuple[str, int], tuple[Any, CoupledRun]] = {}
        self.fig = go.FigureWidget()
        self.dist = go.FigureWidget()
        for w in (self.regime, self.K):
            self.observe(w, self.update)
        self.observe(self.time, self.redraw_time)
        self._layout(W.VBox([self.regime, W.HBox([self.K, self.time])]), W.HBox([self.fig, self.dist]))
        self.refresh()

    def run(self) -> tuple[Any, CoupledRun]:
        key = (self.regime.value, self.K.value)
        if key not in self._cache:
            s = TOY_SETTINGS[self.regime.value]
            if self.K.value > s["T"]:
                raise ValueError(f"K={self.K.value} is out of range: expected 0 <= K <= T={s['T']}")
            p = make_toy(self.regime.value)
            self._cache[key] = (p, simulate(p, T=s["T"], K=self.K.value, eta=s["eta"], trials=self.trials,
                                            seed=self.seed, constants=p.constants()))
        return self._cache[key]

    @staticmethod
    def _copy(target: go.FigureWidget, src: go.Figure) -> None:
        with target.batch_update():
            if len(target.data) != len(src.data):
                target.data = []
                for tr in src.data:
                    target.add_trace(tr)
            else:
                for a, b in zip(target.data, src.data):
                    a.update(b.to_plotly_json())
            target.layout = src.layout

    def redraw_time(self) -> None:
        p, run = self.run()
        self._copy(self.fig, contour_figure(p, run, self.time.value))

    def update(self) -> None:
        p, run = self.run()
        self.time.max = run.T + run.K
        self._copy(self.fig, contour_figure(p, run, self.time.value))
        self._copy(self.dist, distance_figure(run))
        self.status.value = (f"E||w_T - w'_T|| = {run.mean_original_distance:.3g}, R2D E||u_T - w'_T|| = "
                             f"{run.mean_r2d_distance:.3g}, D2D = {run.mean_d2d_distance:.3g}, bound = {run.bound:.3g}")


class SigmaExplorer(Explorer):
    """sigma(K) for the three regimes with the diameter cap; epsilon, delta (log10) and m sliders."""

    def __init__(self, *, G: float = 1.25, L: float = 0.3, mu: float = 0.05, eta: float = 0.5, T: int = 300,
                 n: int = 200, radius: float = 5.0) -> None:
        super().__init__()

        self.params = dict(G=G, L=L, mu=mu, eta=eta, T=T, n=n, radius=radius)
        self.eps = W.FloatLogSlider(value=1.0, base=10, min=-1, max=1.5, description="epsilon", continuous_update=False)
        self.log_delta = W.FloatSlider(value=-5, min=-8, max=-1, step=0.5, description="log10 delta",
                                       continuous_update=False)
        self.m = W.IntSlider(value=10, min=1, max=100, description="m", continuous_update=False)
        # a plain IntText: a bounded one would clamp a typed 10**8 to 10**7 silently; curves() refuses it in place
        self.n = W.IntText(value=n, description="n")
        self.mode = W.ToggleButtons(options=["sound", "paper"], value="sound", description="mode")
        self.fig = go.FigureWidget()
        for w in (self.eps, self.log_delta, self.m, self.n, self.mode):
            self.observe(w, self.update)
        self._layout(W.VBox([W.HBox([self.eps, self.log_delta]), W.HBox([self.m, self.n, self.mode])]), self.fig)
        self.refresh()

    def curves(self) -> tuple[np.ndarray, dict[str, np.ndarray], float]:
        p = dict(self.params, n=check_int("n", self.n.value, low=1, high=10**7))
        delta = 10.0 ** self.log_delta.value
        Ks = np.arange(0, p["T"] + 1, 5)
        out = {}
        for reg in TOY_REGIMES:
            ds = [psgd_r2d_sensitivity(reg, G=p["G"], L=p["L"], mu=p["mu"], eta=p["eta"], T=p["T"], K=int(K),
                                       m=self.m.value, n=p["n"]) for K in Ks]
            out[reg] = np.array([descend_rewind_sigma(d, self.eps.value, delta, mode=self.mode.value) for d in ds])
        cap = diameter_cap_sigma(p["radius"], self.eps.value, delta, mode=self.mode.value)
        return Ks, out, cap

    def update(self) -> None:
        Ks, curves, cap = self.curves()
        src = sigma_k_figure(curves, Ks, cap=cap)
        TrajectoryExplorer._copy(self.fig, src)
        self.status.value = f"diameter cap sigma = {cap:.4g}; strongly convex sigma at K=0: {curves['strongly_convex'][0]:.4g}"
