"""Figures and explorers for notebook 07 (Newton/Fisher decentralized unlearning, digest 001).

Pure figure builders (data -> ``go.Figure``):

- :func:`influence_animation`: ``Q^k`` as an animated heatmap, influence spreading over the gossip rounds;
- :func:`influence_decay_figure`: ``||Q^k - 11^T/N||^2`` against Lemma 1's bound ``rho^k``;
- :func:`curvature_figure`: cosine between each curvature's correction and the exact retraining direction;
- :func:`noise_figure`: epsilon -> sigma (paper and sound) -> test accuracy.

The small convex lab that computes what the explorers show (``lab_problem``, ``curvature_study``,
``noise_study``: binary logistic regression trained and retrained to the exact optimum, digest P9) lives in
:mod:`unlearnkit.experiments.newton.lab`.

Explorers: :class:`InfluenceExplorer`, :class:`CurvatureExplorer`, :class:`NewtonNoiseExplorer`.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .._validate import check_choice, check_int, check_positive, check_range
from ..evaluate import accuracy
from ..experiments.newton.lab import LAB_CURVATURES, curvature_study, lab_problem, noise_study
from ..graphs.mixing import influence, influence_distance, mixing_matrix, slem
from ..graphs.topology import make_graph
from ..methods.newton import Newton, NewtonConfig
from ..runtime import make_generator
from ._explorer import Explorer
from ._style import styled
from .bands import add_seed_band, per_seed, seeds_text
from .tables import certificate_row


# ----------------------------------------------------------------------------------------------------------
# Pure figures
# ----------------------------------------------------------------------------------------------------------

def _powers(Wm: np.ndarray, ks: Sequence[int]) -> list[np.ndarray]:
    return [influence(Wm, int(k)) for k in ks]


def certificate_mode_rows(state: Any, request: Any, flat: Any, dataset: Any,
                          modes: Mapping[str, Mapping[str, Any]], *, curvature: str = "cg_hessian",
                          epsilon: float = 1.0, delta: float = 1e-5, seed: int = 3) -> list[dict[str, Any]]:
    """Newton/Fisher unlearning of ``request`` once per certificate mode, as table rows.

    Parameters
    ----------
    state, request
        The trained network (:func:`~unlearnkit.methods.newton.train_dpsgd`) and the forget request.
    flat, dataset
        The model's parameter layout and the dataset whose test split measures the released model.
    modes : mapping of str to mapping
        Mode -> that run's further :class:`~unlearnkit.methods.newton.NewtonConfig` fields, in row order.
    curvature, epsilon, delta, seed
        The Newton step's curvature, every certificate's target, and the seed of each run's fresh generator.

    Returns
    -------
    list of dict
        Per mode, :func:`~unlearnkit.viz.tables.certificate_row` labelled by the mode asked for, with ``bound``
        (``constants["bound"]``, ``-`` when none is recorded) and ``test_acc`` (the release's test accuracy).
    """
    rows = []
    for mode, extra in modes.items():
        r = Newton().unlearn(state, request, NewtonConfig(mode=mode, curvature=curvature, epsilon=epsilon,
                                                          delta=delta, **extra), generator=make_generator(seed))
        rows.append(certificate_row(mode, r.certificate, bound=r.certificate.constants.get("bound", "-"),
                                    test_acc=accuracy(flat, r.params, dataset.x_test, dataset.y_test)))
    return rows


@styled
def influence_animation(Wm: np.ndarray, ks: Sequence[int] = tuple(range(0, 31)), *, title: str = "") -> go.Figure:
    """``Q^k`` as a heatmap with one animation frame per ``k`` (play button and slider).

    Entry ``(i, j)`` is the weight of client ``j``'s round-0 vector in client ``i``'s model after ``k``
    gossip rounds (digest 001 section 2.3); every entry tends to ``1/N`` (Lemma 1).
    """
    Wm = np.asarray(Wm, dtype=float)
    if Wm.ndim != 2 or Wm.shape[0] != Wm.shape[1]:
        raise ValueError(f"W has shape {Wm.shape}; expected a square mixing matrix")
    ks = [int(k) for k in ks]
    if not ks:
        raise ValueError("ks is empty: give at least one round")
    mats = _powers(Wm, ks)
    n = Wm.shape[0]
    hm = lambda M: go.Heatmap(z=M, zmin=0, zmax=max(2.0 / n, float(mats[-1].max())), colorscale="Viridis",  # noqa
                              colorbar=dict(title="weight"))
    fig = go.Figure(data=[hm(mats[0])],
                    frames=[go.Frame(data=[hm(M)], name=str(k)) for k, M in zip(ks, mats)])
    steps = [dict(method="animate", label=str(k), args=[[str(k)], dict(mode="immediate", frame=dict(duration=0))])
             for k in ks]
    fig.update_layout(
        title=title or f"influence Q^k (uniform = 1/N = {1 / n:.3f})",
        xaxis_title="source client j", yaxis_title="client i", yaxis_autorange="reversed",
        updatemenus=[dict(type="buttons", x=0.0, y=-0.12, showactive=False,
                          buttons=[dict(label="play", method="animate",
                                        args=[None, dict(frame=dict(duration=250), fromcurrent=True)])])],
        sliders=[dict(steps=steps, currentvalue=dict(prefix="round k = "), x=0.1, len=0.9, y=-0.05)],
        height=460, margin=dict(l=50, r=20, t=50, b=90))
    return fig


@styled
def influence_decay_figure(Wm: np.ndarray, k_max: int = 60, *, k_mark: Optional[int] = None) -> go.Figure:
    """``||Q^k - J||_2^2`` (log scale) against Lemma 1's ``rho^k``, ``rho = slem(Q)^2`` (digest 001)."""

    k_max = check_int("k_max", k_max, low=1)
    ks = np.arange(k_max + 1)
    dist2 = influence_distance(Wm, ks) ** 2
    rho = slem(Wm) ** 2
    fig = go.Figure()
    fig.add_scatter(x=ks, y=np.maximum(dist2, 1e-300), mode="lines", name="||Q^k - 11^T/N||^2")
    fig.add_scatter(x=ks, y=np.maximum(rho ** ks, 1e-300), mode="lines", line=dict(dash="dash"),
                    name=f"Lemma 1 bound rho^k (rho = {rho:.3f})")
    if k_mark is not None:
        k = min(int(k_mark), k_max)
        fig.add_scatter(x=[k], y=[max(dist2[k], 1e-300)], mode="markers", marker=dict(size=11), name=f"k = {k}")
    fig.update_layout(yaxis_type="log", xaxis_title="gossip rounds k", yaxis_title="squared distance to uniform",
                      height=360, margin=dict(l=60, r=20, t=40, b=40), title="how fast influence becomes uniform")
    return fig


@styled
def curvature_figure(study: Mapping[str, Mapping[str, float]], *, selected: Optional[str] = None) -> go.Figure:
    """Bars: cosine between each curvature's correction and ``x' - x*``; relative error ``||x_hat-x'||/||x*-x'||``."""
    names = list(study)
    cos = [study[k]["cosine"] for k in names]
    err = [study[k]["rel_error"] for k in names]
    colors = ["#EF553B" if k == selected else "#636EFA" for k in names]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("cosine with the exact retraining direction",
                                                        "relative error ||x_hat - x'|| / ||x* - x'||"))
    fig.add_bar(x=names, y=cos, marker_color=colors, row=1, col=1, showlegend=False)
    fig.add_bar(x=names, y=err, marker_color=colors, row=1, col=2, showlegend=False)
    fig.add_hline(y=1.0, line_dash="dot", row=1, col=2)
    fig.update_yaxes(range=[min(-0.1, min(cos) - 0.05), 1.05], row=1, col=1)
    fig.update_layout(height=360, margin=dict(l=40, r=20, t=50, b=40))
    return fig


