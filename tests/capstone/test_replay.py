"""The end-to-end replay check: every certified recipe passes on its shipped profiles, every registry row is
accounted for, and each planted pipeline bug is caught by the check that should catch it."""

from dataclasses import replace

import pytest
import torch

import unlearnkit.experiments.centralized as C
import unlearnkit.methods.descend_rewind.r2d as r2d_module
from unlearnkit import make_generator
from unlearnkit.experiments.registry import METHODS
from unlearnkit.experiments.replay import UNCERTIFIED_ROWS, PENDING, REPLAYS, honest_audit, replay

CASES = [(m, p) for m, (profiles, _) in REPLAYS.items() for p in profiles]


def test_every_registered_method_and_profile_is_accounted_for():
    """A new method or profile cannot skip the replay: it has a recipe, or no certificate, or a named gap."""
    covered = set(CASES)
    for spec in METHODS:
        for profile in spec.profiles:
            key = (spec.name, profile)
            places = [key in covered, key in UNCERTIFIED_ROWS, key in PENDING]
            assert sum(places) == 1, f"{key}: in {sum(places)} of REPLAYS / UNCERTIFIED_ROWS / PENDING, expected one"
    for key in [*UNCERTIFIED_ROWS, *PENDING]:
        assert any(key == (s.name, p) for s in METHODS for p in s.profiles), f"{key} is not a registry row"


@pytest.mark.parametrize("method,profile", CASES)
def test_replay_passes_on_shipped_profiles(method, profile):
    report = replay(method, profile, seed=0)
    assert report.passed, report.problems
    assert report.certificate.certified
    assert all(r["same_noise"] for r in report.rows)
    assert all(r["ratio"] is None or r["ratio"] <= 1.0 for r in report.rows)


def test_r2d_quick_worlds_are_close_in_exact_epsilon():
    """Full-batch GD makes both worlds deterministic given the seeds: the Gaussian pair at the measured
    shift is the exact privacy loss between them, far below the certified 1 (measured 0.074)."""
    s = replay("r2d", "quick").summary()
    assert s["passed"] and s["certified_epsilon"] == 1.0
    assert s["epsilon_at_measured_shift"] < 0.2


def _data_scaled_preprocess(ds, backdoor, prof):
    """The refuted preprocessing: centre with the training mean, divide by the largest training-row norm."""
    mean = ds.x_train.mean(dim=0, keepdim=True)
    scale = float((ds.x_train - mean).reshape(ds.n_train, -1).norm(dim=1).max())
    ds = replace(ds, x_train=(ds.x_train - mean) / scale, x_test=(ds.x_test - mean) / scale,
                 info={**ds.info, "max_norm": 1.0})
    if backdoor is not None:
        backdoor = replace(backdoor, dataset=ds, x_test_triggered=(backdoor.x_test_triggered - mean) / scale)
    return ds, backdoor


def test_planted_bug_scale_from_data_breaks_the_sensitivity(monkeypatch):
    monkeypatch.setattr(C, "preprocess", _data_scaled_preprocess)
    report = replay("r2d", "quick")
    assert not report.passed
    assert any(p.startswith("sensitivity") for p in report.problems), report.problems
    assert report.rows[0]["ratio"] > 10  # the forget set moved the scale: tens of sensitivities


