"""Per-example forgetting scores on digits: a batch of softmax-regression models trained at once, six methods."""

import math

import numpy as np
import pytest
import torch

from unlearnkit.experiments.audits.forgetting_digits import (DigitsForgetConfig, digits_forgetting_scores,
                                                            digits_problem, method_sigmas, run_batch)

TINY = DigitsForgetConfig(T=12, K=6, I=6, nft_steps=4)


def test_vectorised_batch_equals_a_sequential_loop_over_the_same_seeds():
    p = digits_problem(TINY)
    seeds = [11, 12, 13]
    with torch.no_grad():
        batch = run_batch(seeds, TINY, p)
        alone = [run_batch([s], TINY, p) for s in seeds]
    for name, w in batch.items():
        assert w.shape == (3, 65, 10)
        for b in range(3):
            assert torch.allclose(w[b], alone[b][name][0], rtol=1e-4, atol=1e-5), name
    # distinct seeds give distinct models (each model has its own initialisation and noise)
    assert not torch.allclose(batch["retrained"][0], batch["retrained"][1])


def test_sound_noise_levels_and_config_validation():
    c = DigitsForgetConfig()
    s = method_sigmas(c, digits_problem(c)["n"])
    assert s["retrain"] == s["finetune"] == 0.0
    # measured with the default config (1347 training rows, m = 10, epsilon 1, delta 1e-5)
    assert s["r2d"] == pytest.approx(0.0775, rel=0.01) and s["d2d"] == pytest.approx(0.1765, rel=0.01)
    assert s["output_perturbation"] == pytest.approx(14.92, rel=0.01) and s["noisy_finetune"] > 1
    with pytest.raises(ValueError, match="K"):
        DigitsForgetConfig(K=0)
    with pytest.raises(ValueError, match="lam"):
        DigitsForgetConfig(lam=-1.0)


def test_ci_sized_scores_control_near_its_floor_and_finetune_remembers():
    rows = {r["method"]: r for r in digits_forgetting_scores(n_models=32, n_repeats=2)}
    assert set(rows) == {"retrain", "output_perturbation", "noisy_finetune", "r2d", "d2d", "finetune"}
    control, ft = rows["retrain"], rows["finetune"]
    # the control is retraining against retraining: only the finite-sample overstatement of the best
    # threshold remains (mean per-example epsilon about 1.3 to 1.6 at 32 to 256 models per side)
    assert control["certified_epsilon"] == 0.0 and control["mean_example_epsilon"] < 2.5
    # plain fine-tuning (no certificate) is told apart from retraining on every forgotten example
    assert ft["certified_epsilon"] == math.inf and ft["mode"] == "none"
    assert ft["mean_example_epsilon"] > control["mean_example_epsilon"] + 1.5 and ft["score"] < 0.05
    assert ft["test_accuracy"] > 0.8 and control["test_accuracy"] > 0.8
    for name in ("output_perturbation", "noisy_finetune", "r2d", "d2d"):
        r = rows[name]
        assert r["certified_epsilon"] == 1.0 and r["mode"] == "sound"
        # against what its certificate compares with (the same mechanism on retraining) a certified method is
        # as hard to tell apart as the control; against plain retraining its noise gives it away
        assert r["mean_example_epsilon_vs_certifier"] < control["mean_example_epsilon"] + 1.0
        assert r["mean_example_epsilon"] > r["mean_example_epsilon_vs_certifier"] + 1.5
    for r in rows.values():
        assert 0 <= r["ci_low"] <= r["score"] <= r["ci_high"] <= 1
        assert np.isfinite(r["seconds"])
    from unlearnkit.viz._payload import payload_problems
    from unlearnkit.viz.audit import forgetting_figure

    fig = forgetting_figure(list(rows.values()))
    assert len(fig.data) == 2 and "no certificate" in fig.data[0].x[-1]
    assert payload_problems(fig, "forgetting_digits") == []


def test_epsilon_sweep_and_its_figure():
    from unlearnkit.experiments.audits.forgetting_digits import digits_epsilon_sweep
    from unlearnkit.viz._payload import payload_problems
    from unlearnkit.viz.forgetting_digits import forgetting_vs_epsilon_figure

    rows = digits_epsilon_sweep([1.0, 1e4], method="r2d", n_models=16, n_repeats=2, config=TINY)
    assert [r["certified_epsilon"] for r in rows] == [1.0, 1e4]
    assert rows[1]["sigma"] < rows[0]["sigma"]
    control = digits_forgetting_scores(n_models=16, n_repeats=2, config=TINY, methods=("retrain",))[0]
    fig = forgetting_vs_epsilon_figure(rows, control=control)
    assert len(fig.data) == 3 and fig.layout.xaxis.type == "log"
    assert payload_problems(fig, "forgetting_vs_epsilon") == []
    with pytest.raises(ValueError, match="method"):
        digits_epsilon_sweep([1.0], method="finetune")
    with pytest.raises(ValueError, match="certified_epsilon"):
        forgetting_vs_epsilon_figure([dict(certified_epsilon=math.inf)])
