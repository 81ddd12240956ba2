"""``bench r2d_cost`` charges retraining what its own run costs (full-batch profiles included)."""

import pytest

from unlearnkit.benchmarks.centralized import retrain_grad_evals
from unlearnkit.experiments import centralized_setup
from unlearnkit.experiments.centralized import CentralProfile
from unlearnkit.train import SGDConfig


@pytest.mark.parametrize("sampling", ["full", "with_replacement"])
def test_retrain_grad_evals_is_the_retraining_runs_own_cost(sampling):
    from unlearnkit.viz.descend_rewind import digits_k_sweep

    tiny = CentralProfile(dataset="synthetic", dataset_kwargs={"n_train": 80, "n_test": 40, "dim": 4},
                          model="logreg", model_kwargs={}, request="samples", m=4,
                          train=SGDConfig(steps=20, lr=0.5, batch_size=16, sampling=sampling, checkpoint_every=5))
    state, request = centralized_setup(tiny, seed=0)
    n_retain = request.retain(state.train_indices).size
    got = retrain_grad_evals(state, request)
    # full batch: every step is a gradient over the whole retain set, not batch_size samples
    assert got == (20 * n_retain if sampling == "full" else 20 * 16)
    # the K = T replay of R2D runs exactly the retraining batches, so it costs what retraining costs
    rows, _ = digits_k_sweep(state, request, [20])
    r2d = next(r for r in rows if r["method"] == "R2D")
    assert r2d["grad_evals"] == got
