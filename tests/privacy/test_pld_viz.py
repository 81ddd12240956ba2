"""The PLD and trade-off figures."""

import numpy as np
import pytest

pytest.importorskip("plotly")

from unlearnkit.privacy import PLD  # noqa: E402
from unlearnkit.viz._style import style_problems  # noqa: E402
from unlearnkit.viz.pld import gdp_tradeoff_figure, pld_pmf_figure  # noqa: E402


def test_figures():
    fig = gdp_tradeoff_figure({"sigma 10, 100 steps": 1.0, "sigma 5, 100 steps": 2.0})
    assert len(fig.data) == 3 and fig.data[1].name.startswith("sigma 10")
    pld = PLD.subsampled_gaussian(0.04, 1.5, grid=1e-2).self_compose(50)
    f2 = pld_pmf_figure(pld)
    assert len(f2.data) == 2 and "epsilon at delta=1e-05" in f2.layout.title.text
    assert not style_problems(fig) and not style_problems(f2)
    with pytest.raises(ValueError, match="direction="):
        pld_pmf_figure(pld, direction="both")


def test_tradeoff_audit_figure_from_an_audit():
    import torch

    from unlearnkit.audit import AuditConfig, audit_gaussian
    from unlearnkit.privacy import analytic_gaussian_sigma
    from unlearnkit.privacy.tradeoff import gaussian_certificate_mu
    from unlearnkit.viz.pld import audit_operating_points, tradeoff_audit_figure

    sigma = analytic_gaussian_sigma(8.0, 1e-5)  # mu about 2: visible to 200 held-out trials per world
    res = audit_gaussian(sensitivity=1.0, sigma=sigma, epsilon=8.0, delta=1e-5, config=AuditConfig(n_trials=400),
                         generator=torch.Generator(device="cpu").manual_seed(0))
    pts = audit_operating_points(res, n_points=8)
    assert pts.alpha == res.alpha and pts.fpr.size <= 8
    mu = gaussian_certificate_mu(sigma)
    fig = tradeoff_audit_figure({"certificate": mu}, pts, dp={"same, as (eps, delta)": (8.0, 1e-5)})
    names = [d.name for d in fig.data]
    assert len(names) == 4 and names[-1].startswith("audit tests")   # diagonal, G_mu, f_eps_delta, points
    assert not style_problems(fig)
    # a claim of far less leakage than the truth gets red boxes
    fig2 = tradeoff_audit_figure({"understated": 0.3}, pts, log_axes=True)
    assert any(d.name.startswith("box below") for d in fig2.data)
    honest = PLD.gaussian(sigma, grid=1e-2)
    fig3 = tradeoff_audit_figure({}, pts, plds={"as a PLD": honest})
    assert [d.name for d in fig3.data][1] == "as a PLD (PLD profile)" and not style_problems(fig3)
    assert not any(d.name.startswith("box below") for d in fig3.data)
    with pytest.raises(TypeError, match="points="):
        tradeoff_audit_figure({"c": mu}, [0.1])
    with pytest.raises(TypeError, match="result="):
        audit_operating_points(object())


def test_bracket_sweep_figure_and_explorer():
    pytest.importorskip("ipywidgets")
    pytest.importorskip("anywidget")
    from unlearnkit.viz.pld import PLDBracketExplorer, pld_bracket_figure, pld_bracket_sweep

    sw = pld_bracket_sweep(1.0, 10.0, 100, 1e-5, grids=(1e-1, 1e-2, 1e-3))
    assert np.all(sw["lower"] <= sw["exact"]) and np.all(sw["exact"] <= sw["upper"])
    assert np.all(np.diff(sw["upper"] - sw["lower"]) < 0) and sw["rdp"] > sw["upper"][-1]
    fig = pld_bracket_figure(sw)
    assert len(fig.data) == 5 and not style_problems(fig)
    assert pld_bracket_sweep(0.1, 2.0, 50, 1e-5, grids=(1e-2,))["exact"] is None

    ex = PLDBracketExplorer()
    assert ex.last_error is None and ex.current["grid"] == pytest.approx(1e-2)
    w0 = ex.current["bracket"].width
    ex.log10_grid.value = -3.0
    b = ex.current["bracket"]
    assert b.width < w0 / 5 and b.lower <= ex.current["sweep"]["exact"] <= b.upper and "inside" in ex.result.value
    ex.q.value = 0.1  # a new sweep, no exact value
    assert ex.current["sweep"]["exact"] is None and len(ex.fig.data[3].x) == 0 and ex.last_error is None
    ex.log10_delta.max = 1.0
    ex.log10_delta.value = 0.5  # delta > 1: shown in place, naming the parameter
    assert ex.last_error is not None and "delta" in ex.last_error

