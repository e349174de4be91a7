"""Per-class quality: each class's precision, recall and F1 for every model, folded."""

from __future__ import annotations

from headtohead.report.document import Block, Cell, Column, Fold, Row, Table, text_cell
from headtohead.report.sections.run.view import RunView

ORDER = 100


def build(view: RunView) -> list[Block]:
    """A folded table, one row per class (nothing without quality)."""
    result = view.result
    rated = [m for m in result.models if m.quality is not None]
    if not rated:
        return []
    columns = [Column("class", "class", "text", priority=0), Column("support", "examples", "integer")]
    for m in rated:
        columns += [Column(f"{m.name}/{what}", f"{m.name} {what}", "score") for what in ("precision", "recall", "F1")]
    rows = []
    for i, label in enumerate(result.dataset.label_names):
        cells = {
            "class": text_cell(label),
            "support": Cell(rated[0].quality.per_class[i].support if rated[0].quality else None),
        }
        for m in rated:
            q = m.quality.per_class[i] if m.quality is not None else None
            for what, value in (("precision", q.precision if q else None), ("recall", q.recall if q else None),
                                ("F1", q.f1 if q else None)):  # fmt: skip
                cells[f"{m.name}/{what}"] = Cell(value)
        rows.append(Row(cells))
    table = Table(f"{view.anchor}-per-class", tuple(columns), tuple(rows), compact=True)
    return [Fold(f"Per-class quality ({len(rows)} classes)", (table,))]
