"""Typed records of what predictions cost: energy from hardware counters, money from a price per hour.

* :class:`ScenarioCost` — one model in one scenario: the throughput the cost is based on, the
  energy counted over its timed blocks and the predictions made meanwhile;
* :class:`ModelCost` — one model's scenarios, and where its energy came from (or why not);
* :class:`RunCost` — a whole job (a fine-tune): seconds, energy, and its cost at a price.

Costs and joules per prediction are derived from the stored numbers when a record is built
or read back (never taken from a file), like every statistic of :mod:`headtohead.results.speed`.
"""

from __future__ import annotations

from functools import cached_property

from pydantic import Field, computed_field

from headtohead.results.base import DerivedRecord, Record

__all__ = [
    "ScenarioCost",
    "ModelCost",
    "RunCost",
    "cost_per_million",
    "COST_SCENARIOS",
    "cost_record",
    "one_cost_per_million",
]


def cost_per_million(price_per_hour: float, predictions_per_s: float) -> float:
    """What a million predictions cost at ``predictions_per_s`` on a machine priced per hour.

    Examples
    --------
    >>> cost_per_million(3.6, 1000.0)   # 1000 000 predictions take 1000 s = 1/3.6 h
    1.0
    """
    return price_per_hour / 3600.0 * 1e6 / predictions_per_s


class ScenarioCost(DerivedRecord):
    """One model in one scenario (``offline``, ``single_stream``, ``time_window``, ``server``; ``endpoint``: a
    model asked over the network, priced per token; ``priced``: a model not timed here, at the price per
    million predictions it was given, ``price_per_1m``; ``cascade``: a cascade, from its parts' costs)."""

    scenario: str
    throughput_per_s: float | None = Field(
        description="predictions per second the cost is based on: the scenario's throughput (server: max_qps)"
    )
    price_per_hour: float | None = None
    predictions: int = Field(default=0, description="predictions made while the energy counter ran")
    seconds: float = Field(default=0.0, description="time the energy counter ran")
    energy_j: float | None = Field(default=None, description="counter difference summed over the timed blocks")
    price_per_prediction: float | None = Field(
        default=None,
        description="an endpoint's (kind openai) mean price of one prediction, from its tokens and its price per "
        "token; a model's given price_per_1m / 1e6 (priced); a cascade's from its parts (cascade)",
    )

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def cost_per_million(self) -> float | None:
        """Price of a million predictions: at the measured throughput (the machine fully used), or per token."""
        if self.price_per_prediction is not None:
            return self.price_per_prediction * 1e6
        if self.price_per_hour is None or not self.throughput_per_s:
            return None
        return cost_per_million(self.price_per_hour, self.throughput_per_s)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def energy_per_prediction_j(self) -> float | None:
        return self.energy_j / self.predictions if self.energy_j is not None and self.predictions else None

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def mean_power_w(self) -> float | None:
        return self.energy_j / self.seconds if self.energy_j is not None and self.seconds > 0 else None


class ModelCost(Record):
    """Cost and energy of one model, per scenario.

    The counters measure a whole device (every process on the GPU; the whole CPU package with
    RAPL), idle power included: joules per prediction are what the machine drew per answer.
    """

    energy_source: str | None = Field(
        default=None, description="the counter read, e.g. 'NVML total energy, NVIDIA H100 (whole GPU)'"
    )
    energy_note: str | None = Field(default=None, description="why there is no energy figure")
    scenarios: list[ScenarioCost] = Field(default_factory=list)

    def scenario(self, name: str) -> ScenarioCost | None:
        """The :class:`ScenarioCost` of ``name``, or ``None``."""
        return next((s for s in self.scenarios if s.scenario == name), None)


class RunCost(DerivedRecord):
    """A whole job on one machine (a fine-tune): how long it ran, the energy it drew, its cost."""

    seconds: float
    energy_j: float | None = None
    energy_source: str | None = None
    energy_note: str | None = None
    price_per_hour: float | None = None

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def cost(self) -> float | None:
        return self.price_per_hour * self.seconds / 3600.0 if self.price_per_hour is not None else None

    def priced(self, price_per_hour: float | None) -> RunCost:
        """The same job at ``price_per_hour`` (a new record, so the derived cost is recomputed)."""
        return RunCost.model_validate({**self.model_dump(), "price_per_hour": price_per_hour})


#: Where a model's one cost per million predictions is read, in this order: per token (an endpoint), a price
#: given for what is not timed (``price_per_1m``), a cascade's from its parts, the price per hour at the
#: offline throughput (the machine fully used), then at another timed scenario's.
COST_SCENARIOS = ("endpoint", "priced", "cascade", "offline", "single_stream", "time_window", "server")


def cost_record(cost: ModelCost | None) -> ScenarioCost | None:
    """The one record a model's cost per million predictions is read from, or ``None`` (not measured).

    The first of :data:`COST_SCENARIOS` that holds a cost, else any record that does. The decision across
    quality, speed and cost (``pipeline.decision``), the cost chart and a cascade's parts all read this one.

    Examples
    --------
    >>> offline = ScenarioCost(scenario="offline", throughput_per_s=1000.0, price_per_hour=3.6)
    >>> cost_record(ModelCost(scenarios=[offline])).cost_per_million
    1.0
    >>> priced = ScenarioCost(scenario="priced", throughput_per_s=None, price_per_prediction=2e-6)
    >>> cost_record(ModelCost(scenarios=[offline, priced])).scenario
    'priced'
    """
    if cost is None:
        return None
    for scenario in COST_SCENARIOS:
        found = cost.scenario(scenario)
        if found is not None and found.cost_per_million is not None:
            return found
    return next((s for s in cost.scenarios if s.cost_per_million is not None), None)


def one_cost_per_million(cost: ModelCost | None) -> float | None:
    """:func:`cost_record`'s cost per million predictions (``None``: not measured).

    Examples
    --------
    >>> one_cost_per_million(ModelCost(scenarios=[ScenarioCost(scenario="priced", throughput_per_s=None,
    ...     price_per_prediction=2e-6)]))
    2.0
    """
    found = cost_record(cost)
    return found.cost_per_million if found is not None else None
    for scenario in COST_SCENARIOS:
        found = cost.scenario(scenario)
        if found is not None and found.cost_per_million is not None:
            return found.cost_per_million
    return None
