"""A sweep as typed rows: one per variant and batch size, its quality against the parent, its speed, its memory."""

from __future__ import annotations

from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.report.words.numbers import format_share
from headtohead.results.sweep import SpeedPoint, SweepCell, SweepResult

__all__ = ["sweep_columns", "sweep_rows"]


def sweep_columns(level: str) -> list[Column]:
    """The sweep table's columns; ``level`` names the intervals' (``95 %``)."""
    return [
        Column("variant", "variant", "text", priority=0),
        Column("batch", "batch", "integer", priority=0),
        Column("status", "status", "text", priority=1),
        Column("quality", f"Δ accuracy vs parent (pp, {level} CI)", "pp", priority=0),
        Column("p", "McNemar p", "p", priority=2),
        Column("throughput", "samples/s", "rate", higher_is_better=True, priority=0),
        Column("p95_ms", "p95 ms/batch", "ms", higher_is_better=False, priority=1),
        Column("speedup", f"speed-up vs parent ({level} CI)", "ratio", priority=0),
        Column("memory_mb", "memory MiB", "mib", priority=2),
        Column("notes", "notes", "text", wrap=True, priority=3),
    ]


def _quality(cell: SweepCell) -> tuple[Cell, Cell]:
    if cell.parent:
        shown = f"parent ({format_share(cell.accuracy)})" if cell.accuracy is not None else "parent"
        return text_cell(shown), Cell()
    q = cell.quality
    if q is None:
        return Cell(), Cell()
    mark = None if q.non_inferior is None else ("✓" if q.non_inferior else "✗")
    return Cell(q.difference, q.ci_low, q.ci_high, mark=mark), Cell(q.p_value)


def _point(cell: SweepCell, point: SpeedPoint, first: bool, quality: tuple[Cell, Cell]) -> dict[str, Cell]:
    shown = quality if first else (Cell(), Cell())
    cells = {"variant": text_cell(cell.name), "batch": Cell(point.batch_size), "quality": shown[0], "p": shown[1]}
    if point.status != "measured":
        return cells | {"status": text_cell("failed"), "notes": text_cell(point.reason or "")}
    ratio = point.vs_parent
    speedup = Cell() if cell.parent or ratio is None else Cell(ratio.ratio, ratio.ci_low, ratio.ci_high)
    notes = "; ".join(cell.notes) if first and not cell.parent else ""
    return cells | {
        "status": text_cell("measured"),
        "throughput": Cell(point.throughput),
        "p95_ms": Cell(point.p95_ms),
        "speedup": speedup,
        "memory_mb": Cell(point.memory_mb),
        "notes": text_cell(notes),
    }


def sweep_rows(result: SweepResult) -> list[Row]:
    """One row per variant and batch size (a failed or skipped variant: one row with its reason)."""
    rows: list[Row] = []
    for model in result.models:
        for cell in model.cells:
            quality = _quality(cell)
            if cell.status != "measured" or not cell.points:
                rows.append(Row({"variant": text_cell(cell.name), "status": text_cell(f"{cell.status} ({cell.stage})"),
                                 "quality": quality[0], "p": quality[1], "notes": text_cell(cell.reason or "")}))  # fmt: skip
                continue
            rows += [Row(_point(cell, point, i == 0, quality)) for i, point in enumerate(cell.points)]
    return rows
