"""Strip outputs, execution counts and widget state from notebooks (``python -m unlearnkit._nbstrip NB...``).

Notebooks are committed without outputs or widget state: plotly's FigureWidget state alone is ~5 MB.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def strip(path: str | Path) -> bool:
    """Strip one notebook in place; return True if it changed."""
    path = Path(path)
    raw = path.read_text()
    nb = json.loads(raw)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cell.get("metadata", {}).pop("execution", None)
    nb.get("metadata", {}).pop("widgets", None)
    new = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    if new != raw:
        path.write_text(new)
        return True
    return False


if __name__ == "__main__":
    changed = [p for p in sys.argv[1:] if strip(p)]
    print(f"stripped {len(changed)} of {len(sys.argv) - 1} notebooks")
