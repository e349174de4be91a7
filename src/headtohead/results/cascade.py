"""A cascade's record (``kind: cascade``): its parts, the threshold Learn-then-Test chose, and its figures.

The counts are stored and the shares derived from them when the record is built or read
(:class:`~headtohead.results.base.DerivedRecord`): a share found in a file is recomputed, never believed.
Its cost and latency are filled in once the speed pass measured its parts (``pipeline/cascade.py``).
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from pydantic import Field, computed_field

from headtohead.results.base import DerivedRecord

__all__ = ["CascadeRecord"]


class CascadeRecord(DerivedRecord):
    """How a cascade was built and how it did on the evaluation examples (those not used to choose its threshold)."""

    cheap: str = Field(description="the model that answers first")
    expensive: str = Field(description="the model asked where the cheap one defers")
    score: Literal["top", "margin"] = Field(description="the cheap model's deferral score")
    max_drop: float = Field(description="the accuracy it may lose against the expensive model (a share)")
    delta: float = Field(description="the chance the guarantee may fail")
    calibration_examples: list[int] = Field(
        description="dataset indices of the examples its threshold was chosen on (no statistic of the run reads them)"
    )
    threshold: float | None = Field(
        description="an example whose deferral score is below it is deferred; None: no threshold passed the test, "
        "every example is deferred"
    )
    p_value: float | None = Field(description="the chosen threshold's p-value (exact binomial on the harms)")
    thresholds_tested: int = Field(description="thresholds of the fixed grid tested, the first not rejected included")
    calibration_harms: int = Field(
        description="calibration examples at the threshold where the cheap model answered wrong and the expensive "
        "one was right"
    )
    n_evaluation: int = Field(description="evaluation examples (the rest)")
    deferred: int = Field(description="evaluation examples deferred to the expensive model")
    correct: int = Field(description="evaluation examples the cascade got right")
    expensive_correct: int = Field(description="evaluation examples the expensive model got right")
    cheap_correct: int = Field(description="evaluation examples the cheap model got right")
    cost_per_million: float | None = Field(
        default=None,
        description="cheap's cost per million predictions plus the deferral share times expensive's; None: a part "
        "has no cost",
    )
    latency_mean_s: float | None = Field(
        default=None,
        description="mean latency of one example (cheap always, expensive when deferred); None: not measured",
    )
    latency_p99_s: float | None = Field(default=None, description="its 99th percentile; None: not measured")

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def deferral_share(self) -> float | None:
        """Share of the evaluation examples deferred."""
        return self.deferred / self.n_evaluation if self.n_evaluation else None

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def accuracy(self) -> float | None:
        """The cascade's accuracy on the evaluation examples."""
        return self.correct / self.n_evaluation if self.n_evaluation else None

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def drop(self) -> float | None:
        """The accuracy it lost against the expensive model on the evaluation examples (negative: it gained)."""
        return (self.expensive_correct - self.correct) / self.n_evaluation if self.n_evaluation else None
