"""The front's charts: accuracy against latency, and against cost, each model with both intervals."""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.figure import Figure

from headtohead.report.plots import ModelStyle, label, log_x, new_figure, styled
from headtohead.report.words.numbers import format_probability
from headtohead.results.decision import DecisionSummary

__all__ = ["front_figure"]

_GREY = "#AAAAAA"
#: Each drawable axis: its name on the chart, unit, and the factor its value is drawn at.
_X = {
    "latency": ("latency per prediction", "ms", 1e3),
    "cost": ("cost per 1M predictions", "in the prices' currency", 1.0),
}


@styled
def front_figure(summary: DecisionSummary, axis: str, styles: Mapping[str, ModelStyle]) -> Figure | None:
    """Accuracy (%) against ``axis`` (``latency`` or ``cost``), or ``None`` when the decision did not read that axis.

    Every model is drawn with its accuracy interval (vertical) and its interval on ``axis`` (horizontal); the models
    on the front are joined by a dashed step in order of ``axis`` (what each step up costs); a dominated model is
    grey.
    """
    if axis not in summary.axes or axis not in _X:
        return None
    name, unit, scale = _X[axis]
    fig = new_figure(7.0, 4.6)
    ax = fig.add_subplot()
    front = []
    xs = []
    for model in summary.models:
        x_value, y_value = model.value(axis), model.value("quality")
        if x_value is None or x_value.value is None or y_value is None or y_value.value is None:
            continue
        x, y = x_value.value * scale, y_value.value * 100
        xs.append(x)
        xerr = None
        if x_value.ci_low is not None and x_value.ci_high is not None:
            xerr = [[x - x_value.ci_low * scale], [x_value.ci_high * scale - x]]
        yerr = None
        if y_value.ci_low is not None and y_value.ci_high is not None:
            yerr = [[y - y_value.ci_low * 100], [y_value.ci_high * 100 - y]]
        style = styles.get(model.name)
        colour = _GREY if model.front == "dominated" or style is None else style.colour
        marker = style.marker if style is not None else "o"
        ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt=marker, color=colour, markersize=9, capsize=4, zorder=3)
        ax.annotate(
            f"{label(model.name)} · P {format_probability(model.p_front)}",
            (x, y),
            textcoords="offset points",
            xytext=(8, 6),
            color=colour,
            fontsize=9,
        )
        if model.front == "front":
            front.append((x, y))
    if len(front) > 1:
        front.sort()
        xs_front, ys_front = [p[0] for p in front], [p[1] for p in front]
        ax.step(xs_front, ys_front, where="post", color="#555555", linestyle="--", zorder=1, label="front")
        ax.legend(loc="lower right")
    if xs and max(xs) / max(min(xs), 1e-12) > 20:
        log_x(ax)
    ax.set_xlabel(f"{name} ({unit}, lower is better)")
    ax.set_ylabel("accuracy (%, higher is better)")
    ax.set_title(f"Accuracy vs {name}")
    ax.margins(x=0.2, y=0.25)
    return fig
