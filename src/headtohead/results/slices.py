"""Typed records of quality per slice (``stats.slices`` in ``results.json``) and of disagreements.

:func:`headtohead.stats.slices.compare_slices` fills a :class:`SliceSummary`: for every
slice of the evaluation data (a class, a bin of input sizes, a value of an extra column)
its size, each model's accuracy with a Wilson interval, and for every pair of models the
paired accuracy difference with Tango's score interval, McNemar's score-test p (the same
statistic, so they agree) and the Holm-adjusted p over every (slice, pair) test of the
summary. Differences are ``model_a − model_b``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from headtohead.results.base import Record
from headtohead.results.estimates import ContingencyTable, Estimate
from headtohead.results.repeats import RepeatPool

__all__ = ["SliceAccuracy", "SlicePair", "SliceResult", "SliceSummary"]

SliceKind = Literal["class", "size", "column"]


class SliceAccuracy(Record):
    """One model's accuracy on one slice."""

    model: str
    correct: int
    accuracy: Estimate = Field(description="Wilson interval")
    metrics: dict[str, float] = Field(
        default_factory=dict, description="the picked metrics (stats.metrics) on the slice: point values"
    )


class SlicePair(Record):
    """Two models compared on the examples of one slice."""

    model_a: str
    model_b: str
    table: ContingencyTable
    difference: float = Field(description="accuracy(model_a) − accuracy(model_b) on the slice")
    ci_low: float
    ci_high: float
    ci_method: Literal[
        "tango-score", "tango-score+exact", "tango-score+clusters", "tango-score+clusters+exact", "newcombe-paired"
    ] = Field(
        default="tango-score",
        description="Tango's score interval for paired proportions (its union with the "
        "cluster-robust one with groups; +exact: joined with the exact Clopper–Pearson interval where one "
        "discordant count is 0); newcombe-paired: Newcombe's hybrid score interval (version 3)",
    )
    confidence: float
    test: Literal["mcnemar-score", "mcnemar-clustered", "mcnemar-exact", "mcnemar-chi2"]
    p_value: float
    p_adjusted: float = Field(description="Holm–Bonferroni over every (slice, pair) test of the summary")
    significant: bool = Field(description="p_adjusted ≤ alpha")
    winner: str | None = Field(default=None, description="the more accurate model when significant")
    verdict: str = Field(default="", description="the slice in one sentence when significant (report.sentences)")


class SliceResult(Record):
    """One slice: which examples, how many, and how every model and pair did on them."""

    kind: SliceKind = Field(description="class: true label; size: a bin of input sizes; column: an extra column")
    column: str | None = Field(default=None, description="the extra column (kind 'column')")
    label: str = Field(description="short name for tables: the class, the value, or the bin's range")
    value: str | None = Field(default=None, description="the class or column value; None for bins")
    lower: float | None = Field(default=None, description="bins: smallest value in the bin (inclusive)")
    upper: float | None = Field(default=None, description="bins: largest value in the bin (inclusive)")
    unit: str | None = Field(default=None, description="bins of input size: words | characters | pixels")
    n_examples: int
    accuracies: list[SliceAccuracy]
    pairs: list[SlicePair] = Field(default_factory=list)
    repeat_pairs: list[RepeatPool] = Field(
        default_factory=list,
        description="Pairs with a model run several times, compared over every run on the slice (the two-level "
        "test, each model's noise floor on the slice: how far two means of its runs differ there), in the same Holm "
        "family as pairs.",
    )

    def accuracy(self, model: str) -> SliceAccuracy:
        """The accuracy of ``model`` on this slice."""
        for entry in self.accuracies:
            if entry.model == model:
                return entry
        raise KeyError(f"no accuracy of model '{model}' on slice '{self.label}'")


class SliceSummary(Record):
    """Quality per slice of the evaluation data, with paired tests adjusted over all slices."""

    alpha: float
    confidence: float
    n_tests: int = Field(description="(slice, pair) tests in the Holm family")
    mcnemar_rule: str = "exact binomial when b + c < 25, else χ² with continuity correction"  # version 3's
    multiple_comparisons: str = "holm over every slice and pair"
    slices: list[SliceResult] = Field(default_factory=list)
