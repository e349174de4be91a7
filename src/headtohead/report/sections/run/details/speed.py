"""Speed and memory: the speed table, how it was measured, the warnings; the Server scenario and cost."""

from __future__ import annotations

from headtohead.report.document import Block, Line, Lines, Paragraph, Section, Table
from headtohead.report.rows.server import cost_columns, cost_price, cost_rows, server_columns, server_rows
from headtohead.report.rows.speed import speed_columns, speed_note, speed_rows
from headtohead.report.sections.run.view import RunView
from headtohead.report.words.numbers import format_money
from headtohead.report.words.server import server_lines
from headtohead.report.words.speed import stop_text
from headtohead.report.words.warnings import speed_warnings
from headtohead.results.speed import SpeedSummary

ORDER = 50


def _how(speed: SpeedSummary) -> str:
    if not speed.scenarios:  # an endpoint's requests only: nothing was timed in rounds
        return speed_note(speed)
    threads = f"{speed.torch_threads} torch threads" if speed.torch_threads else "torch threads not recorded"
    rounds = ", ".join(f"{r.scenario.replace('_', ' ')}: {r.rounds} rounds ({stop_text(r)})" for r in speed.scenarios)
    return (
        f"Models measured in interleaved rounds so drift hits all alike; {rounds}; {threads}; "
        f"{speed.elapsed_s:.0f} s in all. {speed_note(speed)}"
    )


def _server_and_cost(view: RunView, speed: SpeedSummary, terminal: bool) -> list[Block]:
    blocks: list[Block] = []
    rows = server_rows(speed)
    if rows:
        bound = f"p99 ≤ {speed.loadgen.latency_bound_ms:g} ms" if speed.loadgen is not None else ""
        caption = f"Server — MLPerf LoadGen, Poisson arrivals, {bound}"
        table = Table(f"{view.anchor}-server", tuple(server_columns(speed)), tuple(rows), caption=caption)
        blocks.append(table.without_empty_columns())
    lines = server_lines(speed)
    if lines and not terminal:  # the terminal's verdict says them
        blocks.append(Lines(tuple(Line(line.strip()) for line in lines)))
    costs = cost_rows(speed)
    if costs:
        price = cost_price(speed)
        caption = "Cost per million predictions" + (f" at {format_money(price)}/h" if price is not None else "")
        table = Table(f"{view.anchor}-cost", tuple(cost_columns(speed)), tuple(costs), caption=caption)
        blocks.append(table.without_empty_columns())
    return blocks


def build(view: RunView, *, terminal: bool = False) -> list[Block]:
    """The speed section (nothing when speed was not measured).

    ``terminal``: the table, the Server and cost tables and the warnings only (``h2h run`` prints the verdict).
    """
    speed = view.result.speed
    rows = speed_rows(view.result)
    if speed is None or not rows:
        return []
    table = Table(f"{view.anchor}-speed", tuple(speed_columns(view.result)), tuple(rows)).without_empty_columns()
    blocks: list[Block] = [table]
    if not terminal:
        blocks.append(Paragraph(_how(speed), "note"))
    warnings = speed_warnings(speed) if not terminal else []  # the terminal's verdict says them
    if warnings:
        blocks.append(Lines(tuple(Line(w, kind="warning") for w in warnings), style="warnings"))
    blocks += _server_and_cost(view, speed, terminal)
    return [Section(f"{view.anchor}-speed", "Speed and memory", tuple(blocks))]
