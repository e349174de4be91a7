"""The ``speed:`` section of an experiment: how speed and memory are measured (no torch import).

See ``docs/api/config.md``, the section of this title.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from headtohead.config.base import Section as _Section
from headtohead.config.capacity import CapacityConfig
from headtohead.config.server import ServerConfig

__all__ = ["SpeedConfig", "FixedShape", "SPEED_SCENARIOS"]

#: The scenarios a speed measurement can run.
SPEED_SCENARIOS: tuple[str, ...] = ("offline", "single_stream", "time_window", "server", "capacity")


class FixedShape(_Section):
    """Controlled input shape: every batch has ``batch_size`` examples and, for text, exactly
    ``sequence_length`` tokens (padded with the tokenizer's pad id, or truncated)."""

    batch_size: int = Field(gt=0, description="Examples per batch (replaces eval.batch_size for speed).")
    sequence_length: int | None = Field(default=None, gt=0, description="Tokens per text example.")


class SpeedConfig(_Section):
    """How speed and memory are measured (see the module docstring for an example)."""

    enabled: bool = Field(default=True, description="Measure speed during h2h run.")
    scenarios: list[Literal["offline", "single_stream", "time_window", "server", "capacity"]] = Field(
        default=["offline", "single_stream"],  # pydantic copies a mutable default for every record
        description="offline: throughput at the batch size; single_stream: latency at batch 1; "
        "time_window: samples processed end to end in time_window_seconds; server: the highest "
        "Poisson arrival rate held with p99 under latency_bound_ms (MLPerf LoadGen, extra 'loadgen'); "
        "capacity: the highest rate an endpoint model sustains within speed.capacity.slo.",
    )
    num_batches: int = Field(
        default=1,
        gt=0,
        description="Distinct batches timed offline, their examples drawn across the data "
        "(stratified by input size: one batch already mixes short and long inputs); every block "
        "is whole passes over them, so keep it small for slow models.",
    )
    single_stream_inputs: int = Field(
        default=16,
        gt=0,
        description="Distinct examples timed at batch 1, one per "
        "size stratum of the data, so p99 is a tail over inputs; every block is whole "
        "passes over them (rounds, not calls per round, set how fast a ratio is known).",
    )
    warmup_iterations: int = Field(default=3, ge=0, description="Untimed calls per model and scenario first.")
    warmup_seconds: float = Field(default=0.5, ge=0.0, description="... and at least this long.")
    min_iterations: int = Field(
        default=1,
        gt=0,
        description="Timed calls per model and scenario over the minimum rounds, at least (every block "
        "is whole passes over the timed inputs anyway; the rounds go on until the ratios are decided).",
    )
    min_seconds: float = Field(
        default=0.5,
        ge=0.0,
        description="Timed seconds per model and scenario over the minimum rounds, at least (a block "
        "runs min_seconds / rounds at least: fast models get blocks long enough to time).",
    )
    rounds: int = Field(
        default=6,
        ge=5,
        description="Interleaved rounds, at least: the warm-up minimum before the stopping rule is read "
        "(each model runs one block per round, in a balanced or shuffled order); with precision null, "
        "exactly this many.",
    )
    precision: float | None = Field(
        default=0.05,
        gt=0.0,
        lt=1.0,
        description="Speed measured until it is decided: rounds go on until every speed ratio is decided "
        "(a model faster at 1 − α/m, or against margin) or its anytime-valid interval is within ±this "
        "(0.05 = ±5 %), or the budget is spent; null: a fixed number of rounds (speed.rounds) with t intervals.",
    )
    margin: float | None = Field(
        default=None,
        gt=0.0,
        lt=1.0,
        description="With precision: a ratio whose interval lies wholly beyond 1 ± margin (one model "
        "faster by more than it) or wholly within it also stops the rounds (0.1 = 10 %); read at 1 − α/m "
        "over the run's m speed comparisons, so every ratio it decides beyond the margin the verdict names faster.",
    )
    order: Literal["balanced", "random"] = Field(
        default="balanced",
        description="How the model order changes from round to round: balanced (a Williams "
        "design: every model runs before every other in half the rounds; 'rotate' "
        "is read as balanced) or random (shuffled, seeded).",
    )
    target_ci_halfwidth: float | None = Field(
        default=None,
        gt=0.0,
        lt=1.0,
        description="The old name of precision (read as precision when given).",
    )
    max_seconds: float = Field(
        default=120.0,
        gt=0.0,
        description="Time budget per scenario for the rounds, at most (the minimum rounds always run; the whole "
        "budget where no quality pass was timed: h2h bench); when it runs out before every ratio is decided, "
        "the run says what precision it reached.",
    )
    budget: float | None = Field(
        default=0.5,
        gt=0.0,
        description="The rounds, all timed scenarios together, may spend this many times the quality pass's "
        "seconds (the models' eval times summed; the minimum rounds always run), shared equally by the "
        "scenarios, at least budget_floor_seconds and at most max_seconds each; null: max_seconds per scenario.",
    )
    budget_floor_seconds: float = Field(
        default=2.0,
        gt=0.0,
        description="The budget's floor, all timed scenarios together: a model whose quality pass takes a "
        "tenth of a second still gets rounds enough to decide a clear difference.",
    )
    fixed_shape: FixedShape | None = Field(default=None, description="Fixed batch size (and sequence length).")
    pipeline_iterations: int = Field(
        default=1,
        ge=0,
        description="End-to-end steps per model timing preprocess / transfer / forward apart (0: skip); "
        "the forward calls are timed in the rounds, so one step tells the split.",
    )
    time_window_seconds: float = Field(default=10.0, gt=0.0, description="Length of the time_window scenario.")
    num_threads: int | None = Field(
        default=None,
        gt=0,
        description="torch intra-op threads while measuring "
        "(default: leave torch's setting; it is recorded either way).",
    )
    memory: bool = Field(
        default=True,
        description="Measure each model's own memory (weights, peak RSS and CUDA "
        "peak above a process without it) and its cold start in a fresh process that holds only it "
        "(one spawned process per model, after the timing; false: skip both).",
    )
    memory_iterations: int = Field(
        default=1,
        gt=0,
        description="End-to-end steps per scenario of the memory pass, at least (every timed input "
        "runs once anyway: each new input shape leaves library buffers behind, so the peak is over "
        "all of them, not the largest alone).",
    )
    telemetry: bool = Field(default=True, description="Sample GPU utilisation/power/clocks via NVML (GPU only).")
    confidence: float = Field(
        default=0.95,
        gt=0.5,
        lt=1.0,
        description="Level of the speed-ratio intervals; "
        "α = 1 − confidence decides 'faster' after Holm over every speed comparison of the "
        "run, and the drift tests of the speed warnings.",
    )
    n_resamples: int = Field(
        default=2000,
        ge=100,
        description="Unused by the speed ratios, whose intervals are "
        "Student t intervals over rounds; kept for stats.speed.speed_ratio(method='bootstrap').",
    )
    latency_bound_ms: float = Field(
        default=50.0,
        gt=0.0,
        description="server: p99 latency (arrival to answer) a rate must stay under to count as held.",
    )
    server: ServerConfig = Field(default_factory=ServerConfig, description="server: the batcher and the search.")
    capacity: CapacityConfig = Field(
        default_factory=CapacityConfig, description="capacity: an endpoint's SLOs and the search of its goodput."
    )
    loadgen_crosscheck: bool = Field(
        default=False,
        description="Also run LoadGen's SingleStream and Offline "
        "scenarios and report their figures beside headtohead's (extra 'loadgen').",
    )
    price_per_hour: float | None = Field(
        default=None,
        gt=0.0,
        description="The machine's price (any currency "
        "per hour): gives cost_per_million predictions per model and scenario.",
    )
    energy: bool = Field(
        default=True,
        description="Read energy counters (NVML on GPUs, RAPL on CPUs) around the timed blocks: joules per prediction.",
    )

    @field_validator("order", mode="before")
    @classmethod
    def _rotate_is_balanced(cls, order: object) -> object:
        # 'rotate' (before Williams designs) balanced positions but not who runs before whom
        return "balanced" if order == "rotate" else order

    @model_validator(mode="after")
    def _old_target_is_precision(self) -> SpeedConfig:
        # before issue 33 the adaptive stop was asked for with target_ci_halfwidth (a t interval)
        if self.target_ci_halfwidth is not None:
            self.__dict__["precision"] = self.target_ci_halfwidth
        return self

    @model_validator(mode="after")
    def _capacity_has_slo(self) -> SpeedConfig:
        if "capacity" in self.scenarios and self.capacity.slo is None:
            raise ValueError("scenario capacity needs speed.capacity.slo, e.g. {e2e_p99: 2s, error_rate: 1%}")
        return self

    @field_validator("scenarios")
    @classmethod
    def _unique_scenarios(cls, scenarios: list[str]) -> list[str]:
        if not scenarios:
            raise ValueError(f"give at least one scenario ({', '.join(SPEED_SCENARIOS)}) or set enabled: false")
        if len(set(scenarios)) != len(scenarios):
            raise ValueError(f"scenarios {scenarios} lists one twice; name each once")
        return scenarios
