"""Rows of results (dicts) as an HTML table in a notebook, rather than one printed dict per line.

``table(rows)`` is what a notebook cell shows (``display(table(rows))``, or as the cell's last expression);
``table_html(rows)`` is the same table as a string, for an explorer's ``HTML`` widget. Columns are the keys in
the order they first appear; floats are shown to ``digits`` significant digits, ``None`` as an empty cell.
"""

from __future__ import annotations

import html
from typing import Any, Iterable, Mapping

__all__ = ["table", "table_html"]


def _cell(v: Any, digits: int) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return html.escape(f"{v:.{digits}g}")
    if isinstance(v, Mapping):
        return html.escape(", ".join(f"{k}={_cell(x, digits)}" for k, x in v.items()))
    return html.escape(str(v))


def table_html(rows: Iterable[Mapping[str, Any]], *, digits: int = 4) -> str:
    """``rows`` as an HTML table string (``<i>(no rows)</i>`` when there are none); a row may be a mapping or
    an object with ``to_dict()`` (an audit result, a certificate)."""
    rows = [dict(r.to_dict() if hasattr(r, "to_dict") else r) for r in rows]
    if not rows:
        return "<i>(no rows)</i>"
    cols: list[str] = []
    for r in rows:
        cols += [c for c in r if c not in cols]
    head = "".join(f"<th style='padding:0 8px;text-align:right'>{html.escape(str(c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td style='padding:0 8px;text-align:right'>{_cell(r.get(c), digits)}</td>"
                                    for c in cols) + "</tr>" for r in rows)
    return f"<table style='font-size:12px'><tr>{head}</tr>{body}</table>"


def table(rows: Iterable[Mapping[str, Any]], *, digits: int = 4) -> Any:
    """``rows`` as a displayable HTML table (an ``IPython.display.HTML``)."""
    from IPython.display import HTML

    return HTML(table_html(rows, digits=digits))
