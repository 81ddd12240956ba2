"""The browser test under load: busy cores, Binder's limits, and the Run All time a student waits for.

``UNLEARNKIT_BROWSER_LOAD=busy`` starts one busy-loop process per core (``os.cpu_count()``), ``crowded`` four
per core (a load average near 8 on two cores, what a crowded Binder node gives), at normal priority, before
JupyterLab starts; they run for the whole test and are stopped at teardown, failure or not (each
loop also ends by itself when the test process dies). ``UNLEARNKIT_BROWSER_LIMITS=binder`` gives the Lab server
and its kernels Binder's one core (``taskset -c 0``; the kernels inherit the affinity) and checks its 2 GB of
memory: no unprivileged tool here enforces a resident-memory cap (``systemd-run --user --scope -p MemoryMax=2G``
needs a user D-Bus, absent in containers and CI; ``prlimit --as`` caps virtual memory, which torch's reservations
exceed; a cgroup needs root), so the peak resident memory of the server and its kernels (summed RSS, which counts
shared pages once per process: an upper bound) is sampled every 0.25 s and asserted under 2 GB; each notebook's
kernel is shut down after its test, as a student working one notebook at a time would.

Run All time: from the click on Run All Cells to the last frame in which any plotly figure changed (a
``MutationObserver`` on the figures, stamped at the next animation frame), read once every cell has run and every
figure has data. Recorded per notebook and load mode in ``artifacts/browser-runall.json``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.request
from contextlib import contextmanager
from pathlib import Path

LOAD = os.environ.get("UNLEARNKIT_BROWSER_LOAD", "").strip().lower()
LIMITS = os.environ.get("UNLEARNKIT_BROWSER_LIMITS", "").strip().lower()
BUSY_PER_CORE = {"": 0, "busy": 1, "crowded": 4}
if LOAD not in BUSY_PER_CORE:
    raise ValueError(f"UNLEARNKIT_BROWSER_LOAD={LOAD!r}: expected 'busy', 'crowded' or nothing")
if LIMITS not in ("", "binder"):
    raise ValueError(f"UNLEARNKIT_BROWSER_LIMITS={LIMITS!r}: expected 'binder' or nothing")
BINDER = LIMITS == "binder"
MODE = "+".join(m for m in (LOAD, LIMITS) if m) or "quiet"
BINDER_MEMORY_BYTES = 2 * 1024**3

# a busy loop that ends when its parent (the test process) is gone, so a killed test leaves no spinner behind
_BUSY_LOOP = "import os\np = os.getppid()\nwhile os.getppid() == p:\n    for _ in range(200000): pass\n"

# stamps window.__ukLastPaint with the frame after any change inside a plotly figure
PAINT_RECORDER_JS = """
(() => { window.__ukLastPaint = null;
  const inPlot = n => n && n.nodeType === 1 && (n.classList.contains('js-plotly-plot') || n.closest('.js-plotly-plot'));
  new MutationObserver(ms => {
    for (const m of ms) {
      if (inPlot(m.target) || Array.from(m.addedNodes).some(inPlot)) {
        requestAnimationFrame(() => { window.__ukLastPaint = performance.now(); });
        return; } }
  }).observe(document, {subtree: true, childList: true, attributes: true});
})();
"""


@contextmanager
def machine_load():
    """Busy-loop processes on every core while the block runs (``UNLEARNKIT_BROWSER_LOAD=busy`` or
    ``crowded``), else none."""
    procs: list[subprocess.Popen] = []
    try:
        if BUSY_PER_CORE[LOAD]:
            for _ in range(BUSY_PER_CORE[LOAD] * (os.cpu_count() or 1)):
                procs.append(subprocess.Popen([sys.executable, "-c", _BUSY_LOOP]))
            print(f"load: {len(procs)} busy-loop processes {[p.pid for p in procs]}")
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait(timeout=10)


def server_command(cmd: list[str]) -> list[str]:
    """The Lab server's command line: pinned to core 0 under Binder's limits, unchanged otherwise."""
    if not BINDER:
        return cmd
    taskset = shutil.which("taskset")
    if taskset is None:
        raise RuntimeError("UNLEARNKIT_BROWSER_LIMITS=binder needs taskset (util-linux)")
    return [taskset, "-c", "0", *cmd]


class MemoryWatch:
    """Peak summed RSS of a process and its descendants, sampled every 0.25 s in a thread."""

    def __init__(self, pid: int):
        import psutil

        self._root = psutil.Process(pid)
        self.peak = 0
        self.peak_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            total, n = 0, 0
            try:
                for proc in [self._root, *self._root.children(recursive=True)]:
                    try:
                        total += proc.memory_info().rss
                        n += 1
                    except psutil.Error:
                        pass
            except psutil.Error:
                return
            if total > self.peak:
                self.peak, self.peak_processes = total, n
            self._stop.wait(0.25)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def shut_down_kernels(base: str, token: str) -> int:
    """Shut down every running kernel of the Lab server (REST API); how many."""
    auth = {"Authorization": f"token {token}"}
    with urllib.request.urlopen(urllib.request.Request(f"{base}/api/kernels", headers=auth), timeout=10) as r:
        kernels = json.load(r)
    for k in kernels:
        req = urllib.request.Request(f"{base}/api/kernels/{k['id']}", headers=auth, method="DELETE")
        urllib.request.urlopen(req, timeout=30).close()
    return len(kernels)


def record_run_all(path: Path, name: str, row: dict) -> None:
    """Add one notebook's Run All row under its load mode to ``path`` (other modes' rows are kept)."""
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault(name, {})[MODE] = row
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]
