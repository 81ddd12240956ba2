"""Notebook 02's figures and explorers, driven headlessly."""

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

from unlearnkit.privacy import analytic_gaussian_sigma
from unlearnkit.privacy.rdp import DEFAULT_ORDERS, subsampled_gaussian_rdp
from unlearnkit.viz.privacy import (  # noqa: E402
    CalibratorExplorer,
    GaussianExplorer,
    RenyiExplorer,
    conversions_figure,
    gaussian_densities_figure,
)


def test_pure_figures():
    fig = gaussian_densities_figure(1.0, 1e-5, 2.0)
    assert len(fig.data) == 4 and "analytic 7.46" in fig.layout.title.text
    rdp = subsampled_gaussian_rdp(0.04, 1.5) * 2250
    conv = conversions_figure(np.asarray(DEFAULT_ORDERS), rdp, 1e-5)
    names = [t.name for t in conv.data]
    assert any(n.startswith("cks: eps=7.3") for n in names)


def test_gaussian_explorer_reacts_and_reports_errors():
    ex = GaussianExplorer(epsilon=0.5, log10_delta=-5, sensitivity=1.0)
    before = tuple(ex.fig.data[0].y)
    ex.epsilon.value = 10.0
    assert tuple(ex.fig.data[0].y) != before
    assert ex.current["sigma_analytic"] == pytest.approx(analytic_gaussian_sigma(10.0, 1e-5))
    assert "lies" in ex.sigma_text.value  # eps = 10: the classic formula under-noises
    ex.epsilon.value = 0.5
    assert "lies" not in ex.sigma_text.value and ex.last_error is None
    ex.sensitivity.value = 0.0 + 1e-9  # slider clamps to its minimum; still valid
    assert ex.last_error is None
    # a bad value set programmatically is shown in place, naming the parameter
    ex.log10_delta.max = 1.0
    ex.log10_delta.value = 0.5
    assert ex.last_error is not None and "delta" in ex.last_error


def test_renyi_explorer_live_comparison_with_dp_accounting():
    pytest.importorskip("dp_accounting")
    ex = RenyiExplorer(q=0.04, sigma=1.5, steps=2250)
    assert ex.current["cks"][0] == pytest.approx(ex.current["dp_accounting"][0], rel=1e-3)
    assert "dp_accounting (cks)" in ex.table.value
    before = tuple(ex.curve_fig.data[0].y)
    title = ex.conv_fig.layout.title.text
    ex.sigma.value = 3.0
    assert tuple(ex.curve_fig.data[0].y) != before
    ex.log10_delta.value = -8
    assert ex.conv_fig.layout.title.text != title
    assert ex.current["cks"][0] <= ex.current["balle"][0] <= ex.current["mironov"][0]
    ex.steps.value = 10
    assert ex.n_updates >= 4 and ex.last_error is None


def test_calibrator_explorer_never_overshoots():
    ex = CalibratorExplorer(epsilon=2.0, log10_delta=-5, q=0.02, steps=200, n_grid=6)
    for m, s in ex.current["sigma"].items():
        assert ex.current["achieved"][m] <= 2.0
    s_before = ex.current["sigma"]["cks"]
    ex.epsilon.value = 4.0
    assert ex.current["sigma"]["cks"] < s_before
    assert ex.fig.data[-2].x[0] == pytest.approx(ex.current["sigma"]["cks"])
    assert "sigma" in ex.result.value


def test_renyi_explorer_without_dp_accounting_never_shows_our_curve_under_its_name(monkeypatch):
    import unlearnkit.experiments.labs.privacy as lab

    monkeypatch.setattr(lab, "dp_accounting_curve", lambda *a, **k: None)
    ex = RenyiExplorer(q=0.04, sigma=1.5, steps=2250)
    names = [t.name for t in ex.curve_fig.data]
    assert names[:2] == ["ours", "dp_accounting (not installed)"]  # then the curve without subsampling
    assert len(ex.curve_fig.data[1].x) == 0 and "not installed" in ex.table.value


def test_gaussian_sigma_rows_compare_the_two_calibrations():
    from unlearnkit.experiments.labs.privacy import gaussian_sigma_rows
    from unlearnkit.privacy import classic_gaussian_sigma
    from unlearnkit.privacy.gaussian import gaussian_delta

    rows = gaussian_sigma_rows([0.5, 1.0, 20.0], 1e-5)
    assert [r["epsilon"] for r in rows] == [0.5, 1.0, 20.0]
    for r in rows:
        assert r["analytic sigma"] == analytic_gaussian_sigma(r["epsilon"], 1e-5)
        assert r["classic sigma"] == classic_gaussian_sigma(r["epsilon"], 1e-5, warn=False)
        assert r["classic really gives delta"] == gaussian_delta(r["epsilon"], r["classic sigma"])
    assert rows[0]["analytic sigma"] < rows[0]["classic sigma"]  # within the classic proof: the exact one is smaller
    assert rows[-1]["classic really gives delta"] > 1e-5  # far past epsilon = 1 the classic sigma falls short


def test_relaxed_sigma_rows_need_far_more_noise_than_a_fixed_sensitivity():
    from unlearnkit.experiments.labs.privacy import relaxed_sigma_rows
    from unlearnkit.privacy import classic_gaussian_sigma
    from unlearnkit.privacy.gaussian import relaxed_gaussian_sigma

    rows = relaxed_sigma_rows(0.5, 1e-5)
    assert [r["moment"] for r in rows] == ["first_moment", "second_moment"]
    assert rows[0]["sigma"] == relaxed_gaussian_sigma(0.5, 1e-5, first_moment=1.0).sigma
    assert rows[1]["sigma"] == relaxed_gaussian_sigma(0.5, 1e-5, second_moment=1.0).sigma
    det = classic_gaussian_sigma(0.5, 1e-5)
    assert all(r["deterministic sensitivity needs"] == det and r["sigma"] > det for r in rows)


def test_rdp_oracle_rows_put_both_accountants_against_the_exact_value(monkeypatch):
    import unlearnkit.experiments.labs.privacy as lab
    from unlearnkit.privacy.rdp import subsampled_gaussian_rdp_mpmath

    rows = lab.rdp_oracle_rows(0.04, 1.5, [1.5, 4.0])
    assert [r["alpha"] for r in rows] == [1.5, 4.0]
    for r in rows:
        assert r["exact"] == subsampled_gaussian_rdp_mpmath(0.04, 1.5, r["alpha"])
        assert r["ours"] == float(subsampled_gaussian_rdp(0.04, 1.5, [r["alpha"]])[0])
        assert r["ours / exact - 1"] == r["ours"] / r["exact"] - 1 and abs(r["ours / exact - 1"]) < 1e-9
    if rows[0]["dp_accounting"] is not None:  # dp_accounting 0.6.0 drops the signs at a fractional order
        assert rows[0]["dp_accounting / exact - 1"] > 1e-3 and abs(rows[1]["dp_accounting / exact - 1"]) < 1e-9
    monkeypatch.setattr(lab, "dp_accounting_curve", lambda *a, **k: None)
    missing = lab.rdp_oracle_rows(0.04, 1.5, [4.0])[0]
    assert missing["dp_accounting"] is None and missing["dp_accounting / exact - 1"] is None
