"""Typed records of an optimisation sweep (``sweep.json``).

See ``docs/api/results.md``, the section of this title.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from headtohead.errors import listing
from headtohead.results.base import Record
from headtohead.results.comparison import ContingencyTable
from headtohead.results.io import read_versioned_json
from headtohead.results.records import DatasetRecord, Environment
from headtohead.results.speed import MemoryStats, ScenarioTiming, SpeedComparison
from headtohead.runtime.files import write_text_atomic

__all__ = [
    "SWEEP_SCHEMA_VERSION",
    "VariantParams",
    "QualityVsParent",
    "SpeedPoint",
    "SweepCell",
    "ModelSweep",
    "Recommendation",
    "SweepResult",
    "save_sweep",
    "load_sweep",
]

SWEEP_SCHEMA_VERSION = 1

CellStatus = Literal["measured", "failed", "skipped"]


class VariantParams(Record):
    """What makes a variant: the values of the sweep's axes (batch size aside)."""

    backend: str
    precision: str
    compile: bool
    channels_last: bool
    sparsity: float
    max_length: int | None = None


class QualityVsParent(Record):
    """A variant's quality on the evaluation set, compared with its parent on the same examples.

    ``difference`` is ``accuracy(variant) − accuracy(parent)`` with Tango's score interval;
    McNemar's score test uses the paired correctness (``table``: variant = A, parent = B);
    ``p_adjusted`` is Holm's over the variants of the same model. Quality holds when the
    variant is ``non_inferior`` at the sweep's ``margin`` (the gate's rule).
    """

    n_examples: int
    accuracy: float
    parent_accuracy: float
    difference: float
    ci_low: float
    ci_high: float
    confidence: float
    ci_method: str
    table: ContingencyTable
    test: str
    p_value: float
    p_adjusted: float
    alpha: float
    significant: bool
    agreement: float = Field(description="share of examples with the same predicted class as the parent")
    max_abs_probability_diff: float = Field(description="largest |p(variant) − p(parent)| over examples and classes")
    margin: float | None = Field(
        default=None,
        description="non-inferiority margin (fraction); None only in sweeps written before margins were required",
    )
    non_inferior: bool | None = Field(
        default=None,
        description="ci_low ≥ −margin (the score test of non-inferiority at the margin); None without a margin",
    )
    verdict: str = Field(default="", description="the comparison in one sentence (report.sweep.variant_verdict)")


class SpeedPoint(Record):
    """One variant at one batch size: measured, or failed with its reason."""

    batch_size: int
    status: Literal["measured", "failed"]
    reason: str | None = None
    largest_fitting_batch: int | None = Field(
        default=None, description="after an out-of-memory error: the largest batch (timm-style decay) that ran"
    )
    offline: ScenarioTiming | None = Field(default=None, description="raw per-round latencies at this batch size")
    vs_parent: SpeedComparison | None = Field(
        default=None, description="parent = model_a, variant = model_b: ratio > 1 means the variant is faster"
    )
    memory: MemoryStats | None = None
    memory_mb: float | None = Field(
        default=None,
        description="weights plus the peak growth while this variant "
        "ran (process RSS on the CPU, the CUDA allocator on a GPU), MiB",
    )
    first_call_s: float | None = None

    @property
    def throughput(self) -> float | None:
        """Samples per second at this batch size."""
        return self.offline.throughput_per_s if self.offline is not None else None

    @property
    def p95_ms(self) -> float | None:
        """95th percentile of the per-batch latency, in ms."""
        return self.offline.per_batch.p95_s * 1e3 if self.offline is not None else None

    @property
    def p50_ms(self) -> float | None:
        return self.offline.per_batch.p50_s * 1e3 if self.offline is not None else None