@styled
def newton_frontier_figure(rows: Sequence[Mapping[str, Any]], *, interval: str = "t95") -> go.Figure:
    """Released test accuracy against epsilon, one line per calibration mode, exact retraining as a dashed line.

    Parameters
    ----------
    rows : sequence of mappings
        Rows of ``experiments.newton.frontier.newton_frontier``: ``mode``, ``epsilon``, ``test_acc`` and
        ``retrain_test_acc`` (the same in every row; the first is drawn). Rows of a run on several seeds
        (``newton_frontier(seeds=...)``) carry ``test_acc_seeds``: each line is then the mean over the seeds,
        with a band.
    interval : str
        What the band shows (:data:`unlearnkit.viz.bands.INTERVALS`): ``"t95"`` or ``"minmax"``.

    Returns
    -------
    plotly.graph_objects.Figure
        Log epsilon axis; ``sound`` solid, ``paper`` dotted (a mode absent from ``rows`` is left out), each
        with its band over seeds (legend and hover name the interval and the number of seeds).
    """
    if not rows:
        raise ValueError("rows is empty: give the rows of newton_frontier")
    fig = go.Figure()
    for mode, dash in (("sound", "solid"), ("paper", "dot")):
        rr = [r for r in rows if r["mode"] == mode]
        if rr:
            add_seed_band(fig, [r["epsilon"] for r in rr], [per_seed(r, "test_acc") for r in rr],
                          name=f"{mode} calibration", color=_MODE_COLOURS[mode][0], dash=dash, interval=interval)
    fig.add_hline(y=rows[0]["retrain_test_acc"], line_dash="dash", annotation_text="exact retraining")
    seeds = rows[0].get("seeds") or [0]
    fig.update_layout(xaxis_type="log", xaxis_title="epsilon", yaxis_title="released test accuracy", height=380,
                      title=f"certified Newton unlearning: {seeds_text(seeds, interval)}")
    return fig


