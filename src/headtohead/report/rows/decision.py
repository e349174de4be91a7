"""The front as typed rows: each model's place, P(on the front) and its value on every axis with its interval."""

from __future__ import annotations

from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.report.words.decision import NOT_MEASURED, place_text
from headtohead.results.decision import DecisionSummary, ModelFront

__all__ = ["FRONT_COLUMNS", "front_columns", "front_rows"]

FRONT_COLUMNS = (
    Column("model", "model", "text", priority=0),
    Column("place", "place", "text", priority=0),
    Column("p_front", "P(on the front)", "probability", higher_is_better=True, priority=0),
    Column("accuracy", "accuracy", "percent", higher_is_better=True, priority=0),
    Column("latency_ms", "latency (ms per prediction)", "ms", higher_is_better=False),
    Column("cost", "cost per 1M predictions", "money", higher_is_better=False),
    Column("memory_mib", "peak memory (MiB)", "mib", higher_is_better=False),
)

#: Each column of an axis, and the factor its value is shown at (seconds → ms).
_AXIS_COLUMNS = {"quality": ("accuracy", 1.0), "latency": ("latency_ms", 1e3), "cost": ("cost", 1.0), "memory": ("memory_mib", 1.0)}  # fmt: skip


def front_columns(summary: DecisionSummary) -> tuple[Column, ...]:
    """The columns of the axes asked for (decided, or not measured), with the model, its place and P(on the front)."""
    asked = {_AXIS_COLUMNS[a][0] for a in [*summary.axes, *summary.not_measured]}
    return tuple(c for c in FRONT_COLUMNS if c.key in asked or c.key in ("model", "place", "p_front"))


def _cell(model: ModelFront, axis: str, summary: DecisionSummary) -> Cell:
    value = model.value(axis)
    if value is None or value.value is None:
        asked = axis in summary.not_measured
        return Cell(None, note=NOT_MEASURED if asked else "not asked for")
    scale = _AXIS_COLUMNS[axis][1]
    low = value.ci_low * scale if value.ci_low is not None else None
    high = value.ci_high * scale if value.ci_high is not None else None
    if low is None or high is None:
        return Cell(value.value * scale, bare="measured once" if axis == "memory" else "known exactly")
    return Cell(value.value * scale, low, high)


def front_rows(summary: DecisionSummary) -> list[Row]:
    """One row per model decided: its place on the front, P(on the front), and each axis with its interval."""
    rows = []
    for model in summary.models:
        cells = {
            "model": text_cell(model.name),
            "place": text_cell(place_text(model)),
            "p_front": Cell(model.p_front),
        }
        cells.update({_AXIS_COLUMNS[axis][0]: _cell(model, axis, summary) for axis in _AXIS_COLUMNS})
        rows.append(Row(cells, subject=model.name, name=model.name))
    return rows
