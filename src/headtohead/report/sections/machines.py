"""``h2h machines``: one models × machines table per measure (ratios to the baseline machine), and where each
model trains cheapest."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

from headtohead.report.document import (
    Block,
    Cell,
    Column,
    Document,
    Line,
    Lines,
    Paragraph,
    Row,
    Section,
    Table,
    text_cell,
)
from headtohead.report.words.numbers import Kind, format_money, format_ratios, format_share
from headtohead.results.training import MachineCell, MachineComparison

__all__ = ["machines_document", "cheapest_lines"]

Getter = Callable[[MachineCell], float | None]
# (key, title, value of a cell, kind, ratio of a cell to the baseline or None, shown only when some machine has one)
_MEASURES: tuple[tuple[str, str, Getter, Kind, Getter, bool], ...] = (
    ("samples_per_s", "training samples/s (× baseline)", attrgetter("samples_per_s"), "rate",
     attrgetter("speedup_vs_baseline"), False),
    ("time_per_epoch_s", "time per epoch, s (× baseline)", attrgetter("time_per_epoch_s"), "seconds",
     attrgetter("epoch_time_vs_baseline"), False),
    ("time_to_target_s", "time to target, s", attrgetter("time_to_target_s"), "seconds", lambda c: None, False),
    ("peak_memory_mb", "peak memory, MiB", attrgetter("peak_memory_mb"), "mib", lambda c: None, False),
    ("cost_per_epoch", "cost per epoch (× baseline)", attrgetter("cost_per_epoch"), "money",
     attrgetter("cost_vs_baseline"), True),
    ("cost_to_target", "cost to target", attrgetter("cost_to_target"), "money", lambda c: None, True),
    ("cost_end_to_end", "cost of the whole fine-tune", attrgetter("cost_end_to_end"), "money", lambda c: None, True),
    ("energy_per_epoch_j", "energy per epoch, J", attrgetter("energy_per_epoch_j"), "number", lambda c: None, True),
)  # fmt: skip


def _cell(cell: MachineCell, value: Getter, ratio: Getter, key: str) -> Cell:
    found = value(cell)
    if found is None:
        return Cell()
    notes = []
    if key == "peak_memory_mb":
        notes.append(cell.memory_kind.upper())
    factor = ratio(cell)
    if factor is not None:
        notes.append(f"{format_ratios(factor)[0]}×")
    if cell.world_size > 1 and key == "samples_per_s":
        efficiency = f", {format_share(cell.scaling_efficiency, 0)} eff." if cell.scaling_efficiency is not None else ""
        notes.append(f"{cell.world_size} proc{efficiency}")
    return Cell(found, suffix=", ".join(notes) or None)


def _table(comparison: MachineComparison, key: str, title: str, value: Getter, kind: Kind, ratio: Getter) -> Table:
    columns = (Column("model", "model", "text", priority=0),
               *(Column(m.label, m.label, kind, priority=0) for m in comparison.machines))  # fmt: skip
    rows = []
    for model in comparison.models:
        cells = {"model": text_cell(model)}
        for machine in comparison.machines:
            try:
                cells[machine.label] = _cell(comparison.cell(model, machine.label), value, ratio, key)
            except KeyError:
                cells[machine.label] = Cell()
        rows.append(Row(cells, subject=model))
    return Table(key, columns, tuple(rows), caption=title)


def cheapest_lines(comparison: MachineComparison) -> list[str]:
    """Per model, the machine where an epoch (and reaching the target) costs least, from the prices given.

    Examples
    --------
    ``bert: cheapest per epoch on RTX 3090 (0.012; A100 ×1 0.031, 2.58×)``
    """
    lines = []
    for model in comparison.models:
        for what, value in (("per epoch", attrgetter("cost_per_epoch")), ("to target", attrgetter("cost_to_target"))):
            priced = [(value(c), c.machine) for c in comparison.cells if c.model == model and value(c) is not None]
            if len(priced) < 2:
                continue
            priced.sort()
            best, machine = priced[0]
            others = ", ".join(f"{m} {format_money(v)} ({format_ratios(v / best)[0]}×)" for v, m in priced[1:])
            lines.append(f"{model}: cheapest {what} on {machine} ({format_money(best)}; {others})")
    return lines


def machines_document(comparison: MachineComparison) -> Document:
    """The machines, then one table per measure, then the cheapest machine per model (the warnings are the caller's)."""
    blocks: list[Block] = [
        *(Paragraph(f"{m.label}: {m.hardware} on {m.hostname} ({m.path})") for m in comparison.machines),
        Paragraph(f"Ratios (×) are to the baseline machine: {comparison.baseline}"),
    ]
    for key, title, value, kind, ratio, optional in _MEASURES:
        if optional and all(value(c) is None for c in comparison.cells):
            continue
        blocks.append(_table(comparison, key, title, value, kind, ratio))
    cheapest = cheapest_lines(comparison)
    if cheapest:
        blocks.append(Lines(tuple(map(Line, cheapest))))
    return Document("machines", "", (Section("machines", "", tuple(blocks)),))
