"""The seams between modules: what one module may take from another.

- A private name (``_name``) is private to its module: no other module imports it. A helper two modules need
  is public in one of them (a private *module*, such as ``_validate`` or ``viz/_payload``, is fine to import
  from: its public names are the package's internal API).
- No import ring inside a room: the modules of a sub-package form a DAG too, so each can be read after the
  ones it imports. Imports under ``if TYPE_CHECKING:`` count: a ring in the types is a ring in the reading.

``tests/test_architecture.py`` checks the floors between rooms; this file checks the seams inside them.
"""

from __future__ import annotations

import ast

import networkx as nx

from test_architecture import PKG, _modules, _resolve, import_edges, module_name
from unlearnkit._map import import_base


def private_imports() -> list[tuple[str, str, str]]:
    """``(importing module, source module, name)`` for every private name imported from another module."""
    modules = _modules()
    found = []
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = import_base(mod, is_pkg, node)
            if not base.startswith("unlearnkit"):
                continue
            for alias in node.names:
                name = alias.name
                if not name.startswith("_") or name.startswith("__") or f"{base}.{name}" in modules:
                    continue
                found.append((mod, _resolve(base, modules) or base, name))
    return sorted(found)


def rings_inside_rooms() -> list[list[str]]:
    """Strongly connected sets of two or more modules, from the import edges between modules of one package
    (an edge to the module's own package ``__init__`` does not count: that is importing through)."""
    modules = _modules()
    g = nx.DiGraph()
    for src, dst in import_edges():
        if dst in modules and modules[dst].name == "__init__.py" and src.startswith(dst + "."):
            continue
        if src.rsplit(".", 1)[0] == dst.rsplit(".", 1)[0] or src.startswith(dst + ".") or dst.startswith(src + "."):
            g.add_edge(src, dst)
    return sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)


def test_no_private_name_crosses_modules():
    bad = private_imports()
    assert not bad, "private names imported across modules (make the helper public where it lives, or move it):\n" + \
        "\n".join(f"  {m} imports {n} from {s}" for m, s, n in bad)


def test_no_import_ring_inside_a_room():
    rings = rings_inside_rooms()
    assert not rings, f"import rings inside a room: {rings}"



def _unbound_names(source: str, filename: str) -> list[tuple[str, str]]:
    """``(scope, name)`` for every name a scope reads as a global that neither the module nor builtins bind."""
    import builtins
    import symtable

    top = symtable.symtable(source, filename, "exec")
    known = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()} | set(dir(builtins)) | {
        "__file__", "__name__", "__doc__", "__spec__", "__path__", "__package__", "__builtins__", "__loader__"}
    found = []

    def walk(table):
        for s in table.get_symbols():
            reads_global = s.is_global() or (table.get_type() == "module" and not (s.is_assigned() or s.is_imported()))
            if s.is_referenced() and reads_global and s.get_name() not in known:
                found.append((table.get_name(), s.get_name()))
        for child in table.get_children():
            walk(child)

    walk(top)
    return found


def test_every_name_a_module_reads_is_bound():
    """A rename or a moved import can leave a name nothing binds (``uk.data`` after ``import unlearnkit as uk``
    went); it fails only when that line runs, perhaps only on a GPU. Checked statically, like a linter."""
    assert _unbound_names("def f():\n    return uk.data\n", "probe") == [("f", "uk")]
    bad = [f"{module_name(p)}: {scope} reads {name}" for p in PKG.rglob("*.py")
           for scope, name in _unbound_names(p.read_text(), str(p))]
    assert not bad, "names nothing binds:\n" + "\n".join(bad)


def undeferred_function_imports() -> list[str]:
    """``module:line`` of every import of a package module inside a function that does not say why it waits.

    An import belongs at the top of its module; one stays inside a function only where it defers something
    (torch, plotly, networkx, scipy's submodules: what a light module must not load at import time) or where the
    top would close a ring, and then its line (or the line above) says so: ``# deferred: imports torch``.
    """
    found = []
    for path in PKG.rglob("*.py"):
        source = path.read_text()
        lines = source.splitlines()

        def visit(node: ast.AST, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                    own = (child.level > 0 or (child.module or "").split(".")[0] == "unlearnkit"
                           if isinstance(child, ast.ImportFrom)
                           else any(a.name.split(".")[0] == "unlearnkit" for a in child.names))
                    said = lines[child.lineno - 1: child.end_lineno] + [lines[child.lineno - 2].strip()[:11]]
                    if own and not any("# deferred:" in line for line in said):
                        found.append(f"{module_name(path)}:{child.lineno}")
                visit(child, inside)

        visit(ast.parse(source, filename=str(path)), False)
    return sorted(found)


def test_function_imports_say_why_they_wait():
    """In-function imports of the package's own modules: each says ``# deferred: <why>`` (at most 0 do not)."""
    bad = undeferred_function_imports()
    assert not bad, "in-function imports that could move to the top (or say why not):\n" + "\n".join(bad)
