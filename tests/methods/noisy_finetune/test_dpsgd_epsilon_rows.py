"""Notebook 04's section (e): DP-SGD's per-record epsilon by RDP, by the PLD (only where it certifies) and by the
last-iterate heuristic. Pinned numbers: the quick profile (k = 13, (50, 1e-5), q = 0.0475, 300 steps)."""

from __future__ import annotations

import pytest

from unlearnkit.experiments.noisy_finetune.accounting import dpsgd_epsilon_rows
from unlearnkit.experiments.noisy_finetune.lab import DPSGD_SAMPLING_RATE
from unlearnkit.methods.noisy_finetune.bounds import dpsgd_group_targets
from unlearnkit.methods.noisy_finetune.dpsgd import dpsgd_noise_multiplier
from unlearnkit.privacy.calibrate import dpsgd_epsilon
from unlearnkit.privacy.pld import PLD_MIN_DELTA

Q, STEPS = DPSGD_SAMPLING_RATE, 300


def _bracket(text):
    lower, upper = (float(x) for x in text.strip("[]").split(","))
    return lower, upper


@pytest.fixture(scope="module")
def shipped():
    e1, d1 = dpsgd_group_targets(50.0, 1e-5, 13)
    z = dpsgd_noise_multiplier(e1, d1, q=Q, steps=STEPS)
    return e1, d1, z, dpsgd_epsilon_rows(Q, z, STEPS, d1)


def test_below_the_floor_the_pld_row_refuses_and_says_why(shipped):
    e1, d1, z, rows = shipped
    assert d1 < PLD_MIN_DELTA  # about 7e-27
    by = {r["per-record epsilon"]: r for r in rows}
    assert by["composed, RDP (certifies)"]["value"] == pytest.approx(e1, abs=1e-4)  # calibrated to the target
    pld = by["composed, PLD"]
    assert pld["value"] == "not certified" and pld["delta"] == d1
    assert "below the PLD floor 1e-08" in pld["note"] and "round-off" in pld["note"]
    assert not any("[" in str(r["value"]) and r["delta"] < PLD_MIN_DELTA for r in rows)  # no bracket below it


def test_the_bracket_is_shown_at_a_valid_delta_beside_rdp(shipped):
    e1, d1, z, rows = shipped
    by = {r["per-record epsilon"]: r for r in rows}
    bracket, rdp = by["composed, PLD [lower, upper] at a larger delta"], by["composed, RDP at that larger delta"]
    assert bracket["delta"] == rdp["delta"] == PLD_MIN_DELTA
    assert "not the delta asked for" in bracket["note"]
    lower, upper = _bracket(bracket["value"])
    assert lower <= upper <= rdp["value"]  # the PLD is never looser than RDP
    assert (lower, upper) == pytest.approx((1.752, 1.769), abs=2e-3)  # measured at grid 1e-3
    assert rdp["value"] == pytest.approx(dpsgd_epsilon(z, Q, STEPS, 1e-8)) == pytest.approx(1.883, abs=1e-3)
    heuristic = rows[-1]
    assert "HEURISTIC" in heuristic["per-record epsilon"] and heuristic["delta"] == d1
    assert heuristic["value"] < e1  # smaller than the composed certificate, and certifies nothing


def test_at_a_valid_delta_one_pld_row_certifies():
    z = dpsgd_noise_multiplier(1.0, 1e-5, q=Q, steps=STEPS)
    rows = dpsgd_epsilon_rows(Q, z, STEPS, 1e-5)
    assert [r["per-record epsilon"] for r in rows] == ["composed, RDP (certifies)",
                                                        "composed, PLD [lower, upper] (upper certifies)",
                                                        "last iterate only: a HEURISTIC, not a bound"]
    lower, upper = _bracket(rows[1]["value"])
    assert lower <= upper <= rows[0]["value"] + 1e-3 and rows[0]["value"] == pytest.approx(1.0, abs=1e-3)


def test_a_larger_delta_below_the_floor_is_refused():
    with pytest.raises(ValueError, match="pld_delta"):
        dpsgd_epsilon_rows(Q, 2.0, STEPS, 1e-20, pld_delta=1e-10)
