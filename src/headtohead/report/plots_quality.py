"""Quality charts: confusion matrices, F1 per class, reliability diagrams (style and rendering: :mod:`.plots`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib import colors
from matplotlib.figure import Figure

from headtohead.report.plots import SEQUENTIAL, ModelStyle, label, new_figure, styled
from headtohead.results.comparison import Calibration
from headtohead.results.records import ClassQuality

__all__ = ["confusion_figure", "per_class_f1_figure", "reliability_figure"]


@styled
def confusion_figure(
    matrices: Mapping[str, Sequence[Sequence[int]]], label_names: Sequence[str], styles: Mapping[str, ModelStyle]
) -> Figure:
    """Row-normalised confusion matrices side by side, on one colour scale.

    Cells carry percentages up to 12 classes; tick labels are thinned beyond 30 classes
    (the report lists the most confused pairs in a table instead).
    """
    k, n = len(label_names), len(matrices)
    per_row = 3 if k <= 12 else 2
    rows, cols = (n + per_row - 1) // per_row, min(n, per_row)
    step = max(1, int(np.ceil(k / 30)))
    ticks = list(range(0, k, step))
    names = [label(label_names[i]) for i in ticks]
    # Room for the tick labels on both axes (about 0.07 in per character at 9 pt, 0.05 at 6 pt).
    room = max((len(name) for name in names), default=0) * (0.07 if k <= 12 else 0.05)
    side = (3.2 if k <= 4 else 4.4 if k <= 12 else 6.0) + room
    fig = new_figure(side * cols + 1.0, side * rows + 0.4)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    # Many classes: a square-root scale, so the few-percent confusions that matter stay visible.
    norm = colors.Normalize(0.0, 1.0) if k <= 12 else colors.PowerNorm(0.5, vmin=0.0, vmax=1.0)
    image = None
    for ax, (model, matrix) in zip(axes, matrices.items(), strict=False):  # the grid may have spare axes
        counts = np.asarray(matrix, dtype=float)
        totals = counts.sum(axis=1, keepdims=True)
        share = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
        image = ax.imshow(share, cmap=SEQUENTIAL, norm=norm, interpolation="nearest")
        ax.grid(False)
        ax.set_title(label(model), color=styles[model].colour)
        ax.set_xticks(ticks, names, rotation=90 if k > 6 else 0, fontsize=9 if k <= 12 else 6)
        ax.set_yticks(ticks, names, fontsize=9 if k <= 12 else 6)
        ax.set_xlabel("predicted")
        ax.set_ylabel("true")
        if k <= 12:
            cmap = image.get_cmap()
            for (i, j), value in np.ndenumerate(share):
                red, green, blue, _ = cmap(norm(value))
                dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5  # text that contrasts with the cell
                ax.text(
                    j,
                    i,
                    f"{value:.0%}",
                    ha="center",
                    va="center",
                    fontsize=9 if k <= 6 else 7,
                    color="white" if dark else "black",
                )
    for ax in axes[n:]:
        ax.set_visible(False)
    if image is not None:
        bar = fig.colorbar(
            image,
            ax=list(axes[:n]),
            shrink=0.8,
            label="share of the true class" + ("" if k <= 12 else " (square-root scale)"),
        )
        if k > 12:
            bar.set_ticks([0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0])
    return fig


@styled
def per_class_f1_figure(
    per_class: Mapping[str, Sequence[ClassQuality]], styles: Mapping[str, ModelStyle], *, max_classes: int = 40
) -> Figure:
    """F1 per class and model: grouped bars up to 15 classes, a dot plot beyond.

    With more than ``max_classes`` classes only those where the models differ most are shown
    (the title says how many of how many).
    """
    models = list(per_class)
    labels = [c.label for c in per_class[models[0]]]
    f1 = np.array([[c.f1 for c in per_class[m]] for m in models])  # models × classes
    shown = np.arange(len(labels))
    title = "F1 per class"
    if len(labels) > max_classes:
        spread = f1.max(axis=0) - f1.min(axis=0)
        shown = np.sort(np.argsort(-spread, kind="stable")[:max_classes])
        title = f"F1 per class — the {max_classes} of {len(labels)} classes where the models differ most"
    k = len(shown)
    fig = new_figure(7.0, 1.2 + (0.32 * k * max(1, len(models)) ** 0.5 if k <= 15 else 0.22 * k))
    ax = fig.add_subplot()
    y = np.arange(k)
    if k <= 15:
        height = 0.8 / len(models)
        for i, model in enumerate(models):
            ax.barh(
                y - 0.4 + height * (i + 0.5),
                f1[i, shown],
                height=height,
                color=styles[model].colour,
                label=label(model),
            )
    else:
        for i, model in enumerate(models):
            ax.plot(
                f1[i, shown],
                y,
                linestyle="none",
                marker=styles[model].marker,
                color=styles[model].colour,
                markersize=6,
                label=label(model),
            )
    ax.set_yticks(y, [label(labels[i]) for i in shown], fontsize=9 if k <= 30 else 7)
    ax.invert_yaxis()
    low = float(f1[:, shown].min()) if k > 15 else 0.0
    ax.set_xlim(max(0.0, low - 0.05) if low > 0.2 else 0.0, 1.0)
    ax.set_xlabel("F1 (higher is better)")
    ax.grid(axis="y", visible=False)
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


@styled
def reliability_figure(calibrations: Mapping[str, Calibration], styles: Mapping[str, ModelStyle]) -> Figure:
    """Reliability diagrams overlaid (accuracy vs confidence per bin), with how many examples each bin holds."""
    fig = new_figure(6.4, 5.6)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    top.plot([0, 1], [0, 1], color="#777777", linestyle="--", linewidth=1, label="perfectly calibrated")
    for model, cal in calibrations.items():
        style = styles[model]
        full = [b for b in cal.bins if b.count > 0 and b.confidence is not None and b.accuracy is not None]
        total = sum(b.count for b in cal.bins) or 1
        top.plot(
            [b.confidence for b in full],
            [b.accuracy for b in full],
            color=style.colour,
            linestyle=style.linestyle,
            linewidth=1.4,
            marker=style.marker,
            markersize=4,
            label=f"{label(model)} (ECE {cal.ece:.3f})",
        )
        # Marker area ∝ examples in the bin: a bin of three examples should not look like a finding.
        top.scatter(
            [b.confidence for b in full],
            [b.accuracy for b in full],
            s=[12 + 300 * b.count / total for b in full],
            color=style.colour,
            marker=style.marker,
            alpha=0.45,
            linewidths=0,
        )
        edges = [b.lower for b in cal.bins] + [cal.bins[-1].upper] if cal.bins else [0.0, 1.0]
        bottom.stairs(
            [b.count / total for b in cal.bins], edges, color=style.colour, linestyle=style.linestyle, linewidth=1.4
        )
    top.set_xlim(0, 1)
    top.set_ylim(0, 1.02)
    top.set_ylabel("accuracy in the bin")
    top.set_title("Reliability (closer to the diagonal is better)")
    top.legend(loc="upper left")
    bottom.set_xlabel("confidence (probability of the predicted class)")
    bottom.set_ylabel("share")
    return fig
