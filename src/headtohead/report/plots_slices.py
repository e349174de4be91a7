"""The slices chart: one pair's accuracy difference on every slice, with its interval (style: :mod:`.plots`)."""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.figure import Figure

from headtohead.report.plots import ModelStyle, label, new_figure, styled
from headtohead.report.rows.where import slice_name
from headtohead.results.slices import SliceSummary

__all__ = ["slice_differences_figure"]

_GREY = "#8a93a5"


@styled
def slice_differences_figure(
    summary: SliceSummary, model_a: str, model_b: str, styles: Mapping[str, ModelStyle]
) -> Figure | None:
    """``accuracy(a) − accuracy(b)`` per slice (percentage points) with Tango's score interval.

    A slice where the difference is significant after Holm's adjustment over all slices is
    drawn in the winner's colour and filled; the others are grey and hollow. ``None`` when the
    pair was not compared on any slice.
    """
    rows = [(s, p) for s in summary.slices for p in s.pairs if (p.model_a, p.model_b) == (model_a, model_b)]
    if not rows:
        return None
    fig = new_figure(7.2, 0.9 + 0.32 * len(rows))
    ax = fig.subplots()
    for y, (_, p) in enumerate(rows):
        colour = styles[p.winner].colour if p.significant and p.winner is not None and p.winner in styles else _GREY
        ax.errorbar(
            100 * p.difference,
            y,
            xerr=[[100 * (p.difference - p.ci_low)], [100 * (p.ci_high - p.difference)]],
            fmt="o",
            color=colour,
            ecolor=colour,
            capsize=3,
            markersize=6,
            markerfacecolor=colour if p.significant else "white",
        )
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [label(f"{slice_name(s)} (n={s.n_examples:,})") for s, _ in rows])
    ax.invert_yaxis()
    ax.set_xlabel(f"accuracy {label(model_a)} − {label(model_b)} (pp)")
    ax.grid(axis="y", visible=False)
    return fig
