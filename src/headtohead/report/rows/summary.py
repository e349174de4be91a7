"""A run's numbers per model, gathered once from its records as typed cells (no text).

The summary section (:mod:`headtohead.report.sections.run.summary`) lays them out, and every
format draws that one table — the terminal, HTML, Markdown, the notebook, CSV (unrounded) and
MLflow. Values stay unrounded here; the formatter writes them by their column's kind. The speed
rows of the details are in :mod:`headtohead.report.rows.speed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from headtohead.metrics import CATALOGUE, defaults
from headtohead.report.document import Cell, Column
from headtohead.report.words.numbers import UNKNOWN, Kind
from headtohead.results.comparison import ModelStats
from headtohead.results.estimates import Estimate
from headtohead.results.passes import pass_label
from headtohead.results.records import Environment, ModelRecord, RunResult

__all__ = [
    "NOT_MEASURED",
    "PASS_WORDS",
    "NOT_AVAILABLE",
    "INCOMPLETE",
    "NOT_TOLD_FROM_ZERO",
    "summary_columns",
    "summary_rows",
    "top_confusions",
    "union_confusions",
    "Confusion",
    "environment_rows",
    "latency_for_tradeoff",
    "metric_column",
    "ACROSS_RUNS",
    "summary_column",
    "clipped_calibration",
    "any_clipped_calibration",
]

#: Why a model has no value: stored predictions are not timed; without probabilities there is no calibration.
NOT_MEASURED = "not measured"
NOT_AVAILABLE = "not available"
#: A model that never answered some examples (transport failures): its metrics would count them as wrong.
INCOMPLETE = "incomplete: answers missing"
#: A prompted model's calibration error where some prompt's is clipped at 0 (only its upper bound known): no mean.
NOT_TOLD_FROM_ZERO = "not told from 0 for some prompts"
#: The accuracy on answered rows of a model (or a run of it) that answered none: unknown, never 0.
NONE_ANSWERED = "none answered"


def metric_column(name: str) -> Column:
    """The column of a catalogue metric (:mod:`headtohead.metrics`): its label, scale and direction."""
    metric = CATALOGUE[name]
    kind: Kind = "percent" if metric.scale == "share" else "score"
    return Column(metric.name, metric.label, kind, metric.higher_is_better)


_QUALITY = tuple(metric_column(m.name) for m in defaults() if m.column)
_FAILURES = (
    Column("n_failed", "no prediction (counted wrong)", "integer", False),
    Column("accuracy_answered", "accuracy on answered rows", "percent", None),  # secondary: no "best" marked
)
_CALIBRATION = (
    Column("calibration_error", "calibration error (ℓ2, debiased)", "score", False),
    *(metric_column(m) for m in ("ece", "brier", "nll")),
)
_SPEED = (
    Column("single_stream_p50_ms", "latency p50 (ms, batch 1)", "ms", False),
    Column("single_stream_p99_ms", "latency p99 (ms, batch 1)", "ms", False),
    Column("offline_ms_per_example", "offline ms/example (p50)", "ms", False),
    Column("offline_throughput_per_s", "throughput (examples/s)", "rate", True),
    Column("model_peak_mb", "model peak memory (MiB)", "mib", False),
    Column("cuda_model_peak_mb", "CUDA model peak (MiB)", "mib", False),
    Column("first_prediction_s", "time to first prediction (s)", "seconds", False),
)
_COST = (
    Column("parameters", "parameters", "count", None),
    Column("eval_time_s", "eval time (s)", "seconds", None),
)


def summary_columns(result: RunResult) -> list[Column]:
    """The columns this run has data for: quality, calibration (with statistics), speed (when measured)."""
    if not result.models:
        return []
    columns = list(_QUALITY) if any(m.has_quality for m in result.models) else []
    qualities = [q for m in result.models for q in [m.quality, *(p.quality for p in m.passes)] if q is not None]
    if any(q.n_failed for q in qualities):
        columns.extend(_FAILURES)  # failures are wrong answers above; how many, and the answered-only figure
    if result.stats is not None and any(m.ece is not None for m in result.stats.models):
        columns.extend(_CALIBRATION)
    if result.stats is not None:  # the metrics the experiment picked (stats.metrics)
        columns.extend(metric_column(m) for m in result.stats.settings.metrics)
    if result.speed is not None:
        rows = summary_rows(result)
        columns.extend(c for c in _SPEED if any(r.get(c.key, Cell(None)).value is not None for r in rows.values()))
    columns.extend(_COST)
    return columns


def clipped_calibration(estimate: Estimate) -> bool:
    """Whether a debiased ℓ2 calibration error was clipped at 0 (its squared estimate at or below 0): the data cannot
    tell it from 0, so only its upper bound is shown (files before the unclipped estimate was kept: a value of 0)."""
    return estimate.value <= 0.0 and estimate.high is not None


def any_clipped_calibration(result: RunResult) -> bool:
    """Whether some model's calibration error is shown as its upper bound only (:func:`clipped_calibration`)."""
    return result.stats is not None and any(
        m.calibration is not None
        and m.calibration.ece_l2_debiased is not None
        and clipped_calibration(m.calibration.ece_l2_debiased)
        for m in [*result.stats.models, *(p for m in result.stats.models for p in m.passes)]
    )


