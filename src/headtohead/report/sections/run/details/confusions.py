"""The most confused classes of each model (with three classes or more: with two the matrix says everything)."""

from __future__ import annotations

from headtohead.report.document import Block, Cell, Column, Row, Section, Table, text_cell
from headtohead.report.rows.summary import top_confusions
from headtohead.report.sections.run.view import RunView

ORDER = 90

_MIN_CLASSES = 3
_SHOWN = 5
_COLUMNS = (
    Column("model", "model", "text", priority=0),
    Column("true", "true", "text", priority=0),
    Column("predicted", "predicted as", "text", priority=0),
    Column("examples", "examples", "integer", priority=0),
    Column("share", "of the class", "percent", priority=1),
)


def build(view: RunView) -> list[Block]:
    """One table: each model's most frequent confusions, largest first."""
    result = view.result
    if len(result.dataset.label_names) < _MIN_CLASSES:
        return []
    rows = [
        Row(
            {
                "model": text_cell(m.name),
                "true": text_cell(c.true),
                "predicted": text_cell(c.predicted),
                "examples": Cell(c.count),
                "share": Cell(c.share),
            },
            subject=m.name,
        )  # fmt: skip
        for m in result.models
        if m.quality is not None
        for c in top_confusions(
            m.quality.confusion_matrix, m.quality.confusion_labels or result.dataset.label_names, limit=_SHOWN
        )  # fmt: skip
    ]
    if not rows:
        return []
    return [
        Section(
            f"{view.anchor}-confusions",
            "Most confused classes",
            (Table(f"{view.anchor}-confusions", _COLUMNS, tuple(rows), compact=True),),
        )
    ]
