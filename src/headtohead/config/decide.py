"""The ``decide:`` section: one decision across quality, speed and cost (``stats.dominance``).

See ``docs/statistics.md`` §17.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from headtohead.config.base import Section
from headtohead.config.margins import AccuracyMargin

__all__ = ["DecideConfig", "DECIDE_AXES", "Axis"]

#: An axis a decision can read.
Axis = Literal["quality", "latency", "cost", "memory"]

#: The axes a decision can read, in the order the report shows them.
DECIDE_AXES: tuple[Axis, ...] = ("quality", "latency", "cost", "memory")


class DecideConfig(Section):
    """Which model dominates which, and the front: the axes read together and the speed scenario "faster" is read on."""

    scenario: Literal["offline", "single_stream"] | None = Field(
        default=None,
        description="The timed scenario 'faster' is read on (default: the first of speed.scenarios timed in rounds).",
    )
    axes: list[Axis] = Field(
        default_factory=lambda: list[Axis](["quality", "latency", "cost"]),
        description="The axes read together; quality is always one. An axis a model was not measured on reads "
        "'not measured' and the front stands on the others.",
    )
    quality_margin: AccuracyMargin = Field(
        default=0.01,
        ge=0.0,
        lt=1.0,
        description="A model dominates another only when not worse in accuracy beyond this: 1pp or the share 0.01.",
    )
    resamples: int = Field(default=1000, ge=100, description="Joint resamples behind each model's P(on the front).")

    @field_validator("axes")
    @classmethod
    def _axes(cls, axes: list[Axis]) -> list[Axis]:
        if "quality" not in axes:
            raise ValueError(f"decide.axes {axes} leaves out quality; a decision always reads it: add quality")
        repeated = sorted({a for a in axes if axes.count(a) > 1})
        if repeated:
            raise ValueError(f"decide.axes names {repeated} more than once; list each axis once")
        return [a for a in DECIDE_AXES if a in axes]
