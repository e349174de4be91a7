"""A run's cascades (``kind: cascade``) as typed rows: threshold, its test, deferral, accuracy, cost and latency."""

from __future__ import annotations

from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.report.rows.summary import NOT_MEASURED
from headtohead.report.words.cascade import threshold_text
from headtohead.results.records import RunResult

__all__ = ["COLUMNS", "cascade_rows"]

#: The cascades' table: one row per cascade, its figures on the evaluation examples.
COLUMNS = (
    Column("model", "cascade", "text", priority=0),
    Column("parts", "cheap → expensive", "text", priority=0),
    Column("threshold", "threshold", "text", priority=0),
    Column("p_value", "p (LTT)", "p", priority=2),
    Column("deferred", "deferred", "percent", priority=0),
    Column("accuracy", "accuracy", "percent", higher_is_better=True, priority=0),
    Column("expensive_accuracy", "expensive's accuracy", "percent", priority=1),
    Column("drop", "accuracy lost (pp)", "pp", priority=0),
    Column("max_drop", "allowed (pp)", "points", priority=1),
    Column("cost", "cost / 1M predictions", "money", priority=1),
    Column("latency_mean_ms", "mean latency (ms)", "ms", priority=2),
    Column("latency_p99_ms", "p99 latency (ms)", "ms", priority=2),
)


def cascade_rows(result: RunResult) -> tuple[Row, ...]:
    """One row per cascade of the run (none without)."""
    rows = []
    for model in result.models:
        c = model.cascade
        if c is None:
            continue
        ms = {k: Cell(v * 1e3) if v is not None else Cell(None, note=NOT_MEASURED)
              for k, v in (("latency_mean_ms", c.latency_mean_s), ("latency_p99_ms", c.latency_p99_s))}  # fmt: skip
        rows.append(
            Row(
                {
                    "model": text_cell(model.name),
                    "parts": text_cell(f"{c.cheap} → {c.expensive}"),
                    "threshold": text_cell(threshold_text(c)),
                    "p_value": Cell(c.p_value),
                    "deferred": Cell(c.deferral_share),
                    "accuracy": Cell(c.accuracy),
                    "expensive_accuracy": Cell(c.expensive_correct / c.n_evaluation if c.n_evaluation else None),
                    "drop": Cell(c.drop),
                    "max_drop": Cell(c.max_drop),
                    "cost": Cell(c.cost_per_million)
                    if c.cost_per_million is not None
                    else Cell(None, note=NOT_MEASURED),
                    **ms,
                },
                subject=model.name,
            )
        )
    return tuple(rows)
