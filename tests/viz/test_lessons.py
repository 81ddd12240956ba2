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
