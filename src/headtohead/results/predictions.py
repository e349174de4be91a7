"""Per-example predictions and probabilities of every model, stored compactly in ``.npz``.

See ``docs/api/results.md``, the section of this title.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from headtohead.errors import ResultsError, listing
from headtohead.runtime.files import write_bytes_atomic

__all__ = ["Predictions", "ModelPredictions", "NO_PREDICTION"]

#: ``pred`` of an example whose scores were NaN or infinite (its probability row is NaN).
NO_PREDICTION = -1


@dataclass(frozen=True)
class ModelPredictions:
    """One model's outputs, in evaluation order and dataset label order.

    A model measured several ways (its passes: one per prompt …) holds them along a leading axis,
    and says which: everything that needs one pass asks for it (:meth:`pass_`, :meth:`each_pass`).

    Attributes
    ----------
    pred : ndarray of shape (n,) or (passes, n), int64
        Predicted class index (into the dataset's label names, then the classes outside the
        data); :data:`NO_PREDICTION` where the model's scores were NaN or infinite.
    proba : ndarray of shape (n, n_classes) or (passes, n, n_classes), float32, or None
        Class probabilities (columns in dataset label order, then the outside classes); NaN
        rows where there is no prediction; ``None`` for a model whose stored predictions have
        none (``kind: predictions`` without probability columns).
    passes : tuple of str
        The keys of the passes along the leading axis (``p1`` …); empty for a model measured once.
    factor : str, optional
        What varies between the passes (``prompt``).
    """

    pred: np.ndarray
    proba: np.ndarray | None
    passes: tuple[str, ...] = ()
    factor: str | None = None

    @property
    def n_passes(self) -> int:
        """How many passes the model has (1 when it was measured once)."""
        return len(self.passes) or 1

    def pass_(self, i: int) -> ModelPredictions:
        """Pass ``i`` (from 0) as the predictions of a model measured once (a model measured once: itself)."""
        if not self.passes:
            if i != 0:
                raise IndexError(f"a model measured once has no pass {i}")
            return self
        return ModelPredictions(self.pred[i], None if self.proba is None else self.proba[i])

    def each_pass(self) -> list[ModelPredictions]:
        """Every pass, in order, as predictions of a model measured once (a model measured once: ``[self]``)."""
        return [self.pass_(i) for i in range(self.n_passes)]

    def restricted(self, rows: Any) -> ModelPredictions:
        """The same model's predictions on some rows (a boolean mask, indices or a slice), every pass."""
        proba = None if self.proba is None else self.proba[..., rows, :]
        return ModelPredictions(self.pred[..., rows], proba, self.passes, self.factor)

    def correct(self, y_true: np.ndarray) -> np.ndarray:
        """Boolean array: was each example predicted correctly (``False`` without a prediction); per pass with passes."""
        return np.asarray(self.pred == y_true)

    @property
    def valid(self) -> np.ndarray:
        """Boolean array: did the model give this example finite scores (and so a prediction)."""
        return np.asarray(self.pred != NO_PREDICTION)

    @property
    def scored(self) -> np.ndarray:
        """Boolean array: a prediction with class probabilities (an LLM's answer may have a label but no
        probabilities: a NaN row, see ``docs/llm.md``); calibration reads these rows."""
        if self.proba is None:
            return self.valid
        return np.asarray(self.valid & ~np.isnan(self.proba).all(axis=-1))


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
        The dataset's classes (``y_true`` indexes them).
    models : dict of str to ModelPredictions
    outside_labels : tuple of str
        Classes some model knows that the data does not hold; probability columns
        ``len(label_names):`` (see the module docstring).
    groups : ndarray of str, optional
        The group of each row (``data.group_column``: examples of one user, document or
        conversation belong together), aligned with ``order``; the statistics then treat a
        group as the independent unit. ``None``: every example is its own unit.
    group_column : str, optional
        The column the groups come from.
    """

    order: np.ndarray
    y_true: np.ndarray
    label_names: tuple[str, ...]
    models: dict[str, ModelPredictions] = field(default_factory=dict)
    outside_labels: tuple[str, ...] = ()
    groups: np.ndarray | None = None
    group_column: str | None = None

    @property
    def all_labels(self) -> tuple[str, ...]:
        """Every probability column's class: the dataset's classes, then :attr:`outside_labels`."""
        return tuple(self.label_names) + tuple(self.outside_labels)

    def __getitem__(self, name: str) -> ModelPredictions:
        try:
            return self.models[name]
        except KeyError:
            raise KeyError(f"no predictions for model '{name}' (have: {listing(self.models)})") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.models)

    def in_dataset_order(self, name: str) -> ModelPredictions:
        """Model ``name``'s predictions with rows sorted by dataset index (row ``j`` is example ``j``
        when every example was evaluated)."""
        return self[name].restricted(np.argsort(self.order, kind="stable"))

    def add(self, name: str, pred: np.ndarray, proba: np.ndarray | None, outside: Sequence[str] = ()) -> None:
        """Add a model's predictions (checked against the evaluation set's size).

        Parameters
        ----------
        name : str
        pred, proba : ndarray
            In the model's own aligned order: the dataset's classes, then ``outside``.
            ``proba`` may be ``None`` (stored predictions without probabilities).
        outside : sequence of str
            The model's classes the data does not hold (``ModelRecord.labels_outside_data``);
            new ones join :attr:`outside_labels`, with probability 0 for the other models.
        """
        self.models[name] = self._placed(name, pred, proba, outside)

    def add_pass(
        self,
        name: str,
        key: str,
        factor: str,
        pred: np.ndarray,
        proba: np.ndarray | None,
        outside: Sequence[str] = (),
    ) -> None:
        """Add one pass of a model measured several ways, after its earlier ones (as :meth:`add` a model's).

        Parameters
        ----------
        name : str
            The model.
        key : str
            The pass's key (``p1`` …).
        factor : str
            What varies between the model's passes (``prompt``).
        pred, proba, outside
            As for :meth:`add`.

        Raises
        ------
        ValueError
            The pass is already held, or one pass has probabilities and another none.
        """
        one = self._placed(name, pred, proba, outside)
        held = self.models.get(name)
        if held is None or not held.passes:
            stacked = (one.pred[None], None if one.proba is None else one.proba[None])
            self.models[name] = ModelPredictions(*stacked, (key,), factor)
            return
        if key in held.passes or (held.proba is None) != (one.proba is None):
            raise ValueError(
                f"pass '{key}' of '{name}' is held already, or has probabilities where the others have none"
            )
        proba_all = None if held.proba is None or one.proba is None else np.concatenate([held.proba, one.proba[None]])
        pred_all = np.concatenate([held.pred, one.pred[None]])
        self.models[name] = ModelPredictions(pred_all, proba_all, (*held.passes, key), held.factor)

    def _placed(
        self, name: str, pred: np.ndarray, proba: np.ndarray | None, outside: Sequence[str]
    ) -> ModelPredictions:
        """One model's (or pass's) outputs checked and placed on the run's columns (:attr:`all_labels`)."""
        pred = np.asarray(pred, dtype=np.int64)
        proba = None if proba is None else np.asarray(proba, dtype=np.float32)
        n, k = len(self.y_true), len(self.label_names)
        outside = [str(label) for label in outside]
        if pred.shape != self.y_true.shape or (proba is not None and proba.shape != (n, k + len(outside))):
            raise ValueError(
                f"predictions of '{name}' have shapes {pred.shape}/"
                f"{None if proba is None else proba.shape}, expected "
                f"{self.y_true.shape}/{(n, k + len(outside))}"
            )
        self._widen([label for label in outside if label not in self.outside_labels])
        position = {label: i for i, label in enumerate(self.all_labels)}
        columns = np.array(list(range(k)) + [position[label] for label in outside], dtype=np.int64)
        if len(columns) == len(self.all_labels) and np.array_equal(columns, np.arange(len(columns))):
            return ModelPredictions(pred, proba)
        placed_pred = np.where(pred == NO_PREDICTION, pred, columns[np.maximum(pred, 0)])
        if proba is None:
            return ModelPredictions(placed_pred, None)
        placed = np.zeros((n, len(self.all_labels)), dtype=np.float32)
        placed[:, columns] = proba
        placed[pred == NO_PREDICTION] = np.nan
        return ModelPredictions(placed_pred, placed)

    def _widen(self, new: Sequence[str]) -> None:
        """Add classes outside the data: a zero column each for every model already held (NaN rows stay NaN)."""
        if not new:
            return
        self.outside_labels = tuple(self.outside_labels) + tuple(new)
        for model_name, model in self.models.items():
            if model.proba is None:
                continue
            extra = np.zeros((*model.pred.shape, len(new)), dtype=np.float32)
            extra[~model.valid] = np.nan
            proba = np.concatenate([model.proba, extra], axis=-1)
            self.models[model_name] = ModelPredictions(model.pred, proba, model.passes, model.factor)

    def with_passes(self) -> list[str]:
        """The models measured several ways (their passes along a leading axis), in order."""
        return [name for name, model in self.models.items() if model.passes]

    def per_pass(self) -> Predictions:
        """Every pass of every model as an entry of its own, named ``model@key``; a model measured once as it is.

        For the figures of each pass alone (a pass's accuracy and its interval, per slice): a pass is
        never compared as a model (:mod:`headtohead.stats.passes` pools a model's passes).
        """
        from headtohead.results.passes import pass_label

        flat: dict[str, ModelPredictions] = {}
        for name, model in self.models.items():
            if not model.passes:
                flat[name] = model
                continue
            for i, key in enumerate(model.passes):
                flat[pass_label(name, key)] = model.pass_(i)
        return Predictions(
            self.order, self.y_true, self.label_names, flat, self.outside_labels, self.groups, self.group_column
        )

    def restricted(self, rows: np.ndarray | None = None, models: Sequence[str] | None = None) -> Predictions:
        """The same predictions on some rows (a boolean mask or indices) and some models only."""
        take = slice(None) if rows is None else rows
        names = list(self.models) if models is None else list(models)
        return Predictions(
            self.order[take],
            self.y_true[take],
            self.label_names,
            {m: self[m].restricted(take) for m in names},
            self.outside_labels,
            None if self.groups is None else self.groups[take],
            self.group_column,
        )

    def save(self, path: str | Path) -> None:
        """Write to ``path`` (``.npz``) atomically."""
        arrays: dict[str, Any] = {  # Any: numpy's stubs read **arrays as its keyword arguments
            "order": self.order,
            "y_true": self.y_true,
            "label_names": np.array(self.label_names, dtype=str),
            "model_names": np.array(list(self.models), dtype=str),
            "outside_labels": np.array(self.outside_labels, dtype=str),
        }
        if self.groups is not None:
            arrays["groups"] = np.array([str(g) for g in self.groups], dtype=str)
            arrays["group_column"] = np.array(self.group_column or "", dtype=str)
        for i, preds in enumerate(self.models.values()):
            arrays[f"pred_{i}"] = preds.pred  # (passes, n) for a model measured several ways
            if preds.proba is not None:  # no proba_<i>: the model stored no probabilities
                arrays[f"proba_{i}"] = preds.proba
            if preds.passes:  # the keys along the leading axis, and what varies between them
                arrays[f"passes_{i}"] = np.array(preds.passes, dtype=str)
                arrays[f"factor_{i}"] = np.array(preds.factor or "", dtype=str)
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
        outside = arrays.get("outside_labels", np.zeros(0, dtype=str))  # absent from files of schema version 2
        groups = np.array([str(g) for g in arrays["groups"]], dtype=object) if "groups" in arrays else None
        predictions = cls(
            arrays["order"].astype(np.int64),
            arrays["y_true"].astype(np.int64),
            tuple(str(n) for n in arrays["label_names"]),
            outside_labels=tuple(str(n) for n in outside),
            groups=groups,
            group_column=str(arrays["group_column"]) if "groups" in arrays else None,
        )
        for i, name in enumerate(arrays["model_names"]):
            proba = arrays[f"proba_{i}"].astype(np.float32) if f"proba_{i}" in arrays else None
            passes = tuple(str(k) for k in arrays[f"passes_{i}"]) if f"passes_{i}" in arrays else ()
            factor = str(arrays[f"factor_{i}"]) if passes else None
            predictions.models[str(name)] = ModelPredictions(
                arrays[f"pred_{i}"].astype(np.int64), proba, passes, factor
            )
        return predictions
