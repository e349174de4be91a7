"""The ``speed.capacity:`` sub-section: the load an endpoint sustains within latency SLOs (no torch import).

An SLO is written with its unit — ``ttft_p99: 500ms``, ``e2e_p99: 2s``, ``error_rate: 1%`` — and read
here into seconds or a share; a number without a unit, or below zero, is refused in one line. See
``docs/speed.md``, "Capacity at a latency SLO".
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, PlainSerializer, model_validator

from headtohead.config.base import Section as _Section

__all__ = ["CapacityConfig", "Slo", "parse_duration", "parse_share", "SLO_NAMES"]

#: The SLOs a capacity probe is judged by, in the order they are shown: (key, what it bounds).
SLO_NAMES: tuple[str, ...] = ("ttft_p99", "tpot_p99", "e2e_p99", "error_rate")

_DURATION = re.compile(r"^\s*(?P<value>[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)\s*(?P<unit>us|µs|ms|s|min)?\s*$")
_SCALE = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def parse_duration(value: object) -> float:
    """``"500ms"``, ``"2s"``, ``"0.5 min"`` → seconds; a number without a unit or below zero is refused.

    Examples
    --------
    >>> parse_duration("500ms"), parse_duration("2 s")
    (0.5, 2.0)
    """
    match = _DURATION.match(str(value))
    if match is None or match["unit"] is None:
        raise ValueError(f"{value!r} needs a unit: write it as 500ms or 2s")
    number, unit = float(match["value"]), match["unit"]
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{value!r} must be above zero: write it as 500ms or 2s")
    return number * _SCALE[unit]


def parse_share(value: object) -> float:
    """``"1%"`` → 0.01; a share is written with ``%``.

    Examples
    --------
    >>> parse_share("1%"), parse_share("0.5 %")
    (0.01, 0.005)
    """
    match = re.match(r"^\s*(?P<value>[+-]?(\d+(\.\d*)?|\.\d+))\s*%\s*$", str(value))
    if match is None:
        raise ValueError(f"{value!r} needs a unit: write it as 1%")
    number = float(match["value"]) / 100
    if not math.isfinite(number) or not 0.0 <= number < 1.0:
        raise ValueError(f"{value!r} must lie in [0 %, 100 %): write it as 1%")
    return number


# dumped with their units, so a dumped section reads back through the same rule
Duration = Annotated[float, BeforeValidator(parse_duration), PlainSerializer(lambda v: f"{v:g}s")]
Share = Annotated[float, BeforeValidator(parse_share), PlainSerializer(lambda v: f"{v * 100:g}%")]


class Slo(_Section):
    """The service-level objectives a probe must meet to count as held (seconds, and a share of requests)."""

    ttft_p99: Duration | None = Field(default=None, description="p99 time to first token, with its unit (500ms).")
    tpot_p99: Duration | None = Field(default=None, description="p99 time per output token after the first (50ms).")
    e2e_p99: Duration | None = Field(default=None, description="p99 arrival-to-last-token latency (2s).")
    error_rate: Share | None = Field(default=None, description="Share of requests that may fail under load (1%).")

    @model_validator(mode="after")
    def _one_at_least(self) -> Slo:
        if all(getattr(self, name) is None for name in SLO_NAMES):
            raise ValueError(f"give at least one SLO ({', '.join(SLO_NAMES)}), e.g. e2e_p99: 2s")
        return self

    def bounds(self) -> dict[str, float]:
        """The SLOs set, in :data:`SLO_NAMES` order: key → seconds (a share for ``error_rate``)."""
        return {name: value for name in SLO_NAMES if (value := getattr(self, name)) is not None}


class CapacityConfig(_Section):
    """How the capacity of an endpoint model at its SLOs is searched (scenario ``capacity``)."""

    slo: Slo | None = Field(default=None, description="The SLOs a rate must meet; required by scenario capacity.")
    arrivals: Literal["poisson", "constant"] = Field(
        default="poisson", description="Arrival process of a probe: Poisson (seeded) or evenly spaced."
    )
    requests: int | None = Field(
        default=None,
        gt=0,
        description="Measured requests per probe (default: the fewest a p99 needs, LoadGen's early-stopping "
        "bound at speed.confidence: 299 at 95 %).",
    )
    warmup_requests: int = Field(default=10, ge=0, description="Requests sent first at the probe's rate, not measured.")
    start_rate: float = Field(default=4.0, gt=0.0, description="First rate tried (requests per second).")
    min_rate: float = Field(default=0.25, gt=0.0, description="Lowest rate tried before 'no rate meets the SLO'.")
    max_rate: float | None = Field(default=None, gt=0.0, description="Highest rate tried (held: at least this).")
    growth: float = Field(default=2.0, gt=1.0, description="Factor between rates while bracketing.")
    precision: float = Field(
        default=0.1, gt=0.0, lt=1.0, description="Bisect until the failing rate is within this above the held one."
    )
    repeats: int = Field(default=3, ge=1, description="Seeded searches per model (2 or more give an interval).")
    saturation: float = Field(
        default=0.05,
        gt=0.0,
        lt=1.0,
        description="A probe whose completions kept up with less than 1 − this of its arrivals is over-saturated.",
    )
    max_in_flight: int = Field(
        default=256, gt=0, description="Requests in flight at which a probe is over-saturated and stopped early."
    )
    price_per_hour: dict[str, float] = Field(
        default_factory=dict,
        description="Per model, the deployment's price per hour (any currency): cost per 1 M requests at goodput.",
    )

    @model_validator(mode="after")
    def _range(self) -> CapacityConfig:
        if self.max_rate is not None and self.max_rate <= self.min_rate:
            raise ValueError(f"capacity.max_rate ({self.max_rate:g}) must be above capacity.min_rate")
        bad = [name for name, price in self.price_per_hour.items() if not price > 0]
        if bad:
            raise ValueError(f"capacity.price_per_hour of {', '.join(bad)} must be above zero")
        return self
