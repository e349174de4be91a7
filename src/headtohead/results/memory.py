"""Typed records of a model's memory and cold start, measured in a fresh process (part of ``results.json``).

Written by :mod:`headtohead.engines.isolated` (and, for models that cannot be loaded again,
by :func:`headtohead.engines.memory.measure_memory` in the shared process); re-exported by
:mod:`headtohead.results.speed`, whose ``ModelSpeed`` holds them.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Literal

from pydantic import Field, computed_field, model_validator

from headtohead.results.base import Record

__all__ = ["ScenarioMemory", "MemoryStats", "ColdStart"]


class ScenarioMemory(Record):
    """Memory of one scenario's calls in the fresh process, above that process's no-model baseline (MiB)."""

    scenario: Literal["offline", "single_stream"]
    batch_size: int
    iterations: int
    model_peak_mb: float = Field(
        description="Peak RSS during this scenario's calls above the process before the model loaded."
    )
    cuda_model_peak_mb: float | None = Field(
        default=None, description="Peak CUDA allocation during these calls above the process before the model loaded."
    )


#: Names of results written before schema version 2, and what they measured.
_OLD_MEMORY_FIELDS = {
    "rss_baseline_mb": "process_rss_baseline_mb",
    "rss_peak_mb": "process_rss_peak_mb",
    "rss_mean_mb": "process_rss_mean_mb",
    "rss_samples": "process_rss_samples",
    "cuda_max_allocated_mb": "process_cuda_max_allocated_mb",
    "cuda_max_reserved_mb": "process_cuda_max_reserved_mb",
}


class MemoryStats(Record):
    """Memory of one model at inference, measured apart from any timing. Sizes in MiB.

    ``isolated``: measured in a fresh process that holds only this model
    (:mod:`headtohead.engines.isolated`): its baseline is the same process with everything
    a run imports but no model, so ``model_peak_mb`` and ``cuda_model_peak_mb`` are the
    model's own. Otherwise (models without a recipe to load them again: sweep variants) it
    was measured in the process holding every model: only ``weights_mb``, the growth of the
    inference calls and the ``process_*`` figures are known.

    The ``process_*`` figures are the whole measuring process (the Python runtime and
    libraries; in a shared process also every other loaded model).
    """

    isolated: bool = False
    peak_method: Literal["high_water_mark", "sampled"] = Field(
        default="sampled",
        description="high_water_mark: the kernel's exact peak RSS (Linux); sampled: a thread "
        "reading RSS every few milliseconds (may miss a short spike).",
    )
    weights_mb: float | None = Field(default=None, description="Parameter and buffer bytes.")
    model_peak_mb: float | None = Field(
        default=None,
        description="Peak RSS the model needs (loading, first call "
        "and inference) above the same process without a model; isolated only.",
    )
    cuda_model_peak_mb: float | None = Field(
        default=None,
        description="Peak CUDA allocation (torch.cuda."
        "max_memory_allocated) above the process before the model; isolated "
        "and CUDA only.",
    )
    scenarios: list[ScenarioMemory] = Field(default_factory=list, description="The peaks per scenario (isolated).")
    inference_rss_mb: float | None = Field(
        default=None,
        description="Peak RSS of the inference calls above the RSS just before them (weights already loaded).",
    )
    cuda_inference_peak_mb: float | None = Field(
        default=None,
        description="Peak CUDA allocation of the inference calls above what was allocated just before them.",
    )
    process_rss_baseline_mb: float
    process_rss_peak_mb: float
    process_rss_mean_mb: float
    process_rss_samples: int
    process_cuda_max_allocated_mb: float | None = None
    process_cuda_max_reserved_mb: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _read_old_names(cls, data: Any) -> Any:
        """Results of schema version 1 named the process figures as if they were the model's."""
        if isinstance(data, dict) and "rss_peak_mb" in data:
            data = {_OLD_MEMORY_FIELDS.get(k, k): v for k, v in data.items()}
            data.setdefault(
                "inference_rss_mb", max(0.0, data["process_rss_peak_mb"] - data.get("process_rss_baseline_mb", 0.0))
            )
        return data

    def scenario(self, name: str) -> ScenarioMemory | None:
        """The :class:`ScenarioMemory` of ``name``, or ``None``."""
        return next((s for s in self.scenarios if s.scenario == name), None)


class ColdStart(Record):
    """A model's first prediction in a fresh process that holds only it: the same one-time costs for every model.

    The process imported what the run imported and created the device context first, so
    ``load_s`` is the model's own; nothing had touched the model before ``first_call_s``.
    """

    scenario: Literal["offline", "single_stream"] = Field(description="Whose first timed input was predicted.")
    batch_size: int
    device_warmup_s: float | None = Field(
        default=None, description="Creating the CUDA context and cuBLAS handle before loading (None: no accelerator)."
    )
    load_s: float
    first_preprocess_s: float
    first_transfer_s: float
    first_call_s: float = Field(
        description="The first forward call, synchronised: lazy initialisation, kernel selection, compilation."
    )

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        # a derived figure found in a file is recomputed, never believed
        return {k: v for k, v in data.items() if k != "first_prediction_s"} if isinstance(data, dict) else data

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def first_prediction_s(self) -> float:
        """Time to first prediction: load, then preprocess, transfer and forward of the first input."""
        return self.load_s + self.first_preprocess_s + self.first_transfer_s + self.first_call_s
