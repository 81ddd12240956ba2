"""Start-up costs of the figure stack, paid once and as little as possible.

Displaying a plotly figure, or building a ``go.FigureWidget``, imports ``plotly.io._renderers``, which imports
``nbformat`` (for a version check), which imports ``jsonschema``, whose format checkers import
``rfc3987_syntax`` *if it is installed*. That package compiles 38 lark grammars at import time: about 2 s on a
2-core machine, the largest single cost between "Run All" and a notebook's first figure, spent on a checker
(the ``"iri"`` string format) that nothing in a notebook ever calls.

:func:`skip_iri_grammar` imports ``jsonschema`` once with ``rfc3987_syntax`` hidden, so ``jsonschema`` takes the
branch it takes when that optional package is absent (it registers no ``"iri"`` checker; every other format
and all schema validation are unchanged), then un-hides it, so an explicit ``import rfc3987_syntax`` still
works. If ``jsonschema`` is already imported, or ``UNLEARNKIT_FULL_JSONSCHEMA=1``, it does nothing.
"""

from __future__ import annotations

import importlib
import os
import sys


_OPTIONAL = "rfc3987_syntax"


def skip_iri_grammar() -> bool:
    """Import ``jsonschema`` without its optional IRI grammar; True when this call did so."""
    if "jsonschema" in sys.modules or os.environ.get("UNLEARNKIT_FULL_JSONSCHEMA", "0") == "1":
        return False
    if _OPTIONAL in sys.modules:  # already paid for: nothing to save
        return False
    sys.modules[_OPTIONAL] = None  # type: ignore[assignment]  # makes `import rfc3987_syntax` raise ImportError
    try:
        importlib.import_module("jsonschema")  # its _format module is imported with it
    except ImportError:  # jsonschema not installed: plotly does without nbformat validation
        return False
    finally:
        if sys.modules.get(_OPTIONAL, 0) is None:
            del sys.modules[_OPTIONAL]
    return True
