"""Another system's stored outputs as a model (``kind: predictions``).

See ``docs/api/adapters.md``, the section of this title.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from headtohead.adapters.base import LoadContext, LookedUpAdapter, StoredOutputs
from headtohead.adapters.labels import align_labels
from headtohead.adapters.prediction_files import (
    PREDICTION_COLUMN,
    PREDICTION_SUFFIXES,
    PROBA_LIST_COLUMN,
    PROBA_PREFIX,
    SUM_TOLERANCE,
    PredictionFile,
    check_prediction_path,
    read_prediction_file,
    read_prediction_frame,
    write_prediction_file,
)
from headtohead.config.models.predictions import PredictionsSettings
from headtohead.config.schema import ModelConfig
from headtohead.data.base import Dataset

__all__ = [
    "PredictionsAdapter",
    "PredictionFile",
    "read_prediction_file",
    "read_prediction_frame",
    "write_prediction_file",
    "PREDICTION_SUFFIXES",
    "PREDICTION_COLUMN",
    "PROBA_PREFIX",
    "PROBA_LIST_COLUMN",
    "SUM_TOLERANCE",
]


class PredictionsAdapter(LookedUpAdapter):
    """Outputs read from a prediction file (or a table in memory), looked up by example."""

    kind: ClassVar[str] = "predictions"
    no_forward_reason: ClassVar[str] = "has stored outputs, not a forward pass; its outputs are looked up by example"

    def __init__(self, config: ModelConfig, context: LoadContext) -> None:
        super().__init__(config, context)
        self.path: Path | None = None
        self.frame: Any = None
        self._read: PredictionFile | None = None
        self._read_for: Dataset | None = None

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> PredictionsAdapter:
        """Check that the file exists and can be read; rows are matched to the data on first use."""
        assert isinstance(config, PredictionsSettings)  # the registry builds this adapter for its kind only
        adapter = cls(config, context)
        # the file is read in the data's label order, then the model's other classes (its label_names)
        adapter.label_names = tuple(config.label_names) if config.label_names else context.label_names
        index = context.pass_index  # one of several files given as the model's passes: its own
        if config.name in context.objects:
            held = context.objects[config.name]
            adapter.frame = held[index or 0] if isinstance(held, list) else held
            return adapter
        path = context.resolve_path(config.pass_source(index) or config.source)
        check_prediction_path(f"model '{config.name}' ({path})", path)
        adapter.path = path
        return adapter

    @classmethod
    def check_inputs(cls, config: ModelConfig, context: LoadContext, dataset: Dataset) -> None:
        """Read the file against the data as the pass will: its labels matched first, then every row checked."""
        adapter = cls.load(config, context)
        align_labels(adapter.label_names, dataset.label_names, model=adapter.name)
        adapter.predictions_for(dataset)

    def predictions_for(self, dataset: Dataset) -> PredictionFile:
        """The stored outputs of every example of ``dataset``, read and checked once."""
        if self._read is None or self._read_for is not dataset:
            extra: Literal["error", "ignore"] = "ignore" if self.context.partial_data else "error"
            how: dict[str, Any] = {
                "id_column": self.context.id_column,
                "extra_ids": extra,
                "missing_ids": getattr(self.config, "missing_ids", "error"),
                "empty": "failed",  # an empty prediction is the model's failure, as an endpoint's unparseable answer
                "outside": tuple(n for n in self.label_names or () if n not in dataset.label_names),
            }
            if self.path is not None:
                read = read_prediction_file(self.path, dataset, name=self.name, **how)
            else:
                read = read_prediction_frame(
                    self.frame,
                    dataset,
                    where=f"model '{self.name}' (in memory)",
                    source=self.config.source,
                    note_position=False,
                    **how,
                )  # in memory: order is all there is
            for note in read.warnings:
                if note not in self.warnings:
                    self.warn(note)
            self._read, self._read_for = read, dataset
        return self._read

    def stored_outputs(self, dataset: Dataset, indices: np.ndarray) -> StoredOutputs:
        """The predictions (and probabilities, when stored) of the examples at ``indices``."""
        read = self.predictions_for(dataset)
        rows = np.asarray(indices, dtype=np.int64)
        return StoredOutputs(read.pred[rows], None if read.proba is None else read.proba[rows])
