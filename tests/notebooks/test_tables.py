"""Result rows are shown as HTML tables: ``viz.tables.table`` and the notebooks that use it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from unlearnkit.viz.tables import table, table_html

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_rows_become_one_html_table():
    html = table_html([{"topology": "ring", "gap": 0.050712}, {"topology": "<star>", "edges": 15, "gap": None}])
    assert html.count("<tr>") == 3 and html.count("<th") == 3  # the columns of every row, in first-seen order
    assert html.index(">topology<") < html.index(">gap<") < html.index(">edges<")
    assert ">0.05071<" in html and "&lt;star&gt;" in html and "<td style='padding:0 8px;text-align:right'></td>" in html
    assert table_html([]) == "<i>(no rows)</i>"
    assert table([{"a": 1.0}], digits=2).data == table_html([{"a": 1.0}], digits=2)


def test_columns_pick_and_name_the_shown_keys():
    rows = [{"topology": "ring", "acc": 0.91234, "state": object()}, {"topology": "star", "acc": 0.5}]
    html = table_html(rows, columns=["acc", "topology"], digits=3)
    assert html.count("<th") == 2 and html.index(">acc<") < html.index(">topology<") and "object" not in html
    assert ">0.912<" in html
    named = table_html(rows, columns={"topology": "graph", "acc": "accuracy", "missing": "x"})
    assert ">graph<" in named and ">accuracy<" in named and ">x<" in named and ">topology<" not in named
    assert named.count("<td style='padding:0 8px;text-align:right'></td>") == 2  # the missing key, both rows


def test_text_columns_are_left_aligned_and_numbers_right_aligned():
    import numpy as np

    rows = [{"mechanism": "Gaussian, analytic", "epsilon": 1.0, "steps": np.int64(3), "note": None, "ok": True,
             "value": "not certified"},
            {"mechanism": "Laplace", "epsilon": None, "steps": 4, "note": "a long note", "ok": False, "value": 1.5}]
    html = table_html(rows)
    left, right = "text-align:left'>", "text-align:right'>"
    for text in ("Gaussian, analytic", "Laplace", "a long note", "True", "mechanism", "note", "ok"):
        assert f"{left}{text}<" in html, text
    for number in ("1", "3", "4", "epsilon", "steps", "1.5", "not certified", "value"):  # a mixed column: numbers
        assert f"{right}{number}<" in html, number
    assert f"{left}</td>" in html  # the text column's empty cell
    assert table_html([{"a": None}]).count("text-align:right") == 2  # no values: right, as before


def _row_prints(source: str) -> list[int]:
    """Lines of ``for row in rows: print(row)`` loops (one raw dict printed per line)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and len(node.body) == 1:
            call = getattr(node.body[0], "value", None)
            if (isinstance(call, ast.Call) and getattr(call.func, "id", "") == "print" and len(call.args) == 1
                    and isinstance(call.args[0], ast.Name) and call.args[0].id == node.target.id):
                out.append(node.lineno)
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebooks_show_rows_as_tables(path):
    nb = json.loads(path.read_text())
    bad = [f"cell {i} line {n}" for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
           for n in _row_prints("".join(c["source"]))]
    assert bad == [], "print one dict per line: show them with unlearnkit.viz.tables.table(rows)"


def test_certificate_row_reads_a_certificate_and_keeps_extra_columns_after_certified():
    from unlearnkit.core import Certificate
    from unlearnkit.viz.tables import certificate_row

    c = Certificate(1.0, 1e-5, 2.5, "analytic Gaussian", "a paper, Thm 1", "sound", {"L": 4.0}, "a note")
    row = certificate_row("sound", c, test_acc=0.9)
    assert list(row) == ["run", "mode", "epsilon", "delta", "sigma", "certified", "test_acc", "mechanism", "source",
                         "assumes", "note"]
    assert row["certified"] is True and row["assumes"] == {"L": 4.0} and row["sigma"] == 2.5
    paper = certificate_row("paper", Certificate(1.0, 1e-5, 2.5, mode="paper"))
    assert paper["certified"] is False and paper["mode"] == "paper"
    assert ">L=4<" in table_html([row])
    quoted = table_html([{"assumes": {"covers": "release='average'", "x<y": 1.0}}])
    assert "release=&#x27;average&#x27;" in quoted and "x&lt;y=1" in quoted and "&amp;" not in quoted  # escaped once
