"""The Server scenario (MLPerf LoadGen), the capacity scenario and cost as typed rows: max QPS or goodput per
model, cost per million by scenario."""

from __future__ import annotations

from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.report.words.server import SCENARIO_NAMES
from headtohead.results.capacity import CapacitySummary
from headtohead.results.speed import SpeedSummary

__all__ = [
    "server_columns",
    "server_rows",
    "capacity_columns",
    "capacity_rows",
    "cost_columns",
    "cost_rows",
    "cost_price",
]


def server_columns(summary: SpeedSummary) -> list[Column]:
    """The Server table's columns (the interval's level named from the records)."""
    loadgen = summary.loadgen
    level = f"{loadgen.models[0].confidence:.0%}" if loadgen is not None and loadgen.models else "95%"
    return [
        Column("model", "model", "text", priority=0),
        Column("max_qps", f"max QPS ({level} CI)", "rate", priority=0),
        Column("valid_up_to", "VALID up to (QPS)", "rate"),
        Column("p50_ms", "p50 ms", "ms", priority=2),
        Column("p99_ms", "p99 ms", "ms"),
        Column("trials", "trials", "integer", priority=3),
        Column("cost", "cost / M", "money", priority=2),
        Column("energy_j", "J / pred.", "number", priority=3),
    ]


def server_rows(summary: SpeedSummary) -> list[Row]:
    """One row per model: max QPS with its interval, the highest VALID trial, cost and energy at max_qps."""
    loadgen = summary.loadgen
    if loadgen is None or not loadgen.models:
        return []
    rows = []
    timed = {m.name: m for m in summary.models}
    for model in loadgen.models:
        best = max((t for t in model.trials if t.held), key=lambda t: t.target_qps, default=None)
        cost = timed[model.name].cost if model.name in timed else None
        scenario = cost.scenario("server") if cost is not None else None
        cells = {
            "model": text_cell(model.name),
            "max_qps": Cell(model.max_qps, model.ci_low, model.ci_high, note="none held"),
            "valid_up_to": Cell(best.target_qps if best else None),
            "p50_ms": Cell(best.p50_s * 1e3 if best and best.p50_s is not None else None),
            "p99_ms": Cell(best.p99_s * 1e3 if best and best.p99_s is not None else None),
            "trials": Cell(len(model.trials)),
            "cost": Cell(scenario.cost_per_million if scenario else None),
            "energy_j": Cell(scenario.energy_per_prediction_j if scenario else None),
        }
        rows.append(Row(cells, subject=model.name))
    return rows


def capacity_columns(capacity: CapacitySummary) -> list[Column]:
    """The capacity table's columns (the interval's level named from the records)."""
    level = f"{capacity.models[0].confidence:.0%}" if capacity.models else "95%"
    return [
        Column("model", "model", "text", priority=0),
        Column("goodput", f"goodput /s ({level} CI)", "rate", priority=0),
        Column("held_up_to", "held up to /s", "rate"),
        Column("ttft_p99_ms", "p99 TTFT ms", "ms", priority=2),
        Column("tpot_p99_ms", "p99 TPOT ms", "ms", priority=2),
        Column("e2e_p99_ms", "p99 e2e ms", "ms"),
        Column("errors", "errors", "percent", priority=2),
        Column("right", "right under load", "percent", priority=2),
        Column("probes", "probes", "integer", priority=3),
        Column("cost", "cost / 1 M requests", "money", priority=2),
    ]


def _ms(value: float | None) -> Cell:
    return Cell(value * 1e3 if value is not None else None)


def capacity_rows(capacity: CapacitySummary) -> list[Row]:
    """One row per endpoint model: goodput with its interval, the highest held probe's figures, the cost."""
    rows = []
    for model in capacity.models:
        best = max((p for p in model.probes if p.held), key=lambda p: p.rate, default=None)
        answered = sum(p.answered for p in model.probes)
        cells = {
            "model": text_cell(model.name),
            "goodput": Cell(model.goodput, model.ci_low, model.ci_high, note="none held"),
            "held_up_to": Cell(best.rate if best else None),
            "ttft_p99_ms": _ms(best.ttft_p99_s if best else None),
            "tpot_p99_ms": _ms(best.tpot_p99_s if best else None),
            "e2e_p99_ms": _ms(best.e2e_p99_s if best else None),
            "errors": Cell(best.error_rate if best else None),
            "right": Cell(sum(p.correct for p in model.probes) / answered if answered else None),
            "probes": Cell(len(model.probes)),
            "cost": Cell(model.cost_per_million),
        }
        rows.append(Row(cells, subject=model.name))
    return rows


def _priced(summary: SpeedSummary) -> list[str]:
    return list(dict.fromkeys(
        s.scenario for m in summary.models if m.cost is not None for s in m.cost.scenarios if s.cost_per_million is not None
    ))  # fmt: skip


def cost_price(summary: SpeedSummary) -> float | None:
    """The price per hour the costs were computed at (``None``: priced per token only)."""
    return next(
        (s.price_per_hour for m in summary.models if m.cost is not None for s in m.cost.scenarios
         if s.price_per_hour is not None),
        None,
    )  # fmt: skip


def cost_columns(summary: SpeedSummary) -> list[Column]:
    """Models × scenarios: one column of cost per million predictions per scenario priced, and its energy."""
    columns = [Column("model", "model", "text", priority=0)]
    for scenario in _priced(summary):
        name = SCENARIO_NAMES.get(scenario, scenario)
        columns += [
            Column(scenario, name, "money", priority=0),
            Column(f"{scenario}_j", f"{name} J / pred.", "number", priority=2),
        ]
    return columns


def cost_rows(summary: SpeedSummary) -> list[Row]:
    """One row per priced model; empty without a price."""
    scenarios = _priced(summary)
    if not scenarios:
        return []
    rows = []
    for model in summary.models:
        if model.cost is None:
            continue
        cells = {"model": text_cell(model.name)}
        for scenario in scenarios:
            entry = model.cost.scenario(scenario)
            cells[scenario] = Cell(entry.cost_per_million if entry else None)
            cells[f"{scenario}_j"] = Cell(entry.energy_per_prediction_j if entry else None)
        rows.append(Row(cells, subject=model.name))
    return rows
