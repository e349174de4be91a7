"""The small records every statistic is made of: a number with its interval, a paired 2×2 table.

They live apart from :mod:`headtohead.results.comparison` so that the records of slices and
disagreements can use them and still be part of a run's :class:`~headtohead.results.comparison.StatsSummary`.
"""

from __future__ import annotations

from pydantic import Field

from headtohead.results.base import Record

__all__ = ["Estimate", "ContingencyTable"]


class Estimate(Record):
    """A number with its confidence interval."""

    value: float
    low: float
    high: float
    method: str = Field(description="wilson | bca | percentile")
    confidence: float = 0.95
    note: str | None = Field(default=None, description="why the method differs from the one asked for, if it does")


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
