"""The table of runnable experiments behind ``python -m unlearnkit run NAME`` and the capstone.

A runner takes a profile name (``"quick"``: seconds on 2 CPU cores on digits; ``"paper"``: the paper's
settings where it gives them) and a seed, trains, unlearns, retrains on the same request and returns the
result dictionary that the CLI writes to ``DIR/result.json``::

    {"method", "profile", "dataset",
     "metrics": {"test_acc", "forget_acc", "mia_auc", "dist_to_retrain", "retrain_test_acc",
                 "retrain_forget_acc", "original_dist_to_retrain", ["backdoor_asr"]},
     "certificate": null | {"epsilon", "delta", "sigma", "mode", "source", ...},
     "guarantee": {"epsilon", "delta", "certified", "mode", "claimed_epsilon"},
     "diagnostics": {"<which model>": {...}, ...},
     "cost": {"grad_evals", "seconds", "retrain_grad_evals", "retrain_seconds", "unit",
              "saved": {"grad_evals", "seconds"}}}

The result contract (every row of :data:`METHODS` keeps it; ``tests/capstone/test_result_contract.py``
checks it by evaluating the released parameters again):

- **metrics describe the released model.** The unlearned entries of ``metrics`` (``test_acc``,
  ``forget_acc``, ``mia_auc``, ``dist_to_retrain``, ...) are measured on exactly the parameters the run
  releases, the ones ``certificate`` covers (for a noisy method: after its noise, and after any
  post-processing it releases). ``retrain_*`` and ``original_*`` entries are the two references.
- **Anything else is a diagnostic.** The noise-free step, a fine-tuned, early-stopped or re-initialised
  variant, a control: under ``diagnostics``, keyed by the model they describe (``"noise_free_model"``,
  ``"pdudt_es_model"``, ...), never in ``metrics``; a block about no single model says what it holds
  (``"timing"``, ``"sound_certificate"``, ``"grid"``: a per-setting table whose note names its models).
- **epsilon = infinity unless certified.** ``guarantee.epsilon`` is the certificate's epsilon only when the
  certificate is certified (mode ``"sound"``, finite epsilon: :attr:`unlearnkit.core.Certificate.certified`).
  A run without a certificate, or with mode ``"none"`` or ``"paper"``, has ``guarantee.epsilon == "inf"``
  (the string: JSON has no infinity, and ``float("inf")`` reads it back) and ``certified: false``;
  ``claimed_epsilon`` keeps what the certificate states. The CLI prints ``NOT CERTIFIED (epsilon =
  infinity)`` for those. ``certificate`` itself stays exactly as the method reported it.
- **One cost unit.** ``cost.grad_evals`` counts per-sample gradient evaluations for every method (see
  :data:`unlearnkit.experiments.contract.COST_UNIT`), ``cost.seconds`` wall-clock seconds of the unlearning
  call; ``cost.saved`` is :func:`unlearnkit.experiments.contract.cost_saved` (``1 - unlearn / retrain``) on
  each, the one definition of "saved" the CLI and the reproduction tables use.
- **The released parameters travel in memory only.** A runner adds a
  :class:`~unlearnkit.experiments.contract.Released` record under ``"released"``;
  :meth:`MethodSpec.run` strips it unless ``return_released=True``, so ``result.json`` stays plain JSON.

The table (:data:`METHODS`) is written out by hand: adding an experiment means adding a row here, and
nothing registers itself as a side effect of being imported. Each row names its runner as
``"module:function"``; the module is imported when the runner is first needed, so ``list`` stays fast and
one broken lab cannot hide the others (:func:`registry_errors` reports it).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .._validate import check_choice
from .contract import RELEASED_KEY, guarantee


RESULT_METRICS = (
    "test_acc",
    "forget_acc",
    "mia_auc",
    "dist_to_retrain",
    "retrain_test_acc",
    "retrain_forget_acc",
    "original_dist_to_retrain",
)

Runner = Callable[..., Mapping[str, Any]]


@dataclass(frozen=True)
class MethodSpec:
    """A runnable experiment: ``runner(profile=..., seed=..., progress=...) -> result dict``.

    ``target`` is ``"package.module:function"``; :attr:`runner` imports it on first use.
    """

    name: str
    target: str
    profiles: tuple[str, ...]
    description: str = ""
    paper: str = ""

    @property
    def runner(self) -> Runner:
        module, _, func = self.target.partition(":")
        return getattr(importlib.import_module(module), func)

    def run(self, profile: str = "quick", *, seed: int = 0, progress: bool = True, return_released: bool = False,
            **kwargs: Any) -> dict:
        """Run the experiment; ``return_released=True`` keeps the in-memory ``"released"`` record (the
        released parameters and what evaluates them), which is otherwise stripped: the result is then plain
        JSON (the module docstring's contract)."""

        check_choice("profile", profile, self.profiles)
        result = dict(self.runner(profile=profile, seed=seed, progress=progress, **kwargs))
        result.setdefault("method", self.name)
        result.setdefault("profile", profile)
        result.setdefault("guarantee", guarantee(result.get("certificate")))
        result.setdefault("diagnostics", {})
        if not return_released:
            result.pop(RELEASED_KEY, None)
        return result


_LAB = "unlearnkit.experiments."
_R2D = "Mu & Klabjan 2025 (Descend or Rewind?)"
_NF = "Koloskova et al. ICML 2025"
_RRDU = "Lamri & Maniatakos, Fully Decentralized Certified Unlearning (RR-DU)"
_NEWTON = ("H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, 'Certified Unlearning in Decentralized "
           "Federated Learning', arXiv 2601.06436 (2026)")

METHODS: tuple[MethodSpec, ...] = (
    # baselines
    MethodSpec("retrain", _LAB + "centralized:run_retrain", ("quick",),
               "retrain from scratch without the forget set (exact)"),
    MethodSpec("finetune", _LAB + "centralized:run_finetune", ("quick",),
               "fine-tune on the retain data (uncertified)"),
    MethodSpec("gradient_ascent", _LAB + "centralized:run_gradient_ascent", ("quick",),
               "gradient ascent on the forget set with a stopping rule (uncertified)"),
    # Descend or Rewind?
    MethodSpec("d2d", _LAB + "descend_rewind.lab:run_d2d", ("quick", "class", "psgd", "synthetic", "mlp", "paper"),
               "K gradient steps on the retain set from the final model, then noise (epsilon=None: the fine-tuning "
               "baseline)", _R2D),
    MethodSpec("r2d", _LAB + "descend_rewind.lab:run_r2d", ("quick", "class", "psgd", "synthetic", "mlp", "paper"),
               "rewind to checkpoint T-K, replay K (projected) gradient steps on the retain set, add noise", _R2D),
    # Certified Unlearning for Neural Networks
    MethodSpec("gradient_clipping", _LAB + "noisy_finetune.lab:run_gradient_clipping", ("quick", "logistic", "paper"),
               "noisy clipped-gradient fine-tuning on the retain set, then clean fine-tuning", _NF),
    MethodSpec("model_clipping", _LAB + "noisy_finetune.lab:run_model_clipping", ("quick", "logistic", "paper"),
               "noisy projected fine-tuning (contraction), then clean fine-tuning", _NF),
    MethodSpec("output_perturbation", _LAB + "noisy_finetune.lab:run_output_perturbation",
              ("quick", "logistic", "paper"),
               "clip the model to C0, add Gaussian noise once, then clean fine-tuning", _NF),
    MethodSpec("dp_sgd", _LAB + "noisy_finetune.lab:run_dp_sgd", ("quick", "logistic"),
               "DP-SGD training with group privacy over the forget set, then clean fine-tuning", _NF),
    # RR-DU
    MethodSpec("rrdu", _LAB + "rrdu.frontier:run_rrdu_certified", ("quick", "paper"),
               "RR-DU random-walk unlearning of a BadNets backdoor (quick: certified; paper: Figure 1)", _RRDU),
    MethodSpec("ddp", _LAB + "rrdu.lab:run_ddp", ("quick", "paper"),
               "decentralized-DP token SGD (NetDP) continued on D minus D_f: RR-DU's DDP baseline",
               "Lamri & Maniatakos, Algorithm 3 (NetDP)"),
    MethodSpec("dp_sgd_walk", _LAB + "rrdu.lab:run_dp_sgd_walk", ("quick", "paper"),
               "DP-SGD (clip C, sampled-Gaussian noise) on the token walk: RR-DU's DP-SGD baseline",
               "Lamri & Maniatakos, section 6 baseline"),
    # Newton/Fisher
    MethodSpec("newton", _LAB + "newton.lab:run_newton", ("quick", "grid", "paper"),
               "Newton/Fisher certified decentralized unlearning vs D-PSGD retraining (quick: sound, lam 0.5; "
               "grid: 10 clients; ring, Erdos-Renyi; IID, Dirichlet; samples, class, client)", _NEWTON),
    # PDUDT
    MethodSpec("pdudt", _LAB + "pdudt.frontier:run_pdudt", ("quick", "timing", "demo", "paper"),
               "PDUDT: a client leaves a gradient-gossip network over a dynamic topology (quick: sound certificate)",
               "Qiao et al., PDUDT, ICML 2025 (digest 002)"),
)


def available_methods() -> dict[str, MethodSpec]:
    """Every experiment in the table, by name."""
    return dict(sorted((spec.name, spec) for spec in METHODS))


def get_method(name: str) -> MethodSpec:
    methods = available_methods()
    check_choice("method", name, tuple(methods))
    return methods[name]


def registry_errors() -> dict[str, str]:
    """Rows whose runner cannot be imported, with the error (a test asserts this is empty)."""
    errors: dict[str, str] = {}
    for spec in METHODS:
        try:
            spec.runner
        except Exception as exc:  # report every broken row, not just the first
            errors[spec.name] = f"{type(exc).__name__}: {exc}"
    return errors
