"""The package's floors: imports run one way, and no module imports itself through others.

viz -> experiments -> methods -> {privacy, decentral, graphs, ...} -> core

Every import of an ``unlearnkit`` module counts, including those inside functions (an import moved into a
function to dodge a loop is still a loop). There is no allow-list: an import that runs up a floor is a bug.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PKG = Path(__file__).resolve().parents[1] / "unlearnkit"

# Floors, lowest first. A module may import from its own room and from any lower floor.
# A room is the first component below unlearnkit ("methods", "privacy", "core", ...).
FLOORS: dict[str, int] = {
    "_validate": 0, "_io": 0, "core": 0, "runtime": 0,
    "models": 1, "data": 1, "constants": 1, "graphs": 1, "privacy": 1,
    "train": 2, "evaluate": 2, "curvature": 2, "decentral": 2, "toy": 2, "audit": 2, "distributed": 2,
    "methods": 3,
    "experiments": 4,
    "viz": 5, "exercises": 5,
    "benchmarks": 6,
    "reproduce": 7,
    "__main__": 8, "__init__": 8, "_nbstrip": 8, "_labsettings": 8,
}

# Rooms on the same floor that may not import each other unless listed here (source room, target room).
SAME_FLOOR_OK = {
    ("core", "_validate"),
    ("core", "runtime"),
    ("evaluate", "train"),
}



def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {module_name(p): p for p in PKG.rglob("*.py")}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a module of the package."""
    parts = name.split(".")
    while parts:
        cand = ".".join(parts)
        if cand in modules:
            return cand
        parts.pop()
    return None


def import_edges() -> set[tuple[str, str]]:
    modules = _modules()
    edges: set[tuple[str, str]] = set()
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                # ``from pkg import x``: an edge to the module ``pkg.x`` when x is one, else to ``pkg`` itself
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                if not t.startswith("unlearnkit"):
                    continue
                r = _resolve(t, modules)
                if r is not None and r != mod:
                    edges.add((mod, r))
    return edges


def room(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


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
