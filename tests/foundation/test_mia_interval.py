"""The membership-inference AUC comes with its 95 % interval: :func:`unlearnkit.evaluate.auc_interval` (percentile
bootstrap, DeLong's normal interval for large sets), carried by ``report`` as ``mia_auc_low``/``mia_auc_high``,
printed by ``format_report`` and drawn by ``metrics_bars``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unlearnkit.evaluate import auc, auc_interval, format_report


def test_bootstrap_interval_holds_the_auc_and_is_reproducible():
    rng = np.random.default_rng(0)
    pos, neg = rng.normal(0.3, 1, 60), rng.normal(0, 1, 450)
    lo, hi = auc_interval(pos, neg)
    assert lo < auc(pos, neg) < hi and (lo, hi) == auc_interval(pos, neg)
    assert 0.05 < hi - lo < 0.25  # 60 members: the AUC is known to about +- 0.08
    assert auc_interval(pos, neg, level=0.5)[1] - auc_interval(pos, neg, level=0.5)[0] < hi - lo
    assert all(np.isnan(auc_interval([], neg)))


def test_delong_for_large_sets_agrees_with_the_bootstrap():
    rng = np.random.default_rng(1)
    pos, neg = rng.normal(0.2, 1, 600), rng.normal(0, 1, 600)  # 360 000 pairs: DeLong
    big = auc_interval(pos, neg)
    a = auc(pos, neg)
    assert big[0] < a < big[1]
    # the bootstrap on a subset-free comparison: halve the pairs by splitting, widths scale as 1/sqrt(n)
    small = auc_interval(pos[:400], neg[:400])
    assert (small[1] - small[0]) == pytest.approx((big[1] - big[0]) * np.sqrt(600 / 400), rel=0.25)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 40), st.integers(2, 40), st.integers(0, 10_000))
def test_interval_stays_in_the_unit_interval_and_around_ties(m, n, seed):
    rng = np.random.default_rng(seed)
    pos, neg = rng.integers(0, 3, m).astype(float), rng.integers(0, 3, n).astype(float)  # many ties
    lo, hi = auc_interval(pos, neg)
    assert 0.0 <= lo <= hi <= 1.0


def test_report_carries_the_interval_and_format_report_prints_it(digits):
    import unlearnkit as uk
    from unlearnkit.core import Request
    from unlearnkit.evaluate import report
    from unlearnkit.models import FlatParams, make_model

    flat = FlatParams(make_model("logreg", digits.input_shape, digits.n_classes, generator=uk.make_generator(0)))
    r = report(flat, flat.init(), digits, Request("samples", np.arange(60)))
    assert r["mia_auc_low"] <= r["mia_auc"] <= r["mia_auc_high"]
    text = format_report({"model": r}, ["test_acc", "mia_auc"])
    assert "mia_auc [95% interval]" in text and f"[{r['mia_auc_low']:.3f}, {r['mia_auc_high']:.3f}]" in text
    assert "[" not in format_report({"model": {"mia_auc": 0.5}}, ["mia_auc"]).splitlines()[2]


def test_metrics_bars_draw_the_interval_as_an_error_bar():
    from unlearnkit.viz.figures import metrics_bars

    fig = metrics_bars({"retrain": {"test_acc": 0.9, "forget_acc": 0.8, "mia_auc": 0.52, "mia_auc_low": 0.45,
                                    "mia_auc_high": 0.6}})
    bar = fig.data[0]
    assert bar.error_y.visible and list(bar.error_y.array)[2] == pytest.approx(0.08)
    assert list(bar.error_y.arrayminus)[2] == pytest.approx(0.07) and "95 % interval [0.450, 0.600]" in bar.hovertext[2]
    assert not metrics_bars({"a": {"test_acc": 0.9, "forget_acc": 0.8, "mia_auc": 0.5}}).data[0].error_y.visible


def test_mia_precision_interval_is_clopper_pearson_in_percent():
    from unlearnkit.audit.bounds import clopper_pearson
    from unlearnkit.evaluate import mia_precision_interval

    lo, hi = mia_precision_interval(60.0, 50)  # 30 of 50 calls right
    cl, ch = clopper_pearson(30, 50, 0.025)
    assert (lo, hi) == pytest.approx((100 * cl, 100 * ch))
    assert mia_precision_interval(0.0, 20)[0] == 0.0 and mia_precision_interval(100.0, 20)[1] == 100.0
    assert mia_precision_interval(50.0, 400)[1] - mia_precision_interval(50.0, 400)[0] < 11.0  # +- 5 points
