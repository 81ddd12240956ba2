"""The package's floors: imports run one way, and no module imports itself through others.

viz -> experiments -> methods -> {privacy, decentral, graphs, ...} -> core

Every import of an ``unlearnkit`` module counts, including those inside functions (an import moved into a
function to dodge a loop is still a loop). There is no allow-list: an import that runs up a floor is a bug.
"""

from __future__ import annotations

import ast

import networkx as nx
import pytest

# The rules (FLOORS, SAME_FLOOR_OK) and the import graph live in unlearnkit._map, which also draws them as
# docs/architecture-map.svg: the test and the map read one table and one graph.
from unlearnkit._map import (  # noqa: F401  (module_name, _resolve: imported by tests/test_seams.py)
    FLOORS,
    PKG,
    SAME_FLOOR_OK,
    import_edges,
    map_svg,
    module_name,
    room,
)
from unlearnkit._map import package_modules as _modules
from unlearnkit._map import resolve as _resolve  # noqa: F401

MAP_SVG = PKG.parent / "docs" / "architecture-map.svg"


def violations(edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    bad = set()
    for src, dst in edges:
        rs, rd = room(src), room(dst)
        if rs == rd or rs in {"__init__", "__main__"}:
            continue
        fs, fd = FLOORS[rs], FLOORS[rd]
        if fd > fs or (fd == fs and (rs, rd) not in SAME_FLOOR_OK):
            bad.add((src, dst))
    return bad


def test_every_room_has_a_floor():
    missing = sorted({room(m) for m in _modules()} - set(FLOORS))
    assert not missing, f"give these rooms a floor in FLOORS: {missing}"


def test_imports_run_one_way():
    bad = violations(import_edges())
    assert not bad, "imports that run up a floor (move the code, or the import):\n" + "\n".join(
        f"  {s} -> {d}" for s, d in sorted(bad))


def test_no_import_cycles_between_rooms():
    """Rooms (sub-packages and top-level modules) form a DAG."""
    g = nx.DiGraph()
    for s, d in import_edges():
        if room(s) != room(d) and room(s) not in {"__init__", "__main__"}:
            g.add_edge(room(s), room(d))
    cycles = list(nx.simple_cycles(g))
    assert not cycles, f"import cycles between rooms: {cycles}"


@pytest.mark.parametrize("ground", ["core", "_validate", "_io"])
def test_ground_floor_imports_nothing_above(ground):
    ups = sorted(d for s, d in import_edges() if room(s) == ground and FLOORS[room(d)] > 0)
    assert not ups, f"unlearnkit.{ground} must import only the ground floor, not {ups}"


def test_each_public_name_means_one_thing():
    """A public name (a top-level name without a leading underscore) is defined in one module only:
    ``calibrate_sigma`` or ``PROFILES`` must not mean different things in different rooms."""
    homes: dict[str, set[str]] = {}
    for mod, path in _modules().items():
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            else:
                continue
            for n in names:
                if not n.startswith("_"):
                    homes.setdefault(n, set()).add(mod)
    twice = {n: sorted(m) for n, m in homes.items() if len(m) > 1}
    assert not twice, f"public names defined in more than one module (rename one): {twice}"


def test_no_module_over_700_lines():
    """A module holds one concept: a warning from 400 lines (look for a seam), a failure above 700."""
    import warnings

    sizes = {module_name(p): len(p.read_text().splitlines()) for p in PKG.rglob("*.py")}
    long = {m: n for m, n in sizes.items() if n > 700}
    assert not long, f"split these modules along a concept (at most 700 lines): {long}"
    big = {m: n for m, n in sizes.items() if n > 400}
    if big:
        warnings.warn(f"modules over 400 lines (is there a seam?): {big}", stacklevel=1)


def test_source_says_what_code_is_not_its_history():
    """Docstrings and comments describe the code; the project's history (issue and finding numbers) is in docs/."""
    import re

    pattern = re.compile(r"\b[Ii]ssue \d+|\bfinding \d+")
    hits = [f"{module_name(p)}:{i}" for p in PKG.rglob("*.py")
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not hits, f"project history in the source (move it to docs/): {hits}"


def test_map_is_current():
    """The drawn map (docs/architecture-map.svg) is the package as it is now, byte for byte."""
    current = MAP_SVG.exists() and MAP_SVG.read_bytes() == map_svg().encode("utf-8")
    assert current, (
        "docs/architecture-map.svg is stale (rooms, modules, imports or line counts changed): regenerate it with\n"
        "  python -m unlearnkit._map docs/architecture-map.svg")


def test_map_rounds_line_counts():
    """The map's line counts change when a room grows, not at every edit."""
    from unlearnkit._map import lines_label

    assert [lines_label(n) for n in (33, 433, 1878, 10482)] == ["33", "430", "1.9k", "10k"]
