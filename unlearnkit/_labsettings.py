"""Write JupyterLab settings overrides for the course: no news pop-up, no update checks.

Run by ``make lab`` and Binder's postBuild (``python -m unlearnkit._labsettings``); writes
``{sys.prefix}/share/jupyter/lab/settings/overrides.json``, merging with what is there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OVERRIDES = {"@jupyterlab/apputils-extension:notification": {"checkForUpdates": False, "fetchNews": "false"}}


def write(prefix: str = sys.prefix) -> Path:
    path = Path(prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    current = json.loads(path.read_text()) if path.exists() else {}
    for key, value in OVERRIDES.items():
        current.setdefault(key, {}).update(value)
    path.write_text(json.dumps(current, indent=2))
    return path


if __name__ == "__main__":
    print(f"wrote {write()}")
