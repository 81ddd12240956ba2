"""Notebook 06 draws RR-DU's full frontier from a committed JSON file: it must be what a live run computes.

The file (:data:`unlearnkit.experiments.rrdu.frontier.PRECOMPUTED_FRONTIER`) is :func:`rrdu_frontier` over the
whole epsilon grid on the quick world, seed 0. Here one budget is recomputed live on the same world and every
number of its rows, and the references (retraining, original, fine-tuning), must agree to 1e-9 on the CPU (the
file was written on a CPU; on another device float reductions may differ in the last bits). A change to
RR-DU's code that moves the frontier fails this test: rewrite the file with ``write_precomputed_frontier()``.
"""

import math

import pytest

from unlearnkit.experiments.rrdu import lab as rrdu_lab
from unlearnkit.experiments.rrdu.frontier import (RRDU_EPSILONS, load_precomputed_frontier, rrdu_frontier)
from unlearnkit.viz.rrdu_frontier import FrontierExplorer, rrdu_frontier_figure


@pytest.fixture(scope="module")
def world():
    return rrdu_lab.build_world(rrdu_lab.BackdoorSetup(), seed=0, device="cpu")


def _close(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return (math.isinf(a) and a == b) or abs(a - b) <= 1e-9


def test_file_is_plain_json_for_the_full_grid():
    fr = load_precomputed_frontier()
    assert fr["epsilons"] == list(RRDU_EPSILONS)
    assert fr["precomputed"]["seed"] == 0 and fr["precomputed"]["setup"] == repr(rrdu_lab.BackdoorSetup())
    for fam in ("sound", "paper"):
        assert all(len(rows) == len(RRDU_EPSILONS) for rows in fr[fam].values())
    # the lesson the notebook reads from it: RR-DU exact forgets under its sound certificate at epsilon = 1,
    # DDP at the same budget keeps far more of the backdoor
    i = RRDU_EPSILONS.index(1.0)
    exact, ddp = fr["sound"]["rrdu_exact"][i], fr["sound"]["ddp"][i]
    assert exact["mode"] == "sound" and exact["certified_epsilon"] <= 1.0 + 1e-9
    assert exact["asr"] <= 0.15 and exact["clean_acc"] >= fr["retrain"]["clean_acc"] - 0.03
    assert ddp["asr"] > exact["asr"] + 0.3


def test_a_live_budget_reproduces_the_file(world):
    fr = load_precomputed_frontier()
    live = rrdu_frontier([1.0], world=world, seed=0)
    i = fr["epsilons"].index(1.0)
    for ref in ("retrain", "original", "finetune"):
        assert all(_close(live[ref][k], fr[ref][k]) for k in live[ref]), ref
    for fam in ("sound", "paper"):
        for name, rows in live[fam].items():
            stored = fr[fam][name][i]
            assert set(rows[0]) == set(stored)
            assert all(_close(rows[0][k], stored[k]) for k in rows[0]), (fam, name, rows[0], stored)


def test_explorer_shows_the_file_then_streams_a_live_run(world):
    fr = load_precomputed_frontier()
    ex = FrontierExplorer(fr, world, epsilons=(1.0,), seed=0)
    n_traces = len(rrdu_frontier_figure(fr).data)
    assert len(ex.fig.data) == n_traces and "precomputed" in ex.fig.layout.title.text
    assert ex.matches and "another setup" not in ex.status.value
    other = {**fr, "precomputed": {**fr["precomputed"], "seed": 1}}
    assert "another setup" in FrontierExplorer(other, world, epsilons=(1.0,)).status.value
    seen = []
    ex.status.observe(lambda ch: seen.append(ch["new"]), names="value")
    live = ex.run()
    assert ex.last_error is None and seen[0].startswith("running live")
    assert live["epsilons"] == [1.0] and "live" in ex.fig.layout.title.text
    assert len(ex.fig.data) == n_traces
    with pytest.raises(ValueError, match="epsilons"):
        FrontierExplorer(fr, world, epsilons=())



def test_a_live_budget_reproduces_the_seeds_file():
    """The band's other seeds (``rrdu_frontier_seeds.json``) come from the same code: seed 1 at one budget."""
    stored_fr = load_precomputed_frontier(seeds=(1,))
    live = rrdu_frontier([1.0], world=rrdu_lab.build_world(rrdu_lab.BackdoorSetup(), seed=1, device="cpu"), seed=1)
    i = stored_fr["epsilons"].index(1.0)
    for fam in ("sound", "paper"):
        for name, rows in live[fam].items():
            stored = stored_fr[fam][name][i]
            assert all(_close(rows[0][k], stored[k]) for k in rows[0]), (fam, name, rows[0], stored)
