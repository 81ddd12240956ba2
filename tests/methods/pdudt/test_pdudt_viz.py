"""PDUDT figures and explorers, headless."""

import numpy as np
import pytest

from unlearnkit.experiments.pdudt import lab as L
from unlearnkit.methods import pdudt as P
from unlearnkit.viz import pdudt as V


def test_topology_figure_highlights_the_leaver():
    W = np.array([[0.5, 0.5, 0.0], [0.5, 0.25, 0.25], [0.0, 0.25, 0.75]])
    fig = V.topology_figure(W, 2)
    leaver_edges = [v for v in fig.data[1].x if v is not None]
    assert len(leaver_edges) == 2  # one edge (1, 2)
    assert len([v for v in fig.data[0].x if v is not None]) == 2  # edge (0, 1)
    assert fig.data[2].marker.color[2] == V.LEAVER
    with pytest.raises(ValueError, match="leaver"):
        V.topology_figure(W, 3)


def test_topology_explorer_churn_and_round():
    ex = V.TopologyExplorer(n=8, leaver=3, rounds=12, churn=0.0)
    assert ex.last_error is None
    static = ex.W.copy()
    assert all(np.array_equal(static[0] > 0, w > 0) for w in static)  # churn 0 is static
    ex.churn.value = 1.0
    assert not all(np.array_equal(ex.W[0] > 0, w > 0) for w in ex.W)
    before = tuple(ex.fig.data[1].x)
    ex.round.value = 5
    assert ex.last_error is None and ex.fig.layout.title.text.startswith("round 5")
    ex.leaver.value = 0
    assert ex.fig.data[2].marker.color[0] == V.LEAVER
    assert "client 0 had neighbours" in ex.status.value
    ex.churn.value = 1.5  # the slider clamps; validation still guards direct calls
    assert ex.last_error is None
    ex.round.max = 20
    ex.round.value = 15
    assert ex.last_error is not None and "round t" in ex.last_error
    assert before is not None


def test_figures_build_from_an_experiment_report():
    rep = L.run_pdudt_experiment(L.PDUDTExperiment(n_clients=4, leaver=3, leaver_class=None, t1=6, es_rounds=4, T=3,
                                                   hidden=8, eval_every=3, mia_repeats=5))
    fig = V.correction_figure(rep["delta_norms"], rep["p"], 0, leaver=3, es_rounds=4)
    assert len(fig.data[0].y) == 6 and abs(sum(fig.data[1].y) - 1) < 1e-6
    sig = [0.0, 0.1, 10.0]
    sweep = L.sigma_sweep(rep, sig)
    assert set(sweep) == {"perturbed_retrain", "pdudt", "pdudt_es", "control"}
    assert sweep["pdudt"][0] == pytest.approx(rep["methods"]["pdudt"]["test_acc"], abs=0.2)
    assert sweep["pdudt"][2] < sweep["pdudt"][0]  # large noise destroys the model
    assert len(V.sigma_sweep_figure(sig, sweep).data) == 4
    fig = V.accuracy_figure(rep["curves"], 6)
    assert {tr.name for tr in fig.data} >= {"PDUDT", "Retrain", "Control: no correction, same noise"}
    fig = V.mia_figure(rep["methods"], paper=L.PAPER_TABLE3["MNIST"])
    assert len(fig.data) == 2 and fig.data[1].y[0] == 65.3
    # each bar's interval: one attack's 95 % Clopper-Pearson interval, named in legend and hover
    pd_row = rep["methods"]["pdudt"]
    assert pd_row["mia_ci_low"] <= pd_row["mia_precision"] <= pd_row["mia_ci_high"]
    assert "Clopper-Pearson" in fig.data[0].name and "Clopper-Pearson" in fig.data[0].hovertext[0]
    secs = {k: v["seconds"] for k, v in rep["methods"].items() if k != "origin"}
    fig = V.time_figure(secs, paper=L.PAPER_TABLE2["MNIST"])
    assert "times longer" in fig.layout.title.text
    # the noise explorer: the slider changes the accuracy and the figure
    C = P.certify.GapConstants(L=1.0, sgd_var=1.0, het_var=1.0, delta_f=2.3, delta_f_tilde=2.3, rho1=0.9, rho2=0.9)
    corrected = rep["runs"]["pdudt"].extras["corrected"]
    ex = V.PDUDTNoiseExplorer(rep["flat"], corrected, rep["dataset"], lr=1e-3, t1=6, constants=C, sigma=1e-4)
    assert ex.last_error is None
    quiet = ex.current["avg_acc"]
    y0 = tuple(ex.sigma_fig.data[0].y)
    ex.sigma.value = 100.0
    assert ex.current["avg_acc"] < quiet
    assert tuple(ex.sigma_fig.data[0].y) != y0
    assert ex.current["certified"]["sound"] > ex.current["certified"]["paper"]
    ex.lr = 0.5  # outside the step-size condition of Theorem 4.9
    ex.epsilon.value = 2.0
    assert ex.last_error is not None and "lr=0.5" in ex.last_error


