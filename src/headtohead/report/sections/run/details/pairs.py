"""Paired comparisons: every pair's differences with their intervals, the test and its p-values."""

from __future__ import annotations

from headtohead.report.document import Block, Paragraph, Section, Table
from headtohead.report.rows.pairs import comparison_columns, comparison_note, comparison_rows
from headtohead.report.sections.run.view import RunView

ORDER = 10


def build(view: RunView) -> list[Block]:
    """The pairs table and how to read it (nothing without statistics)."""
    rows = comparison_rows(view.result)
    if not rows:
        return []
    table = Table("pairs", tuple(comparison_columns(view.result)), tuple(rows))
    return [
        Section(f"{view.anchor}-pairs", "Paired comparisons", (table, Paragraph(comparison_note(view.result), "note")))
    ]
