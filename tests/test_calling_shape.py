"""One entry point, one calling shape: every method class exported by ``unlearnkit.methods`` has

    unlearn(self, state, request, config, *, generator, callback=None, progress=False) -> Result

The classes are discovered from ``unlearnkit.methods.__all__`` (every exported class with an ``unlearn``
attribute), so a method exported later is checked without editing this file.
"""

from __future__ import annotations

import inspect

import pytest

import unlearnkit.methods as M

P = inspect.Parameter


def method_classes() -> dict[str, type]:
    out = {}
    for name in M.__all__:
        obj = getattr(M, name)
        if inspect.isclass(obj) and callable(getattr(obj, "unlearn", None)):
            out[name] = obj
    return out


def test_the_baselines_are_exported():
    found = method_classes()
    for name in ("Retrain", "Finetune", "GradientAscent"):
        assert name in found, f"unlearnkit.methods must export {name}"
    for cfg in ("RetrainConfig", "FinetuneConfig", "GradientAscentConfig"):
        assert cfg in M.__all__ and inspect.isclass(getattr(M, cfg))


@pytest.mark.parametrize("name", sorted(method_classes()))
def test_unlearn_has_the_shared_signature(name):
    sig = inspect.signature(method_classes()[name].unlearn)
    params = list(sig.parameters.values())
    where = f"{name}.unlearn{sig}"

    positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    assert [p.name for p in positional] == ["self", "state", "request", "config"], \
        f"{where}: the positional parameters must be (self, state, request, config)"
    assert not any(p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD) for p in params), f"{where}: no *args/**kwargs"

    keyword = {p.name: p for p in params if p.kind is P.KEYWORD_ONLY}
    assert set(keyword) == {"generator", "callback", "progress"}, \
        f"{where}: the keyword-only parameters must be exactly generator, callback, progress"
    assert keyword["generator"].default is P.empty, f"{where}: generator must be required (explicit randomness)"
    assert keyword["callback"].default is None, f"{where}: callback must default to None"
    assert keyword["progress"].default is False, f"{where}: progress must default to False"
