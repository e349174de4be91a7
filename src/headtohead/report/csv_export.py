"""The CSV table: one row per model × run (the variant: a machine, a configuration), one column per metric.

Numbers are written unrounded, with ``<metric>_ci_low`` / ``<metric>_ci_high`` beside
every metric that has an interval. Text cells that a spreadsheet would read as a formula
(starting with ``=``, ``+``, ``-``, ``@``) are prefixed with ``'`` (CSV injection).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from headtohead.report.merge import MergedRuns, as_merged
from headtohead.report.rows.summary import summary_columns, summary_rows
from headtohead.results.records import RunResult
from headtohead.runtime.files import write_text_atomic

__all__ = ["csv_rows", "render_csv", "write_csv", "ID_COLUMNS", "safe_cell"]

#: The columns that say which model and run a row is, before the metrics.
ID_COLUMNS = ("run", "host", "dataset", "n_examples", "model", "kind", "source")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value``, with ``'`` before text a spreadsheet would read as a formula (CSV injection)."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_rows(results: RunResult | Sequence[RunResult] | MergedRuns) -> tuple[list[str], list[dict[str, Any]]]:
    """The header and the rows of the CSV table.

    Parameters
    ----------
    results : RunResult, sequence of RunResult, or MergedRuns

    Returns
    -------
    header : list of str
    rows : list of dict
        Missing values are ``None`` (an empty cell).
    """
    merged = as_merged(results)
    metric_keys: list[str] = []
    with_ci: set[str] = set()
    per_run = []
    for run in merged.runs:
        rows = summary_rows(run.result)
        for column in summary_columns(run.result):
            if column.key not in metric_keys:
                metric_keys.append(column.key)
        for cells in rows.values():
            with_ci.update(k for k, c in cells.items() if c.low is not None and c.high is not None)
        per_run.append((run, rows))
    header = list(ID_COLUMNS)
    for key in metric_keys:
        header.append(key)
        if key in with_ci:
            header += [f"{key}_ci_low", f"{key}_ci_high"]
    table = []
    for run, rows in per_run:
        result = run.result
        for model in result.models:
            cells = rows[model.name]
            row: dict[str, Any] = {
                "run": run.label,
                "host": result.environment.hostname,
                "dataset": result.dataset.source,
                "n_examples": result.dataset.n_examples,
                "model": model.name,
                "kind": model.kind,
                "source": model.source,
            }
            for key in metric_keys:
                cell = cells.get(key)
                row[key] = cell.value if cell is not None else None
                if key in with_ci:
                    row[f"{key}_ci_low"] = cell.low if cell is not None else None
                    row[f"{key}_ci_high"] = cell.high if cell is not None else None
            table.append({k: safe_cell(v) for k, v in row.items()})
    return header, table


def render_csv(results: RunResult | Sequence[RunResult] | MergedRuns) -> str:
    """The CSV text (comma-separated, a header line, ``\\n`` line ends)."""
    header, rows = csv_rows(results)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def write_csv(results: RunResult | Sequence[RunResult] | MergedRuns, path: str | Path) -> Path:
    """Write the CSV table to ``path`` atomically; returns the path.

    Examples
    --------
    >>> import pandas as pd
    >>> write_csv(result, "table.csv")                     # doctest: +SKIP
    >>> pd.read_csv("table.csv")[["model", "accuracy"]]    # doctest: +SKIP
    """
    path = Path(path)
    write_text_atomic(path, render_csv(results))
    return path
