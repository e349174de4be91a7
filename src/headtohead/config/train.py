"""The ``train:`` section of an experiment: how every candidate is fine-tuned (no torch import).

See ``docs/api/config.md``, the section of this title.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from headtohead.config.base import DEVICE_RE as _DEVICE_RE
from headtohead.config.base import Section as _Section
from headtohead.errors import ConfigError, did_you_mean, listing
from headtohead.metrics import CATALOGUE, unknown

__all__ = ["TrainConfig", "TargetConfig", "TARGET_METRICS", "PRECISIONS", "train_config_from_dict"]

#: Metrics the per-epoch evaluation reports (and a target may name). ``loss`` is lower-is-better.
TARGET_METRICS: tuple[str, ...] = (*(m for m, entry in CATALOGUE.items() if entry.epoch), "loss")
#: Training precisions: full float32, or autocast to bfloat16 / float16.
PRECISIONS: tuple[str, ...] = ("fp32", "bf16", "fp16")


class TargetConfig(_Section):
    """A quality level whose time to reach is recorded (checked after every epoch)."""

    metric: str = Field(default="accuracy", description="One of " + ", ".join(TARGET_METRICS) + ".")
    value: float = Field(description="Reached when the eval metric is ≥ value (≤ value for loss).")

    @field_validator("metric")
    @classmethod
    def _epoch_metric(cls, metric: str) -> str:
        if metric not in TARGET_METRICS:
            raise ValueError(
                unknown(metric, TARGET_METRICS, what="target metric", note=": what every epoch's evaluation reports")
            )
        return metric


class TrainConfig(_Section):
    """How every model is trained (see the module docstring for an example)."""

    epochs: int = Field(default=3, gt=0, description="Passes over the training data (unless max_steps is set).")
    max_steps: int | None = Field(
        default=None, gt=0, description="Stop after this many optimizer steps; wins over epochs (quick benchmark runs)."
    )
    batch_size: int = Field(default=32, gt=0, description="Examples per forward pass and process.")
    learning_rate: float = Field(default=5e-5, gt=0.0, description="Peak learning rate of AdamW.")
    lr_schedule: Literal["linear", "constant"] = Field(
        default="linear", description="After warm-up: linear decay to 0 at the last step, or constant."
    )
    warmup_steps: int | None = Field(default=None, ge=0, description="Linear warm-up steps (default: warmup_ratio).")
    warmup_ratio: float = Field(default=0.0, ge=0.0, lt=1.0, description="Warm-up as a share of all steps.")
    weight_decay: float = Field(default=0.01, ge=0.0, description="AdamW weight decay (not on biases and norms).")
    adam_betas: tuple[float, float] = (0.9, 0.999)
    adam_epsilon: float = Field(default=1e-8, gt=0.0)
    max_grad_norm: float | None = Field(default=1.0, gt=0.0, description="Gradient clipping norm (null: none).")
    gradient_accumulation_steps: int = Field(default=1, gt=0, description="Batches per optimizer step.")
    gradient_checkpointing: bool = Field(
        default=False,
        description="Recompute activations in the backward pass (less memory, slower); transformers and timm models.",
    )
    compile: bool = Field(default=False, description="Train through torch.compile.")
    compile_backend: str = Field(
        default="inductor",
        min_length=1,
        description="torch.compile backend (inductor; eager or aot_eager to debug compilation itself).",
    )
    precision: Literal["fp32", "bf16", "fp16"] = Field(default="fp32", description="fp32, or autocast to bf16/fp16.")
    num_workers: int = Field(default=0, ge=0, description="DataLoader worker processes for preprocessing.")
    seeds: list[int] | None = Field(
        default=None, description="Train each model once per seed (default: the experiment's seed)."
    )
    device: str | None = Field(default=None, description="auto | cpu | cuda | cuda:N | mps (default: eval.device).")
    eval_each_epoch: bool = Field(
        default=True, description="Evaluate after every epoch (training curves); the last epoch is always evaluated."
    )
    target: TargetConfig | None = Field(default=None, description="Record the time to reach this eval metric.")
    timing_warmup_steps: int = Field(
        default=3,
        ge=0,
        description="First steps left out of samples/s (lazy initialisation, allocator warm-up, compilation).",
    )
    stall_warning: float = Field(
        default=0.2,
        gt=0.0,
        lt=1.0,
        description="Warn when the model waits for data more than this share of the step time.",
    )
    resume: bool = Field(default=True, description="Resume an interrupted training from its last epoch checkpoint.")
    nproc: int = Field(default=1, gt=0, description="Data-parallel processes (DDP, launched like torchrun).")
    ddp_backend: Literal["auto", "gloo", "nccl"] = Field(default="auto", description="auto: nccl on CUDA, else gloo.")
    scaling_steps: int | None = Field(
        default=20,
        gt=0,
        description="With nproc > 1: steps of a single-process reference run, for the scaling efficiency (null: skip).",
    )

    @field_validator("device")
    @classmethod
    def _device_syntax(cls, device: str | None) -> str | None:
        if device is not None and not _DEVICE_RE.match(device):
            raise ValueError(f"unknown device '{device}' (use auto, cpu, cuda, cuda:N or mps)")
        return device

    @field_validator("seeds")
    @classmethod
    def _unique_seeds(cls, seeds: list[int] | None) -> list[int] | None:
        if seeds is not None:
            if not seeds:
                raise ValueError("seeds is empty; give at least one seed or leave it out")
            if len(set(seeds)) != len(seeds):
                raise ValueError(f"seeds {seeds} lists a seed twice; give each once")
        return seeds

    @model_validator(mode="after")
    def _warmup_one_way(self) -> TrainConfig:
        if self.warmup_steps is not None and self.warmup_ratio > 0:
            raise ValueError("give either warmup_steps or warmup_ratio, not both")
        return self

    def seeds_for(self, experiment_seed: int) -> list[int]:
        """The seeds to train with: :attr:`seeds`, or the experiment's seed alone."""
        return list(self.seeds) if self.seeds else [experiment_seed]


