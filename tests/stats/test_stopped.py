"""An ``--until-decided`` run's pairs are decided by their sequential tests, stopped early or not (α spent once)."""

from __future__ import annotations

import numpy as np
import pytest
from sim.sample import sample_run

from headtohead.report.rows.pairs import comparison_note
from headtohead.report.words.sequential import with_sequential
from headtohead.report.words.verdict import build_verdict
from headtohead.stats.sequential import SequentialTest, to_record
from headtohead.stats.stopped import decided_by_sequential_tests, sequential_winner


def _record(only_a: int, only_b: int, chunks: int, available: int):
    """``a`` vs ``b`` after ``chunks`` chunks of 50, each with ``only_a`` only-A and ``only_b`` only-B examples."""
    test = SequentialTest(0.05)
    a, b = np.zeros(50, bool), np.zeros(50, bool)
    a[:only_a], b[only_a : only_a + only_b] = True, True
    for _ in range(chunks):
        test.update(a, b)
    return to_record(test, model_a="a", model_b="b", chunk_size=50, examples_available=available)


@pytest.fixture(scope="module")
def run():
    """A run whose fixed-sample test calls b better (McNemar p far below 0.05)."""
    result = sample_run({"a": 0.86, "b": 0.92}, n_examples=1000, speed=False, n_resamples=100)[0]
    (comparison,) = result.stats.comparisons
    assert comparison.significant and comparison.winner == "b" and comparison.p_value < 0.01
    return result


def test_a_pair_that_used_every_example_undecided_is_not_significant_whatever_mcnemar_says(run):
    record = _record(2, 3, 20, 1000)  # every example used, no decision
    assert record.decision == "undecided" and record.examples_used == record.examples_available
    stats = decided_by_sequential_tests(run.stats, [record])
    (comparison,) = stats.comparisons
    assert not comparison.significant and comparison.winner is None and not comparison.stopped_early
    assert [g.models for g in stats.ranking] == [["b", "a"]]  # one group: not different
    # what the user reads: the headline names no winner and quotes no fixed-sample p
    shown = run.model_copy(update={"stats": with_sequential(stats, [record])})
    headline = build_verdict(shown).headline
    quality = [line for line in headline if line.kind == "quality" and "by slice" not in line.text]
    assert [line.subject for line in quality] == [None]
    assert quality[0].text.startswith("no decision between a and b, after 1,000 of 1,000 examples")
    assert "McNemar" not in quality[0].text and "McNemar" not in shown.stats.comparisons[0].verdict
    assert "nominal only after interim looks" in comparison_note(shown)
    assert "nominal" not in comparison_note(run)


def test_a_pair_decided_before_the_data_ran_out_keeps_its_decision_even_if_the_run_went_on(run):
    record = _record(10, 1, 20, 1000)  # decided within the first looks, the run went on for another pair
    assert record.decision == "a_better" and record.examples_used == record.examples_available
    (comparison,) = decided_by_sequential_tests(run.stats, [record]).comparisons
    assert comparison.significant and comparison.winner == "a" == sequential_winner(record)
    assert not comparison.stopped_early


def test_an_early_stop_is_marked_and_a_pair_without_a_record_keeps_its_fixed_sample_test(run):
    stopped = _record(1, 10, 4, 1000)
    (comparison,) = decided_by_sequential_tests(run.stats, [stopped]).comparisons
    assert comparison.stopped_early and comparison.winner == "b"
    assert decided_by_sequential_tests(run.stats, []).comparisons == run.stats.comparisons
    # McNemar's fragility is not the sequential verdict's: it goes with the fixed-sample decision
    assert run.stats.comparisons[0].fragility is not None and comparison.fragility is None
