"""The certified RR-DU run that forgets (quick profile, digits, N = 10, m = 60 poisoned at u = 0, seed 0).

Measured on a 2-core CPU, no GPU (sound pipeline: noisy training at clip L = 1, projection radius R = 10, SGD step
0.2, half the RDP budget each to training and RR-DU's u-steps, accountant "S"):

=========================  ===============  ==========  ========
run                        certified eps    clean acc   backdoor
=========================  ===============  ==========  ========
retrain (the line)         -                0.929       0.000
RR-DU sound, budget 32     15.99            0.902       0.002
RR-DU sound, budget 16     8.04             0.876       0.017
DDP sound, budget 32       14.54            0.193       0.865
=========================  ===============  ==========  ========
"""

import math

import numpy as np
import pytest

from unlearnkit.experiments.rrdu_frontier import rrdu_frontier, sound_run, split_train_sigma
from unlearnkit.experiments.rrdu_lab import RRDU_PROFILES, build_world


@pytest.fixture(scope="module")
def world():
    return build_world(RRDU_PROFILES["quick"], seed=0)


def test_quick_original_is_useful(world):
    orig, retr = world.metrics(world.original.params), world.metrics(world.retrained.params)
    assert orig["clean_acc"] >= 0.85 and retr["clean_acc"] >= 0.85
    assert orig["asr"] >= 0.9 and retr["asr"] <= 0.1  # the forget task has a signal


def test_certified_rrdu_meets_the_target(world):
    retr = world.metrics(world.retrained.params)
    r = sound_run(world, "rrdu", 32.0)
    cert = r["certificate"]
    assert cert["mode"] == "sound" and math.isfinite(cert["epsilon"]) and cert["epsilon"] <= 32.0
    assert abs(cert["epsilon"] - 15.99) < 0.5
    assert r["final"]["asr"] <= 0.15                                    # measured 0.002
    assert r["final"]["clean_acc"] >= retr["clean_acc"] - 0.03          # measured 0.902 against 0.929
    assert r["start"]["clean_acc"] <= 0.2                               # the private start is useless on its own


def test_sound_ddp_at_equal_epsilon_is_useless(world):
    r = sound_run(world, "ddp", 32.0)
    assert r["certificate"]["mode"] == "sound" and r["certificate"]["epsilon"] <= 32.0
    assert r["final"]["clean_acc"] <= 0.4                               # measured 0.193: every hop is noisy


def test_noise_falls_with_epsilon():
    sig = [split_train_sigma(epsilon=e, delta=1e-5, L=1.0, hops=60, n_clients=10, local_steps=3, split=0.5)
           for e in (0.5, 1, 4, 16, 64)]
    assert all(a > b for a, b in zip(sig, sig[1:]))
    with pytest.raises(ValueError, match="split"):
        split_train_sigma(epsilon=1, delta=1e-5, L=1.0, hops=60, n_clients=10, local_steps=3, split=1.0)


def test_frontier_shape_and_monotone_noise(world):
    fr = rrdu_frontier((4.0, 32.0), world=world, paper=False)
    rows = fr["sound"]["rrdu"]
    assert [r["epsilon"] for r in rows] == [4.0, 32.0]
    assert all(r["mode"] == "sound" and r["certified_epsilon"] <= r["epsilon"] for r in rows)
    assert rows[0]["sigma"] > rows[1]["sigma"] and rows[0]["sigma_train"] > rows[1]["sigma_train"]
    assert rows[1]["certified_epsilon"] > rows[0]["certified_epsilon"]
    assert rows[1]["clean_acc"] >= rows[0]["clean_acc"]                 # more budget, less noise, more accuracy
    assert np.isclose(fr["retrain"]["asr"], 0.0, atol=0.05)
