"""The report's charts, drawn with matplotlib (object API, Agg; no pyplot global state): the
shared style and rendering, and the overview and speed charts. Quality charts live in
:mod:`.plots_quality`, training charts in :mod:`.plots_training`.

See ``docs/api/report.md``, "The report's charts (matplotlib)".
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import matplotlib
import numpy as np
from matplotlib import ticker
from matplotlib.figure import Figure

from headtohead.results.speed import SpeedSummary

__all__ = [
    "OKABE_ITO",
    "ModelStyle",
    "model_styles",
    "TradeoffPoint",
    "pareto_front",
    "tradeoff_figure",
    "interval_figure",
    "level_text",
    "latency_figure",
    "to_svg",
    "to_png",
    "to_pdf",
    "label",
    "log_x",
    "styled",
    "new_figure",
    "SEQUENTIAL",
]

#: Okabe–Ito, reordered so the first colours are the most distinct on white (yellow last).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_LINESTYLES = ("-", "--", ":", "-.")
# A sequential map that is readable in grey and for colour-blind readers.
SEQUENTIAL = "cividis"

_RC = {
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "legend.fontsize": 9,
    "text.parse_math": False,
    "svg.fonttype": "path",
    # TrueType (Type 42) fonts in PDF and PostScript: Type 3 fonts are refused by IEEE's PDF
    # checker (PDF eXpress) and print blurry; saved only inside this rc_context, never globally
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.hashsalt": "headtohead",
    "figure.dpi": 100,
}


@dataclass(frozen=True)
class ModelStyle:
    """How one model is drawn everywhere: colour, marker and line style."""

    colour: str
    marker: str
    linestyle: str


def model_styles(names: Sequence[str]) -> dict[str, ModelStyle]:
    """One style per model name, in order of first appearance.

    Beyond eight models colours repeat, but never with the same marker and line style.

    Examples
    --------
    >>> model_styles(["bert", "roberta"])["roberta"].colour
    '#E69F00'
    """
    styles: dict[str, ModelStyle] = {}
    for name in names:
        if name not in styles:
            i = len(styles)
            styles[name] = ModelStyle(
                OKABE_ITO[i % len(OKABE_ITO)],
                _MARKERS[i % len(_MARKERS)],
                _LINESTYLES[(i // len(OKABE_ITO)) % len(_LINESTYLES)],
            )
    return styles


_MAX_LABEL = 36


def label(text: str) -> str:
    """A user string as drawn: shortened to fit a chart, and never hidden from a legend."""
    if len(text) > _MAX_LABEL:
        text = text[: _MAX_LABEL - 1] + "…"
    # matplotlib hides legend entries whose label starts with "_"; keep them visible.
    return "\u200b" + text if text.startswith("_") else text


@contextmanager
def _style() -> Iterator[None]:
    with matplotlib.rc_context(_RC):
        yield


def styled(function: Callable[..., Any]) -> Callable[..., Any]:
    """Run a plotting function under the report's style (axes and texts read it when created)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _style():
            return function(*args, **kwargs)

    return wrapper


