"""One-run canary audit of unlearning: retraining is never refuted, a noiseless rewind is, R2D is not."""

import math

import pytest

from unlearnkit import make_generator
from unlearnkit.experiments.audits.canaries import CanaryTask, canary_audit

TASK = CanaryTask(m=200, k_plus=20, k_minus=20, steps=200)


def test_retraining_control_gives_zero():
    for seed in range(2):
        row = canary_audit("retrain", task=TASK, generator=make_generator(seed))
        assert row["epsilon_lower"] == 0.0 and not row["violation"] and row["claimed_canary_epsilon"] == 0.0


def test_no_unlearning_is_seen_and_noiseless_rewind_is_refuted():
    row = canary_audit("no_unlearning", task=TASK, generator=make_generator(0))
    assert row["n_correct"] == row["n_guesses"] == 40
    assert row["epsilon_lower"] == pytest.approx(row["ceiling"]) and row["epsilon_lower"] > 2.0
    row = canary_audit("r2d_no_noise", task=TASK, generator=make_generator(0))
    assert row["violation"] and row["epsilon_lower"] > row["claimed_canary_epsilon"] == 2.0


def test_r2d_sound_is_not_refuted_and_reports_its_claim():
    row = canary_audit("r2d", "sound", task=TASK, generator=make_generator(0))
    assert not row["violation"] and row["sigma"] > 0
    assert row["certified_epsilon_run"] <= 1.0 + 1e-9  # the fixed (largest-request) noise covers this request
    assert math.isclose(row["delta_canary"], 1e-5 * (1 + math.e))


def test_validation_names_the_parameter():
    with pytest.raises(ValueError, match="k_minus"):
        CanaryTask(m=10, k_plus=5, k_minus=6)
    with pytest.raises(ValueError, match="method"):
        canary_audit("nope", generator=make_generator(0))


def test_canary_verdict_rows_keep_the_numbers_and_name_the_verdict():
    from unlearnkit.experiments.audits.canaries import canary_verdict_rows

    rows = canary_verdict_rows([
        {"method": "retrain", "n_correct": 9, "n_guesses": 20, "epsilon_lower": 0.0, "claimed_canary_epsilon": 0.0,
         "ceiling": 1.75, "violation": False},
        {"method": "r2d_no_noise", "n_correct": 40, "n_guesses": 40, "epsilon_lower": 2.5,
         "claimed_canary_epsilon": 2.0, "ceiling": 2.5, "violation": True}])
    assert rows[0] == {"method": "retrain", "right guesses": "9/20", "eps_canary >=": 0.0, "claim": 0.0,
                       "ceiling": 1.75, "verdict": "not refuted"}
    assert rows[1]["verdict"] == "VIOLATION" and rows[1]["right guesses"] == "40/40"
