"""The latency–load curve of the Server scenario: p50 and p99 against the offered rate, per model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from matplotlib import ticker
from matplotlib.figure import Figure

from headtohead.report.plots import ModelStyle, label, log_x, new_figure, styled
from headtohead.results.server import LoadGenSummary

__all__ = ["server_figure"]


def _log_axes(ax: Any) -> None:
    """Both axes logarithmic, labelled with plain numbers (the default labels are TeX, switched off here)."""
    log_x(ax)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())


@styled
def server_figure(loadgen: LoadGenSummary, styles: Mapping[str, ModelStyle]) -> Figure | None:
    """Every trial's p99 (large markers; filled when LoadGen judged it VALID, hollow when not) and p50
    (small dots) against its offered rate. The dashed line is the bound; a vertical line per model
    marks its max_qps and a band its interval. ``None`` without Server trials."""
    models = [m for m in loadgen.models if m.trials]
    if not models:
        return None
    fig = new_figure(6.4, 4.0)
    ax = fig.subplots()
    for model in models:
        style = styles[model.name]
        curve = [(t, p99) for t in model.curve() if (p99 := t.p99_s) is not None]
        for held in (True, False):
            trials = [(t, p99) for t, p99 in curve if t.held == held]
            ax.plot(
                [t.target_qps for t, _ in trials],
                [p99 * 1e3 for _, p99 in trials],
                linestyle="none",
                marker=style.marker,
                markersize=6,
                color=style.colour,
                markerfacecolor=style.colour if held else "white",
                label=f"{label(model.name)} p99 ({'held' if held else 'missed'})" if trials else None,
            )
        medians = [(t.target_qps, p50) for t, _ in curve if (p50 := t.p50_s) is not None]
        ax.plot(
            [qps for qps, _ in medians],
            [p50 * 1e3 for _, p50 in medians],
            linestyle="none",
            marker=".",
            markersize=4,
            color=style.colour,
            alpha=0.7,
            label=f"{label(model.name)} p50",
        )
        if model.ci_low is not None and model.ci_high is not None:
            ax.axvspan(model.ci_low, model.ci_high, color=style.colour, alpha=0.10, linewidth=0)
        if model.max_qps is not None:
            ax.axvline(model.max_qps, color=style.colour, linewidth=1.2, alpha=0.9)
    ax.axhline(
        loadgen.latency_bound_ms,
        color="0.3",
        linestyle="--",
        linewidth=1.0,
        label=f"bound {loadgen.latency_bound_ms:g} ms",
    )
    _log_axes(ax)
    ax.set_xlabel("offered load (queries/s, Poisson arrivals)")
    ax.set_ylabel("latency, arrival to answer (ms)")
    ax.set_title("latency under load · line: max_qps, band: its interval")
    ax.legend(loc="best", fontsize=8)
    return fig
