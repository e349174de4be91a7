"""Training charts: the seeds' dual-axis chart and training curves (style and rendering: :mod:`.plots`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from headtohead.report.plots import ModelStyle, label, new_figure, styled
from headtohead.results.comparison import MultiSeedSummary
from headtohead.results.training import TrainingRun

__all__ = ["seeds_figure", "training_curves_figure"]


@styled
def seeds_figure(
    seeds: MultiSeedSummary,
    styles: Mapping[str, ModelStyle],
    *,
    metric: str = "accuracy",
    latency_ms: Mapping[str, float] | None = None,
) -> Figure | None:
    """Over training seeds: the metric's mean as bars (± standard deviation, every seed a dot),
    and each model's latency as a line on a second axis. ``None`` when no model has ``metric``."""
    rows = []
    for model in seeds.models:
        try:
            rows.append((model.model, model.metric(metric)))
        except KeyError:
            continue
    if not rows:
        return None
    fig = new_figure(max(5.0, 1.3 * len(rows) + 2.5), 4.2)
    ax = fig.add_subplot()
    x = np.arange(len(rows))
    for i, (name, agg) in enumerate(rows):
        style = styles[name]
        ax.bar(i, agg.mean * 100, color=style.colour, alpha=0.85, width=0.6, yerr=(agg.std or 0.0) * 100, capsize=5)
        jitter = np.linspace(-0.15, 0.15, len(agg.values)) if len(agg.values) > 1 else [0.0]
        ax.plot(i + np.asarray(jitter), np.asarray(agg.values) * 100, "o", color="black", markersize=3.5)
    values = [v for _, agg in rows for v in agg.values]
    low = min(values) * 100
    ax.set_ylim(max(0.0, low - (100 - low) * 0.5 - 1), min(100.0, max(values) * 100 + 3))
    ax.set_xticks(x, [label(m) for m, _ in rows])
    ax.set_ylabel(f"{metric} over seeds (%)")
    ax.set_title(
        f"{metric.capitalize()} over {max(a.n_seeds for _, a in rows)} seeds" + (" and latency" if latency_ms else "")
    )
    if latency_ms:
        twin = ax.twinx()
        twin.grid(False)
        twin.spines["right"].set_visible(True)
        pts = [(i, latency_ms[m]) for i, (m, _) in enumerate(rows) if m in latency_ms]
        twin.plot([i for i, _ in pts], [v for _, v in pts], color="#333333", marker="D", linewidth=1.5, label="latency")
        twin.set_ylabel("latency (ms, line)")
        twin.set_ylim(0, max(v for _, v in pts) * 1.3 if pts else 1)
        twin.legend(loc="upper right")
    return fig


@styled
def training_curves_figure(runs: Sequence[TrainingRun], styles: Mapping[str, ModelStyle]) -> Figure | None:
    """Training loss per epoch, and the evaluation accuracy after each epoch when it was measured.

    One line per model and seed (the model's colour; further seeds thinner). ``None`` when
    no run has an epoch.
    """
    runs = [r for r in runs if r.epochs]
    if not runs:
        return None
    with_eval = any(e.eval and "accuracy" in e.eval for r in runs for e in r.epochs)
    fig = new_figure(10.0 if with_eval else 6.0, 3.8)
    axes = fig.subplots(1, 2 if with_eval else 1, squeeze=False)[0]
    seen: set[str] = set()
    for run in runs:
        style = styles[run.model]
        first = run.model not in seen
        seen.add(run.model)
        epochs = [e.epoch for e in run.epochs]
        kwargs = dict(
            color=style.colour,
            marker=style.marker,
            linestyle=style.linestyle,
            linewidth=1.8 if first else 0.9,
            markersize=5 if first else 3,
            alpha=1.0 if first else 0.6,
            label=label(run.model) if first else None,
        )
        axes[0].plot(epochs, [e.train_loss for e in run.epochs], **kwargs)
        if with_eval:
            points = [(e.epoch, e.eval["accuracy"] * 100) for e in run.epochs if e.eval and "accuracy" in e.eval]
            axes[1].plot([p[0] for p in points], [p[1] for p in points], **kwargs)
    axes[0].set_title("Training loss")
    axes[0].set_xlabel("epoch")
    axes[0].set_ylabel("mean batch loss (lower is better)")
    axes[0].legend(loc="upper right")
    if with_eval:
        axes[1].set_title("Evaluation accuracy after each epoch")
        axes[1].set_xlabel("epoch")
        axes[1].set_ylabel("accuracy (%)")
    for ax in axes:
        ax.xaxis.get_major_locator().set_params(integer=True)
    return fig
