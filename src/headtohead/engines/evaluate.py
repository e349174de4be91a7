"""The quality pass: run one model over the batch plan and keep every prediction.

Every model gets the same :class:`~headtohead.engines.batching.BatchPlan`; the engine
turns its raw scores into probabilities in the dataset's label order, so downstream code
never needs to know how a model ordered or named its outputs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import softmax

from headtohead.adapters.base import ModelAdapter
from headtohead.adapters.labels import LabelAlignment, align_labels
from headtohead.data.base import Dataset
from headtohead.engines.batching import BatchPlan
from headtohead.errors import ModelError

__all__ = ["Evaluation", "evaluate_model", "batch_examples", "scores_to_numpy", "ProgressCallback"]

#: ``progress(model_name, batches_done, batches_total)``; called after every batch.
ProgressCallback = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Evaluation:
    """One model's pass over the evaluation set.

    Attributes
    ----------
    pred : ndarray (n,)
        Predicted class index in dataset label order, aligned with ``plan.order``.
    proba : ndarray (n, n_classes), float32
        Probabilities, columns in dataset label order.
    alignment : LabelAlignment
    plan_hash : str
    seconds : float
        Wall time of the pass (preprocessing included; speed is measured properly elsewhere).
    """

    pred: np.ndarray
    proba: np.ndarray
    alignment: LabelAlignment
    plan_hash: str
    n_batches: int
    seconds: float


def batch_examples(dataset: Dataset, indices: np.ndarray) -> Any:
    """The raw examples at ``indices`` (a slice of the array, or a list)."""
    if isinstance(dataset.examples, np.ndarray):
        return dataset.examples[indices]
    return [dataset.examples[i] for i in indices]


def scores_to_numpy(scores: Any) -> np.ndarray:
    """A model's scores (torch tensor or array-like) as a float64 NumPy array."""
    if hasattr(scores, "detach"):
        scores = scores.detach().float().cpu().numpy()
    return np.asarray(scores, dtype=np.float64)


def _probabilities(adapter: ModelAdapter, scores: np.ndarray, n_rows: int) -> np.ndarray:
    if scores.ndim != 2 or scores.shape[0] != n_rows:
        raise ModelError(f"model '{adapter.name}' returned scores of shape {tuple(scores.shape)} for a batch of "
                         f"{n_rows}; expected ({n_rows}, n_classes)")
    if not np.isfinite(scores).all():
        raise ModelError(f"model '{adapter.name}' returned NaN or infinite scores; check its weights and inputs")
    if adapter.output_kind == "logits":
        return softmax(scores, axis=1)
    sums = scores.sum(axis=1, keepdims=True)
    if (scores < -1e-6).any() or not np.allclose(sums, 1.0, atol=1e-3):
        raise ModelError(f"model '{adapter.name}' is declared to output probabilities but its rows do not sum to 1 "
                         f"(e.g. {float(sums[0, 0]):.4f}); set outputs: logits if it returns scores")
    return scores / sums


def evaluate_model(adapter: ModelAdapter, dataset: Dataset, plan: BatchPlan, *,
                   progress: ProgressCallback | None = None) -> Evaluation:
    """Predict every example of ``dataset`` in ``plan`` order.

    Parameters
    ----------
    adapter : ModelAdapter
        A loaded model (eval mode).
    dataset : Dataset
        The evaluation split.
    plan : BatchPlan
        The order and batches shared by all models of the run.
    progress : callable, optional
        ``progress(model_name, batches_done, batches_total)``.

    Returns
    -------
    Evaluation

    Raises
    ------
    ModelError
        The model's labels do not match the dataset's, or its outputs are malformed.
    """
    alignment = align_labels(adapter.label_names, dataset.label_names, model=adapter.name)
    if alignment.warning:
        adapter.warn(alignment.warning)
    probas: list[np.ndarray] = []
    total = len(plan)
    start = time.perf_counter()
    for done, indices in enumerate(plan, start=1):
        inputs = adapter.to_device(adapter.preprocess(batch_examples(dataset, indices)))
        scores = scores_to_numpy(adapter.forward(inputs))
        if scores.ndim == 2 and scores.shape[1] != len(alignment.columns):
            expected = (f"names {len(alignment.columns)} labels" if adapter.label_names is not None
                        else f"the dataset has {len(alignment.columns)} classes")
            raise ModelError(f"model '{adapter.name}' produced {scores.shape[1]} scores per example but {expected}; "
                             f"set its label_names to match its outputs")
        probas.append(alignment.apply(_probabilities(adapter, scores, len(indices))))
        if progress is not None:
            progress(adapter.name, done, total)
    seconds = time.perf_counter() - start
    proba = np.concatenate(probas).astype(np.float32) if probas else np.zeros((0, dataset.num_classes), np.float32)
    return Evaluation(pred=proba.argmax(axis=1).astype(np.int64), proba=proba, alignment=alignment,
                      plan_hash=plan.hash(), n_batches=total, seconds=seconds)
