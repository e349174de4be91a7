"""Training: how the run's models were fine-tuned (identical order and settings), when they were."""

from __future__ import annotations

from headtohead.report.document import Block, Paragraph, Section, Table
from headtohead.report.rows.training import TRAINING_COLUMNS, training_rows
from headtohead.report.sections.run.view import RunView

ORDER = 70


def build(view: RunView) -> list[Block]:
    """The training table and its note (nothing for a run without training)."""
    training = view.run.training
    if training is None:
        return []
    order = (
        "every model saw the same examples in the same order, seed by seed"
        if training.identical_order()
        else "the models did NOT all see the same example order"
    )
    note = (
        f"Trained on {training.train_source} ({training.n_train:,} examples) with seeds "
        f"{', '.join(str(s) for s in training.seeds)}; {order}. Speed and cost columns are the first seed's."
    )
    table = Table(f"{view.anchor}-training", TRAINING_COLUMNS, tuple(training_rows(training)))
    return [Section(f"{view.anchor}-training", "Training", (table, Paragraph(note, "note")))]
