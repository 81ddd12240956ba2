"""Every course notebook is committed clean and follows the course's shape.

Picked up automatically: a new notebook in notebooks/ is checked with no edit here.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found"
    assert NOTEBOOKS[0].name == "00_welcome.ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stripped(path):
    nb = json.loads(path.read_text())
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name} cell {i} has stored outputs"
            assert cell.get("execution_count") is None, f"{path.name} cell {i} has an execution count"
    assert "widgets" not in nb.get("metadata", {}), f"{path.name} stores widget state"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_shape(path):
    assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", path.name), "notebooks are named NN_topic.ipynb"
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    first = code[0]
    assert "parameters" in first.get("metadata", {}).get("tags", []), "the first code cell is tagged 'parameters'"
    assert "UNLEARNKIT_QUICK" in "".join(first["source"]), "the parameters cell reads UNLEARNKIT_QUICK"
    last = "".join(code[-1]["source"])
    assert "assert" in last and ".value" in last, "the last cell drives a widget and asserts"
    text = " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown").lower()
    assert "learning goals" in text and "exercise" in text and "<details>" in text
    assert nb["metadata"].get("kernelspec", {}).get("name") == "python3"
