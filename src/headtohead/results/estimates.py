"""The small records every statistic is made of: a number with its interval, a paired 2×2 table.

They live apart from :mod:`headtohead.results.comparison` so that the records of slices and
disagreements can use them and still be part of a run's :class:`~headtohead.results.comparison.StatsSummary`.
"""

from __future__ import annotations

from pydantic import Field

from headtohead.results.base import Record

__all__ = ["Estimate", "ContingencyTable"]


class Estimate(Record):
    """A number with its confidence interval, or with none and the reason why.

    ``low``/``high`` are ``None`` when no interval can be shown honestly: a bootstrap whose
    every resample gave the same value (a zero-width interval would read as perfect
    precision), one whose distribution lies wholly on one side of the estimate, or a figure
    that has no interval by design (the plug-in ECE). ``note`` then says why. An interval
    that is shown always contains ``value``.
    """

    value: float
    low: float | None
    high: float | None
    method: str = Field(
        description="wilson | wilson+clusters | tango-score (+clusters, +exact) | bca | percentile | "
        "cluster-bca | cluster-percentile | debiased-normal | none"
    )
    confidence: float = 0.95
    note: str | None = Field(
        default=None, description="why the method differs from the one asked for, or why there is no interval"
    )

    @property
    def has_interval(self) -> bool:
        """Whether an interval is shown (both bounds present)."""
        return self.low is not None and self.high is not None


class ContingencyTable(Record):
    """The paired 2×2 table of correctness; ``only_a_correct`` and ``only_b_correct`` are McNemar's b and c."""

    both_correct: int
    only_a_correct: int
    only_b_correct: int
    both_wrong: int

    @property
    def discordant(self) -> int:
        return self.only_a_correct + self.only_b_correct

    @property
    def n(self) -> int:
        return self.both_correct + self.only_a_correct + self.only_b_correct + self.both_wrong
