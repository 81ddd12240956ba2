"""The public surface: the package ``__all__`` lists are small, resolve, and are what ``dir()`` shows.

A name outside them is imported from the module that defines it (``from unlearnkit.graphs.mixing import
slem``); reading it from the package raises ``AttributeError``.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import unlearnkit

PACKAGES = sorted(m.name for m in pkgutil.walk_packages(unlearnkit.__path__, "unlearnkit.") if m.ispkg)


def _package(name: str):
    return importlib.import_module(name)


CODE_PACKAGES = {"unlearnkit.benchmarks", "unlearnkit.experiments.replay"}  # their __init__ is code, not a list


@pytest.mark.parametrize("name", ["unlearnkit", *PACKAGES])
def test_every_public_name_resolves_and_dir_is_all(name):
    pkg = _package(name)
    public = getattr(pkg, "__all__", [])
    assert len(set(public)) == len(public), f"{name}.__all__ repeats a name"
    for n in public:
        assert getattr(pkg, n) is not None
    if hasattr(pkg, "__all__") and name not in CODE_PACKAGES:
        assert dir(pkg) == sorted(public)


def test_about_a_hundred_public_names():
    """Functions, classes and constants in the package ``__all__`` lists (sub-packages of the root not counted)."""
    names = set()
    for name in ["unlearnkit", *PACKAGES]:
        pkg = _package(name)
        names |= {n for n in getattr(pkg, "__all__", ()) if not (name == "unlearnkit" and n in pkg._SUBMODULES)}
    assert 80 <= len(names) <= 130, sorted(names)


def test_a_name_outside_all_is_not_read_from_the_package():
    import unlearnkit.graphs as G

    with pytest.raises(AttributeError, match="slem"):
        G.slem  # noqa: B018
    from unlearnkit.graphs.mixing import slem

    assert G.mixing.slem is slem  # the submodule itself loads on first use


def test_lazy_names_keep_torch_out_until_used():
    import json
    import os
    import subprocess
    import sys

    code = ("import sys, json\nimport unlearnkit.privacy as P, unlearnkit.graphs, unlearnkit.methods\n"
            "before = 'torch' in sys.modules\nP.gaussian_noise\n"
            "print(json.dumps([before, 'torch' in sys.modules]))\n")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                         check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, True]
