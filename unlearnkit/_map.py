"""The package's map: its floors, rooms and imports, read statically and drawn as one SVG.

``python -m unlearnkit._map docs/architecture-map.svg`` writes it. ``FLOORS`` and ``SAME_FLOOR_OK`` are the
rules that ``tests/test_architecture.py`` checks; ``import_edges`` is the import graph both read (``ast``, so
imports inside functions count and nothing is imported). The drawing is deterministic: rooms in ``FLOORS``
order, everything else sorted, line counts rounded to two significant figures, no timestamp.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path
from xml.sax.saxutils import escape

PKG = Path(__file__).resolve().parent

# Floors, lowest first. A module may import from its own room and from any lower floor. A room is the first
# component below unlearnkit ("methods", "privacy", "core", ...). The order is the left-to-right order on the map.
FLOORS: dict[str, int] = {
    "_io": 0, "_validate": 0, "core": 0, "runtime": 0,
    "models": 1, "data": 1, "constants": 1, "graphs": 1, "privacy": 1,
    "curvature": 2, "train": 2, "evaluate": 2, "toy": 2, "audit": 2, "decentral": 2, "distributed": 2,
    "methods": 3,
    "experiments": 4,
    "viz": 5, "exercises": 5,
    "benchmarks": 6,
    "reproduce": 7,
    "__main__": 8, "__init__": 8, "_nbstrip": 8, "_labsettings": 8, "_map": 8,
}

# Rooms on the same floor that may not import each other unless listed here (source room, target room).
SAME_FLOOR_OK = {
    ("core", "_validate"),
}

# The paper behind each of the methods' sub-packages (docs/architecture.md, "Where each paper's equations live").
PAPER_AUTHORS = {
    "descend_rewind": "Mu & Klabjan 2025", "noisy_finetune": "Koloskova et al. 2025",
    "rrdu": "Lamri & Maniatakos", "newton": "Wu et al. 2026", "pdudt": "Qiao et al. 2025",
}
SUBROOMS = ("methods", "experiments")  # rooms drawn with their sub-packages inside


def module_name(path: Path) -> str:
    """``unlearnkit.a.b`` for ``unlearnkit/a/b.py`` (a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a module of the package."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in modules:
            return ".".join(parts)
        parts.pop()
    return None


def import_base(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` in module ``mod`` (a package's ``__init__`` when ``is_pkg``)
    names: relative levels resolved against ``mod``."""
    if not node.level:
        return node.module or ""
    parts = mod.split(".") if is_pkg else mod.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def import_edges() -> set[tuple[str, str]]:
    """``(importer, imported)`` module pairs inside the package, from every import statement (lazy ones too)."""
    modules = package_modules()
    edges: set[tuple[str, str]] = set()
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = import_base(mod, is_pkg, node)
                # ``from pkg import x``: an edge to the module ``pkg.x`` when x is one, else to ``pkg`` itself
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                r = resolve(t, modules) if t.startswith("unlearnkit") else None
                if r is not None and r != mod:
                    edges.add((mod, r))
    return edges


def room(mod: str) -> str:
    """The room of a module: its first component below ``unlearnkit`` (the root itself is ``__init__``)."""
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def lines_label(n: int) -> str:
    """A line count rounded to two significant figures: ``1878 -> "1.9k"``, ``433 -> "430"``."""
    r = float(f"{n:.2g}")
    return f"{r / 1000:g}k" if r >= 1000 else f"{r:g}"


def _size_text(n_modules: int, n_lines: int) -> str:
    return f"{n_modules} module{'s' * (n_modules != 1)} · ≈{lines_label(n_lines)} lines"


# Layout (px). Colours: one per floor; a line has the colour of its importer's floor.
W, GUTTER, RIGHT, TOP, GAP = 1200, 70, 12, 62, 22
COLOURS = ("#8c564b", "#17becf", "#2ca02c", "#d62728", "#1f77b4", "#9467bd", "#ff7f0e", "#a0a01c", "#7f7f7f")


def _text(x: float, y: float, s: str, size: float, extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}"{extra}>{escape(s)}</text>'


def room_sizes(modules: dict[str, Path]) -> tuple[dict[str, list[int]], dict[str, dict[str, list[int]]]]:
    """``[modules, lines]`` per room, and per sub-package of each room in ``SUBROOMS``."""
    sizes: dict[str, list[int]] = {}
    subs: dict[str, dict[str, list[int]]] = {r: {} for r in SUBROOMS}
    for mod, path in modules.items():
        n, r, parts = len(path.read_text(encoding="utf-8").splitlines()), room(mod), mod.split(".")
        tables = [(sizes, r)]
        if r in SUBROOMS and len(parts) > 2 and (PKG / r / parts[2] / "__init__.py").exists():
            tables.append((subs[r], parts[2]))
        for table, key in tables:
            table[key] = [table.get(key, [0, 0])[0] + 1, table.get(key, [0, 0])[1] + n]
    return sizes, subs


def _width(n_imports: int) -> float:
    return 0.8 + 0.85 * n_imports ** 0.5


def map_svg() -> str:
    """The map as SVG text: one band per floor (0 at the bottom), a box per room, a line per room -> room import."""
    modules = package_modules()
    sizes, subs = room_sizes(modules)
    rooms = [r for r in FLOORS if r in sizes] + sorted(set(sizes) - set(FLOORS))
    floor = {r: FLOORS.get(r, max(FLOORS.values()) + 1) for r in rooms}
    top_floor = max(floor.values())
    band_h = {f: 134 if any(floor[r] == f and r in SUBROOMS for r in rooms) else 92 for f in range(top_floor + 1)}
    band_y, y = {}, TOP
    for f in range(top_floor, -1, -1):
        band_y[f], y = y, y + band_h[f]
    height = y + 70
    box: dict[str, tuple[float, float, float, float]] = {}  # room -> x, y, w, h
    for f in band_h:
        row = [r for r in rooms if floor[r] == f]
        if not row:
            continue
        avail = W - GUTTER - RIGHT - 20
        bw = [(avail - GAP * (len(row) - 1)) / len(row) if r in SUBROOMS else
              min(330.0, (avail - GAP * (len(row) - 1)) / len(row)) for r in row]
        x = GUTTER + 10 + (avail - sum(bw) - GAP * (len(row) - 1)) / 2
        for r, w in zip(row, bw):
            box[r] = (x, band_y[f] + 17, w, band_h[f] - 34)
            x += w + GAP
    cx = {r: box[r][0] + box[r][2] / 2 for r in rooms}
    counts = Counter((room(s), room(d)) for s, d in import_edges() if room(s) != room(d))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" '
           'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
           'markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#222"/></marker></defs>',
           f'<rect width="{W}" height="{height}" fill="white"/>',
           _text(GUTTER, 26, f"unlearnkit: {len(rooms)} rooms on {top_floor + 1} floors, {len(modules)} modules, "
                 f"≈{lines_label(sum(s[1] for s in sizes.values()))} lines", 17, ' font-weight="bold"'),
           _text(GUTTER, 46, "Imports run down. A line joins an importing room (above) to a room it imports "
                 "(below), in the importer's floor colour; its width grows with the number of module imports.",
                 12, ' fill="#444"')]
    for f, y0 in sorted(band_y.items()):
        out.append(f'<rect x="0" y="{y0}" width="{W}" height="{band_h[f]}" fill="{"#f6f6f6" if f % 2 else "#ffffff"}"/>')
        out.append(_text(10, y0 + band_h[f] / 2 + 6, f"floor {f}", 14, f' font-weight="bold" fill="{COLOURS[f % 9]}"'))
    # Ports: a box's outgoing lines leave its bottom edge in the order of their targets, incoming ones reach its top.
    down = sorted((e for e in counts if floor[e[0]] != floor[e[1]]), key=lambda e: (cx[e[1]], e))
    outs = {r: [e for e in down if e[0] == r] for r in rooms}
    ins = {r: sorted((e for e in down if e[1] == r), key=lambda e: (cx[e[0]], e)) for r in rooms}

    def port(r: str, edge: tuple[str, str], side: list) -> float:
        x, _, w, _ = box[r]
        return x + w * 0.1 + w * 0.8 * (side.index(edge) + 1) / (len(side) + 1)

    for s, d in sorted(counts, key=lambda e: (-counts[e], e)):
        n, (_, ys, _, hs), (_, yd, _, hd) = counts[s, d], box[s], box[d]
        tip = f"<title>{escape(s)} → {escape(d)}: {n} module import{'s' * (n != 1)}</title>"
        if floor[s] == floor[d]:  # a same-floor import: dashed, with an arrowhead, below the boxes
            x1, x2 = (box[s][0], box[d][0] + box[d][2]) if cx[d] < cx[s] else (box[s][0] + box[s][2], box[d][0])
            y1, yb = ys + hs * 0.7, ys + hs + 14
            out.append(f'<path d="M{x1:.1f},{y1:.1f} C{x1:.1f},{yb:.1f} {x2:.1f},{yb:.1f} {x2:.1f},{y1:.1f}" '
                       f'fill="none" stroke="#222" stroke-width="1.6" stroke-dasharray="5,3" '
                       f'marker-end="url(#arrow)">{tip}</path>')
            continue
        up = floor[s] < floor[d]  # an import up a floor (the test fails on it): drawn upwards
        x1, x2 = port(s, (s, d), outs[s]), port(d, (s, d), ins[d])
        y1, y2 = (ys, yd + hd) if up else (ys + hs, yd)
        bend = max(30.0, 0.4 * abs(y2 - y1)) * (-1 if up else 1)
        out.append(f'<path d="M{x1:.1f},{y1:.1f} C{x1:.1f},{y1 + bend:.1f} {x2:.1f},{y2 - bend:.1f} {x2:.1f},{y2:.1f}" '
                   f'fill="none" stroke="{COLOURS[floor[s] % 9]}" stroke-opacity="0.5" stroke-width="{_width(n):.2f}">'
                   f'{tip}</path>')
    for r in rooms:
        x, y0, w, h = box[r]
        name = r + ("/" if (PKG / r / "__init__.py").exists() else "")
        out.append(f'<rect x="{x:.1f}" y="{y0:.1f}" width="{w:.1f}" height="{h:.1f}" rx="6" fill="white" '
                   f'fill-opacity="0.88" stroke="{COLOURS[floor[r] % 9]}" stroke-width="2"/>')
        if r not in SUBROOMS:
            size = _size_text(*sizes[r])
            rows = [size] if w > 200 else size.split(" · ")  # a narrow box: modules and lines on two rows
            out.append(_text(x + w / 2, y0 + 31 - 7 * len(rows), name, 14, ' font-weight="bold" text-anchor="middle"'))
            for j, t in enumerate(rows):
                out.append(_text(x + w / 2, y0 + 49 - 7 * len(rows) + 14 * j, t, 11.5, ' fill="#444" text-anchor="middle"'))
            continue
        what = ": one sub-package per paper" if r == "methods" else ": its machinery and one sub-package per paper"
        out.append(f'<text x="{x + 10:.1f}" y="{y0 + 20:.1f}" font-size="14"><tspan font-weight="bold">{name}</tspan>'
                   f'<tspan dx="10" font-size="11.5" fill="#444">{escape(_size_text(*sizes[r]) + what)}</tspan></text>')
        order = [p for p in PAPER_AUTHORS if p in subs[r]] + sorted(set(subs[r]) - set(PAPER_AUTHORS))
        sw = (w - 20 - 8 * (len(order) - 1)) / max(1, len(order))
        for i, p in enumerate(order):
            sx, sy = x + 10 + i * (sw + 8), y0 + 30
            lines = [(p + "/", 12.5, ' font-weight="bold"')] + (
                [(PAPER_AUTHORS[p], 11.5, ' font-style="italic"')] if r == "methods" and p in PAPER_AUTHORS else [])
            size = _size_text(*subs[r][p])
            lines += [(t, 10.5, ' fill="#444"') for t in ([size] if sw > 150 else size.split(" · "))]
            out.append(f'<rect x="{sx:.1f}" y="{sy:.1f}" width="{sw:.1f}" height="{h - 38:.1f}" rx="4" '
                       f'fill="#fbfbfb" stroke="#bbb"/>')
            for j, (s, size, extra) in enumerate(lines):
                out.append(_text(sx + sw / 2, sy + 19 + 15 * j, s, size, extra + ' text-anchor="middle"'))
    ly = height - 40
    out.append(_text(GUTTER, ly + 4, "line width, module imports:", 12))
    for i, n in enumerate((1, 10, 50)):
        lx = GUTTER + 170 + i * 90
        out.append(f'<path d="M{lx},{ly} h40" stroke="#555" stroke-width="{_width(n):.2f}"/>')
        out.append(_text(lx + 46, ly + 4, str(n), 12))
    out.append(f'<path d="M{GUTTER + 450},{ly} h40" stroke="#222" stroke-width="1.6" stroke-dasharray="5,3" '
               'marker-end="url(#arrow)"/>')
    out.append(_text(GUTTER + 498, ly + 4, "same-floor import (SAME_FLOOR_OK, or the CLI importing the root)", 12))
    out.append(_text(GUTTER, ly + 26, "Line counts rounded to two significant figures. Regenerate: "
                     "python -m unlearnkit._map docs/architecture-map.svg (tests/test_architecture.py checks it).",
                     12, ' fill="#444"'))
    return "\n".join(out + ["</svg>"]) + "\n"


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/architecture-map.svg")
    target.write_bytes(map_svg().encode("utf-8"))
    print(f"wrote {target}")