#: colours of the two calibrations in the noise figure (line, and its band of draws)
_MODE_COLOURS = {"paper": ("#1f77b4", "rgba(31,119,180,0.15)"), "sound": ("#d62728", "rgba(214,39,40,0.15)")}


def noise_band(problem: Any, epsilons: Sequence[float], *, delta: float, draws: int = 8) -> dict[str, Any]:
    """:func:`~unlearnkit.experiments.newton_lab.noise_study` draw by draw: the mean accuracy over ``draws``
    noise draws per epsilon (``acc_<mode>``) and the lowest and highest single draw (``acc_<mode>_lo``,
    ``acc_<mode>_hi``), with the sigmas and the noise-free accuracy."""
    runs = [noise_study(problem, epsilons, delta=delta, draws=1, seed=k) for k in range(draws)]
    out: dict[str, Any] = {k: runs[0][k] for k in ("epsilon", "acc_clean", "sigma_paper", "sigma_sound")}
    for mode in ("paper", "sound"):
        acc = np.array([r[f"acc_{mode}"] for r in runs])
        out[f"acc_{mode}"], out[f"acc_{mode}_lo"], out[f"acc_{mode}_hi"] = acc.mean(0), acc.min(0), acc.max(0)
    out["draws"] = draws
    return out


@styled
def noise_figure(curve: Mapping[str, Sequence[float]], *, epsilon: Optional[float] = None) -> go.Figure:
    """Left: sigma per model against epsilon for the paper's and the sound calibration (log-log).
    Right: test accuracy of the noisy unlearned model against epsilon: the mean over the draws, and a band
    from the lowest to the highest single draw when ``curve`` has them (:func:`noise_band`)."""
    eps = np.asarray(curve["epsilon"])
    fig = make_subplots(rows=1, cols=2, subplot_titles=("noise std carried by each model", "test accuracy"))
    for mode, dash in (("paper", None), ("sound", "dash")):
        colour, fill = _MODE_COLOURS[mode]
        if f"sigma_{mode}" in curve:
            fig.add_scatter(x=eps, y=curve[f"sigma_{mode}"], name=f"sigma ({mode})",
                            line=dict(dash=dash, color=colour), row=1, col=1)
        if f"acc_{mode}_lo" in curve:
            group = f"band {mode}"
            fig.add_scatter(x=eps, y=curve[f"acc_{mode}_lo"], mode="lines", line=dict(width=0, color=colour),
                            legendgroup=group, showlegend=False, hoverinfo="skip", name=f"lowest draw ({mode})",
                            row=1, col=2)
            fig.add_scatter(x=eps, y=curve[f"acc_{mode}_hi"], mode="lines", line=dict(width=0, color=colour),
                            fill="tonexty", fillcolor=fill, legendgroup=group,
                            name=f"{curve.get('draws', '')} draws ({mode}): lowest to highest", row=1, col=2)
        if f"acc_{mode}" in curve:
            fig.add_scatter(x=eps, y=curve[f"acc_{mode}"], name=f"accuracy ({mode}, mean)",
                            line=dict(dash=dash, color=colour), row=1, col=2)
    if "acc_clean" in curve:
        fig.add_hline(y=float(curve["acc_clean"]), line_dash="dot", row=1, col=2,
                      annotation_text="no noise", annotation_position="bottom right")
    if epsilon is not None:
        for col in (1, 2):
            fig.add_vline(x=float(epsilon), line_color="gray", row=1, col=col)
    fig.update_xaxes(type="log", title_text="epsilon")
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_layout(height=360, margin=dict(l=50, r=20, t=50, b=40))
    return fig


