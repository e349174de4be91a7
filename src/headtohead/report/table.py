"""The terminal table: one row per model, every number with its confidence interval when the
run has statistics. Returns rich renderables; only the CLI prints."""

from __future__ import annotations

from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from headtohead.errors import listing
from headtohead.metrics import CATALOGUE, Metric
from headtohead.report.rows.summary import Cell, summary_rows
from headtohead.report.words.missing import missing_sentence
from headtohead.report.words.numbers import format_count, weights_text
from headtohead.report.words.quality import verdict_lines
from headtohead.report.words.speed import speed_verdict_lines
from headtohead.results.comparison import ModelStats
from headtohead.results.estimates import Estimate
from headtohead.results.records import ModelRecord, RunResult
from headtohead.results.speed import ModelSpeed

__all__ = ["quality_table", "speed_table", "verdict_block", "timings_line"]


def _with_ci(value: float, estimate: Estimate | None, percent: bool) -> str:
    def fmt(x: float) -> str:
        return f"{x:.1%}" if percent else f"{x:.3f}"

    if estimate is None:
        return fmt(value)
    if estimate.low is None or estimate.high is None:  # no interval: a zero-width one would read as perfect precision
        return f"{fmt(value)} [dim](no interval)[/]"
    low, high = (
        (f"{estimate.low * 100:.1f}", f"{estimate.high * 100:.1f}")
        if percent
        else (f"{estimate.low:.3f}", f"{estimate.high:.3f}")
    )
    return f"{fmt(value)} [dim]({low}–{high})[/]"


def quality_table(result: RunResult) -> Table:
    """A rich table of every model's quality on the run's evaluation set.

    Parameters
    ----------
    result : RunResult

    Returns
    -------
    rich.table.Table
        Accuracy, macro-/weighted-F1 and balanced accuracy with their intervals (when
        ``result.stats`` is present; a failure counts as a wrong answer), the examples without a
        prediction, the debiased calibration error with its interval, parameters and evaluation time.
    """
    data = result.dataset
    stats = result.stats
    level = f"{stats.settings.confidence:.0%} CI" if stats else ""
    table = Table(
        title=f"{escape(result.name)} — {data.n_examples} examples, {len(data.label_names)} classes"
        + (f"; ({level}) in brackets" if stats else ""),
        title_justify="left",
    )
    table.add_column("model", style="bold", no_wrap=True)
    for column in (
        "accuracy",
        "macro-F1",
        "weighted-F1",
        "bal. acc.",
        "no pred.",
        "calib. err. (ℓ2)",
        "params",
        "eval s",
    ):
        table.add_column(column, justify="right")
    picked = [CATALOGUE[m] for m in stats.settings.metrics] if stats else []  # stats.metrics: after the defaults
    for metric in picked:
        table.add_column(metric.label, justify="right")
    # a model asked with several prompts (its passes) is one row, its means over its prompts: never its best prompt
    scored = [m for m in result.models if m.has_quality]
    means = summary_rows(result) if any(m.passes for m in scored) else {}
    accuracies = [q.accuracy if (q := m.quality) is not None else means[m.name]["accuracy"].value for m in scored]
    best = max((a for a in accuracies if a is not None), default=None)
    judged = {m.name: m for m in stats.models} if stats else {}  # a model with answers missing may be left out
    for model in scored:
        if model.passes:
            table.add_row(*_prompted_row(model.name, means[model.name], best, picked))
            continue
        ms = judged.get(model.name)
        row = (
            _incomplete_row(model, ms)
            if model.missing_examples
            else _row(model, ms, best=best if len(scored) > 1 else None)
        )
        for metric in picked:  # a metric of probabilities for a model without them: not available
            found = ms.metrics.get(metric.name) if ms is not None else None
            row.append(_with_ci(found.value, found, percent=metric.scale == "share") if found else "–")
        table.add_row(*row)
    return table


