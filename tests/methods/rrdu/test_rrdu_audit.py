"""Issue 20, findings 1-2: the audit refutes RR-DU's accountant C and the DDP baseline's group_sound (neither
is certified any more), and does not refute their sound replacements (noisy training; accountant S).

Fresh training in every trial of both worlds (:mod:`unlearnkit.experiments.rrdu.audit`); small trial counts."""

import math

import pytest

from unlearnkit.experiments.rrdu.audit import WalkAuditTask, audit_walk
from unlearnkit.methods.rrdu import sound


@pytest.mark.slow
def test_accountant_c_is_refuted_and_not_certified():
    res = audit_walk("rrdu", n_trials=200, seed=0)
    assert res.extras["claimed_epsilon"] == pytest.approx(1.0)
    assert res.epsilon_lower > res.extras["claimed_epsilon"]  # the old claim (1, 1e-5) does not hold
    assert not res.extras["certified"] and res.extras["certificate_mode"] == "none"


@pytest.mark.slow
def test_ddp_group_sound_is_refuted_and_not_certified():
    res = audit_walk("ddp", n_trials=200, seed=0)
    assert res.epsilon_lower > res.extras["claimed_epsilon"] == 1.0
    assert not res.extras["certified"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["ddp_noisy", "rrdu_noisy"])
def test_sound_replacements_survive_the_audit(kind):
    res = audit_walk(kind, n_trials=100, seed=0)
    assert res.extras["certified"] and res.extras["certificate_mode"] == "sound"
    assert res.epsilon_lower <= res.extras["claimed_epsilon"]
    assert math.isfinite(res.extras["certificate_epsilon"])


def test_noisy_walk_sigma_round_trip_and_every_step_counted():
    from unlearnkit.privacy.amplification import visit_count_bound

    s = sound.noisy_walk_sigma(epsilon=1.0, delta=1e-5, L=1.0, hops=20, n_clients=4, local_steps=2)
    steps = 2 * visit_count_bound(20, 0.25, 1e-5 / 4)
    assert sound.noisy_walk_epsilon(sigma=s, L=1.0, u_steps=steps, delta=1e-5 / 2) == pytest.approx(1.0, rel=1e-6)
    # twice the local steps cost twice the RDP
    assert sound.noisy_walk_rho(sigma=s, L=1.0, u_steps=2 * steps) == pytest.approx(
        2 * sound.noisy_walk_rho(sigma=s, L=1.0, u_steps=steps))
    assert sound.noisy_walk_epsilon(sigma=s, L=1.0, u_steps=0, delta=1e-5) == 0.0


def test_u_step_sensitivities():
    assert sound.rrdu_u_sensitivity("exact", L=0.5, m=45, n_u=50) == 0.0
    assert sound.rrdu_u_sensitivity("lightweight", L=0.5, m=45, n_u=50) == pytest.approx(0.45)
    assert sound.rrdu_u_sensitivity("corrected", L=0.5, m=45, n_u=50) == pytest.approx(0.5 * (2 + 0.9))
    with pytest.raises(ValueError, match="variant"):
        sound.rrdu_u_sensitivity("fast", L=0.5, m=1, n_u=2)


def test_accountant_s_and_noisy_ddp_need_a_noisy_start():
    import torch

    from unlearnkit.experiments.rrdu.audit import walk_setup
    from unlearnkit.methods.rrdu import RRDU, RRDUConfig, WalkConfig
    from unlearnkit.methods.rrdu.baselines import NetworkSGD
    from unlearnkit.methods.rrdu.noisy import NoisyDDP, NoisyDDPConfig, NoisyWalkConfig, NoisyWalkTraining

    task = WalkAuditTask(train_hops=4, T_unlearn=4)
    flat, fed, req, init, token = walk_setup(task)
    g = torch.Generator().manual_seed(0)
    plain = NetworkSGD().train(flat, fed, WalkConfig(token=token, hops=4), generator=g, init=init)
    cfg = RRDUConfig(T_unlearn=4, variant="exact", clip_L=1.0, accountant="S")
    assert not RRDU().unlearn(plain, req, cfg, generator=g).certificate.certified
    assert not NoisyDDP().unlearn(plain, req, NoisyDDPConfig(), generator=g).certificate.certified
    noisy = NoisyWalkTraining().train(flat, fed, NoisyWalkConfig(token=token, hops=4, L=1.0), generator=g, init=init)
    c = RRDU().unlearn(noisy, req, cfg, generator=g).certificate
    assert c.certified and c.epsilon <= 1.0 + 1e-9
    light = RRDU().unlearn(noisy, req, RRDUConfig(T_unlearn=4, variant="lightweight", clip_L=1.0, accountant="S",
                                                  epsilon=2.0), generator=g)
    assert light.certificate.certified and light.extras["sigma"] > 0
    d = NoisyDDP().unlearn(noisy, req, NoisyDDPConfig(continue_hops=2), generator=g)
    assert d.certificate.certified and d.certificate.epsilon <= 1.0 + 1e-9
