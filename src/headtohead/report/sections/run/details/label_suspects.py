"""The examples every model got wrong with the same answer: candidates for a wrong gold label."""

from __future__ import annotations

from headtohead.report.document import Block, Paragraph, Section, Table
from headtohead.report.rows.label_suspects import COLUMNS, suspect_rows
from headtohead.report.sections.run.view import RunView
from headtohead.report.words.label_suspects import suspects_note

ORDER = 25


def build(view: RunView) -> list[Block]:
    """The suspects' table and what it means; nothing with one model or no suspect."""
    stats = view.result.stats
    found = stats.label_suspects if stats is not None else None
    if found is None or not found.n_suspects:
        return []
    table = Table(f"{view.anchor}-label-suspects", COLUMNS, suspect_rows(found), compact=True)
    note = Paragraph(suspects_note(found), "note")
    return [Section(f"{view.anchor}-label-suspects", "Gold labels to check", (note, table))]
