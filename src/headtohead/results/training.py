"""Typed records of fine-tuning (the ``training`` part of a run) and of cross-machine comparisons.

See ``docs/api/results.md``, the section of this title.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from pydantic import Field, computed_field

from headtohead.results.base import Record
from headtohead.results.comparison import MultiSeedSummary
from headtohead.results.cost import RunCost
from headtohead.results.speed import TelemetryStats, _Derived

__all__ = [
    "StepLog",
    "EpochRecord",
    "ScalingRecord",
    "TrainingRun",
    "TrainingSummary",
    "MachineInfo",
    "MachineCell",
    "MachineComparison",
]


class StepLog(_Derived):
    """Per-batch measurements of a training run, in step order (across resumes).

    A *step* here is one forward/backward pass on one batch (several make one optimizer
    step with gradient accumulation). ``data_wait_ns[i]`` is the time between the end of
    step ``i − 1`` and batch ``i`` being ready (the model idles, waiting for data);
    ``compute_ns[i]`` the rest of the step (transfer, forward, backward, optimizer),
    synchronised with the device. Steps listed in ``excluded`` (the first
    ``timing_warmup_steps`` after every start or resume) are left out of the rates.
    """

    data_wait_ns: list[int] = Field(default_factory=list)
    compute_ns: list[int] = Field(default_factory=list)
    samples: list[int] = Field(default_factory=list, description="examples per step, all processes together")
    tokens: list[int] | None = Field(default=None, description="real (non-padding) tokens per step; text only")
    loss: list[float] = Field(default_factory=list, description="training loss of each step (mean over processes)")
    excluded: list[int] = Field(default_factory=list, description="indices of warm-up steps left out of the rates")

    def _timed(self) -> list[int]:
        skip = set(self.excluded)
        return [i for i in range(len(self.compute_ns)) if i not in skip]

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def timed_steps(self) -> int:
        return len(self._timed())

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def samples_per_s(self) -> float | None:
        """Training samples per second over the timed steps (waiting for data included)."""
        idx = self._timed()
        seconds = sum(self.data_wait_ns[i] + self.compute_ns[i] for i in idx) / 1e9
        return sum(self.samples[i] for i in idx) / seconds if idx and seconds > 0 else None

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def tokens_per_s(self) -> float | None:
        """Real tokens per second over the timed steps (text models)."""
        if self.tokens is None:
            return None
        idx = self._timed()
        seconds = sum(self.data_wait_ns[i] + self.compute_ns[i] for i in idx) / 1e9
        return sum(self.tokens[i] for i in idx) / seconds if idx and seconds > 0 else None

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def data_wait_fraction(self) -> float | None:
        """Share of the timed step time spent waiting for the next batch."""
        idx = self._timed()
        wait = sum(self.data_wait_ns[i] for i in idx)
        total = wait + sum(self.compute_ns[i] for i in idx)
        return wait / total if total > 0 else None


class EpochRecord(Record):
    """One epoch: training loss and time, and the evaluation after it (the training curve)."""

    epoch: int = Field(description="1-based")
    steps: int = Field(description="batches trained in this epoch")
    optimizer_steps: int = Field(description="optimizer steps so far (cumulative)")
    samples: int
    train_loss: float = Field(description="mean batch loss of the epoch")
    train_s: float = Field(description="wall time of the epoch's training steps")
    elapsed_train_s: float = Field(description="training time so far (evaluations and checkpoints left out)")
    learning_rate: float = Field(description="learning rate after the epoch's last step")
    order_hash: str = Field(description="SHA-256 of the epoch's example order and batch boundaries")
    partial: bool = Field(default=False, description="cut short by max_steps")
    eval: dict[str, float] | None = Field(default=None, description="accuracy, balanced_accuracy, f1_macro, loss")
    eval_s: float | None = None


class ScalingRecord(_Derived):
    """How samples/s grew from one process to ``world_size`` (same per-process batch)."""

    world_size: int
    reference_samples_per_s: float = Field(description="one process, same model and batch size")
    samples_per_s: float = Field(description="all processes together")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def speedup(self) -> float:
        return self.samples_per_s / self.reference_samples_per_s

    @computed_field  # type: ignore[prop-decorator]
    @property
    def efficiency(self) -> float:
        """``speedup / world_size``: 1.0 is perfect linear scaling."""
        return self.speedup / self.world_size


class TrainingRun(Record):
    """One model trained with one seed: what it cost and what it reached."""

    model: str
    kind: str
    source: str
    seed: int
    device: str
    world_size: int = 1
    precision: str
    compile: bool = False
    gradient_checkpointing: bool = False
    num_workers: int = 0
    batch_size: int = Field(description="per process")
    gradient_accumulation_steps: int = 1
    n_train: int
    num_parameters: int
    saved_to: str | None = Field(default=None, description="folder / file the trained weights were saved to")
    order_hash: str = Field(
        description="SHA-256 over every epoch's order hash: equal means identical training data order"
    )
    epochs: list[EpochRecord]
    steps: StepLog
    optimizer_steps: int
    samples_seen: int
    load_time_s: float
    end_to_end_s: float = Field(description="training start to saved weights: steps, evaluations, checkpoints")
    time_to_target_s: float | None = Field(default=None, description="training time until the target was met")
    target_epoch: int | None = None
    final_eval: dict[str, float] = Field(default_factory=dict)
    rss_peak_mb: float
    cuda_max_allocated_mb: float | None = None
    cuda_max_reserved_mb: float | None = None
    telemetry: TelemetryStats = Field(default_factory=TelemetryStats)
    resumed_from_epoch: int | None = Field(default=None, description="epoch checkpoint the run resumed from")
    scaling: ScalingRecord | None = None
    cost: RunCost | None = Field(
        default=None, description="energy of the whole fine-tune and, with a price, its cost (engines.energy)"
    )
    warnings: list[str] = Field(default_factory=list)

    @property
    def samples_per_s(self) -> float | None:
        return self.steps.samples_per_s

    @property
    def tokens_per_s(self) -> float | None:
        return self.steps.tokens_per_s

    @property
    def data_wait_fraction(self) -> float | None:
        return self.steps.data_wait_fraction

    @property
    def time_per_epoch_s(self) -> float | None:
        """Mean training time of the full (not cut short) epochs; of all epochs if none was full."""
        full = [e.train_s for e in self.epochs if not e.partial] or [e.train_s for e in self.epochs]
        return sum(full) / len(full) if full else None

    @property
    def peak_memory_mb(self) -> float:
        """The CUDA allocator's peak on a GPU, the process RSS peak otherwise."""
        return self.cuda_max_allocated_mb if self.cuda_max_allocated_mb is not None else self.rss_peak_mb


