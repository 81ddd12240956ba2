"""Issue 20, finding 6: the certificate covers only the corrections Theorem 4.9's bound covers.

Lemma B.2 / Thm 4.9 / Cor. 4.10 are *stated* for Eq. (9) (convex weights); the *proof* (Eq. 50) uses only
weights in [0, 1], so our sound mode covers "paper", "sum" and "none", the paper mode only "paper". The gap
audit measures the proof's inequalities on a tiny network for every retrain rule x scale.
"""

import math

import numpy as np
import pytest

import unlearnkit as uk
from unlearnkit.core import Request
from unlearnkit.data import load, partition
from unlearnkit.decentral.correction import CORRECTION_SCALES, RETRAIN_RULES
from unlearnkit.decentral.gradient_gossip import GradientGossipConfig, run_gradient_gossip
from unlearnkit.experiments.pdudt.gap import lemma_gap_check
from unlearnkit.graphs.dynamic import ErdosRenyiSchedule
from unlearnkit.methods import pdudt as P
from unlearnkit.methods.pdudt import certify
from unlearnkit.models import FlatParams, make_model

C = P.certify.GapConstants(L=1.0, sgd_var=1.0, het_var=1.0, delta_f=2.3, delta_f_tilde=2.3, rho1=0.9, rho2=0.9)
ARGS = dict(lr=1e-3, t1=100, n=10, constants=C, epsilon=1.0, delta=1e-5)


def test_coverage_table_names_every_scale_of_the_correction_module():
    assert certify._SCALES == CORRECTION_SCALES
    for scale in CORRECTION_SCALES:
        assert P.certify.lemma_coverage(scale, "sound")[0]
        covered, why = P.certify.lemma_coverage(scale, "paper")
        assert covered == (scale == "paper")
        assert (scale in why) if scale != "paper" else "Eq. (9)" in why
    with pytest.raises(ValueError, match="correction_scale='half'"):
        P.certify.lemma_coverage("half", "sound")


@pytest.mark.parametrize("scale", CORRECTION_SCALES)
def test_certificate_for_each_scale(scale):
    before_paper = P.certify.pdudt_certificate(**ARGS, mode="paper")  # the default scale: as before this change
    before_sound = P.certify.pdudt_certificate(**ARGS, mode="sound")
    paper = P.certify.pdudt_certificate(**ARGS, mode="paper", correction_scale=scale)
    sound = P.certify.pdudt_certificate(**ARGS, mode="sound", correction_scale=scale)
    # sound mode: every scale is covered by the proof of Lemma B.2, with the same d1 and sigma as before; the
    # hand-set constants are not verified on the data, so no certificate
    assert sound.mode == "none" and not sound.certified and sound.sigma == before_sound.sigma
    assert "set by hand" in sound.note
    assert sound.constants["correction_scale"] == scale and f"correction_scale={scale!r}" in sound.note
    if scale == "paper":
        assert paper.mode == "paper" and paper.sigma == before_paper.sigma and not paper.certified
        assert "does not hold" in paper.note  # finding 7: d1 is an expected distance, not a worst case
    else:  # the paper states nothing for this correction: not certified, and the note names the scale
        assert paper.mode == "none" and math.isinf(paper.epsilon) and not paper.certified
        assert "not certified" in paper.note and f"correction_scale={scale!r}" in paper.note
        assert paper.sigma == before_paper.sigma  # the calibrated noise is still added, certifying nothing


@pytest.fixture(scope="module")
def trained():
    n = 6
    ds = load("synthetic", n_train=240, n_test=20, dim=5, seed=0, device="cpu")
    fed = partition(ds, n, "dirichlet", alpha=0.3, seed=0)
    flat = FlatParams(make_model("logreg", ds.input_shape, 1, generator=uk.make_generator(0)), loss="logistic")
    sched = ErdosRenyiSchedule(n, 0.5, seed=1)
    states = {rule: run_gradient_gossip(flat, fed, sched, GradientGossipConfig(rounds=12, lr=0.01, batch_size=8,
                                                                               cache="history", retrain_rule=rule),
                                        generator=uk.make_generator(3)) for rule in RETRAIN_RULES}
    return fed, states


