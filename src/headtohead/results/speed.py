"""Typed records of a speed measurement (the ``speed`` part of ``results.json``).

See ``docs/speed.md``, "How speed and memory are measured".
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar, Literal

from pydantic import Field, computed_field, model_validator

from headtohead.results.base import Record
from headtohead.results.capacity import CapacitySummary
from headtohead.results.cost import ModelCost
from headtohead.results.endpoint import RequestTiming
from headtohead.results.latency import (
    count_outliers,
    iqr_over_median,
    latency_summary,
    per_input,
    repeat_noise,
)
from headtohead.results.memory import ColdStart, MemoryStats, ScenarioMemory
from headtohead.results.server import LoadGenSummary

__all__ = [
    "Scenario",
    "StopReason",
    "Settled",
    "LatencyStats",
    "ScenarioTiming",
    "PipelineTiming",
    "TimeWindowResult",
    "MemoryStats",
    "ScenarioMemory",
    "ColdStart",
    "MeanMax",
    "TelemetryStats",
    "ModelSpeed",
    "SpeedComparison",
    "ScenarioRun",
    "HostLoad",
    "SpeedSummary",
]

Scenario = Literal["offline", "single_stream", "time_window"]
#: minimums_met: a fixed number of rounds (speed.precision null); target_ci_reached: every ratio known
#: to speed.precision; decided: every ratio known to it or decided — faster, or against speed.margin
#: (at 1 − α/m, m the run's speed comparisons: each a decision the verdict makes too; since issue 42);
#: margin_decided: the same before issue 42, when only the margin's decisions stopped the rounds;
#: time_budget: the budget (ScenarioRun.budget_s; speed.max_seconds before issue 42) ran out first.
StopReason = Literal["minimums_met", "target_ci_reached", "decided", "margin_decided", "time_budget"]
#: The scenarios timed in interleaved rounds (the others have their own records).
TimedScenario = Literal["offline", "single_stream"]
#: How the stopping rule settled a ratio (``stats.speed_sequence.settlement``).
Settled = Literal["precision", "beyond_margin", "within_margin", "faster"]
#: How the latencies were timed.
TimerName = Literal["perf_counter_ns", "cuda_event"]


class _Derived(Record):
    """A record whose ``computed_field`` values are recomputed on read, never taken from input."""

    #: Derived values older versions wrote that are no longer computed (dropped on read too).
    retired_fields: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        if isinstance(data, dict):
            derived = set(cls.model_computed_fields) | cls.retired_fields
            data = {k: v for k, v in data.items() if k not in derived}
        return data


class LatencyStats(Record):
    """Summary of a latency series, in seconds."""

    n: int
    mean_s: float
    std_s: float
    min_s: float
    p50_s: float
    p90_s: float
    p95_s: float
    p99_s: float
    max_s: float

    @classmethod
    def from_ns(cls, samples_ns: list[int] | list[float], divisor: float = 1.0) -> LatencyStats:
        """Summarise nanosecond samples, each divided by ``divisor`` (a batch size gives per-sample)."""
        summary = latency_summary([s / 1e9 / divisor for s in samples_ns])
        return cls(n=len(samples_ns), **{f"{k}_s": v for k, v in summary.items()})


def _stats_or_none(samples_ns: list[int], divisor: float = 1.0) -> LatencyStats | None:
    return LatencyStats.from_ns(samples_ns, divisor) if samples_ns else None


class MeanMax(Record):
    mean: float
    max: float


class TelemetryStats(Record):
    """GPU telemetry (NVML) while this model was measured; every field ``None`` without a GPU."""

    available: bool = False
    samples: int = 0
    utilization_pct: MeanMax | None = None
    memory_used_mb: MeanMax | None = None
    power_w: MeanMax | None = None
    temperature_c: MeanMax | None = None
    sm_clock_mhz: MeanMax | None = None


class ScenarioTiming(_Derived):
    """One model's forward-pass latencies in one scenario, kept per round.

    ``rounds_ns[r]`` holds the per-iteration latencies (nanoseconds) of round ``r``;
    inputs were preprocessed and on the device beforehand, so this is the model alone.
    Every round makes whole passes over the ``inputs`` timed inputs in the same order, so
    call ``i`` of a round ran input ``i % inputs`` (``SpeedSummary.timed_indices`` names them).
    ``repeat_noise`` is shown as a number; whether noise deserves a warning is judged on
    what it does to the comparisons (an undecided ratio too wide, a drift across rounds:
    :mod:`headtohead.stats.speed_family`), no longer on the noise alone (the ``unstable`` flag
    of earlier versions, dropped on read).
    """

    retired_fields: ClassVar[frozenset[str]] = frozenset({"unstable"})

    scenario: Literal["offline", "single_stream"]
    batch_size: int
    sequence_length: int | None = None
    timer: Literal["perf_counter_ns", "cuda_event"]
    warmup_iterations: int
    warmup_s: float
    rounds_ns: list[list[int]]
    inputs: int = Field(default=1, ge=1, description="Distinct timed inputs (batches) cycled in every round.")
    telemetry: TelemetryStats | None = Field(
        default=None, description="GPU telemetry while this model ran this scenario (None: not asked for)."
    )

    def input_latencies_ns(self) -> list[list[int]]:
        """The latencies of each timed input (in ``timed_indices`` order), over all rounds."""
        return [[int(v) for v in group] for group in per_input(self.samples_ns, self.inputs)]

    @property
    def samples_ns(self) -> list[int]:
        """All per-iteration latencies, round after round."""
        return [s for r in self.rounds_ns for s in r]

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def per_batch(self) -> LatencyStats:
        return LatencyStats.from_ns(self.samples_ns)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def per_sample(self) -> LatencyStats:
        return LatencyStats.from_ns(self.samples_ns, divisor=self.batch_size)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def throughput_per_s(self) -> float:
        """Samples per second: all samples processed over all measured time."""
        samples = self.samples_ns
        return self.batch_size * len(samples) / (sum(samples) / 1e9)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def outliers(self) -> int:
        """Iterations outside Tukey's fences (1.5 IQR beyond the quartiles)."""
        return count_outliers(self.samples_ns)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def iqr_over_median(self) -> float:
        """Spread of all calls: differences between the inputs plus repeat noise."""
        return iqr_over_median(self.samples_ns)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def repeat_noise(self) -> float:
        """IQR/median of the calls each divided by its input's median: the spread of repeats alone.

        Judged on repeated calls of the same input, not on the mixture of inputs of different
        lengths, whose spread is real and says nothing about noise.
        """
        return repeat_noise(self.samples_ns, self.inputs)


