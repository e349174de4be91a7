"""The examples every model got wrong with the same answer, for every report format, and ``label_suspects.csv``.

The report shows the first of them (:data:`~headtohead.stats.label_suspects.SUSPECTS_KEPT`, kept in
``results.json``); :func:`write_label_suspects_csv` writes every one beside the results.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.results.label_suspects import LabelSuspects
from headtohead.runtime.files import write_text_atomic

__all__ = ["CSV_COLUMNS", "COLUMNS", "suspect_rows", "write_label_suspects_csv"]

#: The columns of ``label_suspects.csv``: the example's position in the data and id, its input as a report
#: shows it, the gold label, the answer every model gave, and their mean probability of it.
CSV_COLUMNS = ("index", "example_id", "input", "gold", "answer", "confidence")

#: The report's table of suspects.
COLUMNS = (
    Column("example", "example", "text", priority=0),
    Column("input", "input", "text", wrap=True, priority=0),
    Column("gold", "gold label", "text", priority=0),
    Column("answer", "every model's answer", "text", priority=0),
    Column("confidence", "mean probability", "probability"),
)


def suspect_rows(found: LabelSuspects) -> tuple[Row, ...]:
    """One row per kept suspect: its id (or position), input, gold label, the shared answer and its probability."""
    return tuple(
        Row({
            "example": text_cell(r.example_id if r.example_id is not None else f"#{r.index}", tone="muted"),
            "input": text_cell(r.input, image=r.thumbnail),
            "gold": text_cell(r.true_label, tone="wrong"),
            "answer": text_cell(r.answer),
            "confidence": Cell(r.confidence),
        })
        for r in found.rows
    )  # fmt: skip


def write_label_suspects_csv(
    found: LabelSuspects, path: str | Path, inputs: Sequence[str | None] | None = None
) -> Path:
    """Every suspect of a run as one CSV (:data:`CSV_COLUMNS`), written atomically.

    Parameters
    ----------
    found : LabelSuspects
        The complete list (not cut to the first rows).
    path : str or Path
    inputs : sequence of str or None, optional
        What to show of each example, by dataset position (the text, an image's path); otherwise the rows' own
        ``input``.

    Returns
    -------
    Path
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in found.rows:
        shown = inputs[r.index] if inputs is not None else r.input
        confidence = "" if r.confidence is None else repr(float(r.confidence))
        writer.writerow([r.index, r.example_id or "", shown or "", r.true_label, r.answer, confidence])
    path = Path(path)
    write_text_atomic(path, buffer.getvalue())
    return path
