"""Rows of results (dicts) as an HTML table in a notebook, rather than one printed dict per line.

``table(rows)`` is what a notebook cell shows (``display(table(rows))``, or as the cell's last expression);
``table_html(rows)`` is the same table as a string, for an explorer's ``HTML`` widget. Columns are the keys in
the order they first appear, or those named by ``columns`` (a list of keys, or a mapping key -> header);
floats are shown to ``digits`` significant digits, ``None`` as an empty cell.
"""

from __future__ import annotations

import html
from typing import Any, Iterable, Mapping, Optional, Sequence, Union


def _cell(v: Any, digits: int) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return html.escape(f"{v:.{digits}g}")
    if isinstance(v, Mapping):
        return html.escape(", ".join(f"{k}={_cell(x, digits)}" for k, x in v.items()))
    return html.escape(str(v))


Columns = Union[Sequence[str], Mapping[str, str], None]


def table_html(rows: Iterable[Mapping[str, Any]], *, digits: int = 4, columns: Columns = None) -> str:
    """``rows`` as an HTML table string (``<i>(no rows)</i>`` when there are none).

    Parameters
    ----------
    rows : iterable of mappings
        One mapping per row; a row may also be an object with ``to_dict()`` (an audit result, a certificate).
    digits : int
        Significant digits of float cells.
    columns : sequence of str, or mapping of str to str, optional
        The keys to show, in this order (other keys are left out; a key a row lacks is an empty cell); a
        mapping also gives each column's header. ``None``: every key, in the order first seen.

    Returns
    -------
    str
        The ``<table>`` element.
    """
    rows = [dict(r.to_dict() if hasattr(r, "to_dict") else r) for r in rows]
    if not rows:
        return "<i>(no rows)</i>"
    if columns is None:
        cols: list[str] = []
        for r in rows:
            cols += [c for c in r if c not in cols]
        heads = {c: c for c in cols}
    else:
        heads = dict(columns) if isinstance(columns, Mapping) else {c: c for c in columns}
        cols = list(heads)
    head = "".join(f"<th style='padding:0 8px;text-align:right'>{html.escape(str(heads[c]))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td style='padding:0 8px;text-align:right'>{_cell(r.get(c), digits)}</td>"
                                    for c in cols) + "</tr>" for r in rows)
    return f"<table style='font-size:12px'><tr>{head}</tr>{body}</table>"


def table(rows: Iterable[Mapping[str, Any]], *, digits: int = 4, columns: Columns = None) -> Any:
    """``rows`` as a displayable HTML table (an ``IPython.display.HTML``); arguments as :func:`table_html`."""
    from IPython.display import HTML

    return HTML(table_html(rows, digits=digits, columns=columns))
