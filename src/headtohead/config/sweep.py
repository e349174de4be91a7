"""The ``sweep:`` section of an experiment: which optimisation variants to try (no torch import).

See ``docs/sweeps.md``, "Optimisation sweeps (`h2h sweep`)".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from headtohead.config.base import Section as _Section
from headtohead.config.margins import AccuracyMargin
from headtohead.errors import ConfigError

__all__ = ["SweepConfig", "PRECISIONS", "BACKENDS", "SWEEP_AXES", "sweep_with_options"]

#: Numeric precisions a variant can run in.
PRECISIONS: tuple[str, ...] = ("fp32", "fp16", "bf16", "int8")
#: Inference runtimes a variant can run on.
BACKENDS: tuple[str, ...] = ("pytorch", "onnxruntime")
#: The list-valued keys of the section, in the order variant names list them.
SWEEP_AXES: tuple[str, ...] = (
    "batch_size",
    "backend",
    "precision",
    "compile",
    "channels_last",
    "sparsity",
    "max_length",
)


class SweepConfig(_Section):
    """Optimisation variants to sweep, and the budget of the recommendation."""

    models: list[str] | None = Field(
        default=None, description="Names of the experiment's models to sweep (default: all of them)."
    )
    batch_size: list[int] | None = Field(
        default=None, description="Batch sizes of the speed curves (default: eval.batch_size)."
    )
    max_length: list[int] | None = Field(
        default=None, description="Tokeniser truncation lengths (text models; default: the model's own)."
    )
    precision: list[Literal["fp32", "fp16", "bf16", "int8"]] = Field(
        default=["fp32"],
        description="fp32 | bf16 (autocast) | fp16 (autocast, CUDA) | "
        "int8 (dynamic quantisation of Linear layers, CPU; ONNX Runtime's own with backend onnxruntime).",
    )
    compile: list[bool] = Field(default_factory=lambda: [False], description="torch.compile the module.")
    backend: list[Literal["pytorch", "onnxruntime"]] = Field(
        default=["pytorch"],
        description="pytorch (eager or compiled) | onnxruntime (an ONNX "
        "export of the model, checked against PyTorch before it is measured).",
    )
    channels_last: list[bool] = Field(default_factory=lambda: [False], description="NHWC memory format (image models).")
    sparsity: list[float] = Field(
        default_factory=lambda: [0.0],
        description="Share of Linear/Conv weights set to zero by magnitude (unstructured pruning).",
    )
    max_latency_ms: float | None = Field(
        default=None,
        gt=0.0,
        description="Recommendation budget: per-batch p95 latency at the variant's batch size, in ms.",
    )
    max_memory_mb: float | None = Field(
        default=None,
        gt=0.0,
        description="Recommendation budget: weights plus peak memory growth while running, in MiB.",
    )
    max_accuracy_drop: AccuracyMargin = Field(
        default=0.01,
        ge=0.0,
        lt=1.0,
        description="Non-inferiority margin: 1pp (percentage points) or the share 0.01 (the default): a "
        "variant's quality holds, and it may be recommended, only when the lower bound of the score interval of "
        "its accuracy minus the parent's (at 1 - stats.alpha) is at or above -margin — the gate's rule. 'Not "
        "significantly worse' is never enough.",
    )
    onnx_atol: float = Field(
        default=1e-3,
        gt=0.0,
        description="Largest |ONNX − PyTorch| logit difference "
        "accepted (plus onnx_rtol × |PyTorch|) before an export is measured.",
    )
    onnx_rtol: float = Field(default=1e-3, ge=0.0, description="Relative part of the ONNX output check.")
    onnx_check_batches: int = Field(
        default=3, gt=0, description="Batches compared between ONNX Runtime and PyTorch before measuring."
    )
    onnx_opset: int | None = Field(default=None, ge=17, description="ONNX opset of exports (default: the exporter's).")

    @model_validator(mode="before")
    @classmethod
    def _scalars_to_lists(cls, data: Any) -> Any:
        # "precision: int8" means "[int8]"; only the list-valued axes are wrapped.
        if isinstance(data, dict):
            data = {
                k: ([v] if k in SWEEP_AXES and v is not None and not isinstance(v, (list, tuple)) else v)
                for k, v in data.items()
            }
        return data

    @field_validator("batch_size", "max_length")
    @classmethod
    def _positive_unique_ints(cls, values: list[int] | None) -> list[int] | None:
        if values is None:
            return None
        _non_empty_unique(values)
        bad = [v for v in values if v <= 0]
        if bad:
            raise ValueError(f"values must be positive whole numbers, got {bad}")
        return values

    @field_validator("precision", "compile", "backend", "channels_last")
    @classmethod
    def _unique(cls, values: list[Any]) -> list[Any]:
        _non_empty_unique(values)
        return values

    @field_validator("sparsity")
    @classmethod
    def _sparsity_range(cls, values: list[float]) -> list[float]:
        _non_empty_unique(values)
        bad = [v for v in values if not 0.0 <= v < 1.0]
        if bad:
            raise ValueError(
                f"sparsity is the share of weights set to zero, from 0.0 up to (not including) 1.0; got {bad}"
            )
        return values

    @field_validator("models")
    @classmethod
    def _model_names(cls, values: list[str] | None) -> list[str] | None:
        if values is not None:
            _non_empty_unique(values)
        return values


def _non_empty_unique(values: list[Any]) -> None:
    if not values:
        raise ValueError("give at least one value (or leave the key out for the default)")
    if len(set(values)) != len(values):
        raise ValueError(f"{values} lists a value twice; name each once")


def sweep_with_options(base: SweepConfig | None, options: Mapping[str, Any]) -> SweepConfig:
    """The experiment's ``sweep:`` section with the given options (``None`` = keep) replaced (``h2h sweep --…``).

    Raises
    ------
    ConfigError
        The result is not a valid sweep section (one line naming the option).
    """
    data = base.model_dump(exclude_unset=True) if base is not None else {}
    data.update({key: value for key, value in options.items() if value is not None})
    try:
        return SweepConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else "sweep"
        raise ConfigError(f"--{key.replace('_', '-')}: {first['msg']} (sweep.{key})") from None
