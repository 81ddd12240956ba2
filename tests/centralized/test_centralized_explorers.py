"""Headless tests of the notebook 03 / 04 explorers: moving a control changes the figure; bad input is shown."""

import pytest

pytest.importorskip("ipywidgets")


def test_trajectory_explorer():
    from unlearnkit.viz.descend_rewind import TrajectoryExplorer

    ex = TrajectoryExplorer(trials=4)
    assert ex.last_error is None
    n_train_pts = len(ex.fig.data[3].x)
    ex.time.value = 50
    assert len(ex.fig.data[3].x) < n_train_pts  # the training path is drawn up to the scrubbed time
    before = ex.status.value
    ex.regime.value = "nonconvex"
    assert ex.last_error is None and ex.status.value != before
    assert ex.dist.layout.yaxis.type == "log"
    ex.K.value = 240  # K = T: R2D is retraining
    assert "R2D E||u_T - w'_T|| = 0," in ex.status.value


def test_sigma_explorer_bad_input():
    from unlearnkit.viz.descend_rewind import SigmaExplorer

    ex = SigmaExplorer()
    y0 = list(ex.fig.data[0].y)
    ex.eps.value = 5.0
    assert list(ex.fig.data[0].y) != y0
    ex.n.value = 5  # fewer samples than deletions
    assert ex.last_error is not None and "m=" in ex.last_error
    ex.n.value = 200
    assert ex.last_error is None


def test_calibration_explorer():
    from unlearnkit.viz.noisy_finetune import CalibrationExplorer

    ex = CalibrationExplorer()
    s = ex.summary
    assert s["eps_of_paper_sigma"] == pytest.approx(7.077, abs=0.01)
    y0 = list(ex.fig_sigma.data[0].y)
    ex.eps.value = 5.0
    assert list(ex.fig_sigma.data[0].y) != y0
    ex.lam.value = 20.0  # gamma * lam = 2
    assert "gamma*lam" in ex.last_error
    ex.lam.value = 5.0
    assert ex.last_error is None
    ex.d.value = 0
    assert "d=" in ex.last_error


def test_sigma_explorer_refuses_a_typed_n_out_of_range_in_place():
    # a BoundedIntText clamped a typed 10**8 to 10**7 without a word; the explorer now says so in place
    from unlearnkit.viz.descend_rewind import SigmaExplorer

    ex = SigmaExplorer()
    import numpy as np

    before = np.array(ex.fig.data[0].y, dtype=float)
    ex.n.value = 10**8
    assert ex.last_error is not None and "n=100000000" in ex.last_error and "10000000" in ex.last_error
    assert np.array_equal(np.array(ex.fig.data[0].y, dtype=float), before, equal_nan=True)  # last good figure stays
    ex.n.value = 500
    assert ex.last_error is None
    assert not np.array_equal(np.array(ex.fig.data[0].y, dtype=float), before, equal_nan=True)


def test_nf_frontier_figure_draws_each_method_mode_and_both_references():
    from unlearnkit.viz.noisy_finetune import nf_frontier_figure

    pts = [{"method": m, "mode": mode, "epsilon": e, "test_acc": 0.8, "asr_gap": 0.1}
           for m in ("gradient_clipping", "output_perturbation") for mode in ("sound", "paper") for e in (1.0, 4.0)]
    fig = nf_frontier_figure({"points": pts, "retrain": {"test_acc": 0.9, "asr_gap": 0.0},
                              "finetune": {"test_acc": 0.85, "asr_gap": 0.3}})
    assert len(fig.data) == 8  # 2 methods x 2 modes x 2 panels
    assert sum(t.showlegend is not False for t in fig.data) == 4
    assert {t.name for t in fig.data} == {"gradient_clipping (sound)", "gradient_clipping (paper)",
                                          "output_perturbation (sound)", "output_perturbation (paper)"}
    assert sorted(s.y0 for s in fig.layout.shapes) == [0.0, 0.3, 0.85, 0.9]
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis2.type == "log"


def test_k_saturation_figure_draws_corollary_4_6_at_every_T():
    from unlearnkit.methods.descend_rewind.bounds import k_for_sigma_sc
    from unlearnkit.viz.descend_rewind import k_saturation_figure

    kw = dict(G=1.25, mu=0.05, eta=0.5, m=10, n=200, epsilon=1.0, delta=1e-3)
    Ts = [5, 50, 500, 5000]
    fig = k_saturation_figure(50.0, Ts, **kw)
    assert list(fig.data[0].x) == Ts and fig.layout.xaxis.type == "log"
    assert list(fig.data[0].y) == [k_for_sigma_sc(50.0, T=T, **kw) for T in Ts]
    assert fig.data[0].y[-1] < 1.01 * fig.data[0].y[-2]  # K saturates while T grows tenfold: T/K is unbounded
    assert fig.layout.title.text == "K needed at sigma = 50 (strongly convex)"


def test_release_rows_run_each_method_once_with_its_certificate_and_metrics():
    import unlearnkit as uk
    from unlearnkit.evaluate import accuracy, backdoor_success
    from unlearnkit.experiments import centralized_setup
    from unlearnkit.experiments.descend_rewind.lab import central_profile, profile_constants
    from unlearnkit.methods import descend_rewind as dr
    from unlearnkit.viz.descend_rewind import certified_release_rows
    from unlearnkit.viz.tables import certificate_row

    state, request = centralized_setup(central_profile("quick"), seed=0)
    C = profile_constants("quick", state, generator=uk.make_generator(7))
    bd = state.extras["backdoor"]
    conf = dr.R2DConfig(K=20, epsilon=1.0, delta=1e-5, constants=C)
    rows = certified_release_rows(state, request, {"R2D": (dr.R2D(), conf)}, backdoor=bd, seed=3)
    res = dr.R2D().unlearn(state, request, conf, generator=uk.make_generator(3))
    ds = state.dataset
    assert rows == [certificate_row("R2D", res.certificate,
                                    test_acc=accuracy(state.flat, res.params, ds.x_test, ds.y_test),
                                    backdoor_asr=backdoor_success(state.flat, res.params, bd))]
    assert rows[0]["certified"] and rows[0]["mode"] == "sound"
    assert "backdoor_asr" not in certified_release_rows(state, request, {"R2D": (dr.R2D(), conf)})[0]
