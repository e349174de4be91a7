"""Repeated runs: how far a model's runs differ, how steady its answers are, and the comparisons over every run."""

from __future__ import annotations

from headtohead.report.document import Block, Line, Lines, Paragraph, Section, Table
from headtohead.report.rows.repeats import (
    CHANGED_COLUMNS,
    POOL_COLUMNS,
    SPREAD_COLUMNS,
    STEADY_COLUMNS,
    changed_rows,
    pool_rows,
    repeat_lines,
    repeat_note,
    spread_rows,
    steady_rows,
)
from headtohead.report.sections.run.view import RunView
from headtohead.report.words.repeats import REPEATS_TITLE

ORDER = 35


def build(view: RunView) -> list[Block]:
    """The section, when a model of the run was run several times (``repeats:``)."""
    steady = steady_rows(view.result)
    if not steady:
        return []
    a = view.anchor
    blocks: list[Block] = [
        Lines(tuple(Line(text) for text in repeat_lines(view.result))),
        Table(
            f"{a}-repeat-spread", SPREAD_COLUMNS, tuple(spread_rows(view.result)), caption="Each metric over the runs"
        ),
        Table(f"{a}-repeat-steady", STEADY_COLUMNS, tuple(steady), caption="How steady each answer is"),
    ]
    pools = pool_rows(view.result)
    if pools:
        blocks += [
            Table(f"{a}-repeat-pools", POOL_COLUMNS, tuple(pools), caption="Comparisons over every run"),
            Paragraph(repeat_note(view.result), "note"),
        ]
    changed = changed_rows(view.result)
    if changed:
        caption = "The examples whose answer changed most"
        blocks.append(Table(f"{a}-repeat-changed", CHANGED_COLUMNS, tuple(changed), caption=caption))
    return [Section(f"{a}-repeats", REPEATS_TITLE, tuple(blocks))]
