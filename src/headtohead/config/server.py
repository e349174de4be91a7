"""The ``speed.server:`` sub-section: the Server scenario driven by MLPerf LoadGen (no torch import).

See ``docs/performance.md``, "Server scenario, cost and energy".
"""

from __future__ import annotations

from pydantic import Field, model_validator

from headtohead.config.base import Section as _Section

__all__ = ["ServerConfig"]


class ServerConfig(_Section):
    """How the Server scenario's batcher is set up and how its highest rate is searched."""

    max_batch: int = Field(default=8, gt=0, description="Dynamic batcher: most requests served by one call.")
    max_wait_ms: float = Field(
        default=2.0,
        ge=0.0,
        description="Dynamic batcher: how long the oldest waiting "
        "request waits for others before its batch is served anyway.",
    )
    trial_seconds: float = Field(
        default=1.0, gt=0.0, description="Shortest duration of one LoadGen trial (its min_duration)."
    )
    min_queries: int = Field(
        default=500,
        gt=0,
        description="Fewest queries of one trial (LoadGen's "
        "min_query_count); p99 with LoadGen's early stopping needs a few hundred.",
    )
    start_qps: float | None = Field(
        default=None,
        gt=0.0,
        description="First rate tried (default: half the slowest model's capacity estimated from a few full batches).",
    )
    min_qps: float = Field(
        default=5.0,
        gt=0.0,
        description="Lowest rate the search goes down to before it "
        "declares the latency bound unreachable (a trial lasts min_queries / rate at least).",
    )
    max_qps: float | None = Field(
        default=None,
        gt=0.0,
        description="Highest rate tried; a model holding it is reported as holding at least this rate.",
    )
    growth: float = Field(default=2.0, gt=1.0, description="Factor between rates while bracketing.")
    precision: float = Field(
        default=0.1,
        gt=0.0,
        lt=1.0,
        description="Bisect until the lowest failing rate is within this fraction above the highest holding one.",
    )
    repeats: int = Field(
        default=3,
        ge=1,
        description="Searches per model with different seeded arrival "
        "sequences and start points; at least 2 give an interval on max_qps.",
    )
    samples: int = Field(
        default=1024, gt=0, description="Examples in LoadGen's query sample library (at most the evaluation set)."
    )
    keep_trace: bool = Field(default=False, description="Also keep LoadGen's mlperf_log_trace.json per trial.")

    @model_validator(mode="after")
    def _range(self) -> ServerConfig:
        if self.max_qps is not None and self.max_qps <= self.min_qps:
            raise ValueError(f"server.max_qps ({self.max_qps:g}) must be above server.min_qps ({self.min_qps:g})")
        if self.start_qps is not None and not (self.min_qps <= self.start_qps <= (self.max_qps or float("inf"))):
            raise ValueError(f"server.start_qps ({self.start_qps:g}) must lie within min_qps–max_qps")
        return self
