"""Explorers of the first two notebooks: how data is split among clients, and forgetting baselines live.

- :class:`PartitionExplorer`: choose the number of clients, the split (IID, Dirichlet, shards) and alpha;
  see each client's label histogram.
- :class:`ForgettingDashboard`: choose a baseline (retrain, fine-tune, gradient ascent) and a forget request,
  press Run, and watch forget accuracy, test accuracy and membership-inference AUC move towards (or away from)
  retraining's, chunk by chunk, on a gradient-evaluation axis. The runs themselves are
  :func:`unlearnkit.experiments.labs.baselines.run_baseline_in_chunks`.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from .. import data as D
from ..runtime import make_generator
from ..core import DivergenceError, Request
from ..evaluate import report
from ..experiments import centralized_setup
from ..experiments.centralized import CentralProfile
from ..experiments.labs.baselines import retrain_reference, run_baseline_in_chunks
from ._explorer import Explorer
from .figures import forgetting_curves, label_histogram, metrics_bars


class PartitionExplorer(Explorer):
    """Sliders for the number of clients, the scheme and Dirichlet's alpha; a heatmap of labels per client."""

    def __init__(self, dataset: D.datasets.Dataset, *, n_clients: int = 10, seed: int = 0) -> None:
        super().__init__()
        self.dataset = dataset
        self.seed = seed
        self.n_clients = W.IntSlider(value=n_clients, min=2, max=50, description="clients")
        self.scheme = W.Dropdown(options=["iid", "dirichlet", "shards"], value="dirichlet", description="scheme")
        self.alpha = W.FloatLogSlider(value=0.5, base=10, min=-2, max=2, step=0.1, description="alpha")
        self.fig = go.FigureWidget(label_histogram(np.zeros((n_clients, dataset.n_classes))))
        self.federation: Optional[D.Federation] = None
        for w in (self.n_clients, self.scheme, self.alpha):
            self.observe(w)
        self._layout(W.HBox([self.n_clients, self.scheme, self.alpha]), self.fig)
        self.refresh()

    def update(self) -> None:
        fed = D.partition(self.dataset, self.n_clients.value, self.scheme.value, alpha=self.alpha.value,
                          seed=self.seed)
        self.federation = fed
        counts = fed.label_histogram()
        new = label_histogram(counts, title=f"{fed.n_clients} clients, {fed.scheme}"
                              + (f" (alpha={self.alpha.value:.2g})" if fed.scheme == "dirichlet" else ""))
        with self.fig.batch_update():
            self.fig.data[0].z = new.data[0].z
            self.fig.data[0].y = new.data[0].y
            self.fig.layout.title.text = new.layout.title.text
            self.fig.layout.height = new.layout.height
        sizes = fed.sizes
        self.status.value = f"client sizes: min {sizes.min()}, max {sizes.max()}, total {sizes.sum()}"


_METHODS = {
    "retrain": "retrain from scratch (exact, expensive)",
    "finetune": "fine-tune on the retain data",
    "gradient_ascent": "gradient ascent on the forget set",
}


