"""Which charts a report holds: chosen from the sections each run has, drawn only when rendered.

Each :class:`FigureSpec` knows how to draw itself; HTML renders it to SVG (inline, as a
``data:`` image), Markdown to a PNG file. Charts whose data is absent (no speed
measurement, no statistics) are simply not listed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from matplotlib.figure import Figure

from headtohead.metrics import defaults
from headtohead.report import plots, plots_quality, plots_server, plots_slices, plots_training
from headtohead.report.endpoint import cost_per_million_for_tradeoff
from headtohead.report.merge import MergedRuns, RunEntry
from headtohead.report.rows.summary import latency_for_tradeoff, union_confusions
from headtohead.results.comparison import Calibration, ModelStats
from headtohead.results.records import RunResult

__all__ = ["FigureSpec", "overview_figures", "run_figures", "report_styles"]


@dataclass(frozen=True)
class FigureSpec:
    """A chart of the report.

    Attributes
    ----------
    key : str
        File-name-safe identifier, unique in the report (``run1-confusion``).
    title : str
    caption : str
        One or two sentences saying how to read it.
    make : callable
        Draws the figure; returns ``None`` when there turns out to be nothing to draw.
    section : {"summary", "details"}
        Where the report places it.
    """

    key: str
    title: str
    caption: str
    make: Callable[[], Figure | None]
    section: str = "details"

    def svg(self) -> bytes | None:
        figure = self.make()
        return plots.to_svg(figure) if figure is not None else None

    def png(self) -> bytes | None:
        figure = self.make()
        return plots.to_png(figure) if figure is not None else None


def report_styles(merged: MergedRuns) -> dict[str, plots.ModelStyle]:
    """One style per model name over the whole report."""
    return plots.model_styles(merged.model_names)


def _tradeoff_points(
    merged: MergedRuns, placer: Callable[[RunResult, str], tuple[float, str] | None] = latency_for_tradeoff
) -> tuple[list[plots.TradeoffPoint], set[str], set[float]]:
    """The points of a trade-off chart (x from ``placer``), the x labels, and the levels of the intervals drawn."""
    points, labels, levels = [], set(), set()
    for run in merged.runs:
        result = run.result
        for model in result.models:
            placed = placer(result, model.name)
            if placed is None or model.quality is None or model.missing_examples:  # incomplete: no point
                continue
            latency, label = placed
            labels.add(label)
            low = high = None
            accuracy = model.quality.accuracy
            if result.stats is not None:
                try:
                    est = result.stats.model(model.name).accuracy
                    low, high = est.low, est.high
                    if est.has_interval:
                        levels.add(est.confidence)
                    if result.calibration_examples:  # a cascade chose its threshold on some: the statistics' rows
                        accuracy = est.value
                except KeyError:
                    pass
            points.append(plots.TradeoffPoint(model.name, run.label, accuracy, latency, low, high))
    return points, labels, levels


def overview_figures(merged: MergedRuns, styles: Mapping[str, plots.ModelStyle]) -> list[FigureSpec]:
    """Charts over every run: accuracy against latency with the Pareto front (when speed was measured)."""
    points, labels, levels = _tradeoff_points(merged)
    if not points:
        return []
    latency_label = labels.pop() if len(labels) == 1 else "median latency"
    several = len(merged.runs) > 1
    bar = f" (bar: {plots.level_text(*levels)} confidence interval)" if levels else ""
    caption = (
        f"Each model at its accuracy{bar} and median latency. Models on the "
        "dashed Pareto front (black edge) are not beaten on both at once; the others are."
    )
    if several:
        caption += " Marker shapes tell the runs apart."
    figures = [
        FigureSpec(
            "overview-tradeoff",
            f"Accuracy vs {latency_label}",
            caption,
            lambda: plots.tradeoff_figure(points, styles, latency_label=latency_label),
        )
    ]
    priced, _, _ = _tradeoff_points(merged, _cost_for_tradeoff)
    if len(priced) >= 2:
        figures.append(
            FigureSpec(
                "overview-cost",
                "Accuracy vs cost per million predictions",
                f"Each model at its accuracy{bar} and what a million predictions cost: a local model at the price per "
                "hour given (speed.price_per_hour) and its offline throughput, an endpoint at its price per token and "
                "its tokens in this run, a stored run at the price it was given (price_per_1m), a cascade at its "
                "parts' costs and its deferral share. Models on the dashed Pareto front are not beaten on both at once.",
                lambda: plots.tradeoff_figure(
                    priced,
                    styles,
                    latency_label="cost per million predictions",
                    x_scale=1.0,
                    x_unit="the prices' currency",
                ),
            )
        )
    return figures


def _cost_for_tradeoff(result: RunResult, name: str) -> tuple[float, str] | None:
    """A model's cost per million predictions (local: per hour at offline throughput; endpoint: per token)."""
    if result.speed is None:
        return None
    try:
        cost = cost_per_million_for_tradeoff(result.speed.model(name))
    except KeyError:
        return None
    return (cost, "cost per million predictions") if cost is not None else None


