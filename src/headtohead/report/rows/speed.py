"""A run's speed as typed rows: latency per scenario, noise, each model's own memory, cold start, cost.

Read by the speed section (:mod:`headtohead.report.sections.run.details.speed`), which every format
draws — the terminal too, leaving out the least important columns when it is narrow.
"""

from __future__ import annotations

from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.report.rows.summary import NOT_MEASURED
from headtohead.report.words.numbers import UNKNOWN
from headtohead.results.records import ModelRecord, RunResult
from headtohead.results.speed import ModelSpeed, SpeedSummary

__all__ = ["speed_columns", "speed_rows", "speed_note", "COST_COLUMN"]

#: The speed table's cost column (when a price is given: ``speed.price_per_hour`` or an endpoint's ``price``).
COST_COLUMN = "cost / 1M predictions"
_SCENARIO_KEYS = ("offline", "single_stream")
#: Cost records of models nothing here timed: a price given (``price_per_1m``), a cascade's from its parts.
_NOT_TIMED = {"priced": "not timed: priced per prediction (price_per_1m)", "cascade": "cascade: its parts' costs"}


def _memory_columns(cuda: bool) -> list[Column]:
    return [
        Column("weights_mb", "weights (MiB)", "mib", priority=2),
        Column("model_peak_mb", "model peak (MiB)", "mib", priority=1),
        *([Column("cuda_model_peak_mb", "CUDA model peak (MiB)", "mib", priority=1)] if cuda else []),
    ]


def speed_columns(result: RunResult) -> list[Column]:
    """The speed table's columns: percentiles per call, throughput (and cost), noise, memory, cold start."""
    speed = result.speed
    cuda = speed is not None and any(
        m.memory is not None and m.memory.cuda_model_peak_mb is not None for m in speed.models
    )
    priced = speed is not None and any(
        _cost(m, s) is not None for m in speed.models for s in (*_SCENARIO_KEYS, *_NOT_TIMED, "endpoint")
    )
    return [
        Column("model", "model", "text", priority=0),
        Column("scenario", "scenario", "text", wrap=True, priority=0),
        Column("p50_ms", "p50 (ms per call)", "ms", priority=0),
        Column("p90_ms", "p90 (ms)", "ms", priority=4),
        Column("p99_ms", "p99 (ms)", "ms", priority=1),
        Column("throughput", "throughput (examples/s)", "rate", priority=0),
        *([Column("cost", COST_COLUMN, "money", priority=1)] if priced else []),
        Column("calls", "calls", "integer", priority=5),
        # a number, not a verdict: the warnings say when noise threatens a ratio (report.words.warnings)
        Column("repeat_noise", "repeat noise (IQR/median)", "percent", priority=4),
        *_memory_columns(cuda),
        Column("load_s", "load (s)", "seconds", priority=3),
        Column("cold_first_call_s", "cold first call (s)", "seconds", priority=3),
        Column("first_prediction_s", "first prediction (s)", "seconds", priority=3),
    ]


def _scenario_memory(model: ModelSpeed, scenario: str) -> dict[str, Cell]:
    """The model's own peak (RSS, CUDA) for this scenario's calls: per scenario where measured so."""
    memory = model.memory
    if memory is None:
        return {}
    own = memory.scenario(scenario)
    peak, cuda = (
        (own.model_peak_mb, own.cuda_model_peak_mb)
        if own is not None
        else (memory.model_peak_mb, memory.cuda_model_peak_mb)
    )
    weights = Cell(None, note=UNKNOWN) if memory.weights_mb is None else Cell(memory.weights_mb)
    return {"weights_mb": weights, "model_peak_mb": Cell(peak), "cuda_model_peak_mb": Cell(cuda)}


def _cost(model: ModelSpeed, scenario: str) -> float | None:
    """Cost per million predictions of a model in a scenario (priced per hour, or per token for an endpoint)."""
    if model.cost is None:
        return None
    return next((s.cost_per_million for s in model.cost.scenarios if s.scenario == scenario), None)


