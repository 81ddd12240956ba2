"""The browser test's reload check: save the notebook, reload the page, and compare the widget figures.

After a reload the widget models come back from the running kernel, so each widget figure must draw the
kernel's current state, the same data the live page drew before the reload.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable


# the widget figures as a view draws them, comparable across a reload (typed arrays as lists, NaN as null); a
# figure displayed as a plain output (not a widget) comes back from the saved notebook, not from the kernel
_STATE_JS = """
() => JSON.stringify(Array.from(document.querySelectorAll('.js-plotly-plot'))
                          .filter(gd => gd.closest('.jupyter-widgets')).map(gd => ({
  data: (gd.data || []).map(t => [t.type || 'scatter', t.name,
          ...['x', 'y', 'z', 'text'].map(k => t[k] && t[k].length !== undefined && typeof t[k] !== 'string'
                                                ? Array.from(t[k], v => Array.isArray(v) ? Array.from(v) : v) : t[k])]),
  title: gd.layout && gd.layout.title ? (gd.layout.title.text || gd.layout.title) : null
})))
"""


def _save(page) -> None:
    """File > Save Notebook (a key press would go to a focused slider), then wait until the tab is clean."""
    page.keyboard.press("Escape")
    page.get_by_role("menuitem", name="File", exact=True).click()
    page.get_by_role("menuitem", name="Save Notebook", exact=False).first.click()
    deadline = time.time() + 30
    while time.time() < deadline and page.locator(".lm-TabBar-tab.jp-mod-dirty").count():
        time.sleep(0.25)


def _figures_by_title(page) -> dict[str, list[str]]:
    """Every figure of the notebook as a view draws it, keyed by title. Lab renders only the cells near the
    viewport, so the notebook is scrolled from top to bottom and each figure is taken when it is drawn."""
    seen: dict[str, set[str]] = {}
    scroller = ".jp-NotebookPanel .jp-WindowedPanel-outer"
    page.evaluate(f"() => document.querySelector('{scroller}').scrollTop = 0")
    for _ in range(200):
        time.sleep(0.4)
        for fig in json.loads(page.evaluate(_STATE_JS)):
            if fig["data"]:
                seen.setdefault(str(fig["title"]), set()).add(json.dumps(fig["data"]))
        done = page.evaluate(f"""() => {{ const s = document.querySelector('{scroller}');
            const end = s.scrollTop + s.clientHeight >= s.scrollHeight - 2; s.scrollTop += s.clientHeight * 0.8;
            return end; }}""")
        if done:
            break
    return {t: sorted(v) for t, v in seen.items()}


def shots_name(page) -> str:
    """The notebook's name from the page's URL (for file names)."""
    return page.url.split("?")[0].rsplit("/", 1)[-1].replace(".ipynb", "")


def reload_shows_the_kernels_figures(page, wait_plots: Callable[[], float], shots: Path) -> list[str]:
    """Save, reload the page (the widget models come back from the running kernel), and compare every figure
    with what the live page drew after the last control move; the figures that differ."""
    before = _figures_by_title(page)
    _save(page)  # the reloaded page reads the notebook from disk: its outputs name the live widget models
    page.reload()
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=120_000)
    try:
        page.wait_for_selector(".js-plotly-plot", state="attached", timeout=120_000)
    except Exception:
        page.screenshot(path=str(shots / "reload-without-figures.png"))
        seen = page.evaluate("() => ({outputs: document.querySelectorAll('.jp-OutputArea-output').length, "
                             "dialogs: Array.from(document.querySelectorAll('.jp-Dialog')).map(d => d.innerText)})")
        raise AssertionError(f"no figure after the reload: {seen}") from None
    took = wait_plots()
    after = _figures_by_title(page)
    print(f"after reload: first figures drawn in {took:.1f} s; {sum(map(len, after.values()))} of "
          f"{sum(map(len, before.values()))} widget figures compared")
    page.evaluate("() => document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer').scrollTop = 0")
    time.sleep(1.0)
    page.locator(".jupyter-widgets .js-plotly-plot").first.scroll_into_view_if_needed()
    time.sleep(1.0)
    assert before, "no widget figure to compare"
    differ = sorted(t for t in set(before) | set(after) if after.get(t) != before.get(t))
    if differ:  # the whole of each differing figure, live and reloaded, for the report
        dump = shots.parent / f"browser-reload-diff-{shots_name(page)}.json"
        dump.write_text(json.dumps({t: {"live": before.get(t), "reloaded": after.get(t)} for t in differ}, indent=1))
        print(f"figures that differ after the reload written to {dump}")
    return [f"{title!r}: live {before.get(title, [''])[0][:300]} / reloaded {a[0][:300] if a else None}"
            for title in sorted(set(before) | set(after)) if (a := after.get(title)) != before.get(title)]


def second_view_shows_the_kernels_figures(page, url: str, wait_plots: Callable[[object], float], shots: Path
                                          ) -> list[str]:
    """Open ``url`` (the notebook in its own Lab workspace, with the server's token) in a second tab while the
    first page stays open, and compare every widget figure of the second view with the first page's; the figures
    that differ. The second page joins the same kernel session and restores the widget models from the kernel, as
    a reload does, but beside a live view."""
    live = _figures_by_title(page)
    second = page.context.browser.new_page(viewport=page.viewport_size)  # a second tab (its own context)
    try:
        second.goto(url, timeout=120_000)
        try:
            second.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=120_000)
            second.wait_for_selector(".js-plotly-plot", state="attached", timeout=120_000)
        except Exception:
            second.screenshot(path=str(shots / f"{shots_name(page)}-second-view-failed.png"))
            raise
        took = wait_plots(second)
        seen = _figures_by_title(second)
        second.evaluate("() => document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer').scrollTop = 0")
        time.sleep(1.0)
        second.screenshot(path=str(shots / f"{shots_name(page)}-second-view.png"))
    finally:
        second.close()
    print(f"second view: first figures drawn in {took:.1f} s; {sum(map(len, seen.values()))} of "
          f"{sum(map(len, live.values()))} widget figures compared")
    assert live, "no widget figure to compare"
    return [f"{title!r}: first view {live.get(title, [''])[0][:300]} / second view {s[0][:300] if s else None}"
            for title in sorted(set(live) | set(seen)) if (s := seen.get(title)) != live.get(title)]