def test_planted_bug_loop_count_from_data_breaks_the_control_flow():
    def fit(prof, ds, backdoor, *, seed):  # "20 steps per 60 training rows": a loop count read from D
        steps = 20 * (ds.n_train // 60)  # 440 on D, 420 on D minus the 60 forgotten rows
        return C.fit_world(replace(prof, train=replace(prof.train, steps=steps)), ds, backdoor, seed=seed)

    report = replay("r2d", "quick", hooks={"fit_world": fit})
    assert any(p.startswith("control flow") for p in report.problems), report.problems


def test_planted_bug_sensitivity_off_by_two_breaks_the_calibration(monkeypatch):
    original = r2d_module.descend_rewind_sigma

    def halved(sensitivity, *args, **kwargs):  # the noise is calibrated to half the declared Delta
        return original(sensitivity / 2, *args, **kwargs)

    monkeypatch.setattr(r2d_module, "descend_rewind_sigma", halved)
    report = replay("r2d", "quick")
    assert any(p.startswith("calibration") for p in report.problems), report.problems


def test_planted_bug_noise_seed_from_data_breaks_the_noise():
    hooks = {"generator": lambda state: make_generator(len(state.train_indices))}
    report = replay("output_perturbation", "quick", hooks=hooks)
    assert any(p.startswith("noise") for p in report.problems), report.problems


def test_traced_release_is_bitwise_the_untraced_one():
    from unlearnkit.privacy.noise import gaussian_noise
    from unlearnkit.privacy.trace import noisy_release, recording

    v = torch.arange(5.0)
    plain = v + gaussian_noise(v, 0.3, make_generator(4))
    with recording() as trace:
        traced = noisy_release(v, 0.3, make_generator(4), name="x", sensitivity=1.0)
    assert torch.equal(plain, traced) and len(trace.mechanisms) == 1
    assert torch.equal(noisy_release(v, 0.3, make_generator(4), name="x"), plain)  # outside a recording


def test_newton_quick_worlds_are_close_in_exact_epsilon():
    """The exact global Newton step lands within 1e-3 of its declared sensitivity of the minimiser on D minus
    D_f (both worlds polished to the optimum, so deterministic): a tiny exact epsilon against the certified 1."""
    s = replay("newton", "quick").summary()
    assert s["passed"] and s["certified_epsilon"] == 1.0
    assert s["worst_distance_over_sensitivity"] < 0.05 and s["epsilon_at_measured_shift"] < 0.01


def test_planted_bug_newton_scale_from_data_breaks_the_sensitivity(monkeypatch):
    import unlearnkit.experiments.newton.frontier as NF

    def by_largest_row(ds, **kw):  # the refuted map: divide by the largest raw row norm (the forgotten row's)
        big = float(ds.x_train.reshape(ds.n_train, -1).norm(dim=1).max())
        return replace(ds, x_train=ds.x_train / big, x_test=ds.x_test / big,
                       info={**ds.info, "max_norm": 1.0, "unit_ball_center": 0.0, "unit_ball_scale": big})

    monkeypatch.setattr(NF, "scale_to_unit_ball", by_largest_row)
    report = replay("newton", "quick")
    assert any(p.startswith("sensitivity") for p in report.problems), report.problems
    assert report.rows[0]["ratio"] > 10  # 4.92 on D, 4.81 without the forgotten row: tens of sensitivities


def test_planted_bug_pdudt_rounds_from_data_breaks_the_control_flow(monkeypatch):
    import unlearnkit.experiments.pdudt.frontier as PF

    original = PF.run_gradient_gossip

    def rounds_from_data(flat, fed, sched, cfg, **kw):  # "one round per 7 training rows": read from D
        rounds = sum(len(ix) for ix in fed.client_indices) // 7
        return original(flat, fed, sched, replace(cfg, rounds=rounds), **kw)

    monkeypatch.setattr(PF, "run_gradient_gossip", rounds_from_data)
    report = replay("pdudt", "quick")
    assert any(p.startswith("control flow") for p in report.problems), report.problems


@pytest.mark.parametrize("method", ["r2d", "d2d", "newton"])
def test_honest_audit_does_not_refute_the_quick_certificates(method):
    """2,000 draws per world, world B re-run from raw data on D minus D_f: the certificate stands."""
    res = honest_audit(method, "quick", n_trials=2000)
    assert res.extras["replay_passed"] and not res.violation, str(res)


def test_honest_audit_refutes_the_data_scaled_preprocessing(monkeypatch):
    """The positive control: the refuted preprocessing (training mean and largest row norm) is caught."""
    monkeypatch.setattr(C, "preprocess", _data_scaled_preprocess)
    res = honest_audit("r2d", "quick", n_trials=2000)
    assert res.violation and res.epsilon_lower > 3, str(res)


def test_rrdu_quick_composes_exactly_the_steps_that_moved():
    """World B under world A's transcript: only the noisy training steps at u move (within 2L each), the
    accountant's Renyi slope counts exactly those, and the unlearning walk (no D_f read) releases the same model."""
    r = replay("rrdu", "quick")
    assert r.passed, r.problems
    s = r.summary()
    assert s["mechanisms_that_moved"] > 0 and s["rho_counted"] <= s["rho_declared"] * (1 + 1e-9)
    assert s["rho_measured"] < s["rho_declared"]
    assert r.rows[-1]["name"] == "rrdu.release" and r.rows[-1]["distance"] == 0.0


def test_planted_bug_rrdu_walk_length_from_data_breaks_the_control_flow():
    from unlearnkit.experiments.rrdu.lab import build_world

    def fit(setup, **kw):  # "one training hop per 20 rows": the walk length read from D
        w = build_world(setup, **kw)
        return replace(w, setup=replace(w.setup, T_train=w.dataset.n_train // 20))

    report = replay("rrdu", "quick", hooks={"fit_world": fit})
    assert any(p.startswith("control flow") for p in report.problems), report.problems


def test_planted_bug_dp_sgd_sampling_rate_from_the_training_size_breaks_the_control_flow(monkeypatch):
    """q = batch_size / n reads the training size, which the forget set changes: world B samples at another rate."""
    import unlearnkit.experiments.noisy_finetune.lab as NF

    monkeypatch.setattr(NF, "DPSGD_SAMPLING_RATE", None)
    report = replay("dp_sgd", "quick")
    assert any(p.startswith("control flow") and "sampling_rate" in p for p in report.problems), report.problems


def test_dp_sgd_quick_steps_move_only_by_the_forgotten_rows():
    r = replay("dp_sgd", "quick")
    assert r.passed, r.problems
    moved = [x for x in r.rows if x["name"] == "dp_sgd.step" and x["distance"] > 0]
    assert 0 < len(moved) < r.certificate.constants["q"] * 300 * 13 * 2  # steps whose batch held a forgotten row
    assert r.rows[-1]["name"] == "dp_sgd.release" and r.rows[-1]["distance"] == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_replay_sweep_on_more_seeds(seed):
    """The fuller sweep: every recipe and profile on two more seeds (about a minute each on 2 cores)."""
    from unlearnkit.experiments.replay import replay_table

    bad = [r for r in replay_table(seeds=(seed,)) if not r["passed"]]
    assert not bad, bad


def test_every_certified_method_states_its_relation_and_public_inputs():
    """A certified result says which relation it is about and what it takes as public."""
    from unlearnkit.experiments.contract import PUBLIC_INPUTS, finish_result

    for method in {m for m, _ in CASES}:
        assert method in PUBLIC_INPUTS, method
    out = finish_result({"method": "r2d", "certificate": {"epsilon": 1.0, "delta": 1e-5, "mode": "sound"}}, None)
    assert "raw data before any preprocessing" in out["guarantee"]["relation"]
    assert out["guarantee"]["public"] == PUBLIC_INPUTS["r2d"]


def test_planted_bug_a_release_beyond_its_plan_is_caught(monkeypatch):
    """certify() and the run must agree: a release declaring twice the planned sensitivity is flagged (f)."""
    import unlearnkit.methods.noisy_finetune.algorithms as NFA

    plain = NFA.noisy_release

    def doubled(value, sigma, generator, *, name, sensitivity=None):
        return plain(value, sigma, generator, name=name, sensitivity=2 * sensitivity)

    monkeypatch.setattr(NFA, "noisy_release", doubled)
    report = replay("output_perturbation", "quick")
    assert any(p.startswith("plan") for p in report.problems), report.problems