class TrainingSummary(Record):
    """Every model × seed of one ``h2h train``."""

    settings: dict[str, Any] = Field(description="the train: section as used")
    train_source: str
    n_train: int
    train_fingerprint: str
    eval_fingerprint: str
    seeds: list[int]
    runs: list[TrainingRun]
    multi_seed: MultiSeedSummary | None = Field(default=None, description="mean ± std and tests across seeds")
    warnings: list[str] = Field(default_factory=list)

    def run(self, model: str, seed: int | None = None) -> TrainingRun:
        """The run of ``model`` with ``seed`` (the first seed when ``None``)."""
        seed = self.seeds[0] if seed is None else seed
        for run in self.runs:
            if run.model == model and run.seed == seed:
                return run
        raise KeyError(f"no training run of model '{model}' with seed {seed}")

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(r.model for r in self.runs))

    def identical_order(self) -> bool:
        """Whether, seed by seed, every model saw the same example order."""
        by_seed: dict[int, set[str]] = {}
        for run in self.runs:
            by_seed.setdefault(run.seed, set()).add(run.order_hash)
        return all(len(hashes) == 1 for hashes in by_seed.values())


class MachineInfo(Record):
    """One column of the cross-machine table."""

    label: str
    path: str
    hostname: str
    hardware: str = Field(description="GPU names (× count) or the CPU model")
    software: dict[str, str | None]


class MachineCell(Record):
    """One model on one machine (first seed), with ratios to the baseline machine."""

    model: str
    machine: str
    samples_per_s: float | None
    tokens_per_s: float | None = None
    time_per_epoch_s: float | None
    time_to_target_s: float | None
    peak_memory_mb: float
    memory_kind: str = Field(description="cuda (allocator peak) or rss (process peak)")
    data_wait_fraction: float | None = None
    world_size: int = 1
    scaling_efficiency: float | None = None
    speedup_vs_baseline: float | None = Field(default=None, description="samples/s ÷ the baseline's")
    epoch_time_vs_baseline: float | None = Field(default=None, description="time per epoch ÷ the baseline's")
    end_to_end_s: float | None = Field(default=None, description="training start to saved weights")
    energy_per_epoch_j: float | None = Field(default=None, description="energy counted over the run ÷ its epochs")
    price_per_hour: float | None = Field(default=None, description="the machine's price (h2h machines --price)")
    cost_per_epoch: float | None = Field(default=None, description="price × time per epoch")
    cost_to_target: float | None = Field(default=None, description="price × time to the target metric")
    cost_end_to_end: float | None = Field(default=None, description="price × the whole fine-tune")
    cost_vs_baseline: float | None = Field(default=None, description="cost per epoch ÷ the baseline's")


class MachineComparison(Record):
    """Models × machines: training speed measured on different hardware."""

    baseline: str
    machines: list[MachineInfo]
    models: list[str]
    cells: list[MachineCell]
    warnings: list[str] = Field(default_factory=list)

    def cell(self, model: str, machine: str) -> MachineCell:
        """The cell of ``model`` on ``machine`` (a label)."""
        for cell in self.cells:
            if cell.model == model and cell.machine == machine:
                return cell
        raise KeyError(f"no result for model '{model}' on machine '{machine}'")