class SweepCell(Record):
    """One variant of one model (the parent is a cell too)."""

    name: str
    model: str = Field(description="the swept model (the parent's name)")
    parent: bool = False
    params: VariantParams
    status: CellStatus
    stage: str | None = Field(
        default=None,
        description="where it failed: capability, build, export, onnx-check, "
        "quantize, quality; 'grid' for skipped combinations",
    )
    reason: str | None = None
    build_s: float | None = Field(
        default=None, description="seconds to build the variant (copy, prune, quantise, export, check)"
    )
    eval_s: float | None = Field(default=None, description="the quality pass (the first torch.compile call included)")
    num_parameters: int | None = None
    parameter_bytes: int | None = None
    accuracy: float | None = None
    quality: QualityVsParent | None = None
    points: list[SpeedPoint] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def point(self, batch_size: int) -> SpeedPoint | None:
        """The speed point at ``batch_size``, if it was measured or tried."""
        for point in self.points:
            if point.batch_size == batch_size:
                return point
        return None


class ModelSweep(Record):
    """Every cell of one swept model."""

    model: str
    kind: str
    source: str
    device: str
    load_time_s: float
    batch_sizes: list[int]
    cells: list[SweepCell]
    notes: list[str] = Field(default_factory=list)

    @property
    def parent(self) -> SweepCell:
        return next(c for c in self.cells if c.parent)

    def cell(self, name: str) -> SweepCell:
        """The cell called ``name`` (``bert[int8]``)."""
        for cell in self.cells:
            if cell.name == name:
                return cell
        raise KeyError(f"no sweep cell '{name}' (have: {listing(c.name for c in self.cells)})")

    def best_batch_size(self, name: str) -> int | None:
        """The batch size at which cell ``name`` reached its highest throughput."""
        measured = [p for p in self.cell(name).points if p.throughput is not None]
        return max(measured, key=lambda p: p.throughput or 0.0).batch_size if measured else None


class Recommendation(Record):
    """The best variant under the budget, and the throughput-optimal batch size, in one sentence."""

    met: bool = Field(description="whether some variant met every constraint")
    cell: str | None = None
    model: str | None = None
    batch_size: int | None = None
    throughput: float | None = None
    speedup_vs_parent: float | None = None
    speedup_ci: tuple[float, float] | None = None
    p95_ms: float | None = None
    memory_mb: float | None = None
    accuracy_difference: float | None = None
    best_batch_size: int | None = Field(
        default=None, description="throughput-optimal batch size of the recommended variant (within the budget)"
    )
    constraints: dict[str, float | None] = Field(default_factory=dict)
    candidates: int = Field(default=0, description="measured (variant, batch size) points considered")
    excluded: dict[str, int] = Field(default_factory=dict, description="points left out, counted by reason")
    sentence: str = Field(
        default="", description="the recommendation in one sentence (report.sweep.recommendation_sentence)"
    )


class SweepResult(Record):
    """``sweep.json``: a whole sweep with its machine, data and settings."""

    schema_version: int = SWEEP_SCHEMA_VERSION
    headtohead_version: str
    name: str
    created_at: str
    experiment: dict[str, Any]
    settings: dict[str, Any] = Field(description="the sweep: section as used")
    speed_settings: dict[str, Any] = Field(description="the speed: section as used for the curves")
    environment: Environment
    dataset: DatasetRecord
    eval_batch_size: int
    seed: int
    models: list[ModelSweep]
    recommendation: Recommendation
    warnings: list[str] = Field(default_factory=list)

    def model(self, name: str) -> ModelSweep:
        for sweep in self.models:
            if sweep.model == name:
                return sweep
        raise KeyError(name)

    def cells(self) -> list[SweepCell]:
        """Every cell of every model."""
        return [cell for sweep in self.models for cell in sweep.cells]


def save_sweep(result: SweepResult, path: str | Path) -> None:
    """Write ``sweep.json`` atomically."""
    write_text_atomic(Path(path), result.model_dump_json(indent=2) + "\n")


def load_sweep(path: str | Path) -> SweepResult:
    """Read a ``sweep.json``; refuse files of a newer schema version (see :func:`read_versioned_json`)."""
    return read_versioned_json(
        path,
        SweepResult,
        version=SWEEP_SCHEMA_VERSION,
        what="sweep.json",
        writer="h2h sweep",
        required=("recommendation",),
    )
