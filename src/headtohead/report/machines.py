"""Tables of ``h2h machines``: one models × machines table per measure, ratios to the baseline machine."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

from rich.table import Table

from headtohead.results.training import MachineCell, MachineComparison

__all__ = ["machine_tables", "cheapest_lines"]

# (title, value of a cell, format, ratio of a cell to the baseline or None)
_METRICS: tuple[tuple[str, Callable[[MachineCell], float | None], str, Callable[[MachineCell], float | None]], ...] = (
    ("training samples/s (× baseline)", lambda c: c.samples_per_s, "{:,.1f}", lambda c: c.speedup_vs_baseline),
    ("time per epoch (× baseline)", lambda c: c.time_per_epoch_s, "{:,.1f} s", lambda c: c.epoch_time_vs_baseline),
    ("time to target", lambda c: c.time_to_target_s, "{:,.1f} s", lambda c: None),
    ("peak memory", lambda c: c.peak_memory_mb, "{:,.0f} MiB", lambda c: None),
    ("cost per epoch (× baseline)", lambda c: c.cost_per_epoch, "{:,.3g}", lambda c: c.cost_vs_baseline),
    ("cost to target", lambda c: c.cost_to_target, "{:,.3g}", lambda c: None),
    ("cost of the whole fine-tune", lambda c: c.cost_end_to_end, "{:,.3g}", lambda c: None),
    ("energy per epoch", lambda c: c.energy_per_epoch_j, "{:,.4g} J", lambda c: None),
)
#: Tables shown only when some machine has a value (a price was given, a counter was readable).
_OPTIONAL = {"cost per epoch (× baseline)", "cost to target", "cost of the whole fine-tune", "energy per epoch"}


def machine_tables(comparison: MachineComparison) -> list[Table]:
    """One models × machines table per measure; ratios to the baseline machine in brackets."""
    tables = []
    for title, value, fmt, ratio in _METRICS:
        if title in _OPTIONAL and all(value(c) is None for c in comparison.cells):
            continue
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
            others = ", ".join(f"{m} {v:.3g} ({v / best:.2f}×)" for v, m in priced[1:])
            lines.append(f"{model}: cheapest {what} on {machine} ({best:.3g}; {others})")
    return lines
