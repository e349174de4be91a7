"""Result records (``results.json``), per-example predictions (``predictions.npz``) and their I/O."""

from headtohead.results.io import load_result, save_result
from headtohead.results.predictions import ModelPredictions, Predictions
from headtohead.results.records import (
    SCHEMA_VERSION,
    ClassQuality,
    DatasetRecord,
    Environment,
    GPURecord,
    ModelRecord,
    QualityMetrics,
    Record,
    RunResult,
)

__all__ = [
    "SCHEMA_VERSION",
    "Record",
    "RunResult",
    "ModelRecord",
    "DatasetRecord",
    "QualityMetrics",
    "ClassQuality",
    "Environment",
    "GPURecord",
    "Predictions",
    "ModelPredictions",
    "save_result",
    "load_result",
]
