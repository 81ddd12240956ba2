"""Per-example forgetting scores (NeurIPS 2023 competition metric) and their run on the toy task."""

import math

import numpy as np
import pytest

from unlearnkit.audit.forgetting import example_epsilon, forgetting_score, score_interval


def test_example_epsilon_perfect_separation_and_identical_samples():
    n = 256
    u, r = np.arange(n) + 1000.0, np.arange(n) * 1.0
    # perfect test: FNR = FPR = 0, counted as half a model each
    assert example_epsilon(u, r, delta=0.01) == pytest.approx(math.log((1 - 0.01 - 0.5 / n) / (0.5 / n)))
    assert example_epsilon(r, u, delta=0.01) == pytest.approx(example_epsilon(u, r, delta=0.01))
    rng = np.random.default_rng(0)
    same = [example_epsilon(rng.normal(size=n), rng.normal(size=n)) for _ in range(20)]
    # the best of many thresholds overstates epsilon on finite samples: small tail counts (10 retrained vs 1
    # unlearned beyond t) already give log(7.4) = 2; at 256 models per side the mean is about 1
    assert 0.3 < np.mean(same) < 1.5


def test_forgetting_score_bins_and_interval():
    rng = np.random.default_rng(1)
    u = rng.normal(size=(256, 3))
    r = rng.normal(size=(256, 3))
    u[:, 2] += 100.0  # one example perfectly remembered
    fs = forgetting_score(u, r)
    eps = fs["example_epsilons"]
    assert fs["score"] == pytest.approx(np.mean(2.0 ** -np.floor(eps / 0.5)))
    assert eps[2] > 5 and 2.0 ** -np.floor(eps[2] / 0.5) < 0.01
    mean, lo, hi = score_interval([0.5, 0.6, 0.55, 0.45])
    assert mean == pytest.approx(0.525) and lo < mean < hi
    with pytest.raises(ValueError, match="examples"):
        forgetting_score(u, r[:, :2])


def test_forgetting_scores_on_the_toy_task():
    from unlearnkit.experiments.audits.forgetting import forgetting_scores

    rows = {r["method"] + "/" + r["mode"]: r for r in forgetting_scores(n_models=64, n_repeats=2)}
    control = rows["r2d_full_rewind/sound"]
    r2d = rows["r2d/sound"]
    # the certified R2D output is far from plain retraining (its noise dwarfs the margins: every example at
    # the score's floor) but close to what its certificate compares with, retraining plus the same noise
    assert r2d["score"] < 0.01 < r2d["score_vs_certifier"]
    assert control["score"] > 0.1 and r2d["certified_epsilon"] == 1.0
    assert rows["r2d_no_noise/sound"]["certified_epsilon"] == math.inf
    for r in rows.values():
        assert 0 <= r["ci_low"] <= r["score"] <= r["ci_high"] <= 1
    from unlearnkit.viz.audit import forgetting_figure

    from unlearnkit.viz._payload import payload_problems

    fig = forgetting_figure(list(rows.values()))
    assert len(fig.data) == 2 and "no certificate" in fig.data[0].x[-1]
    assert payload_problems(fig, "forgetting") == []
    n = rows["r2d/sound"]["n_repeats"]
    assert all(f"95 % t-interval over {n} repetitions" in t.name for t in fig.data)  # which interval the bars are
    assert f"[{r2d['ci_low']:.3f}, {r2d['ci_high']:.3f}]" in " ".join(fig.data[0].hovertext)
