"""DP-SGD with ``accountant="pld"`` audited: the PLD-calibrated noise keeps its claim, an eighth of it does not."""

from __future__ import annotations

import pytest
import torch

from unlearnkit.experiments.audits.recipes import ToyTask
from unlearnkit.experiments.audits.worlds import dp_sgd_worlds
from unlearnkit.methods.noisy_finetune.dpsgd import dpsgd_noise_multiplier

# one forgotten record (k = 1: the per-record delta is the target's 1e-5, above the PLD's floor 1e-8), full-batch
# public rate q = 1 (only the noise is random), clip 0.1 (the flipped record's gradient is always clipped)
_SETTING = dict(steps=5, clip=0.1, accountant="pld", sampling_rate=1.0)


def test_worlds_take_the_pld_calibration_and_a_scaled_noise():
    task = ToyTask(m=1)
    _, _, eps, cert = dp_sgd_worlds("sound", 1.0, 1e-5, task, **_SETTING)
    z_rdp = dpsgd_noise_multiplier(1.0, 1e-5, q=1.0, steps=5)
    assert eps == 1.0 and cert.mode == "sound" and "PLD" in cert.mechanism
    assert cert.constants["noise_multiplier"] < z_rdp and cert.constants["eps1_pld_upper"] <= 1.0
    assert cert.constants["q"] == 1.0 and cert.constants["q_public"]
    _, _, eps8, cert8 = dp_sgd_worlds("sound", 1.0, 1e-5, task, **_SETTING, noise_scale=0.125)
    assert eps8 == 1.0 and cert8.mode == "none"  # the claim stays the one tested; the certificate says it fails
    assert cert8.constants["noise_multiplier"] == pytest.approx(cert.constants["noise_multiplier"] / 8)


@pytest.mark.slow  # 1200 DP-SGD runs of 5 steps: about 2 minutes on one (shared) core
def test_audit_keeps_the_pld_calibrated_claim_and_refutes_an_eighth_of_its_noise():
    """Toy task, one flipped record forgotten, claim (1, 1e-5). At the PLD-calibrated noise (z 8.34 against
    RDP's 9.05) the audit does not refute the claim; the same claim at an eighth of the noise is refuted
    (the audit has power here: lower bound about 2 at 300 trials per world)."""
    from unlearnkit.audit import AuditConfig, audit

    task, out = ToyTask(m=1), {}
    for name, scale in (("calibrated", 1.0), ("eighth", 0.125)):
        wa, wb, eps, cert = dp_sgd_worlds("sound", 1.0, 1e-5, task, **_SETTING, noise_scale=scale)
        out[name] = (audit(wa, wb, delta=1e-5, epsilon=eps, config=AuditConfig(n_trials=300),
                           generator=torch.Generator().manual_seed(5)), cert)
    print({k: (r.epsilon_lower, r.epsilon_point, c.constants["noise_multiplier"]) for k, (r, c) in out.items()})
    calibrated, eighth = out["calibrated"][0], out["eighth"][0]
    assert not calibrated.violation and calibrated.epsilon_lower <= 1.0
    assert eighth.violation and eighth.epsilon_lower > 1.0
