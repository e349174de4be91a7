"""The answers of each LLM model (any family): answers read and not, cache, tokens; an endpoint's requests, cost and
latency; its unparseable answers with their input and gold label."""

from __future__ import annotations

from headtohead.report.document import Block, Column, Fold, Line, Lines, Paragraph, Row, Section, Table, text_cell
from headtohead.report.endpoint import EndpointBlock, endpoint_blocks
from headtohead.report.sections.run.view import RunView

ORDER = 60

_COLUMNS = (
    Column("example", "example", "text", priority=0),
    Column("input", "input", "text", wrap=True, priority=0),
    Column("gold label", "gold label", "text", priority=0),
    Column("raw answer", "raw answer", "text", wrap=True, priority=0),
)


def _unparseable(block: EndpointBlock, key: str) -> list[Block]:
    rows = tuple(
        Row({k: text_cell(r[k], code=k == "raw answer") for k in ("example", "input", "gold label", "raw answer")})
        for r in block.unparseable
    )
    blocks: list[Block] = [Table(key, _COLUMNS, rows, compact=True)]
    if block.more:
        blocks.append(Paragraph(block.more, "note"))
    return [Fold(f"Unparseable answers of {block.model} (each counts as a wrong answer)", tuple(blocks))]


def build(view: RunView, *, terminal: bool = False) -> list[Block]:
    """One section per LLM model (``terminal``: its lines only)."""
    out: list[Block] = []
    for i, block in enumerate(endpoint_blocks(view.result)):
        blocks: list[Block] = [Lines(tuple(Line(line) for line in block.lines))]
        if block.unparseable and not terminal:
            blocks += _unparseable(block, f"{view.anchor}-unparseable-{i}")
        out.append(Section(f"{view.anchor}-answers-{i}", f"Answers of {block.title}", tuple(blocks)))
    return out
