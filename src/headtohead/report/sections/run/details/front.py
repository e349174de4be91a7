"""Quality, speed and cost together: which model dominates which, the front with P(on the front), its charts."""

from __future__ import annotations

from functools import partial

from headtohead.report.document import Block, Figure, Fold, Line, Lines, Section, Table
from headtohead.report.plots_front import front_figure
from headtohead.report.rows.decision import front_columns, front_rows
from headtohead.report.sections.run.view import RunView
from headtohead.report.words.decision import FRONT_CAPTION, FRONT_TITLE

ORDER = 55


def build(view: RunView) -> list[Block]:
    """The section, when the run holds a decision (two models or more with quality)."""
    summary = view.result.decision
    if summary is None:
        return []
    a = view.anchor
    dominating = [p.sentence for p in summary.pairs if p.dominates]
    blocks: list[Block] = [
        Lines(tuple(Line(text) for text in summary.sentences + dominating)),
        Table(f"{a}-front", front_columns(summary), tuple(front_rows(summary)), caption="Every model on every axis"),
    ]
    for axis in ("latency", "cost"):
        if axis in summary.axes:
            blocks.append(
                Figure(
                    f"{a}-front-{axis}",
                    f"Accuracy vs {axis}: the front",
                    FRONT_CAPTION,
                    partial(front_figure, summary, axis, view.styles),
                )
            )
    others = [Line(p.sentence) for p in summary.pairs if not p.dominates]
    if others:
        blocks.append(Fold("Every pair that does not dominate, and what keeps it open", (Lines(tuple(others)),)))
    return [Section(f"{a}-front", FRONT_TITLE, tuple(blocks))]
