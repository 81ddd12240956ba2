"""Exercise checkers: right answers pass, common wrong answers get their hint, nothing raises."""

import pytest

from unlearnkit import exercises as X


def test_classic_threshold_is_the_published_8_42():
    # the classic sigma first fails at eps ~ 8.42 for delta = 1e-5 (notebook 02's solution; exact delta of
    # Balle & Wang 2018 Thm 8)
    assert X.classic_threshold(1e-5) == pytest.approx(8.42, abs=0.01)


@pytest.mark.parametrize("answer,ok,hint", [
    (None, False, "in place of None"), (8.42, True, "under-noises"), (1.0, False, "not where the formula fails"),
    (5, False, "finer grid"), (12, False, "already fails"), ("eight", False, "Expected a number"),
    (float("nan"), False, "finite")])
def test_check_classic_threshold(capsys, answer, ok, hint):
    assert X.check_classic_threshold(answer) is ok
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("answer,ok,hint", [
    ("exponential", True, "per edge"), ("complete", False, "every client talks"), ("ring", False, "tiny gap"),
    ("hypercube", False, "not a topology"), (None, False, "None")])
def test_check_best_gap_per_edge(capsys, answer, ok, hint):
    assert X.check_best_gap_per_edge(answer) is ok
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("answer,ok", [("rrdu_graph", True), ("RRDU_graph ", True), ("rrdu", False), (3, False)])
def test_check_runnable_ring_walk(answer, ok):
    assert X.check_runnable_ring_walk(answer) is ok


def test_check_forgotten_class(capsys):
    good = {"original": {"test_acc": 0.95, "forget_acc": 0.97}, "retrained": {"test_acc": 0.86, "forget_acc": 0.0}}
    assert X.check_forgotten_class(good)
    swapped = {"original": good["retrained"], "retrained": good["original"]}
    assert not X.check_forgotten_class(swapped) and "retrain without class" in capsys.readouterr().out
    assert not X.check_forgotten_class({"original": {}}) and "Pass {" in capsys.readouterr().out
