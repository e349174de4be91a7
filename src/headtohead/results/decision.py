"""Typed records of one decision across quality, speed and cost: dominance per pair, the front per model.

:mod:`headtohead.stats.dominance` decides; the pipeline stores the numbers here with their sentences
(written by :mod:`headtohead.report.words.decision`). ``docs/statistics.md`` §17.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from headtohead.results.base import Record

__all__ = ["AxisValue", "AxisComparison", "PairDominance", "ModelFront", "DecisionSummary"]


class AxisValue(Record):
    """One model's value on one axis with its interval (``None``: not measured, or no interval)."""

    axis: Literal["quality", "latency", "cost", "memory"]
    value: float | None = Field(
        description="quality: accuracy (a share); latency: seconds per prediction in decide's scenario; cost: "
        "money per million predictions; memory: peak MiB. None: not measured"
    )
    ci_low: float | None = None
    ci_high: float | None = None


class AxisComparison(Record):
    """One part of "model_a dominates model_b"."""

    axis: Literal["quality", "latency", "cost", "memory"]
    estimate: float = Field(description="quality: accuracy(a) − accuracy(b); otherwise the ratio value(a) / value(b)")
    ci_low: float
    ci_high: float
    method: str = Field(
        description="quality: the paired score interval (stats.paired), or 'two-level t over runs' (or prompts) where a "
        "model was measured several ways; a ratio: t or anytime (paired rounds), "
        "welch (unpaired: delta method on the log scale, Satterthwaite's df), exact (two values known without noise)"
    )
    holds: bool = Field(
        description="quality: the lower bound is above −quality_margin; a ratio: the whole interval is below 1"
    )


class PairDominance(Record):
    """Whether ``model_a`` dominates ``model_b``: every part holds (an intersection–union test at α)."""

    model_a: str
    model_b: str
    dominates: bool
    axes: list[AxisComparison]
    sentence: str = Field(default="", description="the decision in one sentence (report.words.decision)")

    def axis(self, name: str) -> AxisComparison | None:
        """The comparison on axis ``name``, or ``None``."""
        return next((a for a in self.axes if a.axis == name), None)


class ModelFront(Record):
    """One model's place: on the front, dominated (by whom) or undecided, and its P(on the front)."""

    name: str
    front: Literal["front", "dominated", "undecided"]
    dominated_by: list[str] = Field(default_factory=list)
    p_front: float = Field(
        ge=0.0, le=1.0, description="share of the joint resamples (examples, rounds, requests) on the Pareto front"
    )
    values: list[AxisValue] = Field(default_factory=list)

    def value(self, axis: str) -> AxisValue | None:
        """The :class:`AxisValue` of ``axis``, or ``None``."""
        return next((v for v in self.values if v.axis == axis), None)


class DecisionSummary(Record):
    """The run's one decision across its axes (``decide:`` of the experiment)."""

    axes: list[str] = Field(description="the axes the decision read: asked for and measured for every model")
    not_measured: dict[str, list[str]] = Field(
        default_factory=dict,
        description="axis asked for → the models not measured on it (the axis is then left out of the decision)",
    )
    scenario: str | None = Field(description="the timed scenario 'faster' is read on (None: latency not measured)")
    cost_from: dict[str, str] = Field(
        default_factory=dict,
        description="model → where its cost per million comes from: 'price per hour × <scenario> throughput' "
        "or 'tokens × price'",
    )
    alpha: float
    quality_margin: float
    resamples: int
    seed: int
    left_out: dict[str, str] = Field(
        default_factory=dict, description="model → why it is not in the decision (measured several ways, missing)"
    )
    models: list[ModelFront]
    pairs: list[PairDominance] = Field(description="every ordered pair (a, b), a ≠ b")
    sentences: list[str] = Field(default_factory=list, description="the front in sentences (report.words.decision)")

    def model(self, name: str) -> ModelFront:
        """The :class:`ModelFront` of ``name``."""
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(name)

    def pair(self, a: str, b: str) -> PairDominance:
        """The decision whether ``a`` dominates ``b``."""
        for p in self.pairs:
            if p.model_a == a and p.model_b == b:
                return p
        raise KeyError((a, b))