class PipelineTiming(_Derived):
    """Where a request's time goes: preprocessing (CPU), transfer to the device, forward, end to end.

    Each list holds one value per iteration (nanoseconds); ``end_to_end_ns`` is timed
    around the whole step, so it includes the glue between the parts.
    """

    batch_size: int
    preprocess_ns: list[int]
    transfer_ns: list[int]
    forward_ns: list[int]
    end_to_end_ns: list[int]

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def preprocess(self) -> LatencyStats | None:
        return _stats_or_none(self.preprocess_ns)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def transfer(self) -> LatencyStats | None:
        return _stats_or_none(self.transfer_ns)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def forward(self) -> LatencyStats | None:
        return _stats_or_none(self.forward_ns)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def end_to_end(self) -> LatencyStats | None:
        return _stats_or_none(self.end_to_end_ns)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def end_to_end_per_s(self) -> float | None:
        """Samples per second through the whole pipeline."""
        total = sum(self.end_to_end_ns)
        return self.batch_size * len(self.end_to_end_ns) / (total / 1e9) if total else None


class TimeWindowResult(_Derived):
    """Samples processed end to end (preprocess + forward) in a fixed time window."""

    window_s: float
    elapsed_s: float
    batch_size: int
    batches: int
    samples: int

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def samples_per_s(self) -> float:
        return self.samples / self.elapsed_s if self.elapsed_s > 0 else 0.0


