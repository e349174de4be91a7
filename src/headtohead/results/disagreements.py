"""Typed records of the examples on which two models disagree about being right.

:func:`headtohead.stats.disagreements.disagreements` fills a :class:`Disagreements`; a run
keeps the first rows of each direction in ``results.json`` (``stats.disagreements``, with the
inputs attached by the pipeline, so a report shows them without the data) and writes all of
them to ``disagreements.csv`` beside it.
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
        default=None,
        description="the right model's probability of the true class minus the wrong model's; "
        "None when either model has no probabilities",
    )
    input: str | None = Field(
        default=None,
        description="the input as shown in reports: the text (a pair joined "
        "by ' ‖ '), or the image file's path; None when not attached",
    )
    thumbnail: str | None = Field(default=None, description="images: a small JPEG as a data: URI, for reports")


class Disagreements(Record):
    """Both directions of disagreement between two models, each sorted by confidence gap (largest first)."""

    model_a: str
    model_b: str
    n_examples: int
    only_a_right: list[Disagreement] = Field(description="model_a right, model_b wrong")
    only_b_right: list[Disagreement] = Field(description="model_b right, model_a wrong")
    sorted_by: str = Field(description="confidence_gap (descending, ties by index) or index (no probabilities)")
    n_only_a_right: int | None = Field(
        default=None, description="how many examples only model_a got right (the list may keep only the first of them)"
    )
    n_only_b_right: int | None = Field(default=None, description="how many examples only model_b got right")

    def top(self, limit: int) -> Disagreements:
        """The first ``limit`` rows of each direction, with the full counts kept.

        Examples
        --------
        >>> d = Disagreements(model_a="a", model_b="b", n_examples=3, only_a_right=[], only_b_right=[],
        ...                   sorted_by="index")
        >>> d.top(20).n_only_a_right
        0
        """
        return self.model_copy(
            update={
                "only_a_right": self.only_a_right[:limit],
                "only_b_right": self.only_b_right[:limit],
                "n_only_a_right": self.n_only_a_right if self.n_only_a_right is not None else len(self.only_a_right),
                "n_only_b_right": self.n_only_b_right if self.n_only_b_right is not None else len(self.only_b_right),
            }
        )
