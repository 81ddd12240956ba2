import numpy as np
import pytest

from unlearnkit.experiments import centralized_setup
from unlearnkit.experiments.centralized import CentralProfile
from unlearnkit.train import SGDConfig
from unlearnkit.viz import figures
from unlearnkit.viz.dashboard import ForgettingDashboard, PartitionExplorer


@pytest.fixture(scope="module")
def setup():
    prof = CentralProfile(train=SGDConfig(steps=200, lr=0.5, batch_size=32, weight_decay=1e-4))
    return centralized_setup(prof, seed=0, device="cpu")


def test_pure_figures(digits):
    fig = figures.image_grid(digits.x_train[:12].numpy(), digits.y_train[:12].tolist(), ncols=6,
                             highlight=[i < 2 for i in range(12)])
    assert len(fig.layout.annotations) == 12 and len(fig.layout.shapes) == 2
    hist = figures.label_histogram(np.ones((3, 10)))
    assert hist.data[0].z.shape == (3, 10) if hasattr(hist.data[0].z, "shape") else len(hist.data[0].z) == 3
    curves = figures.forgetting_curves([{"grad_evals": 0, "forget_acc": 1.0, "test_acc": 0.9, "mia_auc": 0.6},
                                        {"grad_evals": 10, "forget_acc": 0.5, "test_acc": 0.9, "mia_auc": 0.5}],
                                       reference={"forget_acc": 0.0, "test_acc": 0.88, "mia_auc": 0.5})
    assert len(curves.data) == 6
    with pytest.raises(ValueError, match="no images"):
        figures.image_grid(np.zeros((0, 8, 8)), [])


def test_partition_explorer_reacts(digits):
    ex = PartitionExplorer(digits, n_clients=5)
    z0 = np.array(ex.fig.data[0].z)
    ex.alpha.value = 100.0
    z1 = np.array(ex.fig.data[0].z)
    assert not np.array_equal(z0, z1)
    ex.n_clients.value = 8
    assert len(ex.fig.data[0].z) == 8 and ex.last_error is None and "8 clients" in ex.fig.layout.title.text


def test_forgetting_dashboard_runs_and_shows_errors_in_place(setup):
    dash = ForgettingDashboard(setup=setup, chunks=3)
    shapes_before = dash.fig.layout.shapes[0].x0
    dash.steps.value = 48
    assert dash.fig.layout.shapes[0].x0 == 48 * 32 != shapes_before  # the budget marker follows the slider
    dash.method.value = "finetune"
    dash.run_button.click()
    assert dash.last_error is None
    assert len(dash.history) == 4 and dash.history[-1]["grad_evals"] == 48 * 32
    assert "finetune" in dash.results and len(dash.fig.data[0].x) == 4
    before = list(dash.fig.data[0].y)
    dash.lr.value = -0.5
    dash.run_button.click()  # must not raise
    assert "lr=-0.5" in dash.last_error and "lr=-0.5" in dash.message.value
    assert list(dash.fig.data[0].y) == before  # the last good figure stays
    dash.lr.value = 0.1
    dash.method.value = "retrain"
    dash.kind.value = "samples"
    assert dash.label.disabled and not dash.m.disabled
    dash.run_button.click()
    assert dash.last_error is None and "retrain" in dash.results


@pytest.mark.parametrize("method", ["finetune", "gradient_ascent"])
def test_forgetting_dashboard_shows_divergence_in_place_never_its_metrics(setup, method):
    """Issue 18: with lr = 1e30 the model became NaN and the status line read like perfect forgetting."""
    dash = ForgettingDashboard(setup=setup, chunks=2)
    dash.steps.value = 16
    dash.method.value = method
    dash.run_button.click()  # a good run first: its status line and bars must not outlive a diverged run
    assert dash.last_error is None and "forget accuracy" in dash.status.value and method in dash.results
    dash.lr.value = 1e30
    dash.run_button.click()  # must not raise
    assert "non-finite" in dash.last_error and "lr=1e+30" in dash.last_error and " of 2 (" in dash.last_error
    assert "diverged" in dash.message.value
    assert "forget accuracy" not in dash.status.value and "diverged" in dash.status.value
    assert method not in dash.results and dash.params is None
    assert all(np.isfinite(v) for row in dash.history for v in row.values())  # only pre-divergence rows


def test_run_each_runs_every_baseline_and_the_menu_names_the_curves_shown(setup):
    dash = ForgettingDashboard(setup=setup, chunks=2)
    dash.steps.value = 16
    dash.method.value = "gradient_ascent"
    results = dict(dash.run_each(["finetune", "retrain"]))  # the shown entry is not among them: the menu names the last
    assert dash.method.value == "retrain" and dash.last_error is None
    assert dash.fig.layout.title.text.startswith("retrain:")
    dash.method.value = "finetune"
    dash.run_each(["finetune", "gradient_ascent"])  # the shown entry runs last, so the menu stays on it
    assert dash.method.value == "finetune" and dash.fig.layout.title.text.startswith("finetune:")
    assert set(results) == {"finetune", "retrain", "retrain (reference)"}
    assert {tr.name for tr in dash.bars.data} == set(results) | {"gradient_ascent"}  # the bars keep every run
    one = ForgettingDashboard(setup=setup, chunks=2)  # the same as choosing each entry and pressing Run
    one.steps.value = 16
    one.method.value = "finetune"
    assert one.run() == results["finetune"]