def _stats_cells(result: RunResult, name: str, stats: ModelStats | None = None) -> dict[str, Cell]:
    if result.stats is None:
        return {}
    try:
        stats = result.stats.model(name) if stats is None else stats
    except KeyError:
        return {}
    cells = {}
    debiased = stats.calibration.ece_l2_debiased if stats.calibration is not None else None
    for key, est in (
        ("accuracy", stats.accuracy),
        ("balanced_accuracy", stats.balanced_accuracy),
        ("f1_macro", stats.f1_macro),
        ("f1_weighted", stats.f1_weighted),
        ("accuracy_answered", stats.accuracy_answered),
        ("calibration_error", debiased),
        ("ece", stats.ece),
        ("brier", stats.brier),
        ("nll", stats.nll),
    ):
        if key == "calibration_error" and est is not None and clipped_calibration(est):
            cells[key] = Cell(None, est.low, est.high, upper_only=True)  # "≤ 0.060": 0 is a clip, not a measurement
        elif est is not None:
            cells[key] = Cell(est.value, est.low, est.high, bare=None if est.has_interval else est.note)
        elif key in ("calibration_error", "ece", "brier", "nll") and stats.calibration is None:
            cells[key] = Cell(None, note=NOT_AVAILABLE)  # predictions stored without probabilities
    for key in result.stats.settings.metrics:  # absent: a metric of probabilities, and none were stored
        est = stats.metrics.get(key)
        cells[key] = (
            Cell(est.value, est.low, est.high, bare=None if est.has_interval else est.note)
            if est is not None
            else Cell(None, note=NOT_AVAILABLE)
        )
    return cells


def _speed_cells(result: RunResult, name: str) -> dict[str, Cell]:
    if result.speed is None:
        return {}
    try:
        speed = result.speed.model(name)
    except KeyError:  # stored predictions (kind predictions) have no speed to measure
        return {c.key: Cell(None, note=NOT_MEASURED) for c in _SPEED}
    cells: dict[str, Cell] = {}
    if speed.single_stream is not None:
        cells["single_stream_p50_ms"] = Cell(speed.single_stream.per_sample.p50_s * 1e3)
        cells["single_stream_p99_ms"] = Cell(speed.single_stream.per_sample.p99_s * 1e3)
    if speed.offline is not None:
        cells["offline_ms_per_example"] = Cell(speed.offline.per_sample.p50_s * 1e3)
        cells["offline_throughput_per_s"] = Cell(speed.offline.throughput_per_s)
    if speed.memory is not None:
        cells["model_peak_mb"] = Cell(speed.memory.model_peak_mb)
        cells["cuda_model_peak_mb"] = Cell(speed.memory.cuda_model_peak_mb)
    if speed.cold_start is not None:
        cells["first_prediction_s"] = Cell(speed.cold_start.first_prediction_s)
    return cells


def summary_rows(result: RunResult) -> dict[str, dict[str, Cell]]:
    """``{model: {column key: Cell}}`` for every model of the run (intervals where the statistics have them).

    A model measured several ways (its passes: prompts …) is one row, its means over its passes
    (:func:`_prompted_once`).
    """
    rows: dict[str, dict[str, Cell]] = {}
    for model in result.models:
        if not model.passes:
            rows[model.name] = _model_cells(result, model)
            continue
        judged = _judged(result, model.name)
        for i, one in enumerate(model.passes):  # each pass's own figures, with its own statistics
            own = model.pass_record(one.key)
            stats = judged.passes[i] if judged is not None and i < len(judged.passes) else None
            rows[own.name] = _model_cells(result, own, stats, model=model)
    return _prompted_once(result, rows)


