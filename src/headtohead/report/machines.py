"""Tables of ``h2h compare``: one models × machines table per measure, ratios to the baseline machine."""

from __future__ import annotations

from collections.abc import Callable

from rich.table import Table

from headtohead.results.training import MachineCell, MachineComparison

__all__ = ["machine_tables"]

# (title, value of a cell, format, ratio of a cell to the baseline or None)
_METRICS: tuple[tuple[str, Callable[[MachineCell], float | None], str, Callable[[MachineCell], float | None]], ...] = (
    ("training samples/s (× baseline)", lambda c: c.samples_per_s, "{:,.1f}", lambda c: c.speedup_vs_baseline),
    ("time per epoch (× baseline)", lambda c: c.time_per_epoch_s, "{:,.1f} s", lambda c: c.epoch_time_vs_baseline),
    ("time to target", lambda c: c.time_to_target_s, "{:,.1f} s", lambda c: None),
    ("peak memory", lambda c: c.peak_memory_mb, "{:,.0f} MiB", lambda c: None),
)


def machine_tables(comparison: MachineComparison) -> list[Table]:
    """One models × machines table per measure; ratios to the baseline machine in brackets."""
    tables = []
    for title, value, fmt, ratio in _METRICS:
        table = Table(title=title, title_justify="left")
        table.add_column("model")
        for machine in comparison.machines:
            table.add_column(machine.label, justify="right")
        for model in comparison.models:
            row = [model]
            for machine in comparison.machines:
                try:
                    cell = comparison.cell(model, machine.label)
                except KeyError:
                    row.append("–")
                    continue
                row.append(_format(value(cell), fmt, ratio(cell), cell))
            table.add_row(*row)
        tables.append(table)
    return tables


def _format(value: float | None, fmt: str, ratio: float | None, cell: MachineCell) -> str:
    if value is None:
        return "–"
    text = fmt.format(value)
    if fmt.endswith("MiB"):
        text += f" {cell.memory_kind.upper()}"
    if ratio is not None:
        text += f" ({ratio:.2f}×)"
    if cell.world_size > 1 and fmt == "{:,.1f}":
        efficiency = f", {cell.scaling_efficiency:.0%} eff." if cell.scaling_efficiency is not None else ""
        text += f" [{cell.world_size} proc{efficiency}]"
    return text