def train_config_from_dict(raw: Mapping[str, Any] | None, *, source: str = "experiment") -> TrainConfig:
    """Validate a ``train:`` mapping, with a one-line error naming the key.

    Parameters
    ----------
    raw : mapping or None
        The section as YAML gives it; ``None`` (an empty ``train:``) means all defaults.
    source : str
        The experiment file, for messages.

    Returns
    -------
    TrainConfig

    Raises
    ------
    ConfigError
        An unknown key (with a suggestion) or an invalid value.

    Examples
    --------
    >>> train_config_from_dict({"epochs": 2, "precision": "bf16"}).epochs
    2
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(
            f"{source}: train must be a mapping of settings (epochs, batch_size …), not {type(raw).__name__}"
        )
    try:
        return TrainConfig.model_validate(dict(raw))
    except ValidationError as exc:
        raise ConfigError(_one_line(exc, source)) from exc


def _one_line(exc: ValidationError, source: str) -> str:
    errors = exc.errors()
    # A misspelt key usually explains the "missing" error beside it: report the typo first.
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = "train" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
    more = f" (+{len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    if first["type"] == "extra_forbidden":
        valid = list(TrainConfig.model_fields) if len(first["loc"]) == 1 else list(TargetConfig.model_fields)
        return (
            f"{source}: {loc}: unknown key{did_you_mean(str(first['loc'][-1]), valid)} "
            f"(valid keys: {listing(valid)}){more}"
        )
    message = first["msg"].removeprefix("Value error, ")
    got = first.get("input")
    if first["type"] not in ("value_error", "missing") and not isinstance(got, (dict, list)):
        message += f" (got {got!r})"
    return f"{source}: {loc}: {message}{more}"
