"""Start-up: the figure stack and the package import lazily, and the shortcuts change no behaviour we use.

Each check runs in a fresh interpreter (``subprocess``), because what is already in ``sys.modules`` in the
test process says nothing about what a notebook kernel pays on its first cell.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _fresh(code: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    env.pop("UNLEARNKIT_FULL_JSONSCHEMA", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_viz_skips_the_iri_grammar_but_keeps_jsonschema_and_nbformat_working():
    """``import unlearnkit.viz`` loads jsonschema without compiling rfc3987_syntax's grammars (~2 s), and
    validation still works: nbformat validates a notebook, jsonschema's other formats are still checked, and
    an explicit ``import rfc3987_syntax`` still succeeds afterwards."""
    r = _fresh(
        "import sys, json\n"
        "import unlearnkit.viz\n"
        "import plotly.graph_objects as go\n"
        "go.FigureWidget\n"
        "grammar = 'rfc3987_syntax' in sys.modules\n"
        "import nbformat, jsonschema\n"
        "nb = nbformat.v4.new_notebook(); nb.cells.append(nbformat.v4.new_code_cell('1'))\n"
        "nbformat.validate(nb)\n"
        "fc = jsonschema.FormatChecker()\n"
        "email_checked = not fc.conforms('not-an-email', 'email')\n"
        "import rfc3987_syntax\n"
        "print(json.dumps({'grammar': grammar, 'email': email_checked}))\n"
    )
    assert r == {"grammar": False, "email": True}


def test_import_unlearnkit_loads_no_heavy_module():
    """``import unlearnkit`` and the privacy maths load neither torch, plotly, scipy.stats nor torch._dynamo."""
    r = _fresh(
        "import sys, json\n"
        "import unlearnkit, unlearnkit.core\n"
        "print(json.dumps(sorted(m for m in ('torch', 'plotly', 'ipywidgets', 'torch._dynamo', 'scipy.stats')"
        " if m in sys.modules)))\n"
    )
    assert r == []
