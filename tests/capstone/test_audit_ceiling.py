"""The audit ceiling: closed form equals the statistic on perfectly separated samples; the widget reacts."""

import math

import numpy as np
import pytest

from unlearnkit.audit.statistics import estimate
from unlearnkit.audit.ceiling import CEILING_STATISTICS, audit_ceiling, ceiling_curve


@pytest.mark.parametrize("statistic", ["cp_split", "cp_bonferroni", "gdp"])
@pytest.mark.parametrize("n", [100, 1000])
def test_ceiling_equals_perfect_separation(statistic, n):
    # every world-A score above every world-B score, and every held-out threshold separating them
    est = estimate(np.ones(n), np.zeros(n), delta=1e-5, method=statistic)
    assert audit_ceiling(n, statistic) == pytest.approx(est.epsilon_lower, rel=1e-9)
    # any other sample reports at most the ceiling
    rng = np.random.default_rng(0)
    est = estimate(10.0 + rng.random(n), rng.random(n), delta=1e-5, method=statistic)
    assert est.epsilon_lower <= audit_ceiling(n, statistic) + 1e-9


def test_ceiling_grows_with_trials_and_matches_known_values():
    for s in CEILING_STATISTICS:
        c = ceiling_curve([100, 1000, 10000], s)
        assert np.all(np.diff(c) > 0)
    # the numbers the course quotes: ~2.6 at 100 trials, ~4.9 at 1,000, one run with 100 canaries ~3.5
    assert audit_ceiling(100, "cp_split") == pytest.approx(2.57, abs=0.01)
    assert audit_ceiling(1000, "cp_split") == pytest.approx(4.91, abs=0.01)
    assert audit_ceiling(100, "one_run") == pytest.approx(3.49, abs=0.01)


def test_ceiling_validates():
    with pytest.raises(ValueError, match="statistic"):
        audit_ceiling(100, "magic")
    with pytest.raises(ValueError, match="n_trials"):
        audit_ceiling(5)


def test_widget_compute_function_and_slider_changes_the_figure():
    from unlearnkit.viz.audit import AuditCeilingExplorer, ceiling_summary

    info = ceiling_summary(100, "cp_split", 3.0)
    assert not info["refutable"] and "NEVER" in info["text"]
    assert ceiling_summary(10_000, "cp_split", 3.0)["refutable"]
    ex = AuditCeilingExplorer(certified_epsilon=3.0, n_trials=100)
    star = lambda: [t for t in ex.fig.data if t.name == "your budget"][0].y[0]  # noqa: E731
    before, title = star(), ex.fig.layout.title.text
    ex.trials.value = 10_000
    assert ex.last_error is None and star() > before and ex.fig.layout.title.text != title
    ex.statistic.value = "gdp"
    assert star() > audit_ceiling(10_000, "cp_split")
    ex.epsilon.value = 50.0
    assert "NEVER" in ex.summary.value or not math.isnan(star())
    ex.statistic.value = "one_run"
    ex.trials.value = 1_000_000  # out of the one-run range: shown in place, the widget survives
    assert ex.last_error is not None and "n_trials" in ex.last_error


def test_figures_send_plain_json():
    from unlearnkit.viz._payload import payload_problems, sync_widget
    from unlearnkit.viz.audit import AuditCeilingExplorer, ceiling_figure

    assert payload_problems(ceiling_figure(100, "gdp", 1.0), "ceiling") == []
    ex = AuditCeilingExplorer()
    ex.trials.value = 10_000
    sync_widget(ex.fig)
    assert payload_problems(ex.fig, "explorer") == []
