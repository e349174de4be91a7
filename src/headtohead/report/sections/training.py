"""A training's document (``h2h train``, a notebook): the training table per model and seed, the seeds, the summary."""

from __future__ import annotations

from headtohead.report.document import Block, Document, Line, Lines, Paragraph, Section, Table
from headtohead.report.rows.training import RUN_COLUMNS, TRAINING_COLUMNS, training_rows, training_run_rows
from headtohead.report.words.training import seed_lines
from headtohead.results.records import RunResult
from headtohead.results.training import TrainingSummary

__all__ = ["training_terminal", "training_brief"]


def training_terminal(training: TrainingSummary, result: RunResult | None) -> Document:
    """What ``h2h train`` prints: every model and seed's training, the comparisons across seeds, then the run's summary."""
    from headtohead.report.merge import as_merged
    from headtohead.report.sections.run import run_views
    from headtohead.report.sections.run.summary import summary_table

    table = Table("training-runs", RUN_COLUMNS, tuple(training_run_rows(training)),
                  caption="Training (identical order and settings)")  # fmt: skip
    blocks: list[Block] = [table]
    seeds = seed_lines(training)
    if seeds:
        blocks.append(Lines(tuple(Line(line.strip()) for line in seeds)))
    sections = [Section("training", "Training", tuple(blocks))]
    if result is not None:
        summary = summary_table(run_views(as_merged(result))[0])
        if summary is not None:
            sections.append(Section("summary", "Summary", (summary,)))
    return Document(result.name if result is not None else "training", "", tuple(sections))


def training_brief(training: TrainingSummary) -> list[Block]:
    """The training table and its notes, for a notebook (after the run's verdict and summary)."""
    table = Table("training", TRAINING_COLUMNS, tuple(training_rows(training)),
                  caption="Training (identical order and settings)")  # fmt: skip
    notes = [Paragraph(line.strip(), "note") for line in [*seed_lines(training), *training.warnings]]
    return [table, *notes]
