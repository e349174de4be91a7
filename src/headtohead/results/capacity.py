"""Typed records of the capacity scenario: the load an endpoint model sustains within its SLOs.

A model's searches (:class:`~headtohead.results.server.ServerSearch`) and a pair's capacity ratio
(:class:`~headtohead.results.server.ServerComparison`) are the Server scenario's records: one
capacity record and one set of words for both. See ``docs/speed.md``, "Capacity at a latency SLO".
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from headtohead.results.base import Record
from headtohead.results.server import ServerComparison, ServerSearch

__all__ = ["CapacityProbe", "CapacityModelResult", "CapacitySummary"]


class CapacityProbe(Record):
    """One probe: requests sent to one model at ``rate``, after a warm-up, judged against the SLOs."""

    search: int = Field(description="0-based index of the seeded search it belongs to")
    step: int = Field(description="0-based position in that search")
    phase: Literal["bracket", "bisect"]
    rate: float = Field(description="offered requests per second")
    requests: int = Field(description="measured requests sent (the warm-up's left out)")
    errors: int = Field(description="measured requests that failed (transport or HTTP): the deployment's errors")
    ttft_p50_s: float | None = None
    ttft_p99_s: float | None = None
    tpot_p99_s: float | None = None
    e2e_p50_s: float | None = None
    e2e_p99_s: float | None = None
    achieved_rate: float | None = Field(default=None, description="measured requests completed per second")
    saturated: bool = Field(description="completions fell behind the arrivals: a growing queue")
    stopped_early: bool = Field(description="stopped once max_in_flight requests were waiting")
    missed: list[str] = Field(default_factory=list, description="the SLOs the probe missed (by key)")
    held: bool = Field(description="every SLO met and not over-saturated")
    answered: int = Field(default=0, description="measured answers read as a label")
    correct: int = Field(default=0, description="measured answers that were the gold label")
    server_down: bool = Field(default=False, description="no request reached the server: the search is missing")

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.requests if self.requests else None


class CapacityModelResult(Record):
    """One endpoint model's capacity at the SLOs (``goodput``: geometric mean over the searches)."""

    name: str
    goodput: float | None = Field(description="requests per second within every SLO; None: no rate met them")
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float
    held_rate: float | None = Field(default=None, description="lowest of the searches' highest held rates")
    at_cap: bool = Field(default=False, description="held capacity.max_rate: goodput is a lower bound")
    lowest_probe: CapacityProbe | None = Field(default=None, description="when no rate held: the lowest rate probed")
    missing_searches: int = Field(default=0, description="searches lost to a server that stopped answering")
    searches: list[ServerSearch]
    probes: list[CapacityProbe]
    price_per_hour: float | None = None
    cost_per_million: float | None = Field(default=None, description="price per 1 M requests at goodput")

    def curve(self) -> list[CapacityProbe]:
        """Every probe in order of offered rate."""
        return sorted(self.probes, key=lambda p: (p.rate, p.search, p.step))


class CapacitySummary(Record):
    """Every endpoint model's capacity at the SLOs, and each pair's capacity ratio."""

    slo: dict[str, float] = Field(description="SLO key → bound (seconds; error_rate a share)")
    settings: dict[str, Any] = Field(description="speed.capacity as used")
    seed: int
    order: list[list[str]] = Field(default_factory=list, description="model order of each interleaved step")
    models: list[CapacityModelResult] = Field(default_factory=list)
    comparisons: list[ServerComparison] = Field(default_factory=list)
    elapsed_s: float = 0.0

    def model(self, name: str) -> CapacityModelResult:
        """The capacity of the model called ``name``."""
        for record in self.models:
            if record.name == name:
                return record
        raise KeyError(name)
