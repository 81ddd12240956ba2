"""Every public function of unlearnkit.privacy documents its arguments and its result in numpydoc sections.

Public means: a top-level function without a leading underscore, defined in its module. A function with parameters needs a
``Parameters`` section; every function needs a ``Returns`` (or, for a generator or context manager,
``Yields``) section. The test lists all offenders at once. At least 90 % of them also carry a ``References``
section naming the source of what they compute (paper, theorem or equation); engineering helpers with no
published source (the recording machinery, validation) make up the rest.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import unlearnkit.privacy as privacy_pkg


def _has_section(doc: str, title: str) -> bool:
    """A numpydoc section header: the title on its own line, underlined by dashes."""
    return re.search(rf"^[ \t]*{title}[ \t]*\n[ \t]*-{{3,}}[ \t]*$", doc, flags=re.MULTILINE) is not None


def _takes_arguments(func) -> bool:
    params = inspect.signature(func).parameters  # follows __wrapped__ (contextmanager, lru_cache)
    return any(name not in ("self", "cls") for name in params)


def _public_functions():
    """(qualified name, object) of every public function defined in a module of unlearnkit.privacy."""
    names = [privacy_pkg.__name__] + [
        f"{privacy_pkg.__name__}.{info.name}" for info in pkgutil.iter_modules(privacy_pkg.__path__)
    ]
    seen = set()
    for modname in names:
        module = importlib.import_module(modname)
        for name, obj in sorted(vars(module).items()):
            if name.startswith("_") or not callable(obj):
                continue
            if not inspect.isfunction(inspect.unwrap(obj)):  # classes, constants; unwrap lru_cache wrappers
                continue
            if inspect.unwrap(obj).__module__ != modname:  # imported here: checked where it is defined
                continue
            if id(obj) in seen:  # a re-export of the package is checked once, where it is defined
                continue
            seen.add(id(obj))
            yield f"{inspect.unwrap(obj).__module__}.{name}", obj


def _offences(func) -> list[str]:
    doc = inspect.getdoc(func) or ""
    missing = []
    if _takes_arguments(func) and not _has_section(doc, "Parameters"):
        missing.append("Parameters")
    if not (_has_section(doc, "Returns") or _has_section(doc, "Yields")):
        missing.append("Returns/Yields")
    return missing


def test_the_scan_finds_the_public_functions():
    found = dict(_public_functions())
    assert len(found) >= 50, sorted(found)
    for name in ("unlearnkit.privacy.rdp.gaussian_rdp", "unlearnkit.privacy.trace.recording",
                 "unlearnkit.privacy.linear_rdp.linear_rdp_slope"):  # plain, context manager, lru_cache
        assert name in found


def test_section_detection_needs_an_underlined_header():
    def documented(x):
        """Summary.

        Parameters
        ----------
        x : float
            A number.

        Returns
        -------
        float
            The number.
        """

    def prose_only(x):
        """Summary that says Parameters and Returns in prose only."""

    assert _offences(documented) == []
    assert _offences(prose_only) == ["Parameters", "Returns/Yields"]


def test_every_public_privacy_function_has_parameters_and_returns_sections():
    offenders = {name: missing for name, func in _public_functions() if (missing := _offences(func))}
    assert not offenders, "public functions of unlearnkit.privacy lacking numpydoc sections:\n" + "\n".join(
        f"  {name}: {', '.join(missing)}" for name, missing in sorted(offenders.items()))


REFERENCES_FLOOR = 0.90


def test_most_public_privacy_functions_cite_their_source_in_a_references_section():
    found = list(_public_functions())
    missing = sorted(name for name, func in found if not _has_section(inspect.getdoc(func) or "", "References"))
    share = 1 - len(missing) / len(found)
    assert share >= REFERENCES_FLOOR, (
        f"{share:.1%} of {len(found)} public functions of unlearnkit.privacy have a References section "
        f"(floor {REFERENCES_FLOOR:.0%}); without one:\n" + "\n".join(f"  {name}" for name in missing))