def _timed_rows(model: ModelSpeed) -> list[Row]:
    cold = model.cold_start
    load = cold.load_s if cold is not None else model.load_time_s  # the fresh process's, else the run's own
    rows = []
    for scenario in _SCENARIO_KEYS:
        t = model.timing(scenario)
        if t is None:
            continue
        b = t.per_batch
        cells = {
            "model": text_cell(model.name),
            "scenario": text_cell(
                f"{scenario.replace('_', ' ')} (batch {t.batch_size}, {t.inputs} input{'s' if t.inputs != 1 else ''})"
            ),
            "p50_ms": Cell(b.p50_s * 1e3),
            "p90_ms": Cell(b.p90_s * 1e3),
            "p99_ms": Cell(b.p99_s * 1e3),
            "throughput": Cell(t.throughput_per_s),
            "cost": Cell(_cost(model, scenario)),
            "calls": Cell(b.n),
            "repeat_noise": Cell(t.repeat_noise),
            **_scenario_memory(model, scenario),
            "load_s": Cell(load),
            "cold_first_call_s": Cell(cold.first_call_s if cold else None),
            "first_prediction_s": Cell(cold.first_prediction_s if cold else None),
        }
        rows.append(Row(cells, subject=model.name, name=f"{model.name}/{scenario}"))
    return rows


def _endpoint_row(model: ModelSpeed) -> Row | None:
    """An endpoint model (kind openai): its requests in the quality pass, at its concurrency."""
    t = model.endpoint
    if t is None:
        return None
    latency = t.latency
    scenario = (
        f"endpoint (at most {t.concurrency} requests in flight)"
        if latency is not None
        else f"endpoint: {NOT_MEASURED} (no request answered in this run)"
    )
    cells = {"model": text_cell(model.name), "scenario": text_cell(scenario), "calls": Cell(len(t.latencies_s)),
             "throughput": Cell(t.requests_per_s), "cost": Cell(_cost(model, "endpoint"))}  # fmt: skip
    if latency is not None:
        cells.update({f"{p}_ms": Cell(latency[p] * 1e3) for p in ("p50", "p90", "p99")})
    return Row(cells, subject=model.name, name=f"{model.name}/endpoint")


def _priced_row(model: ModelSpeed) -> Row | None:
    """A model nothing here timed, with a cost: a price given, or a cascade's from its parts."""
    found = next((s for s in _NOT_TIMED if _cost(model, s) is not None), None)
    if found is None:
        return None
    cells = {
        "model": text_cell(model.name),
        "scenario": text_cell(_NOT_TIMED[found]),
        "cost": Cell(_cost(model, found)),
    }
    return Row(cells, subject=model.name, name=f"{model.name}/{found}")


def _why(model: ModelRecord) -> str:
    return "stored predictions" if model.outputs == "stored" else "not timed in this run"


def speed_rows(result: RunResult) -> list[Row]:
    """One row per model and timed scenario (an endpoint: its requests); a row saying so for a model not timed.

    ``model peak`` is the RSS the model needs above a process without it (its weights, its calls'
    activations), measured in a fresh process that holds only it; ``cold first call`` and ``first
    prediction`` come from the same process; absent where a model was not measured so.
    """
    if result.speed is None:
        return []
    rows = [row for model in result.speed.models for row in _timed_rows(model)]
    rows += [row for model in result.speed.models if (row := _endpoint_row(model)) is not None]
    rows += [row for model in result.speed.models if (row := _priced_row(model)) is not None]
    timed = {m.name.split("@")[0] for m in result.speed.models}  # a model's passes (llm@p1) time the model
    rows += [
        Row({"model": text_cell(r.name), "scenario": text_cell(f"{NOT_MEASURED} ({_why(r)})")}, subject=r.name)
        for r in result.models
        if r.name not in timed  # stored predictions: nothing to time
    ]
    return rows


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
