"""Notebook 06's figures and explorer, driven headlessly."""

import numpy as np
import pytest

from unlearnkit.experiments.rrdu.lab import BackdoorSetup, build_world
from unlearnkit.viz.rrdu import (RRDUExplorer, capacity_figure, curves_figure, ledger_figure, accountant_sigma_figure,
                                 walk_figure)


def test_pure_figures():
    f = walk_figure(5, 2, [0, 2, 3], upto=2)
    assert "noisy" in f.layout.title.text and len(f.data) == 4
    assert list(ledger_figure(np.array([1.0, np.nan, 2.0]), 1).data[0].y) == [1.0, 0.0, 2.0]
    c = curves_figure({"a": {"hop": [1, 2], "clean_acc": [0.5, 0.6], "asr": [0.9, 0.1]}}, start=1)
    assert len(c.data) == 2
    s = accountant_sigma_figure(delta=1e-5, n_clients=10, p=0.1, T_unlearn=100, L=0.5, eps_grid=np.array([0.5, 1.0]), m=10)
    assert len(s.data) == 6 and s.data[2].y[1] == pytest.approx(25.70, rel=1e-3)  # accountant C at eps=1
    cap = capacity_figure(epsilon=1, delta=1e-5, n_clients=10, d=100, T_unlearn=100, L=0.5, rho=0.5, p=0.1, s=4)
    assert max(cap.data[0].y) > max(cap.data[1].y)


def test_explorer_sliders_recalibrate_and_redraw():
    ex = RRDUExplorer(n_clients=6, u=1, T_unlearn=40)
    assert ex.last_error is None and ex.sigma > 0
    s0, y0 = ex.sigma, list(ex.ledger_fig.data[0].y)
    ex.epsilon.value = 5.0
    assert ex.sigma < s0 and list(ex.ledger_fig.data[0].y) != y0
    ex.accountant.value = "B"
    sb = ex.sigma
    ex.accountant.value = "C"
    assert ex.sigma >= sb
    ex.p.value = 0.6
    assert ex.last_error is None and np.mean(ex.route == 1) > 0.4
    ex.p.value, ex.epsilon.value = 0.05, 20.0
    cap0 = [y or 0.0 for y in ex.capacity_fig.data[0].y]  # m* = 0 is left out of the log plot (None)
    ex.rho.value = 0.32  # a small trust ball leaves the variance-limited regime: capacity appears
    assert ex.last_error is None and max(y or 0.0 for y in ex.capacity_fig.data[0].y) > max(cap0)


def test_explorer_shows_errors_in_place():
    ex = RRDUExplorer(n_clients=4, u=0, T_unlearn=10)
    ex.run_button.click()
    assert ex.last_error and "world" in ex.last_error
    ex.p.value = 0.0  # p = 0: no noise needed, nothing charged
    assert ex.last_error is None and ex.sigma == 0.0
    assert np.nansum(ex.ledger_epsilons(ex.route)) == 0.0


TINY = BackdoorSetup(m=50, T_train=12, T_unlearn=12, local_steps=2, hidden=(16,), eval_every=4)


@pytest.fixture(scope="module")
def tiny_world():
    return build_world(TINY, seed=0)


def test_continuous_unlearning_collapses_on_a_tiny_world(tiny_world):
    """Table 3's p = 1 row in miniature: ascent at every hop destroys the model, p = 0 fine-tunes it
    (measured: clean 0.13 vs 0.77)."""
    from unlearnkit.experiments.rrdu.lab import sweep

    rows = {r["p"]: r for r in sweep(tiny_world, "p", [0.0, 1.0], noise=False, project=False)}
    assert rows[1.0]["clean_acc"] < rows[0.0]["clean_acc"] - 0.3
    assert rows[1.0]["asr"] <= 0.05


def test_explorer_runs_live_on_a_tiny_world(tiny_world):
    world = tiny_world
    ex = RRDUExplorer(world)
    n_before = len(ex.curve_fig.data)
    res = ex.run()
    assert ex.last_error is None
    assert set(res) == {"rrdu", "ddp"}
    assert len(res["rrdu"]["curve"]["hop"]) == 3 and res["rrdu"]["curve"]["hop"][0] == TINY.T_train + 4
    assert len(ex.curve_fig.data) > n_before
    assert "backdoor" in ex.status.value
    assert ex.walk_fig.layout.title.text.startswith("hop 12")


def test_p_zero_says_why_sigma_is_zero():
    """p = 0 gives sigma = 0 (u is never visited): the explorer says so in words, so it never reads as a clamp."""
    ex = RRDUExplorer(n_clients=6, u=1, T_unlearn=40)
    assert "p = 0" not in ex.sigma_text.value
    ex.p.value = 0.0
    assert ex.last_error is None and ex.sigma == 0
    assert "p = 0: the walk never routes to u" in ex.sigma_text.value


def test_capacity_figure_says_where_rrdu_capacity_is_zero():
    """m* = 0 cannot be drawn on the log axis: the points are left out and an annotation says where."""
    from unlearnkit.viz.rrdu import capacity_figure

    fig = capacity_figure(epsilon=1.0, delta=1e-5, n_clients=10, d=650, T_unlearn=100, L=1.0, rho=10.0, p=0.1, s=1)
    assert all(y is None or y > 0 for y in fig.data[0].y)
    assert any("RR-DU m* = 0" in a.text for a in fig.layout.annotations)
