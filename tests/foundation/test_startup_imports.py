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


def test_privacy_calculators_do_not_import_torch():
    """Notebook 02's calculators (the Gaussian, Renyi and calibration explorers) are pure numpy/scipy: importing
    them must not import torch through ``unlearnkit.experiments`` (its profiles need torch), nor torch.func."""
    r = _fresh(
        "import sys, json\n"
        "import unlearnkit.privacy\n"
        "from unlearnkit.viz.privacy import GaussianExplorer\n"
        "GaussianExplorer(epsilon=1.0, log10_delta=-5, sensitivity=1.0)\n"
        "import unlearnkit.experiments as E\n"
        "before = 'torch' in sys.modules\n"
        "E.centralized_setup  # the lazy names still resolve\n"
        "print(json.dumps([before, 'torch' in sys.modules, sorted(E.__all__) == sorted(dir(E)) or "
        "set(E.__all__) <= set(dir(E))]))\n"
    )
    assert r == [False, True, True]


def test_first_gradient_does_not_import_dynamo():
    """Training (plain gradients, outside ``vmap``) must not import ``torch._dynamo`` (seconds on 2 cores)."""
    r = _fresh(
        "import sys, json, torch\n"
        "from unlearnkit.models import FlatParams, mlp\n"
        "fp = FlatParams(mlp((4,), 3, hidden=(5,)))\n"
        "x = torch.zeros(2, 4, device='cpu'); y = torch.zeros(2, dtype=torch.long, device='cpu')\n"
        "fp.grad(fp.init(), x, y); fp.value_and_grad(fp.init(), x, y, weight_decay=0.1)\n"
        "print(json.dumps('torch._dynamo' in sys.modules))\n"
    )
    assert r is False
