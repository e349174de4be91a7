"""The speed rows every report format shows: latency per scenario, noise, each model's own memory, cold start.

Read by HTML and Markdown (numbers formatted by :func:`headtohead.report.rows.summary.format_cell`'s rules).
"""

from __future__ import annotations

from headtohead.report.endpoint import ENDPOINT_SPEED_KEYS, endpoint_speed_row
from headtohead.report.rows.summary import NOT_MEASURED, _number
from headtohead.report.words.numbers import format_percent, weights_text
from headtohead.report.words.server import format_money
from headtohead.results.records import ModelRecord, RunResult
from headtohead.results.speed import ModelSpeed, SpeedSummary

__all__ = ["speed_rows", "speed_note", "COST_COLUMN"]

#: The speed table's cost column (when a price is given: ``speed.price_per_hour`` or an endpoint's ``price``).
COST_COLUMN = "cost / 1M predictions"


def _mib(value: float | None) -> str:
    return _number(value, "mb") if value is not None else "—"


def _scenario_memory(model: ModelSpeed, scenario: str) -> tuple[str, str]:
    """The model's own peak (RSS, CUDA) for this scenario's calls: per scenario where measured so."""
    memory = model.memory
    if memory is None:
        return "—", "—"
    own = memory.scenario(scenario)
    if own is not None:
        return _mib(own.model_peak_mb), _mib(own.cuda_model_peak_mb)
    return _mib(memory.model_peak_mb), _mib(memory.cuda_model_peak_mb)


def _load(model: ModelSpeed) -> str:
    """The fresh process's load time (the same one-time costs for every model), else the run's own."""
    seconds = model.cold_start.load_s if model.cold_start is not None else model.load_time_s
    return _number(seconds, "seconds") if seconds is not None else "—"


def speed_rows(result: RunResult) -> list[dict[str, str]]:
    """One row per model and timed scenario: percentiles per call, throughput, noise, own memory, cold start.

    ``model peak`` is the RSS the model needs above a process without it (its weights, its
    calls' activations), measured in a fresh process that holds only it; ``cold first call``
    and ``first prediction`` come from the same process. ``—`` where a model was not measured
    so (``speed.memory: false``, sweep variants, results of older versions).
    """
    if result.speed is None:
        return []
    cuda = any(m.memory is not None and m.memory.cuda_model_peak_mb is not None for m in result.speed.models)
    rows = []
    for model in result.speed.models:
        cold = model.cold_start
        for scenario in ("offline", "single_stream"):
            t = model.timing(scenario)
            if t is None:
                continue
            b = t.per_batch
            rss, gpu = _scenario_memory(model, scenario)
            row = {
                "model": model.name,
                "scenario": f"{scenario.replace('_', ' ')} (batch {t.batch_size}, {t.inputs} inputs)",
                "p50 / p90 / p99 (ms per call)": " / ".join(
                    _number(v * 1e3, "ms") for v in (b.p50_s, b.p90_s, b.p99_s)
                ),
                "throughput (examples/s)": _number(t.throughput_per_s, "rate"),
                "calls": str(b.n),
                # a number, not a verdict: the warnings say when noise threatens a ratio (report.words.warnings)
                "repeat noise (IQR/median)": format_percent(t.repeat_noise),
                "weights (MiB)": weights_text(model.memory, _mib, missing="—"),
                "model peak (MiB)": rss,
            }
            if cuda:
                row["CUDA model peak (MiB)"] = gpu
            row.update(
                {
                    "load (s)": _load(model),
                    "cold first call (s)": _number(cold.first_call_s, "seconds") if cold else "—",
                    "first prediction (s)": _number(cold.first_prediction_s, "seconds") if cold else "—",
                }
            )
            rows.append(row)
    for model in result.speed.models:  # kind openai: its requests in the quality pass
        endpoint_row = endpoint_speed_row(model, list(rows[0]) if rows else ENDPOINT_SPEED_KEYS)
        if endpoint_row is not None:
            rows.append(endpoint_row)
    if any(_cost(m, s) is not None for m in result.speed.models for s in ("offline", "single_stream", "endpoint")):
        _add_cost_column(rows, result.speed)
    timed = {m.name for m in result.speed.models}
    for record in result.models:  # stored predictions: nothing to time
        if record.name not in timed:
            rows.append(
                {key: ("—" if key != "model" else record.name) for key in (rows[0] if rows else {"model": ""})}
                | {"scenario": f"{NOT_MEASURED} ({_why(record)})"}
            )
    return rows


def _cost(model: ModelSpeed, scenario: str) -> float | None:
    """Cost per million predictions of a model in a scenario (priced per hour, or per token for an endpoint)."""
    if model.cost is None:
        return None
    return next((s.cost_per_million for s in model.cost.scenarios if s.scenario == scenario), None)


def _add_cost_column(rows: list[dict[str, str]], speed: SpeedSummary) -> None:
    """A ``cost / 1M predictions`` column after the throughput: local models at their price per hour, endpoints
    at their price per token, so both stand in one table."""
    by_name = {m.name: m for m in speed.models}
    for i, row in enumerate(rows):
        model = by_name.get(row.get("model", ""))
        scenario = row.get("scenario", "")
        key = "endpoint" if scenario.startswith("endpoint") else scenario.split(" (")[0].replace(" ", "_")
        cost = _cost(model, key) if model is not None else None
        cell = format_money(cost) if cost is not None else "—"
        items = list(row.items())
        at = next((k + 1 for k, (name, _) in enumerate(items) if name.startswith("throughput")), len(items))
        rows[i] = dict([*items[:at], (COST_COLUMN, cell), *items[at:]])


def _why(model: ModelRecord) -> str:
    return "stored predictions" if model.outputs == "stored" else "not timed in this run"


def speed_note(speed: SpeedSummary) -> str:
    """How the timed inputs and the memory were chosen, in a sentence or two (under the speed table)."""
    drawn = {s: len(batches) for s, batches in speed.timed_indices.items()}
    inputs = (
        (
            "; ".join(f"{s.replace('_', ' ')}: {n} inputs" for s, n in drawn.items())
            + " drawn across the data"
            + (f", stratified by length in {speed.size_unit}" if speed.size_unit in ("words", "characters") else "")
            + ". "
        )
        if drawn
        else ""
    )
    isolated = [m for m in speed.models if m.memory is not None and m.memory.isolated]
    memory = (
        "Memory and cold start: each model in a fresh process that holds only it, above the same process "
        "without a model."
        if isolated
        else "Memory: measured beside the other models (only the growth of each model's calls is its own)."
        if any(m.memory for m in speed.models)
        else ""
    )
    warm = (
        f" Device context created once before any model loaded ({speed.device_warmup_s:.2f} s)."
        if speed.device_warmup_s is not None
        else ""
    )
    return inputs + memory + warm
