"""The models as run: kind, source, size, label mapping, batch, device, load and evaluation time; their warnings."""

from __future__ import annotations

from headtohead.report.document import Block, Cell, Column, Fold, Line, Lines, Row, Table, text_cell
from headtohead.report.sections.run.view import RunView
from headtohead.report.words.warnings import model_warnings

ORDER = 110

_COLUMNS = (
    Column("model", "model", "text", priority=0),
    Column("kind", "kind", "text"),
    Column("source", "source", "text", wrap=True),
    Column("parameters", "parameters", "count"),
    Column("alignment", "label mapping", "text"),
    Column("batch_size", "batch", "integer"),
    Column("device", "device", "text"),
    Column("load_s", "load (s)", "seconds"),
    Column("eval_s", "eval (s)", "seconds"),
)


def build(view: RunView) -> list[Block]:
    """A folded table of the models, and every model's warnings under it."""
    result = view.result
    rows = tuple(
        Row({
            "model": text_cell(m.name),
            "kind": text_cell(m.kind),
            "source": text_cell(m.source, code=True),
            "parameters": Cell(m.num_parameters, note="unknown") if m.outputs == "computed" else Cell(),
            "alignment": text_cell(m.label_alignment),
            "batch_size": Cell(m.batch_size),
            "device": text_cell(m.device),
            "load_s": Cell(m.load_time_s),
            "eval_s": Cell(m.eval_time_s),
        }, subject=m.name)
        for m in result.models
    )  # fmt: skip
    blocks: list[Block] = [Table(f"{view.anchor}-models", _COLUMNS, rows, compact=True)]
    warnings = [Line(f"{m.name}: {w}", kind="warning") for m in result.models for w in model_warnings(m)]
    if warnings:
        blocks.append(Lines(tuple(warnings), style="warnings"))
    return [Fold("Models", tuple(blocks))]
