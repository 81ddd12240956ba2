"""Noisy fine-tuning and output perturbation on a forget task with a signal (a planted backdoor), and their
frontier against epsilon. The pinned numbers were measured on a 2-core CPU box (seed 0), with margins."""

import pytest

from unlearnkit.experiments import get_method
from unlearnkit.experiments.noisy_finetune import lab as L

QUICK_EPS = (0.25, 1.0, 4.0, 16.0, 64.0)


@pytest.fixture(scope="module")
def frontier():
    return L.nf_frontier(epsilons=QUICK_EPS)


@pytest.fixture(scope="module")
def gc_run():
    return get_method("gradient_clipping").run("quick", seed=0, progress=False)


def test_quick_profile_has_a_forget_signal(gc_run):
    """Original minus retrained is at least 0.3 on both forget metrics (measured: 0.985 and 1.0)."""
    m = gc_run["metrics"]
    assert "backdoor" in gc_run["request"] or m.get("backdoor_asr") is not None
    assert m["original_backdoor_asr"] - m["retrain_backdoor_asr"] >= 0.9
    assert m["original_forget_acc"] - m["retrain_forget_acc"] >= 0.9


def test_quick_gradient_clipping_forgets_under_its_sound_certificate(gc_run):
    """Sound (1, 1e-5): backdoor gone like retraining's, accuracy within 5 points (measured 0.918 vs 0.927)."""
    g, m = gc_run["guarantee"], gc_run["metrics"]
    assert g["certified"] and g["epsilon"] == pytest.approx(1.0)
    assert m["backdoor_asr"] - m["retrain_backdoor_asr"] <= 0.05
    assert m["forget_acc"] - m["retrain_forget_acc"] <= 0.05
    assert abs(m["test_acc"] - m["retrain_test_acc"]) <= 0.05


def test_sigma_is_non_increasing_in_epsilon(frontier):
    for method in L.FRONTIER_METHODS:
        for mode in ("paper", "sound"):
            pts = sorted((p for p in frontier["points"] if p["method"] == method and p["mode"] == mode),
                         key=lambda p: p["epsilon"])
            assert [p["epsilon"] for p in pts] == list(QUICK_EPS)
            sig = [p["sigma"] for p in pts]
            assert all(a >= b for a, b in zip(sig, sig[1:])), (method, mode, sig)
            ceps = [p["certified_epsilon"] for p in pts]
            assert all(a <= b for a, b in zip(ceps, ceps[1:])), (method, mode, ceps)
            if mode == "sound":
                assert ceps == pytest.approx(list(QUICK_EPS))


def test_paper_mode_gradient_clipping_certifies_less_than_it_claims(frontier):
    pts = [p for p in frontier["points"] if p["method"] == "gradient_clipping" and p["mode"] == "paper"]
    assert all(p["certified_epsilon"] > 1.5 * p["epsilon"] for p in pts)  # measured: 7.08 at a claimed 1, 116 at 64


def test_frontier_ordering(frontier):
    """What notebook 04 teaches: retraining and both certified methods forget the backdoor at every epsilon,
    fine-tuning does not; gradient clipping keeps its accuracy down to eps = 0.25, output perturbation loses
    it below eps = 1 (measured at 0.25: GC 0.927, OP 0.629, retrain 0.927)."""
    rt, ft, orig = frontier["retrain"], frontier["finetune"], frontier["original"]
    assert orig["asr_gap"] >= 0.9 and ft["asr_gap"] >= 0.5  # fine-tuning keeps the backdoor (measured 0.82)
    for p in frontier["points"]:
        assert p["asr_gap"] <= 0.1 and p["forget_gap"] <= 0.1, p
    sound = {(p["method"], p["epsilon"]): p for p in frontier["points"] if p["mode"] == "sound"}
    for eps in QUICK_EPS:
        assert sound[("gradient_clipping", eps)]["test_acc"] >= rt["test_acc"] - 0.07, eps
    for eps in (4.0, 16.0, 64.0):
        assert sound[("output_perturbation", eps)]["test_acc"] >= rt["test_acc"] - 0.05, eps
    assert sound[("output_perturbation", 0.25)]["test_acc"] <= rt["test_acc"] - 0.2
    assert sound[("gradient_clipping", 0.25)]["test_acc"] > sound[("output_perturbation", 0.25)]["test_acc"] + 0.15


def test_frontier_arguments_are_checked():
    with pytest.raises(ValueError, match="epsilon"):
        L.nf_frontier(epsilons=(0.0,))
    with pytest.raises(ValueError, match="mode"):
        L.nf_frontier(modes=("exact",))
    with pytest.raises(ValueError, match="method"):
        L.nf_frontier(methods=("model_clipping",))
    with pytest.raises(ValueError, match="profile"):
        L.nf_profile("mnist")


def test_paper_profile_states_what_differs():
    prof = L.nf_profile("paper")
    assert prof.request == "samples" and prof.m == 135 and prof.model_kwargs == {"hidden": (5,)}
    assert "MNIST" in L.PAPER_DIFFERS and "digits" in L.PAPER_DIFFERS
    cfg = L.gc_config("paper", mode="paper")
    assert (cfg.C0, cfg.C1, cfg.gamma, cfg.lam, cfg.steps) == (0.01, 100.0, 1e-4, 10.0, 1)  # Table 5
