"""The report's charts: consistent colours, the Pareto front, every chart drawn from real records."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from sim.sample import sample_run

from headtohead.report import plots, plots_quality, plots_training
from headtohead.report.figures import overview_figures, report_styles, run_figures
from headtohead.report.merge import RunEntry, as_merged
from headtohead.results.comparison import MultiSeedSummary
from headtohead.stats.seeds import summarise_seeds

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run():
    return sample_run({"bert": 0.84, "roberta": 0.9, "distil": 0.8}, n_examples=600, n_resamples=200)


def _is_svg(data: bytes) -> bool:
    root = ET.fromstring(data)
    return root.tag.endswith("svg")


def test_each_model_keeps_one_style_and_the_palette_is_okabe_ito():
    styles = plots.model_styles(["a", "b", "a", "c"])
    assert list(styles) == ["a", "b", "c"]
    assert [s.colour for s in styles.values()] == list(plots.OKABE_ITO[:3])
    many = plots.model_styles([f"m{i}" for i in range(12)])
    combos = {(s.colour, s.marker, s.linestyle) for s in many.values()}
    assert len(combos) == 12  # colours repeat past eight, but never with the same marker and line


def test_pareto_front_keeps_only_undominated_points_in_latency_order():
    pts = [
        plots.TradeoffPoint("slow-good", "", 0.95, 3.0),
        plots.TradeoffPoint("fast-ok", "", 0.90, 1.0),
        plots.TradeoffPoint("dominated", "", 0.85, 2.0),
        plots.TradeoffPoint("tie", "", 0.90, 1.0),
    ]
    front = plots.pareto_front(pts)
    assert [pts[i].model for i in front] in (["fast-ok", "tie", "slow-good"], ["tie", "fast-ok", "slow-good"])
    assert 2 not in front


def test_every_chart_of_a_full_run_renders_as_svg_and_png(run):
    result, predictions = run
    merged = as_merged(result, predictions=predictions)
    styles = report_styles(merged)
    specs = overview_figures(merged, styles) + run_figures(merged.runs[0], 1, styles)
    keys = [s.key for s in specs]
    assert keys == [
        "overview-tradeoff",
        "run1-intervals",
        "run1-latency",
        "run1-confusion",
        "run1-f1",
        "run1-reliability",
        "run1-slices-0",
        "run1-slices-1",
        "run1-slices-2",
    ]
    for spec in specs:
        svg = spec.svg()
        assert _is_svg(svg)
        # Only namespace names, nothing a viewer would fetch.
        assert not re.search(rb"(href|src)=\"(?!#|data:image/png)|url\((?!#)", svg)
    assert specs[3].png().startswith(PNG_MAGIC)


def test_charts_drop_out_when_their_section_is_missing():
    result, _ = sample_run(n_examples=200, stats=False, speed=False)
    merged = as_merged(result)
    styles = report_styles(merged)
    assert overview_figures(merged, styles) == []
    assert [s.key for s in run_figures(merged.runs[0], 1, styles)] == ["run1-confusion", "run1-f1"]


def test_reliability_falls_back_to_the_predictions_without_statistics():
    result, predictions = sample_run(n_examples=200, stats=False, speed=False)
    entry = RunEntry(result=result, label="x", predictions=predictions)
    keys = [s.key for s in run_figures(entry, 1, plots.model_styles(["bert", "roberta"]))]
    assert "run1-reliability" in keys


def test_confusion_for_77_classes_uses_thinned_ticks_and_a_square_root_scale():
    labels = [f"intent_{i}" for i in range(77)]
    rng = np.random.default_rng(0)
    matrix = (np.eye(77) * 20 + rng.integers(0, 3, (77, 77))).astype(int).tolist()
    fig = plots_quality.confusion_figure({"a": matrix, "b": matrix}, labels, plots.model_styles(["a", "b"]))
    ax = fig.axes[0]
    assert len(ax.get_xticks()) == 26  # every third class labelled, not 77 overlapping names
    assert type(ax.images[0].norm).__name__ == "PowerNorm"
    assert plots.to_svg(fig)


def test_per_class_f1_shows_the_classes_where_models_differ_most():
    result, _ = sample_run(
        {"a": 0.9, "b": 0.6}, label_names=[f"c{i}" for i in range(60)], n_examples=1200, stats=False, speed=False
    )
    per_class = {m.name: m.quality.per_class for m in result.models}
    fig = plots_quality.per_class_f1_figure(per_class, plots.model_styles(["a", "b"]), max_classes=40)
    ax = fig.axes[0]
    assert "40 of 60" in ax.get_title()
    assert len(ax.get_yticks()) == 40


def test_user_text_is_drawn_literally():
    # "$" would start TeX math, a leading "_" would hide the legend entry.
    styles = plots.model_styles(["$cost$ model", "_private"])
    fig = plots.interval_figure({"accuracy": {"$cost$ model": (0.8, 0.7, 0.9), "_private": (0.7, 0.6, 0.8)}}, styles)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["$cost$ model", "\u200b_private"]
    assert plots.to_svg(fig)


def test_seeds_chart_has_bars_and_a_latency_line_on_a_second_axis():
    from headtohead.results.comparison import SeedResult

    results = [
        SeedResult(model=m, seed=s, metrics={"accuracy": acc + step * s})
        for m, acc, step in (("bert", 0.85, 0.01), ("roberta", 0.9, 0.02))
        for s in range(3)
    ]
    seeds = summarise_seeds(results)
    assert isinstance(seeds, MultiSeedSummary)
    styles = plots.model_styles(["bert", "roberta"])
    fig = plots_training.seeds_figure(seeds, styles, latency_ms={"bert": 2.0, "roberta": 3.0})
    bars, line = fig.axes
    assert len(bars.patches) == 2
    assert list(line.lines[0].get_ydata()) == [2.0, 3.0]
    assert plots_training.seeds_figure(seeds, {}, metric="f1_macro") is None


def test_log_axes_label_ticks_as_plain_numbers_not_tex():
    fig = plots.new_figure(4, 3)
    ax = fig.add_subplot()
    ax.plot([0.5, 2000.0], [0, 1])
    plots.log_x(ax)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels and not any("$" in text or "mathdefault" in text for text in labels)
    assert "1000" in labels


def test_interval_levels_in_captions_and_axes_come_from_the_records(run):
    """At stats.alpha = 0.1 the charts say 90 %, never a hard-written 95 %."""
    from headtohead.stats import analyse

    result, predictions = run
    at_90 = result.model_copy(update={"stats": analyse(predictions, alpha=0.1, n_resamples=200)})
    merged = as_merged(at_90, predictions=predictions)
    styles = report_styles(merged)
    specs = {s.key: s for s in overview_figures(merged, styles) + run_figures(merged.runs[0], 1, styles)}
    for key in ("overview-tradeoff", "run1-intervals"):
        assert "90 %" in specs[key].caption and "95" not in specs[key].caption, specs[key].caption
    assert specs["run1-intervals"].make().axes[0].get_xlabel() == "value (%) with 90 % confidence interval"
    default = run_figures(as_merged(result, predictions=predictions).runs[0], 1, styles)
    assert "95 %" in next(s for s in default if s.key == "run1-intervals").caption
