"""The sentences of a verdict (report.words): every word of a speed or quality verdict is written there."""

from __future__ import annotations

from headtohead.report.words.speed import speed_sentence
from headtohead.results.speed import SpeedComparison


def _pair(
    ratio: float, low: float, high: float, confidence: float, a: str = "bert", b: str = "distil"
) -> SpeedComparison:
    faster = b if low > 1 else a if high < 1 else None
    return SpeedComparison(
        scenario="offline",
        model_a=a,
        model_b=b,
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        confidence=confidence,
        n_rounds=20,
        faster=faster,
    )


def test_speed_sentence_names_the_faster_model_with_its_interval():
    assert speed_sentence(_pair(1.43, 1.39, 1.47, 0.95)) == "distil is 1.43× faster than bert (95 % CI 1.39–1.47)"
    assert speed_sentence(_pair(0.5, 0.4, 0.625, 0.95)) == "bert is 2.00× faster than distil (95 % CI 1.60–2.50)"
    assert speed_sentence(_pair(1.0, 0.97, 1.04, 0.9, "a", "b")).startswith("no significant difference between a and b")
    assert "90 % CI" in speed_sentence(_pair(1.0, 0.97, 1.04, 0.9, "a", "b"))
