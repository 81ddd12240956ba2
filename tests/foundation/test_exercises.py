"""Exercise checkers: right answers pass, common wrong answers get their hint, nothing raises."""

import pytest

from unlearnkit import exercises as X


def test_classic_threshold_is_the_published_8_42():
    # the classic sigma first fails at eps ~ 8.42 for delta = 1e-5 (notebook 02's solution; exact delta of
    # Balle & Wang 2018 Thm 8)
    assert X.foundations.classic_threshold(1e-5) == pytest.approx(8.42, abs=0.01)


@pytest.mark.parametrize("answer,ok,hint", [
    (None, False, "in place of None"), (8.42, True, "under-noises"), (1.0, False, "not where the formula fails"),
    (5, False, "finer grid"), (12, False, "already fails"), ("eight", False, "Expected a number"),
    (float("nan"), False, "finite")])
def test_check_classic_threshold(capsys, answer, ok, hint):
    assert X.foundations.check_classic_threshold(answer) is ok
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("answer,ok,hint", [
    ("exponential", True, "per edge"), ("complete", False, "every client talks"), ("ring", False, "tiny gap"),
    ("hypercube", False, "not a topology"), (None, False, "None")])
def test_check_best_gap_per_edge(capsys, answer, ok, hint):
    assert X.foundations.check_best_gap_per_edge(answer) is ok
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("answer,ok", [("rrdu_graph", True), ("RRDU_graph ", True), ("rrdu", False), (3, False)])
def test_check_runnable_ring_walk(answer, ok):
    assert X.foundations.check_runnable_ring_walk(answer) is ok


def test_check_forgotten_class(capsys):
    good = {"original": {"test_acc": 0.95, "forget_acc": 0.97}, "retrained": {"test_acc": 0.86, "forget_acc": 0.0}}
    assert X.foundations.check_forgotten_class(good)
    swapped = {"original": good["retrained"], "retrained": good["original"]}
    assert not X.foundations.check_forgotten_class(swapped) and "retrain without class" in capsys.readouterr().out
    assert not X.foundations.check_forgotten_class({"original": {}}) and "Pass {" in capsys.readouterr().out


JUNK = [None, "", "banana", [], {}, {"x": 1}, True, float("inf"), object()]


@pytest.mark.parametrize("check", [X.foundations.check_strict_ascent, X.centralized.check_rewind_depth, X.centralized.check_small_sigma_settings,
                                   X.networks.check_accountant_c_epsilon, X.networks.check_clientwise_weight,
                                   X.networks.check_leaver_class_origin, X.capstone.check_deployment])
def test_new_checkers_answer_junk_with_a_message_and_never_raise(capsys, check):
    for junk in JUNK:
        assert check(junk) is False
        assert capsys.readouterr().out.strip(), f"{check.__name__}({junk!r}) printed nothing"


def _strict(forget=0.05, rule=False):
    return {"strict": {"forget_acc": forget, "test_acc": 0.80}, "retrain": {"test_acc": 0.93},
            "rule_without_retraining": rule}


@pytest.mark.parametrize("answer,ok,hint", [
    (_strict(), True, "moves the whole network"), (_strict(forget=0.4), False, "stop_forget_acc=0.1"),
    (_strict(rule=True), False, "knowing that retraining"), (_strict(rule="maybe"), False, "True or False"),
    ({"strict": {}}, False, "Pass {")])
def test_check_strict_ascent(capsys, answer, ok, hint):
    assert X.foundations.check_strict_ascent(answer) is ok
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("answer,ok,hint", [
    (200, True, "saves nothing"), ("200", True, "100%"), (1.0, False, "fraction"), (120, False, "still above 1"),
    (400, False, "cannot exceed"), ("K", False, "Expected a number")])
def test_check_rewind_depth(capsys, answer, ok, hint):
    assert X.centralized.check_rewind_depth(answer) is ok
    assert hint in capsys.readouterr().out


SOLUTION_04 = {"C0": 1.0, "C1": 0.01, "gamma": 0.1, "lam": 5.0, "T": 100}


@pytest.mark.parametrize("answer,ok,hint", [
    (SOLUTION_04, True, "forgotten entirely"), ({**SOLUTION_04, "C1": 1.0}, False, "Small C1/lam"),
    ({**SOLUTION_04, "T": 500}, False, "1 to 100"), ({**SOLUTION_04, "lam": 20.0}, False, "refused"),
    ({**SOLUTION_04, "gamma": "big"}, False, "dict")])
def test_check_small_sigma_settings(capsys, answer, ok, hint):
    assert X.centralized.check_small_sigma_settings(answer) is ok
    assert hint in capsys.readouterr().out


def test_accountant_c_epsilon_is_the_solutions_11_7():
    t = X.networks.accountant_c_epsilon()
    assert t["sigma_a"] == pytest.approx(2.574, abs=0.001) and t["eps_c"] == pytest.approx(11.7, abs=0.1)


@pytest.mark.parametrize("answer,ok,hint", [
    (11.75, True, "sound per-visit"), (1, False, "far more noise"), (2.574, False, "A's sigma"),
    (8.0, False, "accountant B"), (5, False, "more noise"), (30, False, "less noise")])
def test_check_accountant_c_epsilon(capsys, answer, ok, hint):
    assert X.networks.check_accountant_c_epsilon(answer) is ok
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("answer,ok,hint", [
    ("1", True, "global Newton step"), (1, True, "global Newton step"), ("1/N", False, "shrinks the correction"),
    ({"1": 0.2, "1/N": 1.5}, True, "not at consensus"), ({"1": 1.5, "1/N": 0.2}, False, "swap"),
    ({"1": -1, "1/N": 0.2}, False, "non-negative"), ({"one": 1}, False, "Pass {"), ("2", False, "answer '1'")])
def test_check_clientwise_weight(capsys, answer, ok, hint):
    assert X.networks.check_clientwise_weight(answer) is ok
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("answer,ok,hint", [
    (0.0, True, "nothing to forget"), (0.05, True, "never learns"), (0.9, False, "rep2"),
    (1.5, False, "not an accuracy"), ("zero", False, "Expected a number")])
def test_check_leaver_class_origin(capsys, answer, ok, hint):
    assert X.networks.check_leaver_class_origin(answer) is ok
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize("answer,ok,hint", [
    ("R2D", True, "secure aggregation"), ("Rewind-to-Delete", True, "secure aggregation"),
    ("noisy fine-tuning", True, "second choice"), ("RR-DU exact", True, "only decentralized"),
    ("retrain", True, "exact"), ("Newton", False, "single forgotten record"), ("PDUDT", False, "whole client"),
    ("rrdu", False, "Which RR-DU"), ("finetune", False, "no certificate"), ("svm", False, "not a method")])
def test_check_deployment(capsys, answer, ok, hint):
    assert X.capstone.check_deployment(answer) is ok
    assert hint in capsys.readouterr().out


def test_imports_from_the_package_keep_working():
    from unlearnkit.exercises.foundations import check_classic_threshold
    from unlearnkit.exercises.capstone import check_deployment

    assert callable(check_classic_threshold) and callable(check_deployment)
