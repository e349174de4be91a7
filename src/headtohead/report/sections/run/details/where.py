"""Where the models differ: quality per slice, then the examples exactly one model got right."""

from __future__ import annotations

from headtohead.report.document import Block, Cell, Column, Fold, Paragraph, Row, Section, Table, text_cell
from headtohead.report.rows.where import DisagreementBlock, disagreement_blocks, slice_table, slices_note
from headtohead.report.sections.run.view import RunView
from headtohead.results.files import DISAGREEMENTS_FILE

ORDER = 20

_OPEN = 2  # the first directions shown unfolded


def _examples(block: DisagreementBlock, key: str) -> Table:
    columns = (
        Column("rank", "#", "integer", priority=0),
        Column("input", "input", "text", wrap=True, priority=0),
        Column("true", "true", "text"),
        Column("a", block.model_a, "text"),
        Column("b", block.model_b, "text"),
        Column("gap", "gap (pp)", "pp"),
        Column("example", "example", "text"),
    )
    a_right = block.right == block.model_a
    rows = tuple(
        Row({
            "rank": Cell(r.rank),
            "input": text_cell(r.input, image=r.thumbnail, note=r.example),
            "true": text_cell(r.true_label),
            "a": text_cell(r.prediction_a, tone="right" if a_right else "wrong"),
            "b": text_cell(r.prediction_b, tone="wrong" if a_right else "right"),
            "gap": Cell(r.gap),
            "example": text_cell(r.example, tone="muted"),
        })
        for r in block.rows
    )  # fmt: skip
    return Table(key, columns, rows, compact=True)


def build(view: RunView) -> list[Block]:
    """The slices table, and both directions of every pair's disagreeing examples."""
    result = view.result
    out: list[Block] = []
    columns, rows = slice_table(result)
    if rows:
        table = Table(f"{view.anchor}-slices", tuple(columns), tuple(rows), compact=True)
        out.append(Section(f"{view.anchor}-slices", "Where the models differ: slices",
                           (table, Paragraph(slices_note(result), "note"))))  # fmt: skip
    blocks = disagreement_blocks(result)
    if blocks:
        note = Paragraph(
            "Examples exactly one of two models got right. Gap: the right model's probability of the true class "
            "minus the wrong model's; a large gap is a clear-cut case. Every such example is in "
            f"{DISAGREEMENTS_FILE} beside the results.",
            "note",
        )
        folds: list[Block] = [
            Fold(block.title, (_examples(block, f"{view.anchor}-disagree-{i}"),) if block.rows else (), open=i < _OPEN)
            for i, block in enumerate(blocks)
        ]
        out.append(Section(f"{view.anchor}-disagreements", "Where the models differ: examples", (note, *folds)))
    return out
