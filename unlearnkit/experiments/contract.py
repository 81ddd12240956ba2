"""The result contract every runner of :data:`unlearnkit.experiments.registry.METHODS` keeps.

See the registry's module docstring for the contract itself. This module holds its three shared pieces:

- :class:`Released`: the parameters a run releases (the ones its certificate covers) with what is needed to
  evaluate them again; a runner puts it under :data:`RELEASED_KEY` and
  :meth:`~unlearnkit.experiments.registry.MethodSpec.run` strips it unless asked, so ``result.json`` stays
  plain JSON;
- :func:`guarantee`: the top-level ``"guarantee"`` block (epsilon = infinity unless the certificate is
  sound and finite);
- :func:`cost_saved`: the one definition of "saved" that every report uses;
- :func:`json_safe`: a config (or any value) as plain JSON, for the result's ``"config"`` block.

It imports nothing heavy (no torch), so the reproduction tables and the CLI printer can use it cheaply.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional


#: the key of the in-memory :class:`Released` record in a runner's result (never written to JSON)
RELEASED_KEY = "released"

#: how ``result.json`` writes an infinite epsilon (JSON has no infinity; ``float("inf")`` reads it back)
INFINITY = "inf"

#: what the CLI prints for a run whose guarantee is not certified
NOT_CERTIFIED = "NOT CERTIFIED (epsilon = infinity)"

#: the unit of ``cost["grad_evals"]`` for every method (:class:`unlearnkit.core.Cost`)
COST_UNIT = ("per-sample gradient evaluations: a minibatch of b counts b; a Hessian-vector product on n samples "
             "counts n (unlearnkit.curvature), so a dense Hessian counts nd")


#: the neighbouring relation every certificate of the package is about (docs/frontiers/end_to_end.md)
NEIGHBOURING_RELATION = ("D versus D minus D_f: the request's rows removed from the raw data before any "
                         "preprocessing, every other row where it was (its client in a federation); the seeds "
                         "(split, initialisation, batches, walks, noise) public and equal in both worlds")

#: what each certified method's shipped profiles take as public (data-independent): the certificate's inputs
PUBLIC_INPUTS: dict[str, str] = {
    "retrain": "nothing is released from D_f: exact retraining on D minus D_f (epsilon 0)",
    "r2d": "the unit-ball map from the public pixel range (or the synthetic loader's constant), K, T, step, "
           "radius, L2 weight and the analytic constants from them",
    "d2d": "as r2d",
    "gradient_clipping": "pixels / 16 (the loader), C0, C1, gamma, lam, T, sigma",
    "model_clipping": "pixels / 16, C2, gamma, lam, T, sigma",
    "output_perturbation": "pixels / 16, C0, sigma",
    "dp_sgd": "pixels / 16, the Poisson rate (a constant of the profile), the group size k, steps, clip",
    "newton": "the unit-ball map from the public pixel range (feature bound 1), lam, the gradient tolerance "
              "grad_tol, the constants L, M; the client assignment of the rows",
    "pdudt": "each row centred at a public constant and scaled alone, the topology schedule, rounds, step, the "
             "coupled minibatch draws, C and L",
    "rrdu": "pixels / 16, the walk seeds and the training route (drawn before training), p, T_unlearn, L",
}


@dataclass(frozen=True)
class Released:
    """The released parameters of a run and what evaluates them: ``flat`` (a
    :class:`~unlearnkit.models.FlatParams`), the ``dataset`` whose test split the headline ``test_acc`` is
    measured on, the forget ``request`` (``forget_acc`` is accuracy on ``request.indices`` of the training
    split) and, for a backdoor request, the ``backdoor``.

    ``params`` is one model ``(d,)`` or one per client ``(n_clients, d)``; the metrics evaluate their
    consensus (:func:`unlearnkit.evaluate.consensus`).
    """

    params: Any
    flat: Any
    dataset: Any
    request: Any = None
    backdoor: Any = None


def guarantee(certificate: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """The top-level ``"guarantee"`` of a result from its certificate block (a ``Certificate.to_dict()``).

    ``{"epsilon", "delta", "certified", "mode", "claimed_epsilon"}``: ``epsilon`` is the certificate's only
    when it is certified (mode ``"sound"`` and finite, :attr:`unlearnkit.core.Certificate.certified`), else
    :data:`INFINITY` (``"inf"``); ``claimed_epsilon`` keeps what a ``"paper"`` or ``"none"`` certificate
    states, for reading beside the paper (``None`` without a certificate).
    """
    if not certificate:
        return {"epsilon": INFINITY, "delta": None, "certified": False, "mode": "none", "claimed_epsilon": None}
    eps = certificate.get("epsilon")
    mode = certificate.get("mode", "none")
    finite = isinstance(eps, (int, float)) and math.isfinite(eps)
    certified = bool(certificate.get("certified", mode == "sound" and finite)) and finite and mode == "sound"
    return {"epsilon": float(eps) if certified else INFINITY, "delta": certificate.get("delta"),
            "certified": certified, "mode": mode, "claimed_epsilon": float(eps) if finite else INFINITY}


def guarantee_line(g: Mapping[str, Any]) -> str:
    """One line for a guarantee block: ``"(eps, delta)-certified [sound]"`` or :data:`NOT_CERTIFIED`."""
    if not g.get("certified"):
        claim = g.get("claimed_epsilon")
        extra = f" [{g.get('mode')}: claims epsilon = {claim:.4g}]" if isinstance(claim, float) and \
            math.isfinite(claim) else f" [{g.get('mode', 'none')}]"
        return NOT_CERTIFIED + extra
    return f"certified ({g['epsilon']:.4g}, {g['delta']:.3g})-unlearning [{g['mode']}]"


def cost_saved(unlearn_cost: Optional[float], retrain_cost: Optional[float]) -> Optional[float]:
    """The fraction of retraining's cost that unlearning saved: ``1 - unlearn_cost / retrain_cost``.

    The one definition behind every "saved" in the package (the CLI, the reproduction tables): the same
    unit on both sides (seconds with seconds, gradient evaluations with gradient evaluations). Negative when
    unlearning cost more than retraining; ``None`` when either cost is missing or retraining's is not positive.
    """
    if unlearn_cost is None or retrain_cost is None:
        return None
    u, r = float(unlearn_cost), float(retrain_cost)
    if not (math.isfinite(u) and math.isfinite(r)) or r <= 0:
        return None
    return 1.0 - u / r


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON: what ``result.json`` records of a config (``dataclasses.asdict``-like).

    Dataclasses become dicts of their fields (nested ones too), tuples and lists become lists, mappings get
    string keys, numpy and torch scalars (zero-dimensional arrays and tensors) become Python numbers, a
    non-finite float is written as the string ``"inf"``, ``"-inf"`` or ``"nan"`` (JSON has none of them;
    ``float()`` reads them back, as for :data:`INFINITY`), and anything else (a generator, a function, a
    larger array) as its ``repr``.
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else ("nan" if value != value else INFINITY if value > 0 else "-inf")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_safe(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [json_safe(v) for v in value]
    item = getattr(value, "item", None)  # numpy and torch scalars (zero-dimensional arrays and tensors)
    if callable(item) and getattr(value, "ndim", None) == 0:
        try:
            return json_safe(item())
        except (TypeError, ValueError, RuntimeError):
            pass
    return repr(value)


def finish_result(result: dict, released: Released, *, diagnostics: Optional[Mapping[str, Any]] = None,
                  config: Any = None) -> dict:
    """Complete a runner's result dict with the contract's blocks, in place, and return it.

    Adds ``"guarantee"`` (from ``result["certificate"]``), ``"diagnostics"`` (merged with ``diagnostics``),
    the cost's ``"unit"`` and ``"saved"`` (:func:`cost_saved` on gradient evaluations and on seconds),
    ``"config"`` (the unlearning config of the released model, through :func:`json_safe`; ``None`` when the
    runner passes none) and the :class:`Released` record under :data:`RELEASED_KEY`.
    """
    result["config"] = json_safe(config)
    result["guarantee"] = guarantee(result.get("certificate"))
    if result["guarantee"]["certified"]:
        result["guarantee"]["relation"] = NEIGHBOURING_RELATION
        result["guarantee"]["public"] = PUBLIC_INPUTS.get(str(result.get("method")), "not stated")
    diag = dict(result.get("diagnostics") or {})
    diag.update(diagnostics or {})
    result["diagnostics"] = diag
    cost = result.get("cost")
    if isinstance(cost, dict):
        cost["unit"] = COST_UNIT
        cost["saved"] = {"grad_evals": cost_saved(cost.get("grad_evals"), cost.get("retrain_grad_evals")),
                         "seconds": cost_saved(cost.get("seconds"), cost.get("retrain_seconds"))}
    result[RELEASED_KEY] = released
    return result