def _calibrations(run: RunEntry) -> dict[str, Calibration]:
    result = run.result
    if result.stats is not None:
        return {m.name: m.calibration for m in result.stats.models if m.calibration is not None}
    if run.predictions is None:
        return {}
    from headtohead.stats.calibration import calibration

    preds = run.predictions
    shown = {
        name: (preds[name], proba)
        for name in preds
        if name in {m.name for m in result.models}
        and (proba := preds[name].proba) is not None
        and preds[name].scored.any()
    }
    return {
        name: calibration(preds.y_true[ok], model.pred[ok], proba[ok], n_classes=len(preds.label_names))
        for name, (model, proba) in shown.items()
        for ok in [model.scored]
    }  # no probabilities, no confidence


#: The shares every run gives an interval of (``ModelStats`` fields), as the metrics chart draws them.
_INTERVAL_METRICS = tuple(
    (m.label, m.name) for m in defaults() if m.scale == "share" and m.name in ModelStats.model_fields
)


def _interval_data(run: RunEntry) -> dict[str, dict[str, tuple[float, float, float]]]:
    stats = run.result.stats
    if stats is None:
        return {}
    data: dict[str, dict[str, tuple[float, float, float]]] = {}
    for label, key in _INTERVAL_METRICS:
        data[label] = {m.name: (getattr(m, key).value, getattr(m, key).low, getattr(m, key).high) for m in stats.models}
    return data


def _interval_levels(run: RunEntry) -> set[float]:
    """The levels of the intervals the metrics chart draws, as the records hold them (``stats.alpha``)."""
    stats = run.result.stats
    if stats is None:
        return set()
    return {
        getattr(m, key).confidence for m in stats.models for _, key in _INTERVAL_METRICS if getattr(m, key).has_interval
    }


def _seed_latencies(run: RunEntry) -> dict[str, float] | None:
    latencies = {}
    for model in run.result.models:
        placed = latency_for_tradeoff(run.result, model.name)
        if placed is not None:
            latencies[model.name] = placed[0] * 1e3
    return latencies or None


def _training_figures(run: RunEntry, prefix: str, styles: Mapping[str, plots.ModelStyle]) -> list[FigureSpec]:
    training = run.training
    if training is None:
        return []
    specs = []
    runs = training.runs
    if any(r.epochs for r in runs):
        specs.append(
            FigureSpec(
                f"{prefix}-training",
                "Training curves",
                "Loss per epoch and, when evaluated during training, accuracy after each epoch; "
                "one line per model and seed (further seeds thinner).",
                lambda: plots_training.training_curves_figure(runs, styles),
            )
        )
    seeds = training.multi_seed
    if seeds is not None and len(training.seeds) > 1:
        latencies = _seed_latencies(run)
        specs.append(
            FigureSpec(
                f"{prefix}-seeds",
                "Over training seeds",
                "Bars: mean accuracy over seeds (whisker: standard deviation; dots: single seeds)."
                + (" Line: median latency (right axis)." if latencies else ""),
                lambda: plots_training.seeds_figure(seeds, styles, latency_ms=latencies),
            )
        )
    return specs


