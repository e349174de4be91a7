"""Capacity at a latency SLO: each endpoint model's goodput, its probes' figures, each pair's capacity ratio."""

from __future__ import annotations

from headtohead.report.document import Block, Line, Lines, Section, Table
from headtohead.report.rows.server import capacity_columns, capacity_rows
from headtohead.report.sections.run.view import RunView
from headtohead.report.words.server import capacity_lines, slo_phrase

ORDER = 51


def build(view: RunView) -> list[Block]:
    """The section, when the run searched its endpoints' capacity (scenario ``capacity``)."""
    speed = view.result.speed
    capacity = speed.capacity if speed is not None else None
    if capacity is None or not capacity.models:
        return []
    caption = f"Capacity — the highest rate within {slo_phrase(capacity.slo)}"
    table = Table(f"{view.anchor}-capacity-table", tuple(capacity_columns(capacity)), tuple(capacity_rows(capacity)))
    lines = Lines(tuple(Line(line.strip()) for line in capacity_lines(capacity)[1:]))
    blocks: list[Block] = [table.without_empty_columns(), lines]
    return [Section(f"{view.anchor}-capacity", caption, tuple(blocks))]