# ----------------------------------------------------------------------------------------------------------
# Explorers
# ----------------------------------------------------------------------------------------------------------

class InfluenceExplorer(Explorer):
    """Pick a topology, N, mixing rule and round k: see ``Q^k`` and its distance to uniform (Lemma 1)."""

    TOPOLOGIES = ("ring", "erdos_renyi", "star", "grid", "path", "complete", "two_clusters")

    def __init__(self, *, topology: str = "ring", n: int = 10, k: int = 5, rule: str = "metropolis") -> None:
        super().__init__()
        self.topology = W.Dropdown(options=self.TOPOLOGIES, value=topology, description="topology")
        self.n = W.IntSlider(value=n, min=3, max=30, description="clients N")
        self.k = W.IntSlider(value=k, min=0, max=60, description="round k")
        self.rule = W.Dropdown(options=("metropolis", "max_degree", "lazy"), value=rule, description="mixing")
        self.heat = go.FigureWidget(go.Figure(go.Heatmap(z=[[0.0]], colorscale="Viridis", zmin=0)))
        self.heat.update_layout(height=380, yaxis_autorange="reversed", xaxis_title="source client j",
                                yaxis_title="client i", margin=dict(l=50, r=20, t=40, b=40))
        self.decay = go.FigureWidget(influence_decay_figure(np.eye(2) * 0.5 + 0.25, 2))
        for w in (self.topology, self.n, self.k, self.rule):
            self.observe(w)
        self._layout(W.HBox([self.topology, self.rule]), W.HBox([self.n, self.k]), W.HBox([self.heat, self.decay]))
        self.refresh()

    def matrix(self) -> np.ndarray:
        n = check_int("n", self.n.value, low=3, high=200)
        return mixing_matrix(make_graph(self.topology.value, n, seed=0), self.rule.value)

    def update(self) -> None:
        k = check_int("k", self.k.value, low=0)
        Wm = self.matrix()
        Qk = influence(Wm, k)
        n = Wm.shape[0]
        dec = influence_decay_figure(Wm, max(60, k), k_mark=k)
        with self.heat.batch_update():
            self.heat.data[0].z = Qk
            self.heat.data[0].zmax = max(2.0 / n, float(Qk.max()))
            self.heat.layout.title = f"Q^{k}: uniform would be 1/N = {1 / n:.3f}"
        with self.decay.batch_update():
            for i, tr in enumerate(dec.data):
                if i < len(self.decay.data):
                    self.decay.data[i].x, self.decay.data[i].y, self.decay.data[i].name = tr.x, tr.y, tr.name
                else:
                    self.decay.add_trace(tr)
            self.decay.layout.yaxis.type = "log"
        rho = slem(Wm) ** 2
        self.status.value = (f"rho = slem(Q)^2 = {rho:.4f}; max |Q^k_ij - 1/N| = {np.abs(Qk - 1 / n).max():.4f}; "
                             f"||Q^k - J||^2 = {np.linalg.norm(Qk - 1 / n, 2) ** 2:.3g} <= rho^k = {rho ** k:.3g}")


