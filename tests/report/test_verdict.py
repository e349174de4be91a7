"""The verdict in words, worded from the statistics and speed records (nothing re-derived)."""

from __future__ import annotations

import re

import pytest
from sim.sample import sample_run

from headtohead.report.words.numbers import format_p, format_pp, format_share
from headtohead.report.words.verdict import build_verdict, quality_line, speed_line


@pytest.fixture(scope="module")
def clear_win():
    """roberta clearly more accurate; bert simulated 1.5× faster."""
    return sample_run(
        {"bert": 0.82, "roberta": 0.93}, n_examples=1200, latency_us={"bert": 100, "roberta": 150}, n_resamples=300
    )[0]


def test_significant_quality_line_names_the_winner_with_interval_and_p(clear_win):
    comparison = clear_win.stats.comparisons[0]
    assert comparison.significant and comparison.winner == "roberta"
    line = quality_line(comparison, holm=False)
    diff = comparison.difference("accuracy")
    assert line.subject == "roberta" and line.kind == "quality"
    # the numbers are the record's, turned round so the winner's gap is positive
    assert line.text == (
        f"{format_pp(-comparison.effect)} pp accuracy over bert (95 % CI "
        f"{format_pp(-diff.ci_high)}…{format_pp(-diff.ci_low)}, McNemar p "
        f"{format_p(comparison.p_value)}; holds unless {comparison.fragility} of the {comparison.answers_differ} "
        f"examples where their answers differ are mislabelled)"
    )
    assert line.plain().startswith("roberta: +")
    # without a fragility (a record written before it, a grouped pair) the clause is left out
    bare = quality_line(comparison.model_copy(update={"fragility": None}), holm=False)
    assert bare.text.endswith(f"McNemar p {format_p(comparison.p_value)})")


def test_speed_line_turns_the_ratio_round_so_the_faster_model_leads(clear_win):
    run = clear_win.speed.scenario("offline")
    comparison = run.comparisons[0]
    assert comparison.faster == "bert" and comparison.ratio < 1  # ratio = time(bert) / time(roberta)
    line = speed_line(comparison, run.batch_size)
    factor = float(re.match(r"([\d.]+)× faster than roberta", line.text).group(1))
    assert line.subject == "bert" and factor == pytest.approx(1 / comparison.ratio, abs=0.006)
    assert factor == pytest.approx(1.5, rel=0.05)
    low, high = map(float, re.search(r"CI ([\d.]+)–([\d.]+)", line.text).groups())
    assert low == pytest.approx(1 / comparison.ci_high, abs=0.006) and high == pytest.approx(
        1 / comparison.ci_low, abs=0.006
    )
    assert "offline, batch 16" in line.text


def test_build_verdict_puts_quality_before_speed_and_keeps_the_records_sentences(clear_win):
    verdict = build_verdict(clear_win)
    kinds = [line.kind for line in verdict.headline]
    assert kinds == ["quality", "quality", "speed", "speed"]  # the pair, then where it differs, then speed
    assert verdict.headline[1].text.startswith("bert vs roberta by slice: roberta is better on class")
    assert verdict.details[0] == clear_win.stats.comparisons[0].verdict
    assert verdict.details[1] == verdict.headline[1].text
    assert verdict.details[2:] == [c.verdict for run in clear_win.speed.scenarios for c in run.comparisons]


def test_no_significant_difference_declares_no_winner():
    result, _ = sample_run({"a": 0.85, "b": 0.85}, n_examples=300, speed=False, n_resamples=200, seed=3)
    comparison = result.stats.comparisons[0]
    assert not comparison.significant
    (line,) = build_verdict(result).headline
    assert line.subject is None
    assert line.text.startswith("a vs b: no significant accuracy difference (a − b = ")


def test_without_statistics_accuracies_are_listed_but_no_winner_is_declared():
    result, _ = sample_run({"a": 0.7, "b": 0.9}, n_examples=200, stats=False, speed=False)
    (line,) = build_verdict(result).headline
    assert line.subject is None and line.kind == "info"
    assert line.text.startswith("Accuracy: b ") and "no winner is declared" in line.text


def test_many_models_get_a_ranking_and_the_fastest_model_instead_of_every_pair():
    models = {"m1": 0.95, "m2": 0.8, "m3": 0.79, "m4": 0.6}
    result, _ = sample_run(
        models, n_examples=800, latency_us={"m1": 300, "m2": 100, "m3": 200, "m4": 400}, n_resamples=200
    )
    verdict = build_verdict(result)
    quality = [line for line in verdict.headline if line.kind == "quality"]
    assert quality[0].text.startswith("Ranking by accuracy: 1. m1")
    assert all(line.subject == "m1" for line in quality[1:]) and len(quality) == 4  # m1 beats each of the others
    speed = [line for line in verdict.headline if line.kind == "speed"]
    assert [line.subject for line in speed] == ["m2", "m2"]  # offline and single stream
    assert "faster than the runner-up, m3" in speed[0].text
    by_slice = [d for d in verdict.details if " by slice: " in d]
    assert len(verdict.details) == 6 + 2 * 6 + len(by_slice)  # every pair's full sentence is still there
    assert not any(" by slice: " in line.text for line in verdict.headline)  # too many pairs for the headline


def test_one_model_gets_its_accuracy_with_interval():
    result, _ = sample_run({"solo": 0.9}, n_examples=300, speed=False, n_resamples=200)
    (line,) = build_verdict(result).headline
    est = result.stats.models[0].accuracy
    assert line.subject == "solo" and format_share(est.value) in line.text and f"{100 * est.low:.1f}–" in line.text


def test_an_unsteady_speed_measurement_is_flagged_in_the_verdict(clear_win):
    noisy = clear_win.model_copy(update={"speed": clear_win.speed.model_copy(update={"warnings": ["busy"]})})
    last = build_verdict(noisy).headline[-1]
    assert last.kind == "info" and "busy or unsteady" in last.text
    assert all(line.kind != "info" for line in build_verdict(clear_win).headline)
