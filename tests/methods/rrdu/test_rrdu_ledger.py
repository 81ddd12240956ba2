"""The sound per-observer ledger: exact Gaussian composition of the noisy start and the u-visits each observer saw."""

import math

import numpy as np
import pytest

from unlearnkit.methods.rrdu.ledger import SoundObserverLedger
from unlearnkit.methods.rrdu.sound import rrdu_noisy_start_certify
from unlearnkit.methods.rrdu.sound import noisy_walk_epsilon, noisy_walk_rho

PATH = [1, 0, 2, 0, 3, 1, 0, 0, 2]   # u = 0; observer 1 last holds the token after 2 u-visits, 2 after 4, 3 after 2
RHO = noisy_walk_rho(sigma=20.0, L=1.0, u_steps=18)


def test_visits_charged_to_each_observer():
    led = SoundObserverLedger(PATH, n_clients=5, u=0, sigma=1.0, sensitivity=0.5, train_rho=RHO)
    assert led.visits_seen.tolist() == [0, 2, 4, 2, 0] and led.total_visits == 4
    eps = led.epsilons(1e-5)
    assert math.isnan(eps[0])
    # an observer that never held the token after a u-visit pays only the training
    assert eps[4] == pytest.approx(noisy_walk_epsilon(sigma=20.0, L=1.0, u_steps=18, delta=1e-5), rel=1e-9)
    assert eps[1] == pytest.approx(eps[3]) and eps[1] < eps[2] <= led.every_model_epsilon(1e-5) + 1e-12


def test_every_model_row_equals_accountant_s_exact_composition():
    led = SoundObserverLedger(PATH, n_clients=5, u=0, sigma=1.0, sensitivity=0.5, train_rho=RHO)
    cert = rrdu_noisy_start_certify(train_rho=RHO, variant="lightweight", sigma=1.0, L=1.0, m=50, n_u=100,
                                    u_visits=4, delta=1e-5)
    assert led.every_model_epsilon(1e-5) == pytest.approx(cert.epsilon, rel=1e-9)


def test_monotone_in_sigma_and_no_start_means_no_certificate():
    eps = [SoundObserverLedger(PATH, n_clients=5, u=0, sigma=s, sensitivity=0.5, train_rho=RHO).epsilons(1e-5)[2]
           for s in (0.5, 1.0, 4.0)]
    assert eps[0] > eps[1] > eps[2]
    plain = SoundObserverLedger(PATH, n_clients=5, u=0, sigma=1.0, sensitivity=0.5, train_rho=None)
    assert np.all(np.isinf(np.delete(plain.epsilons(1e-5), 0)))
    exact = SoundObserverLedger(PATH, n_clients=5, u=0, sigma=0.0, sensitivity=0.0, train_rho=RHO)
    assert len(set(np.round(np.delete(exact.epsilons(1e-5), 0), 12))) == 1   # u-steps read no D_f: training only
    with pytest.raises(ValueError, match="path"):
        SoundObserverLedger([7], n_clients=5, u=0, sigma=1.0, sensitivity=0.5, train_rho=RHO)