@pytest.mark.parametrize("rule", RETRAIN_RULES)
def test_rho_below_the_retrain_rules_rounds_is_not_certified(trained, rule):
    # before: any rho1/rho2 the user typed were trusted; rho2 depends on the retrain rule's W~
    fed, states = trained
    req = Request("client", np.asarray(fed.client_indices[2]), client=2)
    r1, r2 = P.algorithm.measured_rho(states[rule].extras["history"].W, 2, rule)
    assert 0 < r1 <= 1 and 0 < r2 <= 1
    ok = P.certify.GapConstants(L=0.5, sgd_var=1.0, het_var=1.0, delta_f=0.7, delta_f_tilde=0.7, rho1=r1, rho2=r2)
    low = P.certify.GapConstants(**{**ok.__dict__, "rho2": 0.5 * r2})
    for scale in CORRECTION_SCALES:
        good = P.PDUDT().unlearn(states[rule], req, P.PDUDTConfig(retrain_rule=rule, correction_scale=scale,
                                                                  noise="certified", mode="sound", constants=ok),
                                 generator=uk.make_generator(0))
        # rho1, rho2 bound the rounds; the other constants are still hand-set, so no certificate either
        assert good.extras["measured_rho"] == pytest.approx((r1, r2)) and not good.certificate.certified
        assert "set by hand" in good.certificate.note and "measured" not in good.certificate.note
        bad = P.PDUDT().unlearn(states[rule], req, P.PDUDTConfig(retrain_rule=rule, correction_scale=scale,
                                                                 noise="certified", mode="sound", constants=low),
                                generator=uk.make_generator(0))
        assert bad.certificate.mode == "none" and not bad.certificate.certified
        assert "rho2=" in bad.certificate.note and "measured" in bad.certificate.note
        assert bad.extras["noise"].abs().sum() > 0  # the noise is not silently dropped


def test_unlearn_reports_the_paper_statement_only_for_eq9(trained):
    fed, states = trained
    req = Request("client", np.asarray(fed.client_indices[2]), client=2)
    r1, r2 = P.algorithm.measured_rho(states["recompute"].extras["history"].W, 2)
    c = P.certify.GapConstants(L=0.5, sgd_var=1.0, het_var=1.0, delta_f=0.7, delta_f_tilde=0.7, rho1=r1, rho2=r2)
    modes = {scale: P.PDUDT().unlearn(states["recompute"], req,
                                      P.PDUDTConfig(correction_scale=scale, noise="certified", constants=c),
                                      generator=uk.make_generator(0)).certificate.mode for scale in CORRECTION_SCALES}
    assert modes == {"paper": "paper", "sum": "none", "none": "none"}


def test_gap_audit_every_scale_stays_inside_the_lemma_chain():
    # the audit of finding 6 (small: two seeds); lemma_gap_check() with its defaults is the benchmark size
    rows = lemma_gap_check(seeds=(0, 1))
    assert set(rows) == {f"{r} / {s}" for r in RETRAIN_RULES for s in CORRECTION_SCALES}
    for key, row in rows.items():
        assert row["max_cs_ratio"] <= 1 + 1e-9, key           # Eq. 50: Cauchy-Schwarz with weights <= 1
        assert row["max_spectral_ratio"] <= 1 + 1e-9, key     # Eq. 50: the per-round spectral bound
        assert row["max_triangle_ratio"] <= 1 + 1e-9, key     # Eq. 53: Theorem 4.9's triangle inequality
        assert row["covered_sound"] == "yes"
        assert row["covered_paper"] == ("yes" if key.endswith("/ paper") else "no")
    for rule in RETRAIN_RULES:
        # Eq. (15): on the average, "sum" removes k's direct contribution exactly; what is left is the drift
        assert rows[f"{rule} / sum"]["max_drift_identity_error"] < 1e-5 * rows[f"{rule} / sum"]["mean_gap"]