class ModelSpeed(Record):
    """Everything measured about one model's speed and memory."""

    name: str
    device: str
    num_parameters: int | None = Field(description="None: unknown (a callable, an estimator without coefficients)")
    parameter_bytes: int | None = Field(description="None: unknown")
    load_time_s: float | None = Field(
        default=None,
        description="Time to load the model in the measuring "
        "process (from the caller; the device context was created before).",
    )
    first_preprocess_s: float | None = Field(
        default=None, description="The first preprocess call of the speed pass (None: not run here, kind openai)."
    )
    first_call_s: float | None = Field(
        default=None,
        description="The first forward call of the speed pass "
        "(synchronised); cold only if nothing ran the model before it (not after a "
        "quality pass): see cold_start. None: not run here (kind openai).",
    )
    cold_start: ColdStart | None = Field(
        default=None,
        description="Load and first prediction in a fresh process "
        "(None: speed.memory off, or no way to load the model again).",
    )
    offline: ScenarioTiming | None = None
    single_stream: ScenarioTiming | None = None
    pipeline: PipelineTiming | None = None
    time_window: TimeWindowResult | None = None
    memory: MemoryStats | None = None
    endpoint: RequestTiming | None = Field(
        default=None,
        description="kind openai: its requests in the quality "
        "pass, latency per request at the configured concurrency, throughput",
    )
    cost: ModelCost | None = Field(
        default=None,
        description="energy per prediction and cost per million "
        "predictions, per scenario (engines.energy; kind openai: scenario 'endpoint', "
        "priced per token)",
    )
    warnings: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _drop_old_telemetry(cls, data: Any) -> Any:
        # Schema version 1 averaged telemetry over both scenarios; it is now kept per scenario.
        if isinstance(data, dict) and "telemetry" in data:
            data = {k: v for k, v in data.items() if k != "telemetry"}
        return data

    def timing(self, scenario: str) -> ScenarioTiming | None:
        """The :class:`ScenarioTiming` of ``offline`` or ``single_stream``."""
        return {"offline": self.offline, "single_stream": self.single_stream}[scenario]


class SpeedComparison(Record):
    """The paired speed ratio of two models in one scenario.

    ``ratio`` is ``time(model_a) / time(model_b)``: above 1 ``model_b`` is faster. The
    interval is unadjusted at ``confidence``: the anytime-valid confidence sequence when the
    rounds stopped on the data (``interval = "anytime"``), else the t interval; ``faster`` is decided by the
    Holm-adjusted p-value at ``α = 1 − confidence`` over the run's ``n_speed_tests``
    comparisons, so a ratio whose interval excludes 1 may still name no faster model.
    """

    scenario: Literal["offline", "single_stream"]
    model_a: str
    model_b: str
    ratio: float
    ci_low: float
    ci_high: float
    confidence: float
    n_rounds: int
    interval: Literal["t", "anytime"] = Field(
        default="t",
        description="t: Student t interval over a fixed number of rounds; anytime: the confidence "
        "sequence (stats.speed_sequence) that keeps its level where the rounds stopped on the data "
        "(version ≤ 5 files: t)",
    )
    faster: str | None = Field(
        description="The faster model after Holm's adjustment over every speed comparison "
        "of the run (version ≤ 3 files: the interval alone), or None."
    )
    p_value: float | None = Field(
        default=None,
        description="two-sided test of the mean per-round log ratio that the interval inverts "
        "(t test, or the anytime-valid p-value of the confidence sequence); None in files of version ≤ 3",
    )
    p_adjusted: float | None = Field(
        default=None,
        description="Holm-adjusted over every speed comparison of the "
        "run (pairs × scenarios, Server capacity pairs too)",
    )
    n_speed_tests: int | None = Field(
        default=None,
        description="how many speed comparisons Holm's adjustment ran over; None: not adjusted (files of version ≤ 3)",
    )
    settled: Settled | None = Field(
        default=None,
        description="how the stopping rule had settled the ratio when the rounds stopped: precision (the "
        "interval within ±speed.precision), beyond_margin (one model faster by more than speed.margin) or "
        "within_margin (the two within it), both read at ScenarioRun.margin_confidence; None: not settled "
        "(time budget), a fixed number of rounds, or files of version ≤ 6",
    )
    verdict: str = Field(default="", description="the comparison in one sentence (report.sentences)")

    @property
    def alpha(self) -> float:
        """The level a comparison is decided at: ``1 − confidence``."""
        return 1.0 - self.confidence


