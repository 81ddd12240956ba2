"""The certified RR-DU run that forgets (quick profile, digits, N = 10, m = 60 poisoned at u = 0, seed 0).

Measured on a 2-core CPU, no GPU (sound pipeline: noisy training at clip L = 1, projection radius R = 10, SGD step
0.2, training route drawn before training, accountant "M"; the lightweight variant gives half the budget to
training):

==============================  ===============  ==========  ========
run                             certified eps    clean acc   backdoor
==============================  ===============  ==========  ========
retrain (the line)              -                0.929       0.000
RR-DU exact (quick profile)     1.0              0.913       0.000
RR-DU lightweight, p = 0.05     4.0              0.907       0.000
DDP (noisy training, sound)     4.0              0.191       0.911
==============================  ===============  ==========  ========
"""


import numpy as np
import pytest

from unlearnkit.experiments.rrdu.frontier import rrdu_frontier, sound_run, split_train_sigma
from unlearnkit.experiments.rrdu.lab import RRDU_PROFILES, build_world


@pytest.fixture(scope="module")
def world():
    return build_world(RRDU_PROFILES["quick"], seed=0)


def test_quick_original_is_useful(world):
    orig, retr = world.metrics(world.original.params), world.metrics(world.retrained.params)
    assert orig["clean_acc"] >= 0.85 and retr["clean_acc"] >= 0.85
    assert orig["asr"] >= 0.9 and retr["asr"] <= 0.1  # the forget task has a signal


def test_certified_rrdu_meets_the_target(world):
    """The quick profile's certified run (exact variant, accountant M, budget 1)."""
    retr = world.metrics(world.retrained.params)
    r = sound_run(world, "rrdu_exact", 1.0)
    cert = r["certificate"]
    assert cert["mode"] == "sound" and cert["certified"] and cert["epsilon"] <= 1.0 + 1e-9
    assert r["final"]["asr"] <= 0.15                                    # measured 0.000
    assert r["final"]["clean_acc"] >= retr["clean_acc"] - 0.03          # measured 0.913 against 0.929
    assert r["start"]["clean_acc"] <= 0.2                               # the private start is useless on its own
    assert r["sigma"] == 0.0 and r["sigma_train"] > 10                  # u-steps read no D_f: all noise in training
    obs = np.array(r["observer_epsilons"], dtype=float)                 # the sound per-observer ledger
    assert np.isnan(obs[world.setup.u]) and np.all(np.delete(obs, world.setup.u) <= 1.0 + 1e-6)


def test_certified_lightweight_and_ddp_at_equal_epsilon(world):
    retr = world.metrics(world.retrained.params)
    light = sound_run(world, "rrdu_light", 4.0)
    assert light["certificate"]["mode"] == "sound" and light["certificate"]["epsilon"] <= 4.0 + 1e-9
    assert light["final"]["asr"] <= 0.15 and light["final"]["clean_acc"] >= retr["clean_acc"] - 0.03  # 0.907 / 0.000
    ddp = sound_run(world, "ddp", 4.0)
    assert ddp["certificate"]["mode"] == "sound" and ddp["certificate"]["epsilon"] <= 4.0 + 1e-6
    assert ddp["final"]["clean_acc"] <= 0.4                             # measured 0.19: every hop is noisy
    assert light["final"]["clean_acc"] >= ddp["final"]["clean_acc"] + 0.5


def test_noise_falls_with_epsilon():
    for acc in ("S", "M"):
        sig = [split_train_sigma(epsilon=e, delta=1e-5, L=1.0, hops=60, n_clients=10, local_steps=3, split=0.5,
                                 accountant=acc) for e in (0.5, 1, 4, 16, 64)]
        assert all(a > b for a, b in zip(sig, sig[1:]))
    # the realised count of a data-independent route replaces the quantile: less noise
    q = split_train_sigma(epsilon=1, delta=1e-5, L=1.0, hops=60, n_clients=10, local_steps=3, split=0.5)
    r = split_train_sigma(epsilon=1, delta=1e-5, L=1.0, hops=60, n_clients=10, local_steps=3, split=0.5, u_visits=6)
    assert r < q
    with pytest.raises(ValueError, match="split"):
        split_train_sigma(epsilon=1, delta=1e-5, L=1.0, hops=60, n_clients=10, local_steps=3, split=0.0)


def test_frontier_shape_and_monotone_noise(world):
    fr = rrdu_frontier((1.0, 8.0), world=world, paper=False)
    for name, rows in fr["sound"].items():
        assert [r["epsilon"] for r in rows] == [1.0, 8.0]
        assert all(r["mode"] == "sound" and r["certified_epsilon"] <= r["epsilon"] + 1e-6 for r in rows), name
        assert rows[0]["sigma_train"] > rows[1]["sigma_train"], name
        assert rows[0]["sigma"] >= rows[1]["sigma"], name
    light = fr["sound"]["rrdu_light"]
    assert light[1]["clean_acc"] >= light[0]["clean_acc"]              # more budget, less noise at u
    assert np.isclose(fr["retrain"]["asr"], 0.0, atol=0.05)
