"""A run's cascades: the threshold each chose, its test, and its figures on the evaluation examples."""

from __future__ import annotations

from headtohead.report.document import Block, Paragraph, Section, Table
from headtohead.report.rows.cascade import COLUMNS, cascade_rows
from headtohead.report.sections.run.view import RunView
from headtohead.report.words.cascade import cascade_note

ORDER = 32


def build(view: RunView) -> list[Block]:
    """The cascades' table and what it rests on; nothing in a run without a cascade."""
    rows = cascade_rows(view.result)
    if not rows:
        return []
    table = Table(f"{view.anchor}-cascades", COLUMNS, rows, compact=True)
    notes = tuple(Paragraph(line, "note") for line in cascade_note(view.result))
    return [Section(f"{view.anchor}-cascades", "Cascades", (table, *notes))]
