"""A document table as CSV: numbers unrounded, each interval in two columns beside its value.

Every column of the table is written by its key; a column any of whose cells has an interval
gets ``<key>_ci_low`` / ``<key>_ci_high`` beside it. An absent value is an empty cell. Text
that a spreadsheet would read as a formula (starting with ``=``, ``+``, ``-``, ``@``) is
prefixed with ``'`` (CSV injection).
"""

from __future__ import annotations

import csv
import io
from typing import Any

from headtohead.report.document import Table

__all__ = ["render_csv", "csv_header_and_rows", "safe_cell"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value``, with ``'`` before text a spreadsheet would read as a formula (CSV injection).

    Examples
    --------
    >>> safe_cell("=1+1"), safe_cell(0.5), safe_cell("bert")
    ("'=1+1", 0.5, 'bert')
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_header_and_rows(table: Table) -> tuple[list[str], list[dict[str, Any]]]:
    """The header and the rows the CSV holds (``None`` for an empty cell)."""
    header: list[str] = []
    ranged = set()
    for column in table.columns:
        header.append(column.key)
        if any(row.get(column.key).low is not None and row.get(column.key).high is not None for row in table.rows):
            header += [f"{column.key}_ci_low", f"{column.key}_ci_high"]
            ranged.add(column.key)
    rows = []
    for row in table.rows:
        values: dict[str, Any] = {}
        for column in table.columns:
            cell = row.get(column.key)
            data = cell.data
            values[column.key] = safe_cell(data) if not (isinstance(data, float) and data != data) else None
            if column.key in ranged:
                values[f"{column.key}_ci_low"] = cell.low
                values[f"{column.key}_ci_high"] = cell.high
        rows.append(values)
    return header, rows


def render_csv(table: Table) -> str:
    """The CSV text of ``table`` (comma-separated, a header line, ``\\n`` line ends)."""
    header, rows = csv_header_and_rows(table)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
