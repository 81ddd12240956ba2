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


def _driven_outside_driving(source: str) -> list[str]:
    """Explorers a cell moves (``x.slider.value = ...``, ``x.button.click()``) that it neither created nor
    wrapped in ``with driving(x, ...)``."""
    import ast

    tree = ast.parse(source)
    local = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets
             if isinstance(t, ast.Name)}
    bad: list[str] = []

    def root(expr) -> str | None:
        while isinstance(expr, (ast.Attribute, ast.Subscript)):
            expr = expr.value
        return expr.id if isinstance(expr, ast.Name) else None

    def visit(node, guarded: frozenset) -> None:
        if isinstance(node, ast.With):
            names = set()
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and getattr(call.func, "id", getattr(call.func, "attr", "")) == "driving":
                    names |= {a.id for a in call.args if isinstance(a, ast.Name)}
            guarded = guarded | names
        moved = None
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and t.attr == "value" and isinstance(t.value, ast.Attribute):
                    moved = root(t)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "click":
            moved = root(node.func)
        if moved and moved not in local and moved not in guarded:
            bad.append(moved)
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(tree, frozenset())
    return sorted(set(bad))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_check_cells_leave_the_explorers_as_the_student_saw_them(path):
    """The check cells drive explorers the student is looking at: they must restore them (``with
    unlearnkit.viz.driving(explorer):``) or drive instances of their own, so after Run All every explorer
    shows its documented default."""
    nb = json.loads(path.read_text())
    last = max(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")  # always a check (shape test)
    in_check, bad = False, {}
    for i, cell in enumerate(nb["cells"]):
        src = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and src.lstrip().startswith("#"):
            in_check = bool(re.match(r"#+\s*Check", src.lstrip()))
        elif cell["cell_type"] == "code" and (in_check or i == last):
            moved = _driven_outside_driving(src)
            if moved:
                bad[i] = moved
    assert not bad, f"{path.name}: check cells move displayed explorers without driving(): {bad}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_first_cell_tells_the_student_to_run_it(path):
    """Widgets are not saved with the notebook: reopened, it shows nothing until it runs again; say so up front."""
    nb = json.loads(path.read_text())
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "Run All" in "".join(first["source"])
