"""RR-DU accountants A-D, DDP calibrations, the observer ledger and deletion capacity (digest 000, 3.3-3.8)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unlearnkit.methods.rrdu import certify as rc
from unlearnkit.privacy.linear_rdp import linear_rdp_epsilon
from unlearnkit.privacy.capacity import capacity_curves, ddp_capacity, rrdu_capacity

BASE = dict(delta=1e-5, n_clients=10, p=0.1, T_unlearn=100)

# digest 000 section 3.4, "Worked numbers" (N=10, p=0.1, T_unlearn=100, delta=1e-5, Delta=2L)
TABLE = [
    (0.5, 0.1, 25.74, 180.6, 252.5, 48.3),
    (0.5, 0.5, 5.149, 36.41, 50.90, 9.94),
    (0.5, 1.0, 2.574, 18.38, 25.70, 5.15),
    (0.5, 2.0, 1.287, 9.37, 13.09, 2.78),
    (0.5, 10.0, 0.257, 2.12, 2.96, 0.93),
    (0.2, 1.0, 1.030, 7.35, 10.28, 2.06),
]


@pytest.mark.parametrize("L,eps,a,b,c,d", TABLE)
def test_sigma_matches_digest_table(L, eps, a, b, c, d):
    for acc, want in zip("ABCD", (a, b, c, d)):
        got = rc.rrdu_sigma(acc, epsilon=eps, L=L, **BASE)
        assert got == pytest.approx(want, rel=6e-3), acc


def test_walk_quantities():
    assert rc.network_amplification(0.1, 10) == pytest.approx(math.log(10) / 9, rel=1e-12)  # = 0.2558
    assert rc.visit_quantile(100, 0.1, 1e-5) == 26
    assert rc.observer_hit_prob(0.1, 10) == pytest.approx(0.1)


def test_accountant_d_matches_dp_accounting_rdp():
    dpa = pytest.importorskip("dp_accounting")
    orders = [2.0, 8.0, 32.0]
    acc = dpa.rdp.RdpAccountant(orders=orders)
    acc.compose(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(5.15)), 100)
    ours = 100 * rc._sgm_rdp(0.1, 5.15, np.array(orders))
    assert np.allclose(acc._rdp, ours, rtol=1e-9)


def test_epsilon_and_calibrate_round_trip():
    for acc in "ABCD":
        s = rc.rrdu_sigma(acc, epsilon=0.7, L=0.5, **BASE)
        assert rc.rrdu_epsilon(acc, sigma=s, L=0.5, **BASE) == pytest.approx(0.7, rel=1e-4)


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0.05, 20), factor=st.floats(1.1, 5), p=st.floats(0.01, 0.9), N=st.integers(2, 60),
       T=st.integers(1, 300), ldelta=st.floats(-9, -2))
def test_sigma_falls_with_epsilon_and_c_never_below_b(eps, factor, p, N, T, ldelta):
    kw = dict(delta=10**ldelta, n_clients=N, p=p, T_unlearn=T, L=0.5)
    for acc in "ABC":
        assert rc.rrdu_sigma(acc, epsilon=eps * factor, **kw) < rc.rrdu_sigma(acc, epsilon=eps, **kw)
    assert rc.rrdu_sigma("C", epsilon=eps, **kw) >= rc.rrdu_sigma("B", epsilon=eps, **kw) * (1 - 1e-12)


@settings(max_examples=5, deadline=None)
@given(eps=st.floats(0.1, 10), p=st.floats(0.02, 0.5))
def test_sigma_d_falls_with_epsilon(eps, p):
    kw = dict(delta=1e-5, n_clients=10, p=p, T_unlearn=50, L=0.5)
    assert rc.rrdu_sigma("D", epsilon=2 * eps, **kw) < rc.rrdu_sigma("D", epsilon=eps, **kw)


def test_certificates_carry_provenance():
    for acc, mode in zip("ABCD", ("paper", "paper", "none", "paper")):
        cert = rc.rrdu_certify(acc, sigma=3.0, L=0.5, **BASE)
        assert cert.mode == mode and cert.sigma == 3.0 and cert.source and cert.note
        assert cert.constants["accountant"] == acc
        # issue 20, finding 1: no RR-DU accountant covers the start-model gap, none is certified
        assert not cert.certified and "P15" in cert.note
    c = rc.rrdu_certify("C", sigma=3.0, L=0.5, **BASE)
    assert math.isinf(c.epsilon) and "refuted" in c.note
    assert c.constants["epsilon_diagnostic"] == pytest.approx(rc.rrdu_epsilon("C", sigma=3.0, L=0.5, **BASE))
    assert rc.rrdu_certify("B", sigma=3.0, L=0.5, **BASE).constants["E_inv_K"] == pytest.approx(0.2558, abs=1e-4)


def test_p_zero_needs_no_noise():
    assert rc.rrdu_sigma("C", epsilon=1.0, L=0.5, delta=1e-5, n_clients=10, p=0.0, T_unlearn=100) == 0.0


def test_ddp_calibrations():
    assert rc.ddp_sigma("alg3", epsilon=1.0, delta=1e-5, L=1.0) == pytest.approx(9.69, abs=0.01)
    assert rc.ddp_sigma("alg3", epsilon=0.1, delta=1e-5, L=1.0) == pytest.approx(96.9, abs=0.1)
    assert rc.ddp_sigma("netdp_group_m", epsilon=1, delta=1e-5, L=1, m=1000, T=100, n_clients=10) == pytest.approx(
        16282, rel=1e-3)
    # group privacy: linear in m for both RDP-based calibrations
    for cal in ("netdp_rdp", "group_sound"):
        s1 = rc.ddp_sigma(cal, epsilon=1, delta=1e-5, L=1, m=1)
        assert rc.ddp_sigma(cal, epsilon=1, delta=1e-5, L=1, m=7) == pytest.approx(7 * s1)
    # issue 20, finding 2: no calibration of the noise-free-start DDP walk is certified
    for cal in rc.DDP_CALIBRATIONS:
        cert = rc.ddp_certify(cal, sigma=1, epsilon=1, delta=1e-5, L=1, m=1, T=1, n_clients=3)
        assert not cert.certified and "does not hold" in cert.note
    gs = rc.ddp_certify("group_sound", sigma=1, epsilon=1, delta=1e-5, L=1, m=1, T=1, n_clients=3)
    assert gs.mode == "none" and math.isinf(gs.epsilon) and gs.constants["epsilon_diagnostic"] == 1


@pytest.mark.parametrize("bad", [dict(p=1.5), dict(n_clients=1), dict(delta=0.0), dict(L=-1.0)])
def test_bad_inputs_name_the_parameter(bad):
    kw = dict(epsilon=1.0, L=0.5, **BASE)
    kw.update(bad)
    with pytest.raises(ValueError, match=next(iter(bad))):
        rc.rrdu_sigma("C", **kw)


def test_ledger_charges_on_observation():
    # hops: 0 (observer), u=1 noisy, 2, 0, 0, 1, 2
    led = rc.ObserverLedger.from_path([0, 1, 2, 0, 0, 1, 2], n_clients=3, u=1, sigma=2.0, Delta=1.0)
    assert led.weight.tolist() == [1.0, 0.0, 2.0]
    eps = led.epsilons(1e-5)
    assert math.isnan(eps[1]) and eps[2] > eps[0] > 0
    assert eps[0] == pytest.approx(linear_rdp_epsilon(0.5 / 4 / 1.0**2, 1e-5, method="mironov"), rel=2e-2)
    assert sum(r['count'] for r in led.ledger(2)) == 2 and led.ledger(1) == []
    # amplified ledger: first noisy visit reached 2 after 1 hop, 0 after 2 hops -> weight min(1, 2/2) = 1
    ledb = rc.ObserverLedger.from_path([1, 2, 3, 0], n_clients=4, u=1, sigma=2.0, Delta=1.0, accountant="B")
    assert ledb.weight.tolist() == [2 / 3, 0.0, 1.0, 1.0]
    assert np.all(ledb.weight <= rc.ObserverLedger.from_path([1, 2, 3, 0], n_clients=4, u=1, sigma=2.0,
                                                               Delta=1.0).weight)


def test_ledger_grows_like_visits_on_long_walks():
    rng = np.random.default_rng(0)
    N, u, p, T = 10, 3, 0.1, 2000
    path = [u if rng.random() < p else rng.choice([v for v in range(N) if v != u]) for _ in range(T)]
    led = rc.ObserverLedger.from_path(path, n_clients=N, u=u, sigma=1.0, Delta=1.0)
    visits = sum(v == u for v in path)
    w = np.delete(led.weight, u)
    assert np.all(w <= visits) and np.all(w >= 0.8 * visits)


def test_ddp_capacity_digest_numbers():
    kw = dict(gamma=1, epsilon=1, delta=1e-5, n_clients=10, T=100, R=10, L=1)
    assert ddp_capacity(d=100, floor=False, **kw) == pytest.approx(4.65e-4, rel=1e-2)
    assert ddp_capacity(d=1_660_000, s=4, floor=False, **kw) == pytest.approx(7.2e-6, rel=1e-2)
    assert ddp_capacity(d=100, **kw) == 0.0


def test_rrdu_capacity_regimes():
    kw = dict(epsilon=1, delta=1e-5, n_clients=10, d=100, T_unlearn=100, L=0.5, s=4, gamma=1.0)
    small = rrdu_capacity(n_u=6000, rho=0.5, **kw)
    assert small.regime == "bias-limited" and small.m > 0
    assert small.m == math.floor((1 - small.A) * 6000 / 0.5) or small.m == 6000
    big = rrdu_capacity(n_u=6000, rho=50.0, **kw)
    assert big.regime == "variance-limited" and big.m == 0
    # linear in n_u once A < gamma, independent of N through m (A depends on N)
    a = rrdu_capacity(n_u=100, rho=0.5, **kw).m
    b = rrdu_capacity(n_u=200, rho=0.5, **kw).m
    assert abs(b - 2 * a) <= 2
    curves = capacity_curves(np.array([100, 200]), np.array([10, 100]), **kw, rho=0.5)
    assert curves["ddp"][1] > curves["ddp"][0]


def test_accountant_sigma_rows_one_row_per_accountant():
    from unlearnkit.experiments.rrdu.lab import accountant_sigma_rows
    from unlearnkit.methods.rrdu.certify import rrdu_sigma

    kw = dict(epsilon=1.0, delta=1e-5, n_clients=10, p=0.1, T_unlearn=100, L=0.5)
    rows = accountant_sigma_rows(**kw)
    assert [r["accountant"] for r in rows] == list("ABCD")
    assert all(r["sigma"] == rrdu_sigma(r["accountant"], **kw) for r in rows)
    s = {r["accountant"]: r["sigma"] for r in rows}
    assert s["C"] >= s["B"]  # C (no amplification) never asks for less noise than B
    assert accountant_sigma_rows(accountants="D", **kw) == rows[3:]
