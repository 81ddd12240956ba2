"""Every public function of ``unlearnkit.methods`` documents its parameters and its return value (numpydoc).

Public: a top-level name without a leading underscore, defined in that module (imports are checked where they
are defined). The ``unlearn`` and ``certify`` methods of the exported method classes are held to the same rule.
At least 90 % of them (functions and methods together) also carry a ``References`` section naming the paper
and the algorithm, theorem or equation they implement; engineering helpers (caches, config plumbing) make up
the rest.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import unlearnkit.methods

_SECTION = {name: re.compile(rf"^\s*{name}\s*\n\s*-{{3,}}\s*$", re.MULTILINE)
            for name in ("Parameters", "Returns", "References")}
REFERENCES_FLOOR = 0.90


def _modules() -> list:
    pkg = unlearnkit.methods
    names = [pkg.__name__] + [m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
    return [importlib.import_module(n) for n in sorted(names)]


def _public_functions() -> list[tuple[str, object]]:
    out = []
    for mod in _modules():
        for name, obj in sorted(vars(mod).items()):
            if not name.startswith("_") and inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                out.append((f"{mod.__name__}.{name}", obj))
    return out


def _method_entry_points() -> list[tuple[str, object]]:
    out = []
    for mod in _modules():
        for name, cls in sorted(vars(mod).items()):
            if not name.startswith("_") and inspect.isclass(cls) and cls.__module__ == mod.__name__:
                for meth in ("unlearn", "certify"):
                    fn = cls.__dict__.get(meth)
                    if inspect.isfunction(fn):
                        out.append((f"{mod.__name__}.{name}.{meth}", fn))
    return out


def _has_parameters(fn: object) -> bool:
    params = inspect.signature(fn).parameters
    return any(p not in ("self", "cls") for p in params)


def _missing(fn: object) -> list[str]:
    doc = inspect.getdoc(fn) or ""
    need = ["Returns"] + (["Parameters"] if _has_parameters(fn) else [])
    return [s for s in need if not _SECTION[s].search(doc)]


def _offenders(entries: list[tuple[str, object]]) -> list[str]:
    return [f"{name}: no {' or '.join(miss)} section" for name, fn in entries if (miss := _missing(fn))]


def test_the_scan_finds_the_methods_functions():
    names = {name for name, _ in _public_functions()}
    assert len(names) >= 90
    assert "unlearnkit.methods.pdudt.certify.pdudt_certificate" in names
    assert "unlearnkit.methods.descend_rewind.bounds.psgd_r2d_sensitivity" in names


def test_public_functions_document_parameters_and_returns():
    offenders = _offenders(_public_functions())
    assert not offenders, "numpydoc sections missing:\n" + "\n".join(offenders)


def test_unlearn_and_certify_document_parameters_and_returns():
    entries = _method_entry_points()
    assert len(entries) >= 20
    offenders = _offenders(entries)
    assert not offenders, "numpydoc sections missing:\n" + "\n".join(offenders)


def test_most_public_functions_and_entry_points_cite_their_source_in_a_references_section():
    entries = _public_functions() + _method_entry_points()
    missing = sorted(name for name, fn in entries if not _SECTION["References"].search(inspect.getdoc(fn) or ""))
    share = 1 - len(missing) / len(entries)
    assert share >= REFERENCES_FLOOR, (
        f"{share:.1%} of {len(entries)} public functions and unlearn/certify methods of unlearnkit.methods have "
        f"a References section (floor {REFERENCES_FLOOR:.0%}); without one:\n" + "\n".join(f"  {n}" for n in missing))
