"""Checker for the exercise of notebook 09 (capstone): which method would you deploy?"""

from __future__ import annotations

from typing import Any

from ._common import exercise_name, needs_answer, verdict


#: Names a student may write, folded to the methods of the course.
_ALIASES = {
    "r2d": "r2d", "rewind_to_delete": "r2d", "d2d": "d2d", "descend_to_delete": "d2d",
    "grad_clip": "noisy_finetune", "gradient_clipping": "noisy_finetune", "noisy_finetune": "noisy_finetune",
    "noisy_fine_tuning": "noisy_finetune", "noisy_finetuning": "noisy_finetune",
    "rrdu_exact": "rrdu_exact", "rr_du_exact": "rrdu_exact", "rrdu": "rrdu", "rr_du": "rrdu",
    "retrain": "retrain", "retraining": "retrain",
    "newton": "newton", "newton_fisher": "newton", "fisher": "newton",
    "pdudt": "pdudt", "pdudt_es": "pdudt",
    "finetune": "finetune", "fine_tuning": "finetune", "gradient_ascent": "gradient_ascent", "ga": "gradient_ascent",
}

_DEFENSIBLE = {
    "r2d": "sound at (1, 1e-5), 0.864 against retraining's 0.878, the backdoor gone, at half the cost, provided the "
           "clients can sum their gradients around the ring (secure aggregation).",
    "d2d": "sound at (1, 1e-5) with full-batch GD and an L2 weight, provided the ring can aggregate the full gradient.",
    "noisy_finetune": "the second choice: sound, 0.918 against 0.927, about half the cost (needs aggregation too).",
    "rrdu_exact": "the only decentralized method sound at epsilon 1 (0.913 against 0.929), but the network trains with "
                  "client-level noise from the start and the walk costs about a retraining, more on a slow-mixing ring.",
    "retrain": "exact (epsilon 0), if the network cannot aggregate and hours per request are acceptable.",
}

_WRONG = {
    "newton": "Newton/Fisher is certified soundly only for a single forgotten record at a heavy L2 weight; a few "
              "dozen records at epsilon 1 leave no useful model.",
    "pdudt": "PDUDT removes a whole client, not records, and needs epsilon about 8 (0.31 test accuracy at epsilon 1).",
    "rrdu": "Which RR-DU? Only the exact variant is sound at epsilon 1, and its walk costs about a retraining: "
            "answer 'rrdu_exact' if that is your choice, and say what pays for it.",
    "finetune": "Plain fine-tuning carries no certificate and keeps the backdoor (attack success 0.82).",
    "gradient_ascent": "Gradient ascent carries no certificate: nothing bounds its distance to retraining.",
}


def check_deployment(answer: Any) -> bool:
    """Notebook 09, exercise: the method to deploy on an 8-client ring at ``(1, 1e-5)``. There is more than one
    defensible answer (R2D or D2D with aggregation, noisy fine-tuning, RR-DU exact, retraining); the checker
    accepts those, explains the trade-off of each, and gives the measured reason against the others. It
    checks the choice only: your three sentences are yours to defend."""
    if needs_answer(answer):
        return False
    key = _ALIASES.get(exercise_name(answer))
    if key in _DEFENSIBLE:
        return verdict(True, f"{answer!s}: {_DEFENSIBLE[key]}")
    if key in _WRONG:
        return verdict(False, _WRONG[key])
    return verdict(False, f"{answer!r} is not a method of the course: one of r2d, d2d, noisy_finetune, "
                           "rrdu_exact, rrdu, newton, pdudt, retrain.")