def _judged(result: RunResult, name: str) -> ModelStats | None:
    """The statistics of model ``name`` (``None``: no statistics, or the model was left out of them)."""
    try:
        return result.stats.model(name) if result.stats is not None else None
    except KeyError:
        return None


def _model_cells(
    result: RunResult, own: ModelRecord, stats: ModelStats | None = None, *, model: ModelRecord | None = None
) -> dict[str, Cell]:
    """One model's (or one pass's: ``own``, of ``model``) cells: its quality, its statistics' intervals, its speed
    (a model's passes: the model's, timed once), size and time."""
    model = own if model is None else model
    q = own.quality
    cells = {c.key: Cell(getattr(q, c.key)) for c in _QUALITY} if q is not None else {}
    if q is not None and model.missing_examples:  # the statistics on answered rows replace these, if allowed
        cells = {c.key: Cell(None, note=INCOMPLETE) for c in _QUALITY}
    elif q is not None:
        cells["n_failed"] = Cell(float(q.n_failed))
        cells["accuracy_answered"] = (
            Cell(q.answered.accuracy)
            if q.answered
            else Cell(q.accuracy)
            if q.n_failed < q.n_examples
            else Cell(None, note=NONE_ANSWERED)
        )
    cells.update(_stats_cells(result, own.name, stats))
    cells.update(_speed_cells(result, model.name))
    n = model.num_parameters  # None: a size headtohead cannot read
    cells["parameters"] = (
        Cell(None) if model.outputs == "stored" else Cell(None, note=UNKNOWN) if n is None else Cell(float(n))
    )
    cells["eval_time_s"] = Cell(own.eval_time_s)
    return cells


#: Columns of counts: a prompted model's row holds their sum over its passes (a count stays whole).
_SUMMED = ("n_failed",)


#: What a model's passes are called, by factor (the summary's "mean of 3 runs", the decision's "mean over runs").
PASS_WORDS = {"prompt": "prompts", "repeat": "runs"}


def _mean_cell(cells: Sequence[Cell], key: str, passes: str = "prompts") -> Cell:
    """One column of a model's passes (``passes``: prompts, runs) as one cell: their mean, no interval; eval time their
    sum, and a count (examples without a prediction) their sum over the passes, said so — a mean of counts (28.3) is
    no count."""
    values = [c.value for c in cells]
    if any(c.upper_only for c in cells):  # a clip at 0 averaged in would read as a measured error
        return Cell(None, note=NOT_TOLD_FROM_ZERO)
    if any(v is None for v in values):
        return next((c for c in cells if c.value is None and c.note), Cell(None))
    numbers = [float(v) for v in values if v is not None]
    if key in _SUMMED:
        return Cell(float(np.sum(numbers)), suffix=f"sum over {len(cells)} {passes}")
    value = float(np.sum(numbers)) if key == "eval_time_s" else float(np.mean(numbers))
    return Cell(value, suffix=None if key in ("parameters", "eval_time_s") else f"mean of {len(cells)} {passes}")


def _prompted_once(result: RunResult, rows: dict[str, dict[str, Cell]]) -> dict[str, dict[str, Cell]]:
    """``rows`` with each prompted model's passes as one row, named by the model: its means over its prompts.

    A pass is not a model, and the best prompt, chosen after seeing the examples, must not read
    as the model's score (or be marked the best of a row): each prompt's own accuracy is in the
    prompts section (:mod:`headtohead.report.rows.prompts`), the best named as chosen. The passes
    are read from the model's record (``ModelRecord.passes``), whose pass rows are named ``model@key``.
    """
    model_of = {pass_label(m.name, p.key): m for m in result.models for p in m.passes}
    if not model_of:
        return rows
    out: dict[str, dict[str, Cell]] = {}
    for name, cells in rows.items():
        model = model_of.get(name)
        if model is None:
            out[name] = cells
        elif model.name not in out:
            passes = [rows[label] for p in model.passes if (label := pass_label(model.name, p.key)) in rows]
            keys = dict.fromkeys(k for c in passes for k in c)
            words = PASS_WORDS.get(model.passes[0].factor, "passes")
            out[model.name] = {k: _mean_cell([c.get(k, Cell(None)) for c in passes], k, words) for k in keys}
    return out


@dataclass(frozen=True)
class Confusion:
    """A (true, predicted) pair of different classes and how often it happened."""

    true: str
    predicted: str
    count: int
    share: float


