"""Typed records of the examples every model got wrong with the same answer: candidates for a wrong gold label.

:func:`headtohead.stats.label_suspects.label_suspects` fills a :class:`LabelSuspects`; a run keeps
the first rows in ``results.json`` (``stats.label_suspects``, with the inputs attached by the
pipeline) and writes all of them to ``label_suspects.csv`` beside it.
"""

from __future__ import annotations

from pydantic import Field

from headtohead.results.base import Record

__all__ = ["LabelSuspect", "LabelSuspects"]


class LabelSuspect(Record):
    """One example every model got wrong with one and the same answer."""

    index: int = Field(description="position of the example in the evaluated data")
    example_id: str | None = Field(default=None, description="the example's id (data.id_column), when it has one")
    true_label: str = Field(description="the gold label")
    answer: str = Field(description="the answer every model gave")
    confidence: float | None = Field(
        default=None,
        description="the models' mean probability of that answer; None when any model has no probabilities there",
    )
    input: str | None = Field(
        default=None,
        description="the input as shown in reports: the text (a pair joined by ' ‖ '), or the image file's path; "
        "None when not attached",
    )
    thumbnail: str | None = Field(default=None, description="images: a small JPEG as a data: URI, for reports")


class LabelSuspects(Record):
    """The examples every model of a run (at least two) got wrong with the same answer, most confident first."""

    models: list[str] = Field(description="the models that agree on each answer (a model's every pass agrees)")
    n_examples: int
    n_suspects: int = Field(description="how many such examples (the list may keep only the first of them)")
    rows: list[LabelSuspect] = Field(
        description="sorted by confidence (descending, ties by index), or by index when a model has no probabilities"
    )