class ForgettingDashboard(Explorer):
    """Run a baseline on a forget request and watch the forgetting metrics live.

    The original model is trained once (quick profile, digits MLP). Each run proceeds in ``chunks``: after
    every chunk of steps the metrics are recomputed and the curves redrawn, so the learner sees forgetting
    happen (or not). Dashed lines are the retrained model's values: the target.

    Parameters
    ----------
    profile:
        The :class:`~unlearnkit.experiments.CentralProfile` to train the original model with.
    chunks:
        How many times per run the metrics are recomputed and drawn.
    """

    def __init__(self, profile: CentralProfile | str = "quick", *, seed: int = 0, chunks: int = 8,
                 setup: Any = None) -> None:
        super().__init__()
        self.seed = seed
        self.chunks = chunks
        self.state, default_request = setup if setup is not None else centralized_setup(profile, seed=seed)
        ds = self.state.dataset
        self.method = W.Dropdown(options=[(v, k) for k, v in _METHODS.items()], value="finetune", description="method")
        self.kind = W.ToggleButtons(options=["class", "samples"], value="class", description="forget")
        self.label = W.IntSlider(value=3, min=0, max=ds.n_classes - 1, description="class")
        self.m = W.IntSlider(value=30, min=1, max=300, description="samples")
        self.steps = W.IntSlider(value=160, min=8, max=1200, step=8, description="steps")
        self.lr = W.FloatText(value=0.1, description="lr", layout=W.Layout(width="160px"))
        self.run_button = W.Button(description="Run", button_style="primary", icon="play")
        self.fig = go.FigureWidget(forgetting_curves([], reference=None))
        self.bars = go.FigureWidget(metrics_bars({}))
        self.results: dict[str, dict[str, float]] = {}
        self.history: list[dict[str, float]] = []
        self.run_button.on_click(lambda _b: self.guard(self.run))
        self.observe(self.kind, self._sync_controls)
        self.observe(self.steps, self._draw_budget)
        self._layout(W.HBox([self.method, self.kind]), W.HBox([self.label, self.m]),
                     W.HBox([self.steps, self.lr, self.run_button]), self.fig, self.bars)
        self._sync_controls()
        self._retrain_cache: dict[tuple, Any] = {}
        self._draw_budget()

    def budget(self) -> int:
        """Gradient evaluations the next run will spend (steps x batch size)."""
        return int(self.steps.value) * int(getattr(self.state.config, "batch_size", 32))

    def _draw_budget(self) -> None:
        """Two vertical markers: the next run's budget and one retraining's cost (what unlearning must beat)."""
        retrain = int(self.state.cost.grad_evals)
        budget = self.budget()
        with self.fig.batch_update():
            self.fig.layout.shapes = [
                dict(type="line", x0=budget, x1=budget, y0=0, y1=1, yref="y", line=dict(color="#555", dash="dot")),
                dict(type="line", x0=retrain, x1=retrain, y0=0, y1=1, yref="y", line=dict(color="#2ca02c", width=2)),
            ]
            self.fig.layout.annotations = [
                dict(x=budget, y=1.0, yref="y", text=f"budget {budget}", showarrow=False, yanchor="bottom",
                     font=dict(size=10, color="#555")),
                dict(x=retrain, y=0.92, yref="y", text=f"retraining {retrain}", showarrow=False,
                     font=dict(size=10, color="#2ca02c")),
            ]
            self.fig.layout.xaxis.range = [0, 1.05 * max(budget, retrain)]

    def _sync_controls(self) -> None:
        self.label.disabled = self.kind.value != "class"
        self.m.disabled = self.kind.value != "samples"

    def request(self) -> Request:
        ds = self.state.dataset
        if self.kind.value == "class":
            return D.forget_class(ds, self.label.value)
        rng = np.random.default_rng(self.seed)
        if self.m.value > ds.n_train:
            raise ValueError(f"samples={self.m.value} is out of range: expected 1..{ds.n_train}")
        return Request("samples", rng.choice(ds.n_train, size=self.m.value, replace=False))

    def _reference(self, request: Request):
        key = (request.kind, request.label, request.m)
        if key not in self._retrain_cache:
            self._retrain_cache[key] = retrain_reference(self.state, request,
                                                         generator=make_generator(self.seed + 7))
        return self._retrain_cache[key]

    def _lr(self) -> float:
        lr = float(self.lr.value)
        if not lr > 0 or lr != lr:
            raise ValueError(f"lr={lr!r} is out of range: expected lr in (0, inf)")
        return lr

    def run(self) -> dict[str, float]:
        """Run the selected baseline now (the Run button calls this); returns its final metrics."""
        name = self.method.value
        lr = self._lr()  # validate every input before anything is redrawn
        request = self.request()
        reference = self._reference(request)
        ref_metrics = report(self.state.flat, reference, self.state.dataset, request)

        def draw(history: list[dict[str, float]]) -> None:
            self.history = history
            self._draw(ref_metrics, name, request, force=len(history) == 1)

        try:
            out = run_baseline_in_chunks(self.state, request, name, steps=self.steps.value, chunks=self.chunks,
                                         lr=lr, generator=make_generator(self.seed + 1), on_chunk=draw)
        except DivergenceError:  # shown in place by guard(); no metric of the diverged model is ever shown
            self._forget_run(name)
            raise
        current, grad_evals = out["params"], out["grad_evals"]
        self._draw(ref_metrics, name, request, force=True)
        final = dict(self.history[-1])
        self.results[name] = final
        self.results["retrain (reference)"] = ref_metrics
        self._draw_bars()
        self.status.value = (f"<b>{name}</b> on '{request.describe()}': forget accuracy "
                             f"{final['forget_acc']:.2f} (retrain {ref_metrics['forget_acc']:.2f}), test accuracy "
                             f"{final['test_acc']:.2f}, MIA AUC {final['mia_auc']:.2f}, {grad_evals} gradient evaluations")
        self.params = current
        return final

    def run_each(self, names: Sequence[str]) -> dict[str, dict[str, float]]:
        """Run the baselines ``names`` one after the other, as pressing Run once per menu entry does.

        The curves show the last run, so the menu ends on the method they show: the entry the menu showed
        before runs last when it is among ``names``; otherwise the menu stays on the last name. The bars keep
        every run. Returns :attr:`results`: each baseline's final metrics and the retrained reference's.
        """
        shown = self.method.value
        for name in [n for n in names if n != shown] + [n for n in names if n == shown]:
            self.method.value = name
            self.run()
        return self.results

    def _forget_run(self, name: str) -> None:
        """A run of ``name`` diverged: drop its status line, its bars and its parameters (none is its own)."""
        self.status.value = f"<b>{name}</b> diverged: no metrics (see the message above)"
        self.results.pop(name, None)
        self.params = None
        self._draw_bars()

    def _draw_bars(self) -> None:
        with self.bars.batch_update():
            new = metrics_bars(self.results)
            self.bars.data = []
            for tr in new.data:
                self.bars.add_trace(tr)

    def _draw(self, ref: dict, name: str, request: Request, force: bool = False) -> None:
        if not self.throttled(force):
            return
        new = forgetting_curves(self.history, reference=ref, title=f"{name}: {request.describe()}")
        with self.fig.batch_update():
            if len(self.fig.data) != len(new.data):
                self.fig.data = []
                for tr in new.data:
                    self.fig.add_trace(tr)
            else:
                for old, tr in zip(self.fig.data, new.data):
                    old.x, old.y = tr.x, tr.y
            self.fig.layout.title.text = new.layout.title.text
