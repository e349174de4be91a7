"""Per-example predictions and probabilities of every model, stored compactly in ``.npz``.

The statistics (McNemar, bootstrap), calibration and report code read these; they are
the raw data every quality number is derived from.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from headtohead.errors import ResultsError
from headtohead.runtime.files import write_bytes_atomic

__all__ = ["Predictions", "ModelPredictions"]


@dataclass(frozen=True)
class ModelPredictions:
    """One model's outputs, in evaluation order and dataset label order.

    Attributes
    ----------
    pred : ndarray of shape (n,), int64
        Predicted class index (into the dataset's label names).
    proba : ndarray of shape (n, n_classes), float32, or None
        Class probabilities (columns in dataset label order); ``None`` for a model whose
        stored predictions have none (``kind: predictions`` without probability columns).
    """

    pred: np.ndarray
    proba: np.ndarray | None

    def correct(self, y_true: np.ndarray) -> np.ndarray:
        """Boolean array: was each example predicted correctly."""
        return self.pred == y_true


@dataclass
class Predictions:
    """All models' predictions on one evaluation set.

    Attributes
    ----------
    order : ndarray of int64
        Dataset index of each evaluated example, in the order models saw them (the run's
        batch plan, which groups texts by length: not the dataset order). Row ``i`` of
        ``y_true`` and of every model's ``pred`` / ``proba`` is dataset example ``order[i]``,
        so all models line up row by row; :meth:`in_dataset_order` sorts them back.
    y_true : ndarray of int64
        True label of each example, aligned with ``order``.
    label_names : tuple of str
    models : dict of str to ModelPredictions
    """

    order: np.ndarray
    y_true: np.ndarray
    label_names: tuple[str, ...]
    models: dict[str, ModelPredictions] = field(default_factory=dict)

    def __getitem__(self, name: str) -> ModelPredictions:
        try:
            return self.models[name]
        except KeyError:
            raise KeyError(f"no predictions for model '{name}' (have: {', '.join(self.models)})") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.models)

    def in_dataset_order(self, name: str) -> ModelPredictions:
        """Model ``name``'s predictions with rows sorted by dataset index (row ``j`` is example ``j``
        when every example was evaluated)."""
        rows = np.argsort(self.order, kind="stable")
        model = self[name]
        return ModelPredictions(model.pred[rows], None if model.proba is None else model.proba[rows])

    def add(self, name: str, pred: np.ndarray, proba: np.ndarray | None) -> None:
        """Add a model's predictions (checked against the evaluation set's size); ``proba`` may be ``None``."""
        pred = np.asarray(pred, dtype=np.int64)
        proba = None if proba is None else np.asarray(proba, dtype=np.float32)
        expected = (len(self.y_true), len(self.label_names))
        if pred.shape != self.y_true.shape or (proba is not None and proba.shape != expected):
            raise ValueError(f"predictions of '{name}' have shapes {pred.shape}/"
                             f"{None if proba is None else proba.shape}, expected {self.y_true.shape}/{expected}")
        self.models[name] = ModelPredictions(pred, proba)

    def save(self, path: str | Path) -> None:
        """Write to ``path`` (``.npz``) atomically."""
        arrays: dict[str, np.ndarray] = {
            "order": self.order,
            "y_true": self.y_true,
            "label_names": np.array(self.label_names, dtype=str),
            "model_names": np.array(list(self.models), dtype=str),
        }
        for i, preds in enumerate(self.models.values()):
            arrays[f"pred_{i}"] = preds.pred
            if preds.proba is not None:  # no proba_<i>: the model stored no probabilities
                arrays[f"proba_{i}"] = preds.proba
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        write_bytes_atomic(Path(path), buffer.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> Predictions:
        """Read predictions written by :meth:`save` (no pickles are loaded)."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays: Mapping[str, np.ndarray] = {k: data[k] for k in data.files}
        except FileNotFoundError:
            raise ResultsError(f"{path}: predictions file not found (it is written beside results.json)") from None
        except (OSError, ValueError) as exc:
            raise ResultsError(f"{path}: not a readable predictions file ({exc})") from exc
        predictions = cls(arrays["order"].astype(np.int64), arrays["y_true"].astype(np.int64),
                          tuple(str(n) for n in arrays["label_names"]))
        for i, name in enumerate(arrays["model_names"]):
            proba = arrays[f"proba_{i}"].astype(np.float32) if f"proba_{i}" in arrays else None
            predictions.models[str(name)] = ModelPredictions(arrays[f"pred_{i}"].astype(np.int64), proba)
        return predictions
