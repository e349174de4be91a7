"""The gate's document: its decision, then one row per check with the reason (a notebook, ``GateOutcome``)."""

from __future__ import annotations

from collections.abc import Sequence

from headtohead.report.document import Column, Document, Line, Lines, Row, Section, Table, text_cell
from headtohead.report.words.gate import decision_explanation
from headtohead.stats.gate import Decision

__all__ = ["gate_document", "gate_head"]


def gate_head(decisions: Sequence[Decision], paragraph: str) -> str:
    """The paragraph's first part (PASS/FAIL/INCONCLUSIVE …): the paragraph is that, then each check's explanation."""
    explanations = " ".join(decision_explanation(d) for d in decisions)
    return paragraph.removesuffix(explanations).strip() if explanations else paragraph


def gate_document(
    decisions: Sequence[Decision],
    *,
    baseline: str,
    candidate: str,
    paragraph: str,
    exit_code: int,
    warnings: Sequence[str] = (),
) -> Document:
    """The decision in a sentence, then each check, its outcome and why; then ``warnings`` (two runs gated
    against each other that differ in a setting known to move scores), when any."""
    columns = (Column("check", "check", "text", priority=0), Column("outcome", "outcome", "text", priority=0),
               Column("why", "why", "text", wrap=True, priority=0))  # fmt: skip
    rows = tuple(
        Row({"check": text_cell(d.check), "outcome": text_cell(d.outcome), "why": text_cell(decision_explanation(d))})
        for d in decisions
    )
    blocks = (Lines((Line(gate_head(decisions, paragraph)),), style="headline"), Table("checks", columns, rows))
    sections = [Section("gate", "Gate", blocks)]
    if warnings:
        lines = Lines(tuple(Line(w, kind="warning") for w in warnings), style="warnings")
        sections.append(Section("warnings", "Read with care", (lines,), tone="warnings", nav=False))
    return Document(f"gate: {candidate} vs {baseline}", f"exit code {exit_code}", tuple(sections))
