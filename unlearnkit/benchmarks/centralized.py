"""Centralized certified unlearning benchmarks: cost against retraining, and the paper's "epochs to reach an
accuracy" table (Koloskova et al. 2025, Table 2) on the digits.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import register_bench
from ..methods import noisy_finetune as nf
from ..runtime import make_generator


@register_bench("epochs_to_accuracy", description="noisy fine-tuning vs retraining: epochs to reach a test accuracy "
                                                   "(digits MLP, 10% forgotten, (1, 1e-5) sound)")
def epochs_to_accuracy_bench(*, quick: bool) -> list[dict]:
    from ..experiments import centralized_setup  # deferred: imports torch
    # deferred: imports torch
    from ..experiments.noisy_finetune.lab import accuracy_race, epochs_to_accuracy, nf_profile

    state, request = centralized_setup(nf_profile("quick"), seed=0)
    gc_cfg = nf.GradientClippingConfig(C0=1.0, C1=0.1, gamma=0.1, lam=5.0)
    g = make_generator
    gc = nf.GradientClipping()
    starts = {
        "retrain": state.extras["init"],
        "gradient_clipping": gc.unlearn(state, request, gc_cfg, generator=g(1)),
        "noise_only_reinit": gc.unlearn(state, request, replace(gc_cfg, init="zeros"), generator=g(1)),
        "model_clipping": nf.ModelClipping().unlearn(state, request,
                                                     nf.ModelClippingConfig(C2=0.1, sigma=0.1, gamma=0.1),
                                                     generator=g(1)),
        "output_perturbation": nf.OutputPerturbation().unlearn(state, request, nf.OutputPerturbationConfig(C0=0.1),
                                                               generator=g(1)),
    }
    curves = accuracy_race(state, request, starts, epochs=3 if quick else 10)
    return epochs_to_accuracy(curves, [0.5, 0.8, 0.9] if quick else [0.5, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95])


@register_bench("r2d_cost", description="R2D and D2D gradient evaluations and distance to retraining against K "
                                        "(digits softmax regression, noise-free)")
def r2d_cost_bench(*, quick: bool) -> list[dict]:
    from ..experiments import centralized_setup  # deferred: imports torch
    from ..experiments.descend_rewind.lab import central_profile  # deferred: imports torch
    from ..viz.descend_rewind import digits_k_sweep  # deferred: imports torch

    state, request = centralized_setup(central_profile("quick"), seed=0)
    Ks = [0, 100, 200] if quick else [0, 40, 80, 120, 160, 200]
    rows, _ = digits_k_sweep(state, request, Ks)
    retrain = retrain_grad_evals(state, request)
    for r in rows:
        r["retrain_grad_evals"] = retrain
    return rows


def retrain_grad_evals(state, request, *, seed: int = 0) -> int:
    """Retraining's gradient evaluations in the sweep: the sizes of the very batches it runs on.

    :func:`~unlearnkit.viz.descend_rewind.digits_k_sweep` retrains on
    :func:`~unlearnkit.experiments.descend_rewind.coupled.coupled_retrain_batches` (same ``seed``), and
    :func:`~unlearnkit.train.run_sgd` charges one gradient evaluation per sample of each batch, so this is that
    run's own ``cost.grad_evals``. Recomputing it as ``steps x batch_size`` is wrong for full-batch profiles
    (``sampling="full"`` ignores the batch size: a step costs the whole retain set).
    """

    from ..experiments.descend_rewind.coupled import coupled_retrain_batches  # deferred: imports scipy.optimize

    batches = coupled_retrain_batches(state, request, rng=np.random.default_rng(seed))
    return int(sum(int(b.numel()) for b in batches))
