"""Prompts as a source of noise: a prompted model's sentences, each prompt's accuracy, the comparisons pooled over prompts."""

from __future__ import annotations

from headtohead.report.document import Block, Line, Lines, Paragraph, Section, Table
from headtohead.report.rows.prompts import (
    POOL_COLUMNS,
    PROMPT_COLUMNS,
    PROMPTS_TITLE,
    pool_rows,
    prompt_lines,
    prompt_note,
    prompt_rows,
)
from headtohead.report.sections.run.view import RunView

ORDER = 30


def build(view: RunView) -> list[Block]:
    """The section, when a model of the run was asked with several prompts."""
    rows = prompt_rows(view.result)
    if not rows:
        return []
    blocks: list[Block] = [
        Lines(tuple(Line(text) for text in prompt_lines(view.result))),
        Table(f"{view.anchor}-prompts", PROMPT_COLUMNS, tuple(rows)),
    ]
    pools = pool_rows(view.result)
    if pools:
        blocks += [
            Table(f"{view.anchor}-pools", POOL_COLUMNS, tuple(pools)),
            Paragraph(prompt_note(view.result), "note"),
        ]
    return [Section(f"{view.anchor}-prompts", PROMPTS_TITLE, tuple(blocks))]
