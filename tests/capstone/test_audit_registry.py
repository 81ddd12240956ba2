"""Every registered method has an audit recipe; small audits of a few of them (issue 15, item 4)."""

from __future__ import annotations

import math

import pytest

from unlearnkit.experiments import registry
from unlearnkit.experiments.audit_registry import AUDIT_RECIPES, AUDIT_ROW_KEYS, audit_registry


def test_every_registered_method_has_an_audit_recipe():
    names = [spec.name for spec in registry.METHODS]
    missing = [n for n in names if n not in AUDIT_RECIPES]
    assert not missing, f"registered methods without an audit recipe: {missing}"
    assert set(AUDIT_RECIPES) == set(names), "a recipe for a name the registry does not have"
    for name, recipe in AUDIT_RECIPES.items():
        assert recipe.method == name
        assert recipe.observer and recipe.task
        assert recipe.modes and set(recipe.modes) <= {"paper", "sound", "none"}
    assert AUDIT_RECIPES["finetune"].modes == ("none",)
    assert AUDIT_RECIPES["gradient_ascent"].modes == ("none",)


def test_unknown_method_and_mode_are_named():
    with pytest.raises(ValueError, match="method='nope'"):
        audit_registry(methods=("nope",))
    with pytest.raises(ValueError, match="mode='exact'"):
        audit_registry(methods=("retrain",), modes=("exact",))
