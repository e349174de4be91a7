"""The critical-difference diagram of a suite (Demšar 2006, figure 1), drawn with matplotlib's object API.

An axis of average ranks (1 = best, on the left); each model hangs from its rank, labelled on
the left (the better half) or on the right; a thick bar joins each maximal group of models
whose ranks lie within Nemenyi's critical difference — models under one bar are not shown to
differ — and the CD itself is drawn above the axis as a scale, at its true length: a CD longer
than the axis (k − 1 ranks, few data sets) runs on past rank k, over a dotted continuation of the
axis, and its label says that no two average ranks can be that far apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

from headtohead.report.plots import ModelStyle, label, styled

__all__ = ["critical_difference_figure", "default_height", "WIDTH"]

_LEFT, _RIGHT = 0.30, 0.70  # where ranks 1 and k sit, as a fraction of the width
_ROW = 0.32  # vertical step between labels
_BAR = 0.13  # vertical step between clique bars
#: The default width of the figure in inches (a page's width; a paper's column is 3.5).
WIDTH = 9.0


@styled
def critical_difference_figure(
    average_ranks: Mapping[str, float],
    cd: float | None,
    cliques: Sequence[Sequence[str]],
    styles: Mapping[str, ModelStyle],
    *,
    alpha: float = 0.05,
    size: tuple[float | None, float | None] | None = None,
) -> Figure:
    """Draw the CD diagram.

    Parameters
    ----------
    average_ranks : mapping
        model → average rank (1 = best).
    cd : float or None
        Nemenyi's critical difference; ``None`` (two models) draws no scale and no bars.
    cliques : sequence of sequences of str
        Groups of models within the CD of each other (:func:`~headtohead.stats.across_datasets.critical_difference_cliques`).
    styles : mapping
        model → colour and marker.
    alpha : float
        The CD's level, for its label.
    size : (width, height) in inches, optional
        Either may be ``None``: :data:`WIDTH` wide, :func:`default_height` high (as many rows as
        the labels and bars need).

    Returns
    -------
    Figure
        The rank axis is the line with gid ``rank-axis`` (ranks 1 to k), the CD the line with gid
        ``cd-scale`` and its label the text with gid ``cd-label``.
    """
    order = sorted(average_ranks, key=lambda m: (average_ranks[m], m))
    k = len(order)
    span = max(k - 1, 1)
    # a CD longer than the axis is drawn whole: the scale runs past rank k (ranks lie in 1…k)
    top = max(float(k), 1.0 + cd) if cd is not None and k > 1 else float(k)
    per_rank = (_RIGHT - _LEFT) / max(top - 1.0, span)

    def x(rank: float) -> float:
        return _LEFT + (rank - 1.0) * per_rank

    left = order[: (k + 1) // 2]
    right = order[(k + 1) // 2 :]
    first_row = 0.35 + _BAR * len(cliques) + 0.15
    rows = max(len(left), len(right))
    width, height = size if size is not None else (None, None)
    fig = Figure(figsize=(width or WIDTH, height or default_height(k, len(cliques))))  # axes fill it: no layout engine
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    ax.set_xlim(0.0, 1.0)
    bottom = -(first_row + _ROW * rows)
    ax.set_ylim(bottom, 0.95)

    ax.plot([x(1), x(k)], [0, 0], color="black", linewidth=1.2, gid="rank-axis")
    if top > k:  # where the CD runs past the last rank: the axis continues, dotted, with no ranks on it
        ax.plot([x(k), x(top)], [0, 0], color="#8a93a3", linewidth=1.0, linestyle=":")
    for tick in range(1, k + 1):
        ax.plot([x(tick), x(tick)], [0, 0.08], color="black", linewidth=1.0)
        ax.text(x(tick), 0.12, str(tick), ha="center", va="bottom", fontsize=9)
        if tick < k:
            ax.plot([x(tick + 0.5)] * 2, [0, 0.04], color="black", linewidth=0.6)
    ax.text(x(1), 0.32, "average rank (1 = best)", ha="left", va="bottom", fontsize=8.5, color="#5b6475")
    if cd is not None and k > 1:
        end = 1.0 + cd
        y = 0.62
        ax.plot([x(1), x(end)], [y, y], color="black", linewidth=1.4, gid="cd-scale")
        for edge in (x(1), x(end)):
            ax.plot([edge, edge], [y - 0.05, y + 0.05], color="black", linewidth=1.0)
        longer = ": longer than the axis, no two average ranks can be this far apart" if end > k else ""
        ax.text(
            (x(1) + x(end)) / 2,
            y + 0.07,
            f"CD = {cd:.2f} (Nemenyi, α = {alpha:g}){longer}",
            ha="center",
            va="bottom",
            fontsize=8.5,
            gid="cd-label",
        )
    for index, clique in enumerate(cliques):
        ranks = [average_ranks[m] for m in clique]
        y = -0.28 - _BAR * index
        ax.plot(
            [x(min(ranks)) - 0.006, x(max(ranks)) + 0.006], [y, y], color="black", linewidth=4.0, solid_capstyle="round"
        )
    for side, names in (("left", left), ("right", right)):
        for row, model in enumerate(names if side == "left" else list(reversed(names))):
            rank = average_ranks[model]
            y = -(first_row + _ROW * row)
            end = 0.04 if side == "left" else 0.96
            colour = styles[model].colour if model in styles else "black"
            ax.plot(
                [x(rank), x(rank), end + (0.005 if side == "left" else -0.005)], [0, y, y], color=colour, linewidth=1.2
            )
            ax.plot(
                [x(rank)],
                [0],
                marker=styles[model].marker if model in styles else "o",
                color=colour,
                markersize=6,
                zorder=3,
            )
            text = f"{label(model)}  {rank:.2f}" if side == "left" else f"{rank:.2f}  {label(model)}"
            ax.text(
                end, y + 0.04, text, ha="left" if side == "left" else "right", va="bottom", fontsize=9, color="black"
            )
    return fig


def default_height(k: int, n_cliques: int) -> float:
    """The figure's height in inches when none is given: room for the labels' rows and the bars.

    Examples
    --------
    >>> default_height(4, 1)
    1.84
    """
    rows = max((k + 1) // 2, k - (k + 1) // 2)
    return round(1.2 + 0.26 * rows + 0.12 * n_cliques, 2)
