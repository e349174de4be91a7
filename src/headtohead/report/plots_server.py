"""The latency–load curve of the Server scenario: p50 and p99 against the offered rate, per model."""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.figure import Figure

from headtohead.report.plots import ModelStyle, label, new_figure, styled
from headtohead.results.server import LoadGenSummary

__all__ = ["server_figure"]


@styled
def server_figure(loadgen: LoadGenSummary, styles: Mapping[str, ModelStyle]) -> Figure | None:
    """p99 (solid) and p50 (dotted) latency of every trial against its target rate; filled markers
    are trials LoadGen judged VALID, hollow ones INVALID. The dashed line is the bound; a vertical
    band per model marks its max_qps interval. ``None`` without Server trials."""
    models = [m for m in loadgen.models if m.trials]
    if not models:
        return None
    fig = new_figure(6.4, 4.0)
    ax = fig.subplots()
    for model in models:
        style = styles[model.name]
        curve = [t for t in model.curve() if t.p99_s is not None]
        rates = [t.target_qps for t in curve]
        ax.plot(rates, [t.p99_s * 1e3 for t in curve], color=style.colour, linestyle=style.linestyle, linewidth=1.4,
                label=f"{label(model.name)} p99")
        ax.plot(rates, [t.p50_s * 1e3 if t.p50_s is not None else float("nan") for t in curve], color=style.colour,
                linestyle=":", linewidth=1.2, label=f"{label(model.name)} p50")
        for trial in curve:
            ax.plot([trial.target_qps], [trial.p99_s * 1e3], marker=style.marker, markersize=5, color=style.colour,
                    markerfacecolor=style.colour if trial.held else "white", linestyle="none")
        if model.ci_low is not None and model.ci_high is not None:
            ax.axvspan(model.ci_low, model.ci_high, color=style.colour, alpha=0.12, linewidth=0)
        if model.max_qps is not None:
            ax.axvline(model.max_qps, color=style.colour, linewidth=1.0, alpha=0.8)
    ax.axhline(loadgen.latency_bound_ms, color="0.3", linestyle="--", linewidth=1.0,
               label=f"bound {loadgen.latency_bound_ms:g} ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("offered load (queries/s, Poisson arrivals)")
    ax.set_ylabel("latency, arrival to answer (ms)")
    ax.set_title("latency under load · filled: LoadGen VALID")
    ax.legend(loc="upper left", fontsize=8)
    return fig
