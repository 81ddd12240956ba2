"""Checkers for the exercises of notebooks 00 (welcome), 01 (baselines), 02 (noise calibration) and 05
(networks and walks)."""

from __future__ import annotations

import math
from typing import Any, Callable

from ._common import needs_answer, as_number, verdict


def classic_threshold(delta: float = 1e-5, *, lo: float = 1.0, hi: float = 50.0) -> float:
    """Smallest epsilon at which the classic Gaussian sigma, ``sqrt(2 ln(1.25/delta)) / epsilon``, no longer
    gives ``(epsilon, delta)``-DP (its exact delta exceeds the target): a root of the exact delta of the
    Gaussian mechanism (Balle & Wang 2018, Thm 8) along the classic calibration (Dwork & Roth 2014, Thm A.1)."""
    from scipy.optimize import brentq  # deferred: imports scipy.optimize

    from ..privacy import classic_gaussian_sigma  # deferred: imports scipy.optimize
    from ..privacy.gaussian import gaussian_delta  # deferred: imports scipy.optimize

    def excess(eps: float) -> float:
        return math.log(gaussian_delta(eps, classic_gaussian_sigma(eps, delta, warn=False))) - math.log(delta)

    return float(brentq(excess, lo, hi, xtol=1e-6))


def check_classic_threshold(answer: Any, delta: float = 1e-5) -> bool:
    """Notebook 02, exercise 2: the smallest epsilon where the classic sigma stops giving ``(epsilon, delta)``."""
    if needs_answer(answer):
        return False
    x = as_number(answer, "epsilon")
    if x is None:
        return False
    truth = classic_threshold(delta)
    if abs(x - truth) <= 0.02:
        return verdict(True, f"Past epsilon = {truth:.2f} the classic formula under-noises at delta = {delta:g}; "
                              "below 1 it is proven, between 1 and there it holds by luck.")
    if x <= 1.0 + 1e-9:
        return verdict(False, "Epsilon = 1 is where the classic *proof* stops, not where the formula fails: check "
                               "P.gaussian_delta(eps, P.classic_gaussian_sigma(eps, delta, warn=False)) > delta "
                               "on a grid above 1.")
    if x < truth:
        return verdict(False, f"At epsilon = {x:g} the classic sigma still gives delta <= {delta:g} (compute its "
                               "exact delta): the first failure comes later. Use a finer grid.")
    return verdict(False, f"The classic formula already fails before {x:g}: scan from 1 upwards on a finer grid "
                           "and report the first epsilon whose exact delta exceeds the target.")


def check_best_gap_per_edge(answer: Any, n: int = 32) -> bool:
    """Notebook 05, exercise 1: the topology with the largest spectral gap per edge on ``n`` clients."""
    if needs_answer(answer):
        return False
    from ..experiments.labs.networks import topology_table  # deferred: imports torch

    rows = topology_table(n)
    best = max(rows, key=lambda r: r["spectral_gap"] / r["edges"])
    by_name = {r["topology"]: r for r in rows}
    name = str(answer).strip().lower()
    if name == best["topology"]:
        return verdict(True, f"{name}: gap {best['spectral_gap']} over {best['edges']} edges "
                              f"({best['spectral_gap'] / best['edges']:.4f} per edge).")
    if name not in by_name:
        return verdict(False, f"{answer!r} is not a topology of the table: one of {sorted(by_name)}.")
    r = by_name[name]
    hint = (" The complete graph has the largest gap, but every client talks to every other: divide by its "
            f"{r['edges']} edges." if name == "complete" else
            " Sparse graphs have few edges but a tiny gap: compute gap / edges for every row.")
    return verdict(False, f"{name}: {r['spectral_gap'] / r['edges']:.4f} per edge is not the largest.{hint}")


