"""Typed records of the examples on which two models disagree about being right.

:func:`headtohead.stats.disagreements.disagreements` fills a :class:`Disagreements`; the
report shows the first rows of each direction and writes all of them to a CSV.
"""

from __future__ import annotations

from pydantic import Field

from headtohead.results.base import Record

__all__ = ["Disagreement", "Disagreements"]


class Disagreement(Record):
    """One example that exactly one of the two models got right."""

    index: int = Field(description="position of the example in the evaluated data")
    example_id: str | None = Field(default=None, description="the example's id (data.id_column), when it has one")
    true_label: str
    prediction_a: str
    prediction_b: str
    p_true_a: float | None = Field(default=None, description="model a's probability of the true class")
    p_true_b: float | None = Field(default=None, description="model b's probability of the true class")
    p_pred_a: float | None = Field(default=None, description="model a's probability of its own prediction")
    p_pred_b: float | None = Field(default=None, description="model b's probability of its own prediction")
    confidence_gap: float | None = Field(
        default=None, description="the right model's probability of the true class minus the wrong model's; "
                                  "None when either model has no probabilities")


class Disagreements(Record):
    """Both directions of disagreement between two models, each sorted by confidence gap (largest first)."""

    model_a: str
    model_b: str
    n_examples: int
    only_a_right: list[Disagreement] = Field(description="model_a right, model_b wrong")
    only_b_right: list[Disagreement] = Field(description="model_b right, model_a wrong")
    sorted_by: str = Field(description="confidence_gap (descending, ties by index) or index (no probabilities)")
