"""A ``Sequential`` of ``Flatten``, ``Linear`` and elementwise activations as a list of steps on a flat vector.

Token walks compute a gradient at every hop; through ``torch.func.functional_call`` each one first swaps the
module's parameters (a walk over its submodules, tens of microseconds). :func:`linear_plan` reads the layers once;
:func:`plan_value_and_grad` then runs the same ``F.linear`` / activation / loss kernels on views of the flat
leaf, so the loss and gradient are bitwise those of :meth:`~unlearnkit.models.FlatParams.value_and_grad`.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

_ACTIVATIONS = {nn.ReLU: F.relu, nn.Tanh: torch.tanh, nn.GELU: F.gelu, nn.Sigmoid: torch.sigmoid,
                nn.Identity: lambda h: h}


def linear_plan(flat: Any) -> Optional[list[tuple[str, Any]]]:
    """The layers of ``flat``'s module as ``("flatten" | "linear" | "act", ...)`` steps, or ``None`` when the
    module is not a ``Sequential`` of ``Flatten``, ``Linear`` and elementwise activations."""
    module = flat.module
    if not isinstance(module, nn.Sequential) or flat.loss_name not in ("cross_entropy", "logistic"):
        return None
    slots = {s.name: s for s in flat._slots}
    plan: list[tuple[str, Any]] = []
    for i, layer in enumerate(module):
        if isinstance(layer, nn.Flatten) and layer.start_dim == 1 and layer.end_dim == -1:
            plan.append(("flatten", None))
        elif isinstance(layer, nn.Linear):
            plan.append(("linear", (slots[f"{i}.weight"], slots.get(f"{i}.bias"))))
        elif type(layer) in _ACTIVATIONS and not (isinstance(layer, nn.GELU) and layer.approximate != "none"):
            plan.append(("act", _ACTIVATIONS[type(layer)]))
        else:
            return None
    return plan


def plan_value_and_grad(flat: Any, plan: list[tuple[str, Any]], theta: Tensor, x: Tensor, y: Tensor,
                        wd: float) -> tuple[Tensor, Tensor]:
    """``flat.value_and_grad(theta, x, y, weight_decay=wd)`` for a model :func:`linear_plan` accepted."""
    t = theta.detach().requires_grad_(True)
    with torch.enable_grad():
        h = x
        for kind, arg in plan:
            if kind == "flatten":
                h = torch.flatten(h, 1)
            elif kind == "act":
                h = arg(h)
            else:
                ws, bs = arg
                h = F.linear(h, t[ws.start:ws.stop].view(ws.shape),
                             None if bs is None else t[bs.start:bs.stop].view(bs.shape))
        value = flat._loss_fn(h, y, "mean")
        if wd:
            value = value + 0.5 * wd * t.pow(2).sum()
        (g,) = torch.autograd.grad(value, t)
    return value.detach(), g
