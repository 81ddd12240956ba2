"""Output perturbation's audit worlds, batched: the same samples as the sequential loop, the same verdicts.

Notebook 09's audit of output perturbation (paper and sound calibration, fresh training in both worlds)
runs through :func:`audit_methods(..., vectorised=True)`: the same per-trial seeds, the same draws in the
same order (training batches, then the output noise), only the SGD arithmetic batched over trials.
"""

import numpy as np
import pytest
import torch

from unlearnkit.audit import AuditConfig
from unlearnkit.experiments.audits.methods import audit_methods
from unlearnkit.experiments.audits.recipes import METHOD_RECIPES, ToyTask, toy_setup, unlearner_worlds
from unlearnkit.experiments.audits.vectorised import vectorised_worlds


@pytest.mark.parametrize("mode", ["paper", "sound"])
def test_op_vectorised_worlds_equal_the_sequential_loop(mode):
    task = ToyTask(steps=10)
    fn, cfg, certifier = METHOD_RECIPES["output_perturbation"](mode, 1.0, 1e-5, task, toy_setup(task)[4])
    assert certifier == "unlearn_retrained"
    seq_a, seq_b, cert_s = unlearner_worlds(fn, cfg, task, certifier=certifier)
    vec_a, vec_b, cert_v = vectorised_worlds("output_perturbation", mode, task=task)
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    va, vb = vec_a(12, g1), vec_b(12, g1)
    sa, sb = seq_a(12, g2), seq_b(12, g2)
    # same randomness; the batched SGD and clip may only round float32 differently
    np.testing.assert_allclose(va.numpy(), sa.numpy(), rtol=0, atol=1e-5)
    np.testing.assert_allclose(vb.numpy(), sb.numpy(), rtol=0, atol=1e-5)
    assert cert_v.sigma == cert_s.sigma > 0 and cert_v.mode == cert_s.mode == mode
    assert torch.equal(torch.randint(0, 2**30, (3,), generator=g1), torch.randint(0, 2**30, (3,), generator=g2))


def test_audit_methods_vectorised_gives_the_sequential_verdicts():
    kw = dict(methods=("output_perturbation",), epsilon=1.0, delta=1e-5, config=AuditConfig(n_trials=100),
              task=ToyTask(steps=10), seed=0)
    seq = audit_methods(**kw)["results"]
    vec = audit_methods(**kw, vectorised=True)["results"]
    assert [r.label for r in seq] == [r.label for r in vec]
    for a, b in zip(seq, vec):
        assert a.violation == b.violation and a.mode == b.mode and a.alpha == b.alpha
        assert b.epsilon_lower == pytest.approx(a.epsilon_lower, abs=1e-9)
    assert vec[2].extras["vectorised"] and vec[2].extras["certifier"] == "unlearn_retrained"
    assert vec[1].violation and not any(r.violation for r in vec[2:])  # the notebook's check holds
