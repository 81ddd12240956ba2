"""Lessons drawn next to their figure: subsampling's effect in notebook 02 as two curves at once, with a
sentence stating both epsilons."""

from __future__ import annotations

import numpy as np


def test_subsampling_is_drawn_as_two_curves_with_its_lesson():
    from unlearnkit.viz.privacy import NO_SUBSAMPLING, RenyiExplorer

    ex = RenyiExplorer(q=0.04, sigma=1.5, steps=100, log10_delta=-5)
    names = [t.name for t in ex.curve_fig.data]
    assert names[0] == "ours" and names[-1] == NO_SUBSAMPLING
    ours, full = (np.asarray(ex.curve_fig.data[i].y, dtype=float) for i in (0, -1))
    assert len(ours) == len(full) and np.all(full[: len(ours)] >= ours)  # subsampling never costs more
    eps, eps_full = ex.current["cks"][0], ex.current["epsilon_no_subsampling"]
    assert eps < eps_full
    text = ex.lesson.value
    assert f"epsilon = {eps:.3g} " in text and f" {eps_full:.3g} " in text and "q = 0.04" in text
    ex.q.value = 1.0  # no subsampling: the two curves coincide
    assert np.allclose(ex.curve_fig.data[0].y, ex.curve_fig.data[-1].y, rtol=1e-6)
    assert ex.last_error is None


def test_the_noise_explorer_draws_a_band_over_draws_with_its_lesson():
    """Notebook 07: one noise draw above the noise-free line read as "noise helps"; the figure now shows the
    lowest and highest of 8 draws around the mean, and says what that spread means. The lab's noise-free model
    is good (no intercept: ``lab_problem``'s docstring), so the mean over draws stays below it."""
    from unlearnkit.viz.newton import NewtonNoiseExplorer

    ex = NewtonNoiseExplorer(epsilon=1.0, weight_decay=1.0)
    assert ex.last_error is None
    c = ex.curve
    for mode in ("paper", "sound"):
        lo, mean, hi = (np.asarray(c[k], dtype=float) for k in (f"acc_{mode}_lo", f"acc_{mode}", f"acc_{mode}_hi"))
        assert np.all(lo <= mean + 1e-12) and np.all(mean <= hi + 1e-12)
        # noise costs accuracy: the mean over draws never beats the noise-free model by more than one of the 400
        # test points (measured: at most 0.0003 above it, lab seeds 0-2, every lambda), and loses at small epsilon
        assert np.all(mean <= c["acc_clean"] + 1 / 400) and mean[0] < c["acc_clean"] - 0.15
    assert c["acc_clean"] > 0.85  # the noise-free model is a reasonable one (0.892, seed 0)
    names = [t.name for t in ex.fig.data]
    band = [t for t in ex.fig.data if t.fill == "tonexty"]
    assert len(band) == 2 and all("8 draws" in t.name for t in band) and "accuracy (sound, mean)" in names
    assert f"{c['acc_clean']:.2f}" in ex.lesson.value and "not accuracy" in ex.lesson.value
    bands = dict(ex._bands)
    ex.epsilon.value = 10.0  # epsilon moves the marker only: the band is reused
    assert ex._bands == bands and ex.curve is bands[(1.0, 1e-5)] and ex.last_error is None


def test_why_p_is_one_over_n_is_drawn():
    """Notebook 06: the expected step weighs u as retraining does (1/N each) only at p = 1/N."""
    from unlearnkit.viz._style import style_problems
    from unlearnkit.viz.rrdu import why_p_figure

    fig = why_p_figure(10)
    assert style_problems(fig) == []
    u, other, retrain, dist = (fig.data[i] for i in range(4))
    k = list(u.x).index(0.1)
    assert abs(u.y[k] - 0.1) < 1e-12 and abs(other.y[k] - 0.1) < 1e-12 and list(retrain.y) == [0.1, 0.1]
    assert min(dist.y) == dist.y[k] == 0.0 and abs(dist.y[-1] - 0.9) < 1e-12
    assert "1/N = 0.1" in fig.layout.title.text
