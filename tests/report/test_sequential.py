"""The words and the chart of a sequential run, from records whose numbers are known."""

from __future__ import annotations

import numpy as np
import pytest
from sim.sample import sample_run

from headtohead.report.plots import model_styles, to_svg
from headtohead.report.plots_sequential import sequential_figure
from headtohead.report.words.sequential import (
    decision_phrase,
    sequential_lines,
    sequential_sentence,
    with_sequential,
)
from headtohead.results.comparison import StatsSummary
from headtohead.stats.sequential import SequentialTest, to_record


def _record(
    a_right: int,
    b_right: int,
    chunks: int,
    *,
    n_available: int = 1000,
    alpha: float = 0.05,
    margin: float | None = None,
    names: tuple[str, str] = ("bert", "roberta"),
):
    """A record after ``chunks`` chunks of 50, each with ``a_right`` only-A and ``b_right`` only-B examples."""
    test = SequentialTest(alpha, margin)
    a = np.zeros(50, bool)
    b = np.zeros(50, bool)
    a[:a_right] = True
    b[a_right : a_right + b_right] = True
    for _ in range(chunks):
        test.update(a, b)
    return to_record(
        test, model_a=names[0], model_b=names[1], chunk_size=50, examples_available=n_available, order_seed=42
    )


def test_phrases_name_the_winner_the_margin_or_no_decision():
    assert decision_phrase(_record(10, 1, 4)) == "bert is better than roberta"
    assert decision_phrase(_record(1, 10, 4)) == "roberta is better than bert"
    assert decision_phrase(_record(2, 2, 20, n_available=1000)) == "no decision between bert and roberta"
    assert decision_phrase(_record(2, 2, 1)) == "no decision yet between bert and roberta"
    equal = _record(0, 0, 20, margin=0.05, n_available=5000)
    assert equal.decision == "equivalent"
    assert decision_phrase(equal) == "bert and roberta are equivalent within ±5.0 pp"


def test_sentence_of_an_early_stop_quotes_the_counts_the_bonferroni_split_and_the_interval():
    record = _record(10, 1, 4, alpha=0.05 / 3)
    step = record.final
    text = sequential_sentence(record, family_alpha=0.05, n_pairs=3)
    assert text.startswith(
        f"Stopped early after {record.examples_used} of 1,000 examples (seeded random order, "
        f"a look every 50): bert is better than roberta, decided at {step.decided_at}"
    )
    assert "α = 0.0167 = 0.05 over 3 pairs, Bonferroni" in text
    assert f"98.33 % confidence sequence of bert − roberta: +{100 * step.low:.1f}…+{100 * step.high:.1f} pp" in text
    assert f"The gap on these 200 examples, +{100 * step.gap:.1f} pp, is biased away from 0 by the early stop" in text
    assert "fixed-sample tests and intervals of a stopped sample are not valid" in text


def test_sentence_of_a_run_that_used_every_example_says_so():
    text = sequential_sentence(_record(2, 2, 20), family_alpha=0.05, n_pairs=1)
    assert text.startswith("Sequential evaluation used all 1,000 examples (a look every 50): no decision between")
    assert "Bonferroni" not in text and "descriptive" not in text and "decided at" not in text


@pytest.fixture()
def summary() -> StatsSummary:
    return sample_run({"bert": 0.86, "roberta": 0.91}, speed=False)[0].stats


def test_with_sequential_stores_the_records_and_words_each_verdict(summary):
    record = _record(1, 10, 4, names=("roberta", "bert"))  # stored in the other order: matched either way
    before = summary.comparisons[0].verdict
    updated = with_sequential(summary, [record])
    assert updated.sequential == [record] and summary.sequential is None
    verdict = updated.comparisons[0].verdict
    # stopped early: the sequential sentence replaces the fixed-sample verdict (its p-value is not valid)
    assert verdict == "bert vs roberta: " + sequential_sentence(record, family_alpha=0.05, n_pairs=1)
    assert "McNemar" not in verdict
    # every example used: the sequential test still decides (a fixed-sample p after 19 interim looks is not valid),
    # so the fixed-sample verdict is replaced too and no sentence pairs a McNemar p with a sequential decision
    whole = _record(1, 10, 20, names=("roberta", "bert"))
    assert whole.examples_used == whole.examples_available
    kept = with_sequential(summary, [whole]).comparisons[0].verdict
    assert "McNemar" in before and "McNemar" not in kept
    assert kept == "bert vs roberta: " + sequential_sentence(whole, family_alpha=0.05, n_pairs=1)
    assert "a fixed-sample test of them is not valid after 19 interim looks" in kept
    # round trip through JSON: old files (no field) read as None
    assert StatsSummary.model_validate_json(updated.model_dump_json()) == updated
    old = summary.model_dump(mode="json")
    old.pop("sequential")
    assert StatsSummary.model_validate(old).sequential is None


def test_report_lines_only_for_a_sequential_run():
    result = sample_run({"bert": 0.86, "roberta": 0.91}, speed=False)[0]
    assert sequential_lines(result) == []
    record = _record(1, 10, 4, names=("bert", "roberta"))
    result = result.model_copy(update={"stats": with_sequential(result.stats, [record])})
    lines = sequential_lines(result)
    assert lines[0].startswith(
        "Evaluated with --until-decided: examples in a seeded random order (seed 42), a look every 50;"
    )
    assert f"The run used {record.examples_used} of 1,000 examples (every pair was decided)." in lines[0]
    assert lines[1] == f"bert vs roberta: roberta is better than bert after {record.final.decided_at} examples."


def test_figure_draws_two_panels_per_pair_with_the_bounds_and_the_threshold():
    records = [_record(10, 1, 4), _record(3, 3, 6, names=("bert", "distil"))]
    figure = sequential_figure(records, model_styles(["bert", "roberta", "distil"]))
    axes = figure.axes
    assert len(axes) == 4
    band = axes[0].collections[0]  # the confidence sequence, in percentage points
    vertices = np.concatenate([p.vertices for p in band.get_paths()])
    assert vertices[:, 1].min() == pytest.approx(100 * min(s.low for s in records[0].steps))
    assert vertices[:, 1].max() == pytest.approx(100 * max(s.high for s in records[0].steps))
    threshold = next(line for line in axes[1].lines if line.get_linestyle() == "--")
    assert threshold.get_ydata()[0] == pytest.approx(np.log10(2 / 0.05))
    decided = [line for line in axes[0].lines if line.get_linestyle() == ":"]
    assert decided and decided[0].get_xdata()[0] == records[0].final.decided_at
    assert not [line for line in axes[2].lines if line.get_linestyle() == ":"]  # the second pair did not decide
    assert to_svg(figure).startswith(b"<?xml")
