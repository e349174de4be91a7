"""``kind: predictions``: a file of stored predictions (or probabilities), matched to the data by example."""

from __future__ import annotations

from headtohead.config.models.base import ModelConfig

__all__ = ["PredictionsSettings", "PREDICTION_SUFFIXES"]

#: The prediction file formats.
PREDICTION_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet", ".pq")


class PredictionsSettings(ModelConfig):
    """A prediction file (no keys of its own)."""