class ScenarioRun(Record):
    """How the interleaved rounds of one scenario went."""

    scenario: Literal["offline", "single_stream"]
    batch_size: int
    rounds: int
    iterations_per_block: int = Field(
        description="Calls per block at least (whole passes over the batches); "
        "a block also runs for min_seconds / rounds at least."
    )
    stop_reason: StopReason
    precision: float | None = Field(
        default=None,
        description="speed.precision the rounds went on for (None: a fixed number of rounds, files of version ≤ 5)",
    )
    precision_reached: float | None = Field(
        default=None,
        description="The widest ratio interval's relative half-width when the rounds stopped (0.04: ±4 %); "
        "None: no comparison, or files of version ≤ 5",
    )
    margin: float | None = Field(
        default=None,
        description="speed.margin the stopping rule read (None: none, a fixed number of rounds, or files of version "
        "≤ 6, whose margin decisions were read at each comparison's own level, before Holm)",
    )
    margin_tests: int | None = Field(
        default=None,
        description="m: the run's speed comparisons (pairs × timed scenarios, + Server capacity pairs), the "
        "family Holm adjusts over; α was split over them for the decisions (faster, margin; files of version "
        "≤ 8: set only with a margin)",
    )
    margin_confidence: float | None = Field(
        default=None,
        description="the level each decision was read at, 1 − α/margin_tests: a ratio decided faster or beyond the "
        "margin has an anytime p ≤ α/m, so Holm names its faster model",
    )
    budget_s: float | None = Field(
        default=None,
        description="Seconds the rounds could spend before the stop said what it reached (the minimum always ran) "
        "(speed.budget × quality_s shared by the timed scenarios, at least speed.budget_floor_seconds, at most "
        "speed.max_seconds); None: a fixed number of rounds, or files of version ≤ 8 (speed.max_seconds)",
    )
    quality_s: float | None = Field(
        default=None,
        description="The quality pass's seconds the budget scaled with (the models' eval times summed); None: no "
        "quality pass timed in this run (the budget is speed.max_seconds), or files of version ≤ 8",
    )
    elapsed_s: float
    round_orders: list[list[str]] = Field(description="The order the models ran in, per round.")
    comparisons: list[SpeedComparison] = Field(default_factory=list)


class HostLoad(Record):
    """How busy the machine was around the measurement."""

    cpu_count: int | None
    load_average: list[float] | None = Field(description="1, 5 and 15 minute load averages (None on Windows).")
    other_cpu_percent: float | None = Field(description="CPU used by other processes (100 = one core).")
    busy_processes: list[str] = Field(default_factory=list)


class SpeedSummary(Record):
    """The whole speed measurement of a run (or of ``h2h bench``)."""

    settings: dict[str, Any] = Field(description="The speed: section as used.")
    batch_size: int
    seed: int
    torch_threads: int | None
    torch_interop_threads: int | None
    host_before: HostLoad
    host_after: HostLoad
    elapsed_s: float
    scenarios: list[ScenarioRun]
    models: list[ModelSpeed]
    timed_indices: dict[str, list[list[int]]] = Field(
        default_factory=dict,
        description="Per scenario: the dataset indices of each timed input (batch), in the "
        "order they were cycled; drawn across the data, stratified by size.",
    )
    timed_sizes: dict[str, list[list[int]]] = Field(
        default_factory=dict, description="The size of each of those examples (size_unit), where the data has sizes."
    )
    size_unit: str | None = Field(default=None, description="words, characters or pixels (None: feature rows).")
    device_warmup_s: float | None = Field(
        default=None,
        description="Creating the CUDA context and cuBLAS handle "
        "before any model loaded, kept out of every load_time_s.",
    )
    loadgen: LoadGenSummary | None = Field(
        default=None, description="the Server scenario's rate search and LoadGen's cross-checks (engines.server)"
    )
    capacity: CapacitySummary | None = Field(
        default=None, description="the capacity scenario: endpoints' goodput at their SLOs (engines.capacity)"
    )
    warnings: list[str] = Field(default_factory=list)

    def model(self, name: str) -> ModelSpeed:
        """The record of the model called ``name``."""
        for record in self.models:
            if record.name == name:
                return record
        raise KeyError(name)

    def scenario(self, name: str) -> ScenarioRun:
        """The :class:`ScenarioRun` of ``offline`` or ``single_stream``."""
        for run in self.scenarios:
            if run.scenario == name:
                return run
        raise KeyError(name)
