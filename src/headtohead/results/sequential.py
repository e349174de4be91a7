"""The record of a sequential comparison (``stats.sequential`` in ``results.json``).

:func:`headtohead.stats.sequential.to_record` fills it from a
:class:`~headtohead.stats.sequential.SequentialTest`; the report draws ``steps`` (the
confidence sequence narrowing towards a decision). Gaps are ``accuracy(model_a) −
accuracy(model_b)`` as fractions; log e-values are natural logarithms.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from headtohead.results.base import Record

__all__ = ["SequentialStep", "SequentialRecord"]


class SequentialStep(Record):
    """The statistic after one chunk (its fields are those of ``SequentialState``)."""

    n: int = Field(description="examples used so far")
    only_a_correct: int = Field(description="McNemar's b so far")
    only_b_correct: int = Field(description="McNemar's c so far")
    log_e_a_better: float = Field(description="log e-value of 'model_a better' against no gap; decides at log(2/α)")
    log_e_b_better: float = Field(description="log e-value of 'model_b better' against no gap; decides at log(2/α)")
    low: float = Field(description="running (1 − α) confidence sequence of the accuracy gap: lower bound")
    high: float = Field(description="running (1 − α) confidence sequence of the accuracy gap: upper bound")
    equivalence_low: float = Field(description="running (1 − 2α) sequence, for equivalence: lower bound")
    equivalence_high: float = Field(description="running (1 − 2α) sequence, for equivalence: upper bound")
    decision: Literal["continue", "a_better", "b_better", "equivalent"] = Field(
        description="first decision reached by this chunk"
    )
    decided_at: int | None = Field(description="examples used when the decision was first reached")

    @property
    def gap(self) -> float:
        """Observed ``accuracy(model_a) − accuracy(model_b)`` on the examples used so far (0 before any)."""
        return (self.only_a_correct - self.only_b_correct) / self.n if self.n else 0.0


class SequentialRecord(Record):
    """A comparison evaluated chunk by chunk until an anytime-valid test decided."""

    model_a: str
    model_b: str
    alpha: float
    margin: float | None = Field(description="equivalence margin on the accuracy gap; None: no equivalence decision")
    chunk_size: int
    order_seed: int | None = Field(default=None, description="seed of the random order the examples were scored in")
    examples_used: int
    examples_available: int
    decision: Literal["a_better", "b_better", "equivalent", "undecided", "continue"] = Field(
        description="undecided: every example used without a decision; continue: the run stopped before either"
    )
    method: str = Field(default="betting confidence sequence, mixture of constant bets (Waudby-Smith & Ramdas 2024)")
    groups_used: int | None = Field(
        default=None,
        description="with data.group_column: the groups evaluated (whole, "
        "in a seeded random order; the test bets on groups); None: examples are the units",
    )
    steps: list[SequentialStep]

    @property
    def final(self) -> SequentialStep | None:
        """The last look (None before the first chunk)."""
        return self.steps[-1] if self.steps else None
