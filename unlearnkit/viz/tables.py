"""Rows of results (dicts) as an HTML table in a notebook, rather than one printed dict per line.

``table(rows)`` is what a notebook cell shows (``display(table(rows))``, or as the cell's last expression);
``table_html(rows)`` is the same table as a string, for an explorer's ``HTML`` widget. Columns are the keys in
the order they first appear, or those named by ``columns`` (a list of keys, or a mapping key -> header);
floats are shown to ``digits`` significant digits, ``None`` as an empty cell. A column of text (no value in it a
number: strings, flags, mappings) is left-aligned, so that long mechanism or note text reads; a column with numbers
is right-aligned, digits under digits. ``certificate_row`` turns a
:class:`~unlearnkit.core.Certificate` into one such row, so certificates of several modes read as one table.
"""

from __future__ import annotations

import html
import numbers
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from IPython.display import HTML


def _cell(v: Any, digits: int) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return html.escape(f"{v:.{digits}g}")
    if isinstance(v, Mapping):
        return ", ".join(f"{html.escape(str(k))}={_cell(x, digits)}" for k, x in v.items())  # escaped once
    return html.escape(str(v))


Columns = Union[Sequence[str], Mapping[str, str], None]


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Number) and not isinstance(v, bool)


def column_align(values: Iterable[Any]) -> str:
    """``"left"`` for a column of text (at least one value, none of them a number; ``True``/``False`` count as
    text), ``"right"`` otherwise (numbers, a mix of numbers and text, or only empty cells)."""
    shown = [v for v in values if v is not None]
    return "left" if shown and not any(_is_number(v) for v in shown) else "right"


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
    align = {c: column_align(r.get(c) for r in rows) for c in cols}
    head = "".join(f"<th style='padding:0 8px;text-align:{align[c]}'>{html.escape(str(heads[c]))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td style='padding:0 8px;text-align:{align[c]}'>{_cell(r.get(c), digits)}</td>"
                                    for c in cols) + "</tr>" for r in rows)
    return f"<table style='font-size:12px'><tr>{head}</tr>{body}</table>"


def table(rows: Iterable[Mapping[str, Any]], *, digits: int = 4, columns: Columns = None) -> Any:
    """``rows`` as a displayable HTML table (an ``IPython.display.HTML``); arguments as :func:`table_html`."""

    return HTML(table_html(rows, digits=digits, columns=columns))


def certificate_row(label: str, certificate: Any, **extra: Any) -> dict[str, Any]:
    """One table row for a :class:`~unlearnkit.core.Certificate`: what it guarantees, then why.

    Parameters
    ----------
    label : str
        What the row is (the run, the mode asked for), in its first column ``run``.
    certificate : Certificate
        The certificate (its ``mode`` is the mode it holds in, not necessarily the one asked for).
    **extra
        Further columns (a measured accuracy, the bound used), placed after ``certified``.

    Returns
    -------
    dict
        ``run``, ``mode``, ``epsilon``, ``delta``, ``sigma``, ``certified``, the ``extra`` columns, then
        ``mechanism``, ``source``, ``assumes`` (the constants) and ``note``.
    """
    c = certificate
    return {"run": label, "mode": c.mode, "epsilon": c.epsilon, "delta": c.delta, "sigma": c.sigma,
            "certified": c.certified, **extra, "mechanism": c.mechanism, "source": c.source,
            "assumes": dict(c.constants), "note": c.note}
