"""The summary of a run: one table of every model's metrics (drawn with one row per metric), its notes, its chart.

The same table is what the terminal prints, what a notebook shows, what CSV writes unrounded
(:func:`csv_table`, one row per model and run) and what MLflow logs: a new metric column reaches
them all from :mod:`headtohead.report.rows.summary`.
"""

from __future__ import annotations

from headtohead.report.document import Block, Cell, Column, Paragraph, Row, Side, Table, text_cell
from headtohead.report.figures import run_figures
from headtohead.report.merge import MergedRuns
from headtohead.report.rows.prompts import prompted_summary_notes
from headtohead.report.rows.summary import (
    ACROSS_RUNS,
    any_clipped_calibration,
    summary_column,
    summary_columns,
    summary_rows,
)
from headtohead.report.sections.run.view import RunView, as_figures, dataset_line
from headtohead.report.words.quality import calibration_bound_note
from headtohead.results.records import RunResult

__all__ = [
    "summary_table",
    "summary_texts",
    "summary_notes",
    "summary_blocks",
    "across_runs_table",
    "csv_table",
    "ID_COLUMNS",
]

#: The columns of the CSV that say which model and run a row is, before the metrics.
ID_COLUMNS = ("run", "host", "dataset", "n_examples", "model", "kind", "source")


def summary_table(view: RunView) -> Table | None:
    """Every model's metrics with their intervals, the best of each marked; ``None`` when no model has any."""
    result = view.result
    rows = summary_rows(result)
    if not rows:
        return None
    columns = (Column("model", "metric", "text", priority=0), *summary_columns(result))
    body = tuple(Row({"model": text_cell(name), **cells}, subject=name) for name, cells in rows.items())
    return Table(f"{view.anchor}-summary", columns, body, transposed=True).with_best()


def summary_texts(result: RunResult) -> dict[str, dict[str, str]]:
    """Each model's summary cells as every format writes them: ``{model: {column key: "91.2 % (90.1–92.3)"}}``.

    Examples
    --------
    >>> summary_texts(result)["bert"]["accuracy"]     # doctest: +SKIP
    '91.2 % (90.1–92.3)'
    """
    from headtohead.report.merge import as_merged
    from headtohead.report.sections.run.view import RunView

    table = summary_table(RunView(as_merged(result).runs[0], 1, {}))
    if table is None:
        return {}
    texts = table.texts()
    return {
        str(row.get("model").value): {c.key: t.plain() for c, t in zip(table.columns, row_texts, strict=True)}
        for row, row_texts in zip(table.rows, texts, strict=True)
    }


def summary_notes(result: RunResult) -> list[str]:
    """The lines under the summary table: what the brackets and the bold mean."""
    stats = result.stats
    level = f"{stats.settings.confidence if stats is not None else 0.95:.0%}"
    how = (
        ' (Wilson for accuracy, bootstrap for the others; "no interval" where none can be given honestly; a '
        "failure counts as a wrong answer)"
        if stats is not None
        else ""
    )
    clipped = (
        [calibration_bound_note(stats.settings.confidence)]
        if stats is not None and any_clipped_calibration(result)
        else []
    )
    return (
        [
            f"Brackets: {level} confidence intervals{how}.",
            "Bold: the best value of a row; ↑ higher is better, ↓ lower is better.",
        ]
        + clipped
        + prompted_summary_notes(stats.prompts if stats is not None else None)
    )


def summary_blocks(view: RunView, *, notes_only: bool = False) -> list[Block]:
    """A run's part of the summary: its data, the table with its notes, the chart of its intervals beside them.

    ``notes_only``: just the notes (a notebook shows the table itself above them).
    """
    notes = [Paragraph(n, "note") for n in summary_notes(view.result)]
    if notes_only:
        return list(notes)
    table = summary_table(view)
    data = Paragraph(dataset_line(view.result), "muted")
    if table is None:
        return [data, Paragraph("No model finished evaluating in this run.")]
    figures = as_figures([f for f in run_figures(view.run, view.index, view.styles) if f.section == "summary"])
    return [data, Side((table, *notes), tuple(figures))]


def across_runs_table(merged: MergedRuns) -> Table:
    """The same models in several runs side by side: one row per model and run, a model's rows together."""
    per_run = [(run.label, group.title, summary_rows(run.result)) for group in merged.groups for run in group.runs]
    models = list(dict.fromkeys(m for _, _, rows in per_run for m in rows))
    metrics = [summary_column(key) for key in ACROSS_RUNS]
    columns = (Column("model", "model", "text", priority=0), Column("run", "run", "text"),
               Column("machine", "machine", "text", wrap=True), *metrics)  # fmt: skip
    body = []
    for model in models:
        for label, machine, rows in per_run:
            if model in rows:
                cells = {"model": text_cell(model), "run": text_cell(label), "machine": text_cell(machine)}
                cells.update({key: rows[model].get(key, Cell()) for key in ACROSS_RUNS})
                body.append(Row(cells, subject=model))
    return Table("across-runs", columns, tuple(body))


def csv_table(merged: MergedRuns) -> Table:
    """One row per model × run (a machine, a configuration), one column per metric, numbers unrounded."""
    columns: dict[str, Column] = {key: Column(key, key, "text") for key in ID_COLUMNS}
    body = []
    for run in merged.runs:
        result = run.result
        records = {m.name: m for m in result.models}
        for column in summary_columns(result):
            columns.setdefault(column.key, column)
        for name, cells in summary_rows(result).items():
            record = records.get(name)
            ids: dict[str, str | int | None] = {"run": run.label, "host": result.environment.hostname, "dataset": result.dataset.source,
                   "n_examples": result.dataset.n_examples, "model": name,
                   "kind": record.kind if record is not None else None,
                   "source": record.source if record is not None else None}  # fmt: skip
            body.append(Row({**{k: Cell(v, kind="text") for k, v in ids.items()}, **cells}, subject=name))
    return Table("summary", tuple(columns.values()), tuple(body))