def _row(model: ModelRecord, ms: ModelStats | None, *, best: float | None) -> list[str]:
    q = model.quality
    assert q is not None, "only models with a quality pass have a row"
    accuracy = _with_ci(q.accuracy, ms.accuracy if ms else None, percent=True)
    if best is not None and q.accuracy == best:
        accuracy = f"[bold green]{accuracy}[/]"
    debiased = ms.calibration.ece_l2_debiased if ms is not None and ms.calibration is not None else None
    calibration = _with_ci(debiased.value, debiased, percent=False) if debiased is not None else "–"
    return [
        escape(model.name),
        accuracy,
        _with_ci(q.f1_macro, ms.f1_macro if ms else None, percent=False),
        _with_ci(q.f1_weighted, ms.f1_weighted if ms else None, percent=False),
        _with_ci(q.balanced_accuracy, ms.balanced_accuracy if ms else None, percent=True),
        str(q.n_failed) if q.n_failed else "0",
        calibration,
        format_count(model.num_parameters) if model.outputs == "computed" else "–",
        f"{model.eval_time_s:.2f}" if model.eval_time_s is not None else "–",
    ]


def _prompted_row(name: str, cells: dict[str, Cell], best: float | None, picked: Sequence[Metric]) -> list[str]:
    """A model asked with several prompts: the means over its prompts (no interval; the pooled comparisons have one)."""

    def mean(key: str, percent: bool) -> str:
        cell = cells.get(key)
        if cell is None or cell.value is None:
            return "–"
        text = f"{cell.value:.1%}" if percent else f"{cell.value:.3f}"
        return f"{text} [dim](mean of {cell.prompts} prompts)[/]" if cell.prompts else text

    accuracy = mean("accuracy", True)
    if best is not None and cells["accuracy"].value == best:
        accuracy = f"[bold green]{accuracy}[/]"
    failed = cells.get("n_failed")
    return [
        escape(name),
        accuracy,
        mean("f1_macro", False),
        mean("f1_weighted", False),
        mean("balanced_accuracy", True),
        f"{failed.value:.3g}" if failed is not None and failed.value is not None else "0",
        mean("calibration_error", False),
        format_count(int(cells["parameters"].value)) if cells["parameters"].value is not None else "–",
        f"{cells['eval_time_s'].value:.2f}" if cells["eval_time_s"].value is not None else "–",
        *(mean(metric.name, metric.scale == "share") for metric in picked),
    ]


def _incomplete_row(model: ModelRecord, ms: ModelStats | None) -> list[str]:
    """A model that never answered some examples: its statistics on the rows every model answered, or none."""
    q = model.quality
    assert q is not None, "only models with a quality pass have a row"
    figures = (
        [
            _with_ci(ms.accuracy.value, ms.accuracy, percent=True),
            _with_ci(ms.f1_macro.value, ms.f1_macro, percent=False),
            _with_ci(ms.f1_weighted.value, ms.f1_weighted, percent=False),
            _with_ci(ms.balanced_accuracy.value, ms.balanced_accuracy, percent=True),
        ]
        if ms is not None
        else ["[yellow]incomplete[/]", "–", "–", "–"]
    )
    return [
        escape(model.name),
        *figures,
        f"{q.n_failed - len(model.missing_examples)} (+{len(model.missing_examples)} missing)",
        "–",
        format_count(model.num_parameters) if model.outputs == "computed" else "–",
        f"{model.eval_time_s:.2f}" if model.eval_time_s is not None else "–",
    ]


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    ms = seconds * 1e3
    return f"{ms:,.0f}" if ms >= 100 else f"{ms:.3g}"


def _mib(value: float | None) -> str:
    return "–" if value is None else f"{value:,.1f}" if value < 10 else f"{value:,.0f}"


def _load_s(model: ModelSpeed) -> str:
    """The fresh process's load (every model pays the same one-time costs), else the run's own."""
    seconds = model.cold_start.load_s if model.cold_start is not None else model.load_time_s
    return f"{seconds:.2f}" if seconds is not None else "–"


