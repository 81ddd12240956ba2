"""Notebook 05's real-process run, off Run All's critical path.

:class:`RealProcessRun` is a button: pressing it (or :meth:`RealProcessRun.start`) shows progress in place at
once and runs :func:`unlearnkit.experiments.labs.distributed.side_by_side` in a background thread: a few real
processes start (seconds, mostly process start-up), run gossip and an RR-DU walk, and the same computations run
in this process. When they finish, the comparison (largest gaps, one timing row per runtime) and the walk's
message view (route, client 0's message log, RR-DU's visit counts from the route and from the messages) are
filled in. Nothing waits for it: the kernel stays free for the next cells while the processes run, and the
equivalence itself is tested in ``tests/distributed``.
"""

from __future__ import annotations

import html
import threading
import time
from typing import Any, Callable, Optional

import ipywidgets as W

from ._explorer import Explorer
from .tables import table_html


#: the gap below which the two runtimes count as computing the same numbers
SAME = 1e-10


def _pre(text: str) -> str:
    return f"<pre style='font-size:12px;line-height:1.3;margin:2px 0'>{html.escape(text)}</pre>"


def _table(rows: list[dict[str, Any]]) -> str:
    """``rows`` (dicts) as an HTML table, floats to four significant digits."""
    return table_html(rows, digits=4)


class RealProcessRun(Explorer):
    """A button that runs gossip and an RR-DU walk on ``n_ranks`` real processes beside the simulator.

    Parameters
    ----------
    n_ranks, dim, rounds, hops, u, p, sigma, seed:
        Passed to :func:`~unlearnkit.experiments.labs.distributed.side_by_side`.
    runner:
        The function run in the background (default ``side_by_side``; tests pass a stand-in).

    Attributes
    ----------
    result:
        ``side_by_side``'s dict once a run finished, else ``None``.
    summary, messages:
        HTML widgets filled in when the run finishes (``messages`` can be shown in a later cell).
    """

    def __init__(self, n_ranks: int, *, dim: int = 100, rounds: int = 10, hops: int = 20, u: int = 0,
                 p: float = 0.3, sigma: float = 0.5, seed: int = 0,
                 runner: Optional[Callable[..., dict]] = None) -> None:
        super().__init__()
        if runner is None:
            from ..experiments.labs.distributed import side_by_side as runner  # deferred: imports torch
        self.runner = runner
        self.kwargs = dict(dim=dim, rounds=rounds, hops=hops, u=u, p=p, sigma=sigma, seed=seed)
        self.n_ranks = n_ranks
        self.result: Optional[dict[str, Any]] = None
        self.seconds: Optional[float] = None
        self._thread: Optional[threading.Thread] = None
        self.run_button = W.Button(description="run on real processes", button_style="primary",
                                   layout=W.Layout(width="220px"))
        self.run_button.on_click(lambda _b: self.guard(self.start))
        self.summary = W.HTML(value="")
        self.messages = W.HTML(value="<i>the walk's messages appear here when the real-process run above "
                                     "finishes</i>")
        self.status.value = (f"not started: press the button to start {n_ranks} processes (a few seconds; the "
                             "notebook does not wait for them)")
        self._layout(W.HBox([self.run_button]), self.summary)

    def update(self) -> None:
        """Nothing to recompute on a control change: the run starts from the button."""

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Show progress now and run in a background thread; a second press while running does nothing."""
        if self.running:
            return
        self.result, self.seconds = None, None
        self.run_button.disabled = True
        self.status.value = f"starting {self.n_ranks} processes ... (the results appear here when they finish)"
        self.summary.value = ""
        self._thread = threading.Thread(target=self._work, name="unlearnkit-real-processes", daemon=True)
        self._thread.start()

    def wait(self, timeout: Optional[float] = None) -> Optional[dict[str, Any]]:
        """Block until the background run is done (or ``timeout`` seconds); returns :attr:`result`."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.result

    def _work(self) -> None:
        t0 = time.perf_counter()
        try:
            res = self.runner(self.n_ranks, **self.kwargs)
        except Exception as exc:  # shown in place: a background thread has nobody to raise to
            self.status.value = "the real-process run failed"
            self.show_error(f"{type(exc).__name__}: {exc}")
            self.run_button.disabled = False
            return
        self.seconds = time.perf_counter() - t0
        self.result = res
        self._show(res)
        self.run_button.disabled = False

    def _show(self, res: dict[str, Any]) -> None:
        from ..distributed.timing import message_table  # deferred: imports torch

        same = res["gossip_gap"] < SAME and res["walk_gap"] < SAME
        verdict = "the same numbers" if same else "DIFFERENT numbers (a bug: please report it)"
        self.summary.value = (_pre(f"largest gap between the runtimes: gossip {res['gossip_gap']:.1e}, walk "
                                   f"{res['walk_gap']:.1e}  -> {verdict}") + _table(res["timings"]))
        self.messages.value = (_pre(f"route: {res['route']}") + _table(message_table(res["walk_logs"][0]))
                               + _pre(str(res["visits"])))
        self.status.value = f"done in {self.seconds:.1f} s (process start-up included)"
