"""Answers read like a careful harness: a label first counts on a word or script boundary, prose needs the label
as the answer (quoted or not), and class probabilities are kept only where the labels are covered and agree with the label read."""

from __future__ import annotations

import math

import pytest

from headtohead.adapters.prompting import ARGMAX_DISAGREES, Answer, Reading, TokenChoice, read_answer
from headtohead.config.schema import model_settings

LABELS = ["negative", "neutral", "positive"]


@pytest.mark.parametrize(
    ("answer", "expected", "rule"),
    [
        ("positiveに通客 …", 2, "label first"),  # the label, then another script: a base model's junk
        ("positive<junk>", 2, "label first"),
        ("Negative sentiment, clearly", 0, "label first"),
        ("positive123", 2, "label first"),
        ("positively charming", None, "unparseable"),  # the same script goes on: another word
        ("positive or negative", None, "unparseable"),  # the label first, but the rest names another
        ("The text is a product of the negative label.", None, "unparseable"),  # a label as any word is no answer
        ("This review mentions neutral things and positive ones", None, "unparseable"),
        ("The sentiment is positive.", 2, "label as the answer"),
        ("Sentiment: neutral", 1, "label as the answer"),
        ("I would say it's negative", 0, "label as the answer"),
        # a label quoted whole where an answer stands, straight or curly quotes, a period inside or out
        ('The text is "negative."', 0, "label as the answer"),
        ("The sentiment is \u201cpositive\u201d.", 2, "label as the answer"),
        ("The sentiment is \u201cpositive.\u201d", 2, "label as the answer"),
        ("Sentiment: 'neutral'", 1, "label as the answer"),
        ("I would say it's \u2018negative\u2019", 0, "label as the answer"),
        # a quoted label that is merely mentioned, or a word of a longer quote, is no answer
        ('The word "negative" appears in the text.', None, "unparseable"),
        ('The text is a product of the "negative" label.', None, "unparseable"),
        ('The text is "negative and sad"', None, "unparseable"),
        ('The text is "negatively" charged.', None, "unparseable"),
        ('It mentions "positive" and "negative" things.', None, "unparseable"),
        ("positive", 2, "exact"),
        (" Positive. ", 2, "case and whitespace"),
        ("neu", 1, "unique prefix"),
    ],
)
def test_a_label_counts_first_on_a_boundary_or_as_the_answer_not_as_any_word(answer, expected, rule):
    assert read_answer(answer, LABELS) == (expected, rule)


def _reading(text: str, alternatives: dict[str, float], min_label_mass: float = 0.9) -> Reading:
    first = text.split()[0]
    tops = tuple((token, math.log(p)) for token, p in alternatives.items())
    position = TokenChoice(first, math.log(alternatives.get(first, 0.01)), tops)
    return Reading.of(Answer(text=text), ["negative", "positive"], [position], min_label_mass)


def test_probabilities_are_kept_only_when_the_labels_are_covered_and_agree_with_the_label_read():
    kept = _reading("positive", {"positive": 0.8, "negative": 0.15, "The": 0.05})
    assert kept.proba is not None and kept.proba.argmax() == kept.pred == 1 and kept.no_proba is None
    assert kept.label_mass == pytest.approx(0.95)
    thin = _reading("positive", {"positive": 0.2, "negative": 0.1, "The": 0.7})  # 70 % on no label
    assert thin.pred == 1 and thin.proba is None and thin.no_proba == "label mass below 0.9"
    assert thin.label_mass == pytest.approx(0.3)
    assert _reading("positive", {"positive": 0.2, "negative": 0.1, "The": 0.7}, min_label_mass=0.25).proba is not None
    # the answer says positive, its first token's alternatives favour negative: flagged, no probabilities
    other = _reading("positive", {"negative": 0.6, "positive": 0.38, "The": 0.02})
    assert other.pred == 1 and other.proba is None and other.no_proba == ARGMAX_DISAGREES and other.disagrees


def test_stop_extra_body_and_the_label_mass_are_checked_where_they_are_written():
    entry = {"name": "llm", "kind": "openai", "source": "m", "base_url": "http://127.0.0.1:8000/v1"}
    model = model_settings(**entry, stop=["\n"], extra_body={"guided_choice": ["negative", "positive"]})
    assert model.stop == ["\n"] and model.min_label_mass == 0.9
    with pytest.raises(ValueError, match="extra_body sets messages, model"):
        model_settings(**entry, extra_body={"model": "x", "messages": []})
    with pytest.raises(ValueError, match="min_label_mass"):
        model_settings(**entry, min_label_mass=0.0)
