"""Notebook 06's frontier view: the committed full-grid frontier at once, a live re-run on request.

:func:`rrdu_frontier_figure` draws a frontier dict (:func:`unlearnkit.experiments.rrdu.frontier.rrdu_frontier`):
backdoor success and clean accuracy against epsilon, sound runs solid, the paper's calibrations dotted,
retraining dashed. :class:`FrontierExplorer` shows a precomputed frontier (the package's JSON file, so Run All
does not spend 20 CPU seconds on it) and a button that recomputes the frontier live at the notebook's budgets,
one budget at a time, redrawing after each one.
"""

from __future__ import annotations

import copy
from typing import Any, Optional, Sequence

import ipywidgets as W
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ._explorer import Explorer
from ._style import readable
from .bands import add_seed_band, per_seed, seeds_text


#: one colour per method of the frontier (sound and paper calibration share a method's colour)
_COLOURS = {"rrdu_exact": "#1f77b4", "rrdu_light": "#2ca02c", "rrdu": "#17becf", "ddp": "#d62728",
            "dp_sgd": "#9467bd"}


def rrdu_frontier_figure(fr: dict, *, title: str = "RR-DU frontier (dashed: retraining)",
                         interval: str = "t95") -> go.Figure:
    """Backdoor success and clean accuracy against epsilon for every method of the frontier dict ``fr``.

    A frontier pooled over seeds (``load_precomputed_frontier(seeds=...)``) carries ``<metric>_seeds``: each
    line is then the mean over the seeds with a band (``interval``: ``"t95"``, the 95 % Student-t interval for
    the mean, or ``"minmax"``), named in the legend and the hover; the title says which seeds."""

    fig = make_subplots(rows=1, cols=2, subplot_titles=("backdoor success", "clean accuracy"))
    for fam, dash in (("sound", "solid"), ("paper", "dot")):
        for i, (name, rows) in enumerate(fr[fam].items()):
            if not rows:
                continue
            xs = [r["epsilon"] for r in rows]
            color = _COLOURS.get(name, ("#8c564b", "#e377c2", "#7f7f7f")[i % 3])
            for col, key in ((1, "asr"), (2, "clean_acc")):
                add_seed_band(fig, xs, [per_seed(r, key) for r in rows], name=f"{name} ({fam})",
                              group=f"{fam}{name}", color=color, dash=dash, interval=interval,
                              showlegend=col == 1, row=1, col=col)
    for col, key in ((1, "asr"), (2, "clean_acc")):
        fig.add_hline(y=fr["retrain"][key], line_dash="dash", line_color="black", row=1, col=col)
    fig.update_xaxes(type="log", title_text="epsilon")
    seeds = fr.get("seeds") or [fr.get("settings", {}).get("seed", 0)]
    fig.update_layout(height=400, title=f"{title}; {seeds_text(seeds, interval)}")
    return readable(fig)


class FrontierExplorer(Explorer):
    """A precomputed frontier on screen at once; *re-run live* recomputes it at ``epsilons`` on ``world``.

    Parameters
    ----------
    precomputed:
        A frontier dict (e.g. :func:`~unlearnkit.experiments.rrdu.frontier.load_precomputed_frontier`).
    world:
        The :class:`~unlearnkit.experiments.rrdu.lab.BackdoorWorld` a live run uses (the one the file was
        computed on, so the live points land on the precomputed ones).
    epsilons:
        The budgets of a live run (a few in quick mode, the whole grid in full mode).
    seed:
        The runs' seed.
    """

    def __init__(self, precomputed: dict, world: Any, *, epsilons: Sequence[float], seed: int = 0) -> None:
        super().__init__()
        if not epsilons:
            raise ValueError("epsilons=() is out of range: give at least one budget for the live run")
        self.precomputed = precomputed
        self.world, self.epsilons, self.seed = world, tuple(float(e) for e in epsilons), seed
        self.frontier: dict = precomputed
        self.live: Optional[dict] = None
        self.fig = go.FigureWidget(rrdu_frontier_figure(precomputed, title="RR-DU frontier, precomputed "
                                                                      "(dashed: retraining)"))
        self.run_button = W.Button(description="re-run live", button_style="primary",
                                   tooltip=f"recompute the frontier at epsilon = {list(self.epsilons)}")
        self.run_button.on_click(lambda _b: self.guard(self.run))
        n, made = len(precomputed["epsilons"]), precomputed.get("precomputed", {})
        self.matches = (made.get("setup") == repr(getattr(world, "setup", None))
                        and made.get("seed") == getattr(world, "seed", None))
        which = (f"seeds {', '.join(str(sd) for sd in made['seeds'])}" if made.get("seeds")
                 else f"seed {made.get('seed', '?')}")
        self.status.value = (f"precomputed: {n} budgets, {which}; <b>re-run live</b> recomputes "
                             f"{len(self.epsilons)} of them here (seed {seed} only: no band)")
        if not self.matches:  # a changed SETUP or SEED: the stored points are another world's
            self.status.value = ("<b>the precomputed frontier was computed for another setup or seed than this "
                                 "world's: press re-run live</b>")
        self._layout(W.HBox([self.run_button]), self.fig)

    def update(self) -> None:
        """Nothing to recompute on a control change: the view has no sliders."""

    def _redraw(self, fr: dict, title: str) -> None:
        fig = rrdu_frontier_figure(fr, title=title)
        with self.fig.batch_update():
            self.fig.data = ()
            for tr in fig.data:
                self.fig.add_trace(tr)
            self.fig.layout = fig.layout

    def run(self) -> dict:
        """Recompute the frontier at :attr:`epsilons`, one budget at a time, redrawing after each."""
        from ..experiments.rrdu.frontier import rrdu_frontier  # deferred: imports torch

        live: Optional[dict] = None
        for i, eps in enumerate(self.epsilons):
            self.status.value = f"running live: epsilon = {eps:g} ({i + 1} of {len(self.epsilons)}) ..."
            part = rrdu_frontier([eps], world=self.world, seed=self.seed)
            if live is None:
                live = copy.deepcopy(part)
            else:
                live["epsilons"] += part["epsilons"]
                for fam in ("sound", "paper"):
                    for name, rows in part[fam].items():
                        live[fam][name] += rows
            self._redraw(live, f"RR-DU frontier, live: {i + 1} of {len(self.epsilons)} budgets")
        self.live = self.frontier = live
        self.status.value = f"live: {len(self.epsilons)} budgets recomputed in this kernel"
        return live
