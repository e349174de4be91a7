"""Every interval a run's statistics hold contains its estimate — over calibrated, perfect, tiny and degenerate models."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import BaseModel

from headtohead.results import Predictions
from headtohead.results.comparison import Estimate, MetricDifference
from headtohead.results.slices import SlicePair
from headtohead.stats import analyse
from headtohead.stats.where import ExampleFacts


def _walk(record: object):
    """Every record nested in ``record`` (pydantic models, lists, dicts)."""
    if isinstance(record, BaseModel):
        yield record
        for name in type(record).model_fields:
            yield from _walk(getattr(record, name))
    elif isinstance(record, (list, tuple)):
        for item in record:
            yield from _walk(item)
    elif isinstance(record, dict):
        for item in record.values():
            yield from _walk(item)


def _intervals(summary) -> list[tuple[float, float | None, float | None]]:
    found = []
    for record in _walk(summary):
        if isinstance(record, Estimate):
            found.append((record.value, record.low, record.high))
        elif isinstance(record, MetricDifference):
            found.append((record.difference, record.ci_low, record.ci_high))
        elif isinstance(record, SlicePair):
            found.append((record.difference, record.ci_low, record.ci_high))
    return found


def _calibrated(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Confidence 0.5 + 0.5·Beta(6, 1), right with exactly that probability (the issue's calibrated model)."""
    confidence = 0.5 + 0.5 * rng.beta(6, 1, n)
    return confidence, rng.random(n) < confidence


def _add(preds: Predictions, name: str, correct: np.ndarray, confidence: np.ndarray) -> None:
    y = preds.y_true
    pred = np.where(correct, y, 1 - y)
    proba = np.where(np.eye(2)[pred] == 1, confidence[:, None], 1 - confidence[:, None])
    preds.add(name, pred, proba)


CASES = ["calibrated-872", "perfect-10", "tiny-5", "one-class-present", "identical", "failures", "grouped"]


@pytest.mark.parametrize("case", CASES)
def test_every_interval_contains_its_estimate(case: str) -> None:
    rng = np.random.default_rng(CASES.index(case))
    n = {"perfect-10": 10, "tiny-5": 5}.get(case, 872 if case == "calibrated-872" else 120)
    y = rng.integers(0, 2, n) if case != "one-class-present" else np.zeros(n, dtype=int)
    groups = np.repeat(np.arange(n // 8 + 1), 8)[:n].astype(str) if case == "grouped" else None
    preds = Predictions(
        np.arange(n), y, ("negative", "positive"), groups=groups, group_column="user" if case == "grouped" else None
    )
    for name in ("a", "b", "c"):
        confidence, correct = _calibrated(n, rng)
        if case == "perfect-10" or (case == "identical" and name != "a"):
            correct = np.ones(n, bool) if case == "perfect-10" else preds["a"].pred == y
        _add(preds, name, correct, confidence)
    if case == "failures":
        broken = preds["b"].pred.copy()
        broken[rng.random(n) < 0.2] = -1
        proba = preds["b"].proba.copy()
        proba[broken == -1] = np.nan
        preds.models["b"] = type(preds["b"])(broken, proba)
    summary = analyse(
        preds, n_resamples=300, seed=1, examples=ExampleFacts(sizes=rng.integers(1, 40, n), size_unit="words")
    )
    found = _intervals(summary)
    assert len(found) > 20
    for value, low, high in found:
        assert (low is None) == (high is None)
        if low is not None:
            assert low - 1e-12 <= value <= high + 1e-12, (case, value, low, high)


def test_a_perfect_model_shows_no_zero_width_interval() -> None:
    y = np.array([0, 1, 0, 1, 1, 0, 1, 0, 1, 1] * 4)
    preds = Predictions(np.arange(40), y, ("negative", "positive"))
    preds.add("perfect", y, np.eye(2)[y] * 0.9 + 0.05)
    stats = analyse(preds, n_resamples=200).model("perfect")
    assert stats.f1_macro.value == 1.0 and stats.f1_macro.low is None and "every resample" in stats.f1_macro.note
    assert stats.recall_per_class["positive"].low < 1.0 == stats.recall_per_class["positive"].high  # Wilson


def test_class_averaged_metrics_get_no_interval_with_few_examples_per_class() -> None:
    """At 5 examples per class a bootstrap interval of balanced accuracy covers ~89 %: none is shown."""
    y = np.array([0, 1, 2, 3] * 5)
    preds = Predictions(np.arange(20), y, ("a", "b", "c", "d"))
    preds.add("m", np.where(np.arange(20) % 3 == 0, (y + 1) % 4, y), None)
    preds.add("n", np.where(np.arange(20) % 4 == 0, (y + 1) % 4, y), None)
    summary = analyse(preds, n_resamples=200)
    for estimate in (summary.model("m").f1_macro, summary.model("m").balanced_accuracy):
        assert estimate.low is None and "examples per class" in estimate.note
    assert summary.model("m").accuracy.low is not None  # a proportion: Wilson's interval holds at any n
    assert summary.comparisons[0].difference("f1_macro").ci_low is None


def test_the_binary_brier_score_does_not_double_when_a_model_knows_a_third_class() -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300)
    confidence, correct = _calibrated(300, rng)
    two = Predictions(np.arange(300), y, ("negative", "positive"))
    _add(two, "m", correct, confidence)
    wide = Predictions(np.arange(300), y, ("negative", "positive"))
    wide.add("m", two["m"].pred, np.c_[two["m"].proba, np.zeros(300)], outside=["neutral"])
    brier_two = analyse(two, n_resamples=200).model("m").brier.value
    brier_wide = analyse(wide, n_resamples=200).model("m").brier.value
    from sklearn.metrics import brier_score_loss

    assert brier_two == pytest.approx(brier_score_loss(y, two["m"].proba[:, 1]), rel=1e-6)
    assert brier_wide == pytest.approx(brier_two, rel=1e-6)


def test_macro_averages_leave_out_a_class_absent_from_the_rows() -> None:
    y = np.array([0, 1, 0, 1, 0, 1] * 5)
    preds = Predictions(np.arange(30), y, ("a", "b", "c"))  # class "c" has no example here
    preds.add("perfect", y, np.eye(3)[y])
    stats = analyse(preds, n_resamples=200).model("perfect")
    assert stats.f1_macro.value == 1.0 and stats.balanced_accuracy.value == 1.0  # not 0.667