class CurvatureExplorer(Explorer):
    """Curvature selector and a non-IID slider: how well does each correction point at retraining?

    The left panel shows every curvature at the current Dirichlet ``alpha`` (the selected one in red); the
    right panel sweeps ``alpha`` for the selected curvature with the paper's local curvature and with the
    global, centred step (digest 2.5): under non-IID data the local one goes wrong.
    """

    ALPHAS = (0.05, 0.1, 0.3, 1.0, 3.0, 100.0)

    def __init__(self, *, curvature: str = "hessian", alpha: float = 1.0, damping: float = 0.0) -> None:
        super().__init__()
        self.curvature = W.Dropdown(options=LAB_CURVATURES, value=curvature, description="curvature")
        self.alpha = W.SelectionSlider(options=self.ALPHAS, value=alpha, description="Dirichlet alpha")
        self.damping = W.FloatLogSlider(value=max(damping, 1e-4), min=-4, max=1, description="damping")
        self.scope = W.ToggleButtons(options=("local", "global"), value="local", description="scope")
        self.bars = go.FigureWidget(curvature_figure({"hessian": {"cosine": 0.0, "rel_error": 0.0}}))
        self.sweep = go.FigureWidget(go.Figure())
        self.sweep.update_layout(height=360, xaxis_type="log", xaxis_title="Dirichlet alpha (large = IID)",
                                 yaxis_title="relative error to retraining", margin=dict(l=50, r=20, t=40, b=40))
        for name in ("local (Algorithm 1)", "global, centred (digest 2.5)", "current"):
            self.sweep.add_scatter(x=[], y=[], name=name, mode="lines+markers" if name != "current" else "markers",
                                   marker=dict(size=12 if name == "current" else 7))
        for w in (self.curvature, self.alpha, self.damping, self.scope):
            self.observe(w)
        self.study: dict[str, dict[str, float]] = {}
        self._memo: dict[tuple, dict[str, float]] = {}
        self._layout(W.HBox([self.curvature, self.scope]), W.HBox([self.alpha, self.damping]), self.bars, self.sweep)
        self.refresh()

    def _study(self, alpha: float, curv: str, scope: str, damping: float) -> dict[str, float]:
        # memoised: moving one control revisits most (alpha, curvature, scope) cells
        key = (alpha, curv, scope, damping)
        if key not in self._memo:
            self._memo[key] = curvature_study(lab_problem(alpha), (curv,), scope=scope,
                                              center_gradient=scope == "global", damping=damping)[curv]
        return self._memo[key]

    def _damping(self) -> float:
        return check_range("damping", float(self.damping.value), 0.0, 10.0)

    def update(self) -> None:
        alpha = float(self.alpha.value)
        if alpha not in self.ALPHAS:
            raise ValueError(f"alpha={alpha!r} is not valid: expected one of {self.ALPHAS}")
        curv = check_choice("curvature", self.curvature.value, LAB_CURVATURES)
        damp = self._damping()
        scope = self.scope.value
        self.study = {k: self._study(alpha, k, scope, damp) for k in LAB_CURVATURES}
        fig = curvature_figure(self.study, selected=curv)
        local = [self._study(a, curv, "local", damp)["rel_error"] for a in self.ALPHAS]
        glob = [self._study(a, curv, "global", damp)["rel_error"] for a in self.ALPHAS]
        with self.bars.batch_update():
            for i in range(2):
                self.bars.data[i].x = fig.data[i].x
                self.bars.data[i].y = fig.data[i].y
                self.bars.data[i].marker.color = fig.data[i].marker.color
        with self.sweep.batch_update():
            self.sweep.data[0].x, self.sweep.data[0].y = self.ALPHAS, local
            self.sweep.data[1].x, self.sweep.data[1].y = self.ALPHAS, glob
            self.sweep.data[2].x, self.sweep.data[2].y = [alpha], [self.study[curv]["rel_error"]]
            self.sweep.layout.title = f"{curv}: error against Dirichlet alpha"
        s = self.study[curv]
        self.status.value = (f"{curv} ({scope}, damping {damp:.2g}) at alpha={alpha}: cosine {s['cosine']:.4f}, "
                             f"relative error {s['rel_error']:.4f}")