def run_figures(run: RunEntry, index: int, styles: Mapping[str, plots.ModelStyle]) -> list[FigureSpec]:
    """The charts of one run, in reading order: intervals, latency, confusion, per-class F1, reliability, training."""
    result, prefix = run.result, f"run{index}"
    specs: list[FigureSpec] = []
    intervals = _interval_data(run)
    if intervals:
        levels = _interval_levels(run)
        level = f"{plots.level_text(*levels)} " if levels else ""
        single = next(iter(levels)) if len(levels) == 1 else None
        specs.append(
            FigureSpec(
                f"{prefix}-intervals",
                "Metrics with confidence intervals",
                f"Each model's metrics with {level}intervals (Wilson for accuracy, bootstrap for the "
                "rest). Overlapping single intervals do not mean no difference: the paired "
                "comparison below is the test.",
                lambda: plots.interval_figure(intervals, styles, confidence=single),
                section="summary",
            )
        )
    if result.speed is not None:
        speed = result.speed
        specs.append(
            FigureSpec(
                f"{prefix}-latency",
                "Latency distribution",
                "Empirical CDF of every timed call: further left is faster, a steep curve is a "
                "steady model; the dot marks the median.",
                lambda: plots.latency_figure(speed, styles),
            )
        )
        if speed.size_unit in ("words", "characters") and speed.timed_sizes:
            specs.append(
                FigureSpec(
                    f"{prefix}-latency-length",
                    "Latency against input length",
                    "Each timed input (drawn across the data's lengths) at its median latency over "
                    "all rounds: how a model's cost grows with the length of the text.",
                    lambda: plots.latency_by_size_figure(speed, styles),
                )
            )
        if speed.loadgen is not None and speed.loadgen.models:
            loadgen = speed.loadgen
            specs.append(
                FigureSpec(
                    f"{prefix}-server",
                    "Latency under load (Server scenario)",
                    f"Every trial's p99 (large markers) and p50 (dots) from arrival to answer at "
                    f"its offered rate; filled markers held (LoadGen VALID), hollow ones did not. "
                    f"The dashed line is the bound ({loadgen.latency_bound_ms:g} ms); the vertical "
                    f"line is each model's max_qps, the shaded band its interval.",
                    lambda: plots_server.server_figure(loadgen, styles),
                )
            )
    rated = [m for m in result.models if m.quality is not None]
    if rated:
        labels, matrices = union_confusions(rated, result.dataset.label_names)
        specs.append(
            FigureSpec(
                f"{prefix}-confusion",
                "Confusion matrices",
                "Rows are the true class, columns the prediction; each row sums to 100 %. A bright diagonal is good.",
                lambda: plots_quality.confusion_figure(matrices, labels, styles),
            )
        )
        per_class = {m.name: q.per_class for m in rated if (q := m.quality) is not None}
        specs.append(
            FigureSpec(
                f"{prefix}-f1",
                "F1 per class",
                "Where each model is strong or weak, class by class.",
                lambda: plots_quality.per_class_f1_figure(per_class, styles),
            )
        )
    calibrations = _calibrations(run)
    if calibrations:
        specs.append(
            FigureSpec(
                f"{prefix}-reliability",
                "Reliability diagram",
                "When a model says 80 %, is it right 80 % of the time? Points above the diagonal: "
                "under-confident; below: over-confident. A larger dot holds more examples; the lower "
                "panel shows the share of examples in each confidence bin.",
                lambda: plots_quality.reliability_figure(calibrations, styles),
            )
        )
    specs.extend(_slice_figures(run, prefix, styles))
    specs.extend(_training_figures(run, prefix, styles))
    return specs


# Pairs drawn on the slices chart (every pair is in the slices table).
_MAX_SLICE_CHARTS = 3


def _slice_figures(run: RunEntry, prefix: str, styles: Mapping[str, plots.ModelStyle]) -> list[FigureSpec]:
    stats = run.result.stats
    if stats is None or stats.slices is None or not stats.comparisons:
        return []
    summary = stats.slices
    specs: list[FigureSpec] = []
    for c in stats.comparisons[:_MAX_SLICE_CHARTS]:
        a, b = c.model_a, c.model_b
        specs.append(
            FigureSpec(
                f"{prefix}-slices-{len(specs)}",
                f"Where {a} and {b} differ",
                f"Accuracy {a} − {b} on every slice (bar: paired interval). Filled, coloured points are significant "
                f"after Holm's adjustment over all {summary.n_tests} slice tests; the verdict names only those.",
                functools.partial(plots_slices.slice_differences_figure, summary, a, b, styles),
            )
        )
    return specs