def new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` × ``height`` inches with constrained layout (not registered with pyplot)."""
    return Figure(figsize=(width, height), layout="constrained")


def to_svg(figure: Figure) -> bytes:
    """The figure as SVG (text as paths, no external references); the figure is closed."""
    buffer = io.BytesIO()
    with _style():
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    figure.clear()
    return buffer.getvalue()


def to_pdf(figure: Figure) -> bytes:
    """The figure as PDF (vector, TrueType fonts embedded — no Type 3 —, no creation date: equal figures give equal
    files); the figure is closed."""
    buffer = io.BytesIO()
    with _style():
        figure.savefig(buffer, format="pdf", metadata={"CreationDate": None, "Creator": None, "Producer": None})
    figure.clear()
    return buffer.getvalue()


def to_png(figure: Figure, dpi: int = 144) -> bytes:
    """The figure as PNG; the figure is closed."""
    buffer = io.BytesIO()
    with _style():
        figure.savefig(buffer, format="png", dpi=dpi, facecolor="white", metadata={"Software": None})
    figure.clear()
    return buffer.getvalue()


@dataclass(frozen=True)
class TradeoffPoint:
    """One model (in one run) on the quality–latency plane."""

    model: str
    variant: str
    value: float
    latency_s: float
    low: float | None = None
    high: float | None = None


def pareto_front(points: Sequence[TradeoffPoint]) -> list[int]:
    """Indices of the points no other point beats on both axes (faster *and* better), by latency.

    Examples
    --------
    >>> pts = [TradeoffPoint("a", "", 0.9, 2.0), TradeoffPoint("b", "", 0.8, 1.0), TradeoffPoint("c", "", 0.7, 3.0)]
    >>> pareto_front(pts)
    [1, 0]
    """
    front = []
    for i, p in enumerate(points):
        dominated = any(
            q.latency_s <= p.latency_s and q.value >= p.value and (q.latency_s < p.latency_s or q.value > p.value)
            for q in points
        )
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: (points[i].latency_s, -points[i].value))


@styled
def tradeoff_figure(
    points: Sequence[TradeoffPoint],
    styles: Mapping[str, ModelStyle],
    *,
    metric_label: str = "accuracy",
    latency_label: str = "latency",
    x_scale: float = 1e3,
    x_unit: str = "ms",
) -> Figure:
    """Quality against latency with the Pareto front; one marker shape per variant when there are several.

    Parameters
    ----------
    points : sequence of TradeoffPoint
        ``value`` (and its interval) as fractions, latency in seconds.
    styles : mapping of str to ModelStyle
    metric_label, latency_label : str
        Axis names.
    x_scale, x_unit : float, str
        ``latency_s`` times ``x_scale`` is drawn, in ``x_unit`` (milliseconds by default; the cost
        chart passes a cost per million predictions with ``x_scale=1``).
    """
    fig = new_figure(7.0, 4.6)
    ax = fig.add_subplot()
    variants = list(dict.fromkeys(p.variant for p in points))
    markers = dict(zip(variants, _MARKERS * (len(variants) // len(_MARKERS) + 1), strict=False))  # cycled
    front = pareto_front(points)
    xs = [points[i].latency_s * x_scale for i in front]
    ys = [points[i].value * 100 for i in front]
    ax.step(xs, ys, where="post", color="#777777", linewidth=1.2, linestyle="--", zorder=1, label="Pareto front")
    for i, p in enumerate(points):
        style = styles[p.model]
        marker = markers[p.variant] if len(variants) > 1 else style.marker
        yerr = None
        if p.low is not None and p.high is not None:
            yerr = [[(p.value - p.low) * 100], [(p.high - p.value) * 100]]
        ax.errorbar(
            p.latency_s * x_scale,
            p.value * 100,
            yerr=yerr,
            fmt=marker,
            color=style.colour,
            markersize=9,
            markeredgecolor="black" if i in front else style.colour,
            markeredgewidth=1.2,
            capsize=4,
            zorder=3,
        )
        name = p.model if len(variants) == 1 else f"{p.model} · {p.variant}"
        ax.annotate(
            label(name),
            (p.latency_s * x_scale, p.value * 100),
            textcoords="offset points",
            xytext=(8, 6),
            color=style.colour,
            fontsize=9,
            fontweight="bold",
        )
    latencies = [p.latency_s for p in points]
    if latencies and max(latencies) / max(min(latencies), 1e-12) > 20:
        log_x(ax)
    ax.set_xlabel(f"{latency_label} ({x_unit}, lower is better)")
    ax.set_ylabel(f"{metric_label} (%, higher is better)")
    ax.set_title(f"{metric_label.capitalize()} vs {latency_label}")
    ax.margins(x=0.2, y=0.25)
    ax.legend(loc="lower right")
    return fig


@styled
def interval_figure(
    estimates: Mapping[str, Mapping[str, tuple[float, float, float]]],
    styles: Mapping[str, ModelStyle],
    *,
    percent: bool = True,
    confidence: float | None = None,
) -> Figure:
    """Every metric with its confidence interval, one row per metric and one marker per model.

    Parameters
    ----------
    estimates : mapping
        ``{metric label: {model: (value, low, high)}}``; ``low``/``high`` ``None`` when there is no interval.
    styles : mapping of str to ModelStyle
    percent : bool
        Show the values as percentages.
    confidence : float, optional
        The intervals' level, from the records (``stats.alpha``); named on the axis when given.
    """
    metrics = list(estimates)
    models = list(dict.fromkeys(m for per_model in estimates.values() for m in per_model))
    fig = new_figure(5.2, 1.3 + 0.42 * len(metrics) * max(1, len(models)) ** 0.5)
    ax = fig.add_subplot()
    scale = 100.0 if percent else 1.0
    offsets = np.linspace(-0.25, 0.25, len(models)) if len(models) > 1 else [0.0]
    for offset, model in zip(offsets, models, strict=True):
        style = styles[model]
        rows = [(i, estimates[m][model]) for i, m in enumerate(metrics) if model in estimates[m]]
        y = [i + offset for i, _ in rows]
        x = [v * scale for _, (v, _, _) in rows]
        # a value without an interval (none could be given honestly) is drawn without a bar
        err = [
            [0.0 if lo is None else (v - lo) * scale for _, (v, lo, _) in rows],
            [0.0 if hi is None else (hi - v) * scale for _, (v, _, hi) in rows],
        ]
        ax.errorbar(x, y, xerr=err, fmt=style.marker, color=style.colour, capsize=3, markersize=7, label=label(model))
    ax.set_yticks(range(len(metrics)), metrics)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    level = f"{level_text(confidence)} " if confidence is not None else ""
    ax.set_xlabel(f"value (%) with {level}confidence interval" if percent else f"value with {level}confidence interval")
    fig.suptitle("Metrics with confidence intervals", fontweight="bold", fontsize=11)
    fig.legend(loc="outside lower center", ncols=min(len(models), 4))
    return fig


def level_text(*confidences: float) -> str:
    """The level(s) of intervals for a caption or an axis: ``95 %``; ``90 % / 95 %`` when they differ.

    Examples
    --------
    >>> level_text(0.95), level_text(0.9, 0.95, 0.9), level_text(0.975)
    ('95 %', '90 % / 95 %', '97.5 %')
    """
    return " / ".join(f"{round(100 * c, 2):g} %" for c in sorted(set(confidences)))


def log_x(ax: Any) -> None:
    """A logarithmic x axis with plain numbers (the default labels are TeX, which is switched off here)."""
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())


def _spread(ax: Any) -> float:
    """max / min of the x data drawn on ``ax``."""
    xs = np.concatenate([np.asarray(line.get_xdata(), dtype=float) for line in ax.lines])
    xs = xs[xs > 0]
    return float(xs.max() / xs.min()) if xs.size else 1.0


def _ecdf(samples_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.sort(samples_s)
    return x, np.arange(1, len(x) + 1) / len(x)


@styled
def latency_figure(speed: SpeedSummary, styles: Mapping[str, ModelStyle]) -> Figure | None:
    """Latency distributions (empirical CDFs) per scenario; ``None`` when nothing was timed."""
    scenarios = [run for run in speed.scenarios if any(m.timing(run.scenario) for m in speed.models)]
    if not scenarios:
        return None
    fig = new_figure(4.2 * len(scenarios) + 1.4, 3.8)
    axes = fig.subplots(1, len(scenarios), squeeze=False)[0]
    for ax, run in zip(axes, scenarios, strict=True):
        for model in speed.models:
            timing = model.timing(run.scenario)
            if timing is None:
                continue
            style = styles[model.name]
            x, y = _ecdf(np.asarray(timing.samples_ns, dtype=float) / 1e6)
            ax.step(
                x,
                y,
                where="post",
                color=style.colour,
                linestyle=style.linestyle,
                linewidth=1.8,
                label=f"{label(model.name)} (median {np.median(x):.3g} ms)",
            )
            ax.plot([np.median(x)], [0.5], marker=style.marker, color=style.colour, markersize=6)
        if ax.lines and _spread(ax) > 10:  # a long tail: a log axis keeps the bulk readable
            log_x(ax)
        unit = "batch" if run.batch_size > 1 else "example"
        ax.set_title(f"{run.scenario.replace('_', ' ')} · batch {run.batch_size}")
        ax.set_xlabel(f"ms per {unit} (left is faster)")
        ax.set_ylabel("share of calls at most this slow")
        ax.set_ylim(0, 1.02)
        ax.legend(loc="lower right")
    return fig


def _by_size(speed: SpeedSummary, scenario: str) -> np.ndarray | None:
    """Each timed input's size (a batch: its longest example, which sets the padded length)."""
    sizes = speed.timed_sizes.get(scenario)
    return np.array([max(batch) for batch in sizes], dtype=float) if sizes else None


@styled
def latency_by_size_figure(speed: SpeedSummary, styles: Mapping[str, ModelStyle]) -> Figure | None:
    """Median latency of each timed input against its length, per scenario; ``None`` unless the inputs are text."""
    if speed.size_unit not in ("words", "characters"):
        return None
    panels = [
        (run, sizes)
        for run in speed.scenarios
        if (sizes := _by_size(speed, run.scenario)) is not None and any(m.timing(run.scenario) for m in speed.models)
    ]
    if not panels:
        return None
    fig = new_figure(4.2 * len(panels) + 1.4, 3.8)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (run, sizes) in zip(axes, panels, strict=True):
        order = np.argsort(sizes, kind="stable")
        for model in speed.models:
            timing = model.timing(run.scenario)
            if timing is None or timing.inputs != len(sizes):
                continue
            style = styles[model.name]
            medians = np.array([np.median(x) for x in timing.input_latencies_ns()], dtype=float) / 1e6
            ax.plot(
                sizes[order],
                medians[order],
                color=style.colour,
                linestyle=style.linestyle,
                linewidth=1.2,
                marker=style.marker,
                markersize=4,
                label=label(model.name),
            )
        longest = "longest example's " if run.batch_size > 1 else ""
        ax.set_title(f"{run.scenario.replace('_', ' ')} · batch {run.batch_size}")
        ax.set_xlabel(f"{longest}length ({speed.size_unit})")
        ax.set_ylabel("median ms per call (lower is faster)")
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper left")
    return fig