def _endpoint_rate(model: ModelSpeed) -> str:
    """An endpoint's answers per second at its concurrency (kind openai), else ``–``."""
    rate = model.endpoint.requests_per_s if model.endpoint is not None else None
    return f"{rate:,.3g} (endpoint)" if rate is not None else "–"


def speed_table(result: RunResult) -> Table | None:
    """Latency, throughput, cold start and each model's own memory; ``None`` when speed was not measured.

    The load time, the cold first call and the memory come from a fresh process per model
    (the first model of a run otherwise pays the imports and the device's start-up in its
    load); ``–`` where a model could not be measured there. CUDA memory is shown when a
    model ran on CUDA.
    """
    speed = result.speed
    if speed is None:
        return None
    cuda = any(m.memory is not None and m.memory.cuda_model_peak_mb is not None for m in speed.models)
    table = Table(
        title=f"speed — {len(speed.scenarios)} scenario(s), real examples across the data, "
        f"torch threads {speed.torch_threads}; cold start and memory in a fresh process per model",
        title_justify="left",
    )
    table.add_column("model", style="bold", no_wrap=True)
    columns = [
        f"batch {speed.batch_size} p50 ms",
        "p95 ms",
        "samples/s",
        "batch 1 p50 ms",
        "p99 ms",
        "load s",
        "cold 1st call ms",
        "weights MiB",
        "model peak MiB",
    ] + (["CUDA peak MiB"] if cuda else [])
    for column in columns:
        table.add_column(column, justify="right")
    for model in speed.models:
        offline, single, memory, cold = model.offline, model.single_stream, model.memory, model.cold_start
        cells = [
            escape(model.name),
            _ms(offline.per_batch.p50_s if offline else None),
            _ms(offline.per_batch.p95_s if offline else None),
            f"{offline.throughput_per_s:,.0f}" if offline else _endpoint_rate(model),
            _ms(single.per_batch.p50_s if single else None),
            _ms(single.per_batch.p99_s if single else None),
            _load_s(model),
            _ms(cold.first_call_s if cold else None),
            weights_text(memory, _mib),
            _mib(memory.model_peak_mb if memory else None),
        ]
        table.add_row(*cells, *([_mib(memory.cuda_model_peak_mb if memory else None)] if cuda else []))
    timed = {m.name for m in speed.models}
    for record in result.models:  # stored predictions have no speed
        if record.name not in timed:
            table.add_row(escape(record.name), "not measured", *["–"] * (len(columns) - 1))
    return table


def verdict_block(result: RunResult) -> list[str]:
    """The verdict sentences of a run (quality, then speed when measured), plain text."""
    lines: list[str] = []
    if result.missing is not None and result.missing.allowed:  # not allowed: the run's last line says it
        lines.append(missing_sentence(result) or "")
    if result.stats is not None:
        lines += verdict_lines(result.stats)
    if result.speed is not None:
        lines += speed_verdict_lines(result.speed)
    return lines


def timings_line(result: RunResult, reused: Sequence[str] = ()) -> str | None:
    """Where the run's time went, on one line (``None`` for results without timings).

    ``reused``: the models ``--resume`` re-used, whose time the earlier run spent (not counted
    here; the line names them).

    Examples
    --------
    ``Time: setup 1.2 s · load 3.4 s · evaluate 6.9 s · speed 12.0 s · statistics 0.8 s · report 0.6 s · total 25.3 s``
    """
    t = result.timings
    if t is None:
        return None
    parts = [
        ("setup", t.setup_s),
        ("load", t.load_s),
        ("evaluate", t.evaluate_s),
        ("speed", t.speed_s),
        ("statistics", t.statistics_s),
        ("report", t.report_s),
        ("total", t.total_s),
    ]
    line = "Time: " + " · ".join(f"{name} {seconds:.1f} s" for name, seconds in parts if seconds is not None)
    if reused:
        line += f" (reused from the earlier run, not timed again: {listing(list(reused))})"
    return line