class NewtonNoiseExplorer(Explorer):
    """Epsilon -> sigma -> accuracy, for the paper's and the sound calibration, with a lambda selector."""

    def __init__(self, *, epsilon: float = 1.0, weight_decay: float = 1.0, delta: float = 1e-5) -> None:
        super().__init__()
        self.epsilon = W.FloatLogSlider(value=epsilon, min=-2, max=2, description="epsilon")
        self.lam = W.Dropdown(options=(0.1, 0.3, 1.0, 3.0), value=weight_decay, description="lambda")
        self.delta = W.FloatLogSlider(value=delta, min=-10, max=-2, description="delta")
        self.grid = tuple(float(e) for e in np.logspace(-2, 2, 17))
        placeholder: dict[str, Any] = {"epsilon": [1.0], "draws": 8}
        for m in ("paper", "sound"):
            placeholder.update({f"sigma_{m}": [1.0], f"acc_{m}": [0.5], f"acc_{m}_lo": [0.5], f"acc_{m}_hi": [0.5]})
        self.fig = go.FigureWidget(noise_figure(placeholder, epsilon=1.0))
        for w in (self.epsilon, self.lam, self.delta):
            self.observe(w)
        self.curve: dict[str, Any] = {}
        self._bands: dict[tuple[float, float], dict[str, Any]] = {}
        self.lesson = W.HTML()
        self._layout(W.HBox([self.epsilon, self.delta, self.lam]), self.lesson, self.fig)
        self.refresh()

    def update(self) -> None:
        eps = check_range("epsilon", float(self.epsilon.value), 0.0, 1e3, low_open=True)
        delta = check_range("delta", float(self.delta.value), 0.0, 1.0, low_open=True, high_open=True)
        lam = check_positive("lambda", float(self.lam.value))
        prob = lab_problem(None, weight_decay=lam)
        if (lam, delta) not in self._bands:  # the curves do not depend on epsilon: a move of it reuses them
            self._bands[(lam, delta)] = noise_band(prob, self.grid, delta=delta)
        self.curve = self._bands[(lam, delta)]
        here = noise_study(prob, (eps,), delta=delta)
        fig = noise_figure(self.curve, epsilon=eps)
        with self.fig.batch_update():
            for i, tr in enumerate(fig.data):
                self.fig.data[i].x, self.fig.data[i].y, self.fig.data[i].name = tr.x, tr.y, tr.name
            self.fig.layout.shapes = fig.layout.shapes
            self.fig.layout.annotations = fig.layout.annotations
        c = self.curve
        lo = min(min(c["acc_paper_lo"]), min(c["acc_sound_lo"]))
        hi = max(max(c["acc_paper_hi"]), max(c["acc_sound_hi"]))
        self.lesson.value = (
            f"<b>Read the bands, not one draw:</b> single noise draws land anywhere from {lo:.2f} to {hi:.2f} "
            f"test accuracy; their mean stays at or below the noise-free {c['acc_clean']:.2f} at every epsilon and "
            f"falls as epsilon shrinks: noise costs accuracy (a lucky draw may land a test point or two above the "
            f"noise-free line, but which draw a release gets is chance). The noise buys the certificate, not "
            f"accuracy.")
        self.status.value = (f"lambda={lam:g}, epsilon={eps:.3g}, delta={delta:.1e}: sigma per model "
                             f"paper {here['sigma_paper'][0]:.3g} (accuracy {here['acc_paper'][0]:.3f}), sound "
                             f"{here['sigma_sound'][0]:.3g} (accuracy {here['acc_sound'][0]:.3f}); "
                             f"no noise {here['acc_clean']:.3f}")
