"""Capstone figures and explorer, headless."""


import pytest

from unlearnkit.viz import capstone as C

POINTS = [
    {"method": "retrain", "epsilon": 0.0, "test_acc": 0.9, "forget_acc": 0.8, "mia_auc": 0.5, "dist_to_retrain": 0.0,
     "grad_evals": 1000, "retrain_grad_evals": 1000},
    {"method": "finetune", "epsilon": None, "test_acc": 0.88, "forget_acc": 0.9, "mia_auc": 0.56,
     "dist_to_retrain": 0.7, "grad_evals": 100, "retrain_grad_evals": 1000},
    *[{"method": "d2d", "epsilon": e, "test_acc": 0.5 + 0.05 * e, "forget_acc": 0.5, "mia_auc": 0.5,
       "dist_to_retrain": 10 / e, "grad_evals": 500, "retrain_grad_evals": 1000} for e in (0.5, 1.0, 4.0)],
    *[{"method": "output_perturbation", "epsilon": e, "test_acc": 0.4 + 0.05 * e, "forget_acc": 0.4,
       "mia_auc": 0.5, "dist_to_retrain": 20 / e, "grad_evals": 0, "retrain_grad_evals": 1000} for e in (0.5, 1.0, 4.0)],
]


def test_frontier_has_one_trace_per_certified_method():
    fig = C.frontier_figure(POINTS, metric="test_acc", retrain=0.9)
    names = [t.name for t in fig.data]
    assert names[:2] == ["d2d", "output_perturbation"]
    assert list(fig.data[0].x) == [0.5, 1.0, 4.0]
    # the levels without a certificate are legend entries (annotations at one height overlapped)
    assert any("finetune" in n for n in names[2:]) and names[-1].startswith("retrain")
    assert not fig.layout.annotations and list(fig.data[-1].y) == [0.9, 0.9]
    with pytest.raises(ValueError, match="metric"):
        C.frontier_figure(POINTS, metric="accuracy")


def test_cost_and_audit_figures():
    fig = C.cost_figure(POINTS[:3])
    assert list(fig.data[0].y)[:2] == [1.0, 0.1]
    from unlearnkit import audit as A
    import torch

    g = torch.Generator().manual_seed(0)
    res = [A.audit_gaussian(sensitivity=1.0, sigma=s, epsilon=1.0, delta=1e-5, config=A.AuditConfig(n_trials=400),
                            generator=g, label=lab) for s, lab in ((4.0, "ok"), (0.1, "bad"))]
    fig = C.audit_figure(res)
    assert list(fig.data[0].marker.color) == ["#2ca02c", "#d62728"]
    assert list(fig.data[1].y) == [1.0, 1.0]
    hist = C.audit_histogram(res[1])
    assert len(hist.data) == 2


def test_explorer_reacts_and_shows_errors():
    ex = C.CapstoneExplorer(POINTS, retrain={"test_acc": 0.9})
    assert ex.epsilons == [0.5, 1.0, 4.0]
    before = ex.table.value
    ex.slider.value = 4.0
    assert ex.table.value != before and "4" in ex.fig.layout.title.text
    assert [p["epsilon"] for p in ex.rows_at(4.0) if p["method"] == "d2d"] == [4.0]
    ex.metric.value = "dist_to_retrain"
    assert "distance" in ex.fig.layout.yaxis.title.text
    assert list(ex.fig.data[0].y) == [20.0, 10.0, 2.5]
    n = ex.n_updates
    ex.points.append({"method": "bad", "epsilon": -1.0, "test_acc": 0.1})
    ex.slider.value = 0.5
    assert ex.last_error is not None and "epsilon" in ex.last_error
    ex.points.pop()
    ex.slider.value = 1.0
    assert ex.last_error is None and ex.n_updates > n
    with pytest.raises(ValueError, match="points"):
        C.CapstoneExplorer([])


def test_capstone_points_on_a_tiny_task():
    from unlearnkit.reproduce.frontier import CapstoneTask, capstone_points

    task = CapstoneTask(n_train=60, n_test=40, dim=3, m=4, steps=10)
    out = capstone_points(epsilons=(0.5, 4.0), methods=("retrain", "output_perturbation"), task=task)
    assert not out["skipped"]
    pts = out["points"]
    assert pts[0]["method"] == "retrain" and pts[0]["epsilon"] == 0.0 and pts[0]["dist_to_retrain"] == 0.0
    op = [p for p in pts if p["method"] == "output_perturbation"]
    assert [p["epsilon"] for p in op] == [0.5, 4.0]
    assert op[0]["sigma"] > op[1]["sigma"] > 0  # a smaller budget needs more noise
    assert all(0 <= p["test_acc"] <= 1 for p in pts)
    with pytest.raises(ValueError, match="method"):
        capstone_points(methods=("newton",), task=task)


def test_capstone_seed_points_tag_every_seed_and_rerun_the_same_task():
    from unlearnkit.reproduce.frontier import CapstoneTask, capstone_points, capstone_seed_points

    task = CapstoneTask(n_train=60, n_test=40, dim=3, m=4, steps=10)
    kw = dict(epsilons=(0.5,), methods=("retrain", "output_perturbation"))
    run = capstone_points(task=task, seed=1, mode="sound", **kw)
    pts = capstone_seed_points(run, (0, 1, 2), seed=1, **kw)
    n = len(run["points"])
    assert [p["seed"] for p in pts] == [1] * n + [0] * n + [2] * n
    untimed = lambda ps: [{k: v for k, v in p.items() if not k.endswith("seconds")} for p in ps]  # noqa: E731
    assert untimed(pts[:n]) == untimed(dict(p, seed=1) for p in run["points"])
    alone = capstone_points(task=task, seed=2, mode="sound", **kw)["points"]
    assert untimed(pts[2 * n:]) == untimed(dict(p, seed=2) for p in alone)


def test_frontier_draws_the_range_over_seeds_as_a_band():
    from unlearnkit.viz.capstone import frontier_figure

    pts = [{"method": "r2d", "epsilon": e, "requested_epsilon": e, "test_acc": a, "seed": s}
           for s, accs in ((0, (0.5, 0.6)), (1, (0.4, 0.7))) for e, a in zip((1.0, 4.0), accs)]
    fig = frontier_figure([p for p in pts if p["seed"] == 0], seed_points=pts)
    band = next(tr for tr in fig.data if tr.name == "r2d: range over 2 seeds")
    assert list(band.x) == [1.0, 4.0, 4.0, 1.0] and list(band.y) == [0.5, 0.7, 0.6, 0.4]
    assert not any("range over" in str(tr.name) for tr in frontier_figure(pts[:2]).data)