def test_sigma_figure_ratio():
    fig = V.pdudt_sigma_figure(0.01, {"paper": 213.7, "sound": 5000.0})
    assert fig.layout.yaxis.type == "log"
    assert "2.14e+04" in fig.layout.title.text


def test_method_rows_label_each_method_and_keep_its_numbers():
    rows = V.method_rows({"retrain": {"test_acc": 0.91, "mia_precision": 50.04, "mia_std": 1.26},
                          "pdudt": {"test_acc": 0.9, "after_T_test_acc": 0.93, "mia_precision": 51.0, "mia_std": 0.0}},
                         t_after=20)
    assert [r["method"] for r in rows] == ["Retrain", "PDUDT"]
    assert rows[0]["accuracy"] == 0.91 and rows[0]["after 20 more rounds"] is None
    assert rows[1]["after 20 more rounds"] == 0.93
    assert rows[0]["MIA precision (%)"] == "50.0 ± 1.3" and rows[1]["MIA precision (%)"] == "51.0 ± 0.0"


def test_release_rows_put_the_three_models_side_by_side():
    m = {"test_acc": 0.9, "retrain_test_acc": 0.91, "original_test_acc": 0.92,
         "backdoor_asr": 0.1, "retrain_backdoor_asr": 0.08, "original_backdoor_asr": 0.99}
    assert V.release_rows(m) == [
        {"metric": "test accuracy", "released": 0.9, "retrained": 0.91, "original": 0.92},
        {"metric": "backdoor success", "released": 0.1, "retrained": 0.08, "original": 0.99}]


def test_gap_certificate_rows_one_row_per_mode_and_scale_none_certified():
    from unlearnkit.methods.pdudt.certify import GapConstants, pdudt_certificate

    C = GapConstants(L=1.0, sgd_var=1.0, het_var=1.0, delta_f=2.3, delta_f_tilde=2.3, rho1=0.9, rho2=0.9)
    rows = V.gap_certificate_rows(lr=1e-3, t1=100, n=10, constants=C)
    assert [r["run"] for r in rows] == ["paper, paper", "sound, paper", "paper, sum"]
    assert not any(r["certified"] for r in rows)  # hand-set constants: nothing verifies them
    assert rows[0]["mode"] == "paper" and rows[1]["mode"] == rows[2]["mode"] == "none"
    sound = pdudt_certificate(lr=1e-3, t1=100, n=10, constants=C, mode="sound", epsilon=1.0, delta=1e-5)
    assert rows[1]["sigma"] == sound.sigma and rows[1]["note"] == sound.note
    assert rows[1]["sigma"] > rows[0]["sigma"] == rows[2]["sigma"]  # the sound calibration adds far more noise


def test_smallest_epsilon_rows_read_a_frontier():
    from unlearnkit.experiments.pdudt.frontier import smallest_epsilon_rows

    pt = lambda e, acc, asr, d: {"epsilon": e, "test_acc": acc, "backdoor_asr": asr, "dist_to_retrain": d}  # noqa: E731
    front = {"rows": {"sound / sum": [pt(1, 0.5, 0.9, 10.0), pt(8, 0.88, 0.1, 1.0)],
                      "paper / paper": [pt(1, 0.2, 0.9, 50.0), pt(8, 0.3, 0.8, 20.0)]},
             "references": {"retrain": {"test_acc": 0.9, "backdoor_asr": 0.05},
                            "original": {"test_acc": 0.92, "backdoor_asr": 0.99}}}
    assert smallest_epsilon_rows(front) == [{"row": "sound / sum", "smallest epsilon": 8},
                                            {"row": "paper / paper", "smallest epsilon": None}]
    assert smallest_epsilon_rows(front, acc_points=0.8, asr_points=1.0)[1]["smallest epsilon"] == 1
