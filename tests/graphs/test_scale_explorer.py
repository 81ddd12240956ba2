"""Notebook 05's explorer at scale: consensus error curves and round costs from sparse networks."""

import numpy as np
import pytest

from unlearnkit.viz._style import style_problems
from unlearnkit.viz.scale_explorer import ScaleExplorer, consensus_run, fitted_exponent, scale_sizes


def test_sizes_grow_with_the_device():
    assert scale_sizes("cpu") == [100, 1_000, 10_000]
    assert scale_sizes("cuda")[-1] == 1_000_000


def test_consensus_run_contracts_at_the_spectral_rate():
    r = consensus_run("ring", 100, 3, 200, device="cpu")
    err = r["error"]
    assert err[0] == 1.0 and np.all(np.diff(err) <= 1e-12) and err[-1] < 1
    assert np.all(err <= r["slem"] ** np.arange(err.size) + 1e-9)  # ||W^t - J||_2 = slem^t bounds the error
    fast = consensus_run("random_regular", 1_000, 3, 100, device="cpu")
    assert fast["mixing_rounds"] is not None and r["mixing_rounds"] is None and fast["kernel"] == "csr"
    with pytest.raises(ValueError, match="N \\* d"):
        consensus_run("ring", 10_000, 10_000, 10, device="cpu")


def test_explorer_runs_and_fits_the_cost_exponent():
    ex = ScaleExplorer(topology="torus", n=100, d=1, rounds=20, device="cpu")
    assert ex.last_error is None and ex.current["n"] == 100
    ex.n.value = 1_000
    ex.run_button.click()
    assert len(ex.runs) == 2 and fitted_exponent(ex.runs) is not None and "(N d)^" in ex.info.value
    assert style_problems(ex.error_fig) == [] and style_problems(ex.cost_fig) == []
    ex.topology.value = "ring"
    ex.run_button.click()
    assert ex.last_error is None and {r["topology"] for r in ex.runs} == {"torus", "ring"}
    assert [t.name for t in ex.cost_fig.data] == ["ring", "torus"]