def top_confusions(matrix: Sequence[Sequence[int]], label_names: Sequence[str], limit: int = 10) -> list[Confusion]:
    """The off-diagonal cells with the most examples, largest first.

    ``share`` is the fraction of the true class's examples that went to ``predicted``.

    Examples
    --------
    >>> top_confusions([[5, 3], [1, 7]], ["a", "b"], limit=1)
    [Confusion(true='a', predicted='b', count=3, share=0.375)]
    """
    counts = np.asarray(matrix, dtype=np.int64)
    off = counts.copy()
    np.fill_diagonal(off, 0)
    totals = counts.sum(axis=1)
    order = np.argsort(-off, axis=None, kind="stable")[:limit]
    pairs = []
    for flat in order:
        i, j = np.unravel_index(flat, off.shape)
        if off[i, j] == 0:
            break
        pairs.append(Confusion(label_names[i], label_names[j], int(off[i, j]), float(off[i, j] / totals[i])))
    return pairs


def union_confusions(
    models: Sequence[ModelRecord], label_names: Sequence[str]
) -> tuple[list[str], dict[str, list[list[int]]]]:
    """Every rated model's confusion matrix over the same classes: the dataset's, then every outside class predicted.

    A model that predicted a class the data does not hold has a larger matrix
    (``QualityMetrics.confusion_labels``); here all are spread over the union, so they can be
    drawn side by side (rows of the outside classes stay empty: no example is of them).

    Examples
    --------
    ``(["neg", "pos", "other"], {"a": [[1, 0, 0], [0, 1, 0], [0, 0, 0]], "b": [[0, 0, 1], ...]})``
    """
    union = list(label_names)
    for model in models:
        if model.quality is not None:
            union += [c for c in (model.quality.confusion_labels or []) if c not in union]
    position = {name: i for i, name in enumerate(union)}
    matrices = {}
    for model in models:
        if model.quality is None:
            continue
        own = [position[c] for c in (model.quality.confusion_labels or label_names)]
        matrix = np.zeros((len(union), len(union)), dtype=np.int64)
        matrix[np.ix_(own, own)] = np.asarray(model.quality.confusion_matrix, dtype=np.int64)
        matrices[model.name] = matrix.tolist()
    return union, matrices


def environment_rows(environment: Environment) -> list[tuple[str, str]]:
    """``(what, value)`` pairs describing a machine and its software, for a table."""
    env = environment
    gpus = ", ".join(f"{g.name} ({g.memory_total_mb:,.0f} MiB)" if g.memory_total_mb else g.name for g in env.gpus)
    rows = [
        ("host", env.hostname),
        ("CPU", f"{env.cpu_model} ({env.cpu_cores_physical} cores / {env.cpu_cores_logical} threads)"),
        ("RAM", f"{env.ram_gb:g} GiB"),
        ("GPU", gpus or "none"),
        ("OS", env.os),
        ("Python", env.python),
    ]
    for label, value in (
        ("torch", env.torch),
        ("torch threads", env.torch_threads),
        ("torchvision", env.torchvision),
        ("transformers", env.transformers),
        ("timm", env.timm),
        ("scikit-learn", env.sklearn),
        ("numpy", env.numpy),
        ("headtohead", env.headtohead),
        ("git revision", env.git_revision),
    ):
        if value is not None:
            rows.append((label, str(value)))
    return rows


def latency_for_tradeoff(result: RunResult, name: str) -> tuple[float, str] | None:
    """The latency a model is placed at on the quality–latency chart, and its axis label.

    Single-stream latency (one example at a time) when measured, else offline time per example;
    an endpoint's median latency per request at its concurrency (each request is one example).
    """
    if result.speed is None:
        return None
    try:
        speed = result.speed.model(name)
    except KeyError:
        return None
    if speed.endpoint is not None and speed.endpoint.latency is not None:  # kind openai: its own requests
        return speed.endpoint.latency["p50"], f"median latency per request ({speed.endpoint.concurrency} in flight)"
    if speed.single_stream is not None:
        return speed.single_stream.per_sample.p50_s, "median latency, batch 1"
    if speed.offline is not None:
        return speed.offline.per_sample.p50_s, f"median time per example, batch {speed.offline.batch_size}"
    return None


#: The columns of the table of several runs side by side (one row per model and run).
ACROSS_RUNS = ("accuracy", "single_stream_p50_ms", "offline_throughput_per_s", "model_peak_mb")


def summary_column(key: str) -> Column:
    """A summary column by its key (quality, failures, calibration, speed, cost)."""
    return next(c for c in (*_QUALITY, *_FAILURES, *_CALIBRATION, *_SPEED, *_COST) if c.key == key)
