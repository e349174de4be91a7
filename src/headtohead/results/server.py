"""Typed records of the MLPerf LoadGen runs: the Server scenario's rate search and the cross-checks.

See ``docs/performance.md``, "Records and files".
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from headtohead.results.base import Record

__all__ = [
    "LoadGenRun",
    "ServerTrial",
    "ServerSearch",
    "ServerModelResult",
    "ServerComparison",
    "LoadGenCrosscheck",
    "LoadGenSummary",
]


class LoadGenRun(Record):
    """What one LoadGen test reported about itself (its ``result_*`` log entries).

    Latencies are LoadGen's, in nanoseconds, from a query's scheduled issue to its completion.
    """

    scenario: Literal["Server", "SingleStream", "Offline"]
    valid: bool = Field(description="LoadGen's own judgement: Result is VALID")
    perf_constraints_met: bool | None = Field(
        default=None, description="Server: the latency percentile under its bound"
    )
    min_duration_met: bool
    min_queries_met: bool
    early_stopping_met: bool | None = Field(default=None, description="LoadGen's early-stopping confidence check")
    invalid_reason: str | None = None
    query_count: int
    overlatency_query_count: int | None = None
    scheduled_samples_per_s: float | None = None
    completed_samples_per_s: float | None = None
    samples_per_s: float | None = Field(default=None, description="Offline: LoadGen's samples per second")
    mean_latency_ns: float | None = None
    min_latency_ns: float | None = None
    max_latency_ns: float | None = None
    percentiles_ns: dict[str, float] = Field(default_factory=dict, description="'50.00', '90.00', '99.00' … → ns")
    log_dir: str | None = Field(default=None, description="Folder of its mlperf_log_summary.txt / _detail.txt")

    def percentile_s(self, level: str) -> float | None:
        """A latency percentile in seconds (``"99.00"``), or ``None`` when LoadGen did not report it."""
        value = self.percentiles_ns.get(level)
        return value / 1e9 if value is not None else None


class ServerTrial(Record):
    """One Server trial: a model served at ``target_qps`` by the batcher, judged by LoadGen."""

    search: int = Field(description="0-based index of the seeded search it belongs to")
    step: int = Field(description="0-based position in that search")
    phase: Literal["bracket", "bisect"]
    target_qps: float
    schedule_seed: int = Field(description="LoadGen's schedule_rng_seed: equal seeds and rates, equal arrivals")
    held: bool = Field(description="LoadGen judged the trial VALID: p99 under the bound, with its early stopping")
    p50_s: float | None
    p99_s: float | None
    batches: int = Field(description="calls the batcher made")
    mean_batch: float | None = Field(description="requests per call, on average")
    utilization: float | None = Field(default=None, description="share of the trial the batcher was serving")
    energy_j: float | None = Field(default=None, description="energy counter difference over the trial")
    loadgen: LoadGenRun


class ServerSearch(Record):
    """One seeded search for one model: the bracket it ended with."""

    search: int
    held_qps: float | None = Field(description="highest rate held (None: none held down to min_qps)")
    failed_qps: float | None = Field(description="lowest rate above it that failed (None: max_qps held)")
    estimate_qps: float | None = Field(
        description="the search's figure: geometric midpoint of the bracket, or the held rate when max_qps held"
    )


class ServerModelResult(Record):
    """One model in the Server scenario.

    ``max_qps`` is the geometric mean of the searches' estimates; ``ci_low``/``ci_high`` a Student-t
    interval over the searches on the log scale (each search with its own seeded arrival sequence
    and start point), so it holds the machine's run-to-run variation and the search's resolution;
    ``None`` with one search.
    """

    name: str
    device: str
    capacity_estimate_qps: float = Field(description="max_batch / time of one full batch, measured first")
    max_qps: float | None = Field(description="None when no rate down to min_qps held")
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float
    held_qps: float | None = Field(
        default=None, description="lowest of the searches' highest held rates: a rate every search saw held"
    )
    at_cap: bool = Field(default=False, description="held server.max_qps: max_qps is a lower bound")
    lowest_tried: ServerTrial | None = Field(default=None, description="when nothing held: the lowest rate tried")
    searches: list[ServerSearch]
    trials: list[ServerTrial]
    preprocessed_ahead: bool = Field(
        description="the query sample library held preprocessed examples (else each "
        "batch was preprocessed inside the latency)"
    )
    energy_j: float | None = Field(default=None, description="energy over all its trials")
    energy_source: str | None = None
    predictions: int = Field(default=0, description="queries answered over all its trials")

    def curve(self) -> list[ServerTrial]:
        """The latency–load curve: every trial in order of offered rate."""
        return sorted(self.trials, key=lambda t: (t.target_qps, t.search, t.step))


class ServerComparison(Record):
    """``ratio`` = max_qps(model_b) / max_qps(model_a), paired by search; above 1 ``model_b`` holds more."""

    model_a: str
    model_b: str
    ratio: float
    ci_low: float | None
    ci_high: float | None
    confidence: float
    n_searches: int
    more: str | None = Field(
        description="the model holding significantly more load after Holm's adjustment "
        "over every speed comparison of the run (version ≤ 3: the interval "
        "alone), or None"
    )
    p_value: float | None = Field(
        default=None, description="the test the interval inverts (None: one search, or a file of version ≤ 3)"
    )
    p_adjusted: float | None = Field(default=None, description="Holm-adjusted over every speed comparison of the run")
    n_speed_tests: int | None = Field(default=None, description="comparisons Holm's adjustment ran over")
    verdict: str = Field(default="", description="the comparison in one sentence (report.server)")


class LoadGenCrosscheck(Record):
    """LoadGen's SingleStream and Offline figures for one model, beside headtohead's.

    LoadGen times the whole request (collate, transfer, forward); headtohead's scenarios time
    the forward pass on staged inputs, so LoadGen's figures include more and read slower.
    """

    name: str
    single_stream: LoadGenRun | None = None
    offline: LoadGenRun | None = None
    h2h_single_stream_p90_s: float | None = Field(default=None, description="headtohead's single_stream p90")
    h2h_offline_samples_per_s: float | None = Field(default=None, description="headtohead's offline throughput")


class LoadGenSummary(Record):
    """Everything LoadGen ran in a speed measurement."""

    loadgen_version: str
    latency_bound_ms: float
    settings: dict[str, Any] = Field(description="speed.server as used")
    log_dir: str | None = Field(description="where LoadGen's logs were kept (a folder per model); None: dropped")
    seed: int
    order: list[list[str]] = Field(default_factory=list, description="model order of each interleaved step")
    models: list[ServerModelResult] = Field(default_factory=list)
    comparisons: list[ServerComparison] = Field(default_factory=list)
    crosschecks: list[LoadGenCrosscheck] = Field(default_factory=list)
    elapsed_s: float = 0.0
    warnings: list[str] = Field(default_factory=list)

    def model(self, name: str) -> ServerModelResult:
        """The Server result of the model called ``name``."""
        for record in self.models:
            if record.name == name:
                return record
        raise KeyError(name)