def check_runnable_ring_walk(answer: Any) -> bool:
    """Notebook 05, exercise 3: which routing can a real ring network run (the token only moves along edges)?"""
    if needs_answer(answer):
        return False
    name = str(answer).strip().lower()
    if name == "rrdu_graph":
        return verdict(True, "rrdu_graph moves the token along edges only (0 jumps); rrdu teleports between "
                              "non-neighbours, which a ring cannot do, and an observer next to u then sees "
                              "the token more often.")
    if name == "rrdu":
        return verdict(False, "rrdu jumps: look at the walk explorer's count of hops jumped on a ring.")
    return verdict(False, f"{answer!r}: answer with a routing name of the walk explorer (rrdu or rrdu_graph).")


def check_forgotten_class(rows: Any, *, label: int = 8) -> bool:
    """Notebook 00, exercise: ``rows = {"original": report(...), "retrained": report(...)}`` for forgetting class
    ``label``; checks that the retrained model never recognises the class and loses about a tenth of the
    test set, and explains why."""
    if needs_answer(rows):
        return False
    get: Callable[[str, str], float]
    try:
        def get(model: str, key: str) -> float:
            return float(rows[model][key])

        fo, fr = get("original", "forget_acc"), get("retrained", "forget_acc")
        to, tr = get("original", "test_acc"), get("retrained", "test_acc")
    except (KeyError, TypeError, ValueError):
        print("Not yet. Pass {'original': report(...), 'retrained': report(...)}, each with test_acc and "
              "forget_acc.")
        return False
    if fr > 0.05:
        return verdict(False, f"The retrained model still classifies {fr:.0%} of the forgotten class correctly: "
                               f"did you retrain without class {label} (uk.data.forget_class(ds, {label}))?")
    if fo < 0.5:
        return verdict(False, "The 'original' row does not recognise the class either: pass the model trained "
                               "on all the data as 'original'.")
    return verdict(True, f"Forget accuracy {fo:.2f} -> {fr:.2f}; test accuracy {to:.3f} -> {tr:.3f} "
                          f"({(to - tr) * 100:.1f} points): a forgotten class costs about a tenth of the test set, "
                          "the right behaviour, so test accuracy alone never shows forgetting.")


def check_strict_ascent(answer: Any, *, target: float = 0.1) -> bool:
    """Notebook 01, exercise: gradient ascent stopped at forget accuracy ``target``.

    ``answer = {"strict": report(...) of the strict run, "retrain": bd_rows["retrain"],
    "rule_without_retraining": True or False}``. Right: the strict run's forget accuracy is at most ``target``,
    and no, there is no stopping rule you could set without a reference (the threshold came from knowing what
    retraining does). The test accuracy is reported against retraining's, not judged: how much it drops
    depends on the run.
    """
    if needs_answer(answer):
        return False
    try:
        fs, ts = float(answer["strict"]["forget_acc"]), float(answer["strict"]["test_acc"])
        tr = float(answer["retrain"]["test_acc"])
        rule = answer["rule_without_retraining"]
    except (KeyError, TypeError, ValueError, IndexError):
        print("Not yet. Pass {'strict': report(...), 'retrain': bd_rows['retrain'], "
              "'rule_without_retraining': True or False}.")
        return False
    if fs > target + 1e-9:
        return verdict(False, f"The strict run stopped at forget accuracy {fs:.2f} > {target}: set "
                               f"GradientAscentConfig(stop_forget_acc={target}, max_steps=2000) so it runs long enough.")
    if not isinstance(rule, bool):
        return verdict(False, f"rule_without_retraining must be True or False, got {rule!r}.")
    if rule:
        return verdict(False, f"Where did {target} come from? From knowing that retraining forgets the poison. "
                               "Without that reference a heuristic cannot tell when it has forgotten enough: "
                               "what rule would you set for a request whose retrained accuracy you do not know?")
    return verdict(True, f"Forget accuracy {fs:.2f}, test accuracy {ts:.3f} against retraining's {tr:.3f} "
                          f"({(tr - ts) * 100:+.1f} points): ascent on a few samples moves the whole network, and "
                          "only a certificate bounds the distance to retraining before you run.")
