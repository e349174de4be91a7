"""The chart of a sequential run (``h2h run --until-decided``): each pair's confidence sequence and e-values.

Its words are :mod:`headtohead.report.words.sequential`; the style is :mod:`.plots`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

from headtohead.report.figures import FigureSpec
from headtohead.report.plots import ModelStyle, label, new_figure, styled
from headtohead.report.words.sequential import decision_at, decision_phrase, level_words
from headtohead.results.records import RunResult
from headtohead.results.sequential import SequentialRecord

__all__ = ["sequential_figures", "sequential_figure"]

#: Pairs drawn in the chart (a row each); more would make it unreadable.
MAX_PAIRS_DRAWN = 6


@styled
def sequential_figure(records: Sequence[SequentialRecord], styles: Mapping[str, ModelStyle]) -> Figure | None:
    """Per pair: the running confidence sequence of the accuracy gap (left) and the two e-values (right)
    against the examples used; the vertical line marks the decision. ``None`` without steps."""
    drawn = [r for r in records if r.steps][:MAX_PAIRS_DRAWN]
    if not drawn:
        return None
    fig = new_figure(8.4, 2.6 * len(drawn))
    axes = fig.subplots(len(drawn), 2, squeeze=False)
    for (gap_ax, e_ax), record in zip(axes, drawn, strict=True):
        n = [s.n for s in record.steps]
        colour = styles[record.model_a].colour if record.model_a in styles else "#0072B2"
        gap_ax.fill_between(
            n,
            [100 * s.low for s in record.steps],
            [100 * s.high for s in record.steps],
            color=colour,
            alpha=0.18,
            linewidth=0,
            step="post",
            label=f"{level_words(record.alpha)} confidence sequence",
        )
        gap_ax.plot(
            n,
            [100 * (s.only_a_correct - s.only_b_correct) / s.n for s in record.steps],
            color=colour,
            marker=".",
            label="observed gap",
        )
        gap_ax.axhline(0.0, color="0.3", linewidth=0.8)
        if record.margin is not None:
            for sign in (1, -1):
                gap_ax.axhline(100 * sign * record.margin, color="0.5", linestyle="--", linewidth=0.8)
        gap_ax.set_ylim(
            max(-100.0, min(100 * s.low for s in record.steps) - 5),
            min(100.0, max(100 * s.high for s in record.steps) + 5),
        )
        gap_ax.set_ylabel(f"{label(record.model_a)} − {label(record.model_b)} (pp)", fontsize=8)
        short = record.model_copy(update={"model_a": label(record.model_a), "model_b": label(record.model_b)})
        gap_ax.set_title(decision_phrase(short), fontsize=9)
        for name, key in ((record.model_a, "log_e_a_better"), (record.model_b, "log_e_b_better")):
            e_ax.plot(
                n,
                [getattr(s, key) / math.log(10) for s in record.steps],
                marker=".",
                color=styles[name].colour if name in styles else None,
                label=f"{label(name)} better",
            )
        e_ax.axhline(
            math.log10(2 / record.alpha),
            color="0.3",
            linestyle="--",
            linewidth=0.9,
            label=f"decides at 2/α = {2 / record.alpha:.3g}",
        )
        e_ax.set_ylabel("log10 e-value", fontsize=8)
        decided = decision_at(record)
        for ax in (gap_ax, e_ax):
            if decided is not None:
                ax.axvline(decided, color="0.2", linestyle=":", linewidth=1.0)
            ax.set_xlabel("examples used")
            ax.legend(loc="best", fontsize=7)
    return fig


def sequential_figures(result: RunResult, prefix: str, styles: Mapping[str, ModelStyle]) -> list[FigureSpec]:
    """The report's sequential chart of one run (``prefix`` as in ``run1``); empty for an ordinary run."""
    records = result.stats.sequential if result.stats is not None else None
    if not records:
        return []
    more = f" The first {MAX_PAIRS_DRAWN} of {len(records)} pairs are drawn." if len(records) > MAX_PAIRS_DRAWN else ""
    caption = (
        "Left: the gap between each pair's accuracies as the examples came in, with the running "
        "confidence sequence, which holds at every look at once; a pair is decided when it leaves 0 "
        "(dashed lines: the equivalence margin, when one is set). Right: the e-value of each direction; "
        "crossing the dashed line is the same decision. Dotted: where the pair was decided." + more
    )
    return [
        FigureSpec(f"{prefix}-sequential", "Sequential evaluation", caption, lambda: sequential_figure(records, styles))
    ]
