"""Quality metrics of one model's predictions, computed with scikit-learn (never by hand).

See ``docs/statistics.md`` §8.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from headtohead.metrics import defaults
from headtohead.results.predictions import NO_PREDICTION
from headtohead.results.records import (
    FAILED_NAMED,
    NO_PREDICTION_LABEL,
    AnsweredQuality,
    ClassQuality,
    QualityMetrics,
)

__all__ = ["compute_quality", "present_labels"]


def present_labels(y_true: np.ndarray, n_classes: int) -> np.ndarray:
    """The dataset's classes that occur among ``y_true`` (what macro averages run over).

    Examples
    --------
    >>> present_labels(np.array([0, 2, 2]), 3).tolist()
    [0, 2]
    """
    return np.flatnonzero(np.bincount(np.asarray(y_true, dtype=np.int64), minlength=n_classes)[:n_classes])


def compute_quality(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    proba: np.ndarray | None,
    label_names: Sequence[str],
    outside_labels: Sequence[str] = (),
    *,
    example_index: np.ndarray | None = None,
) -> QualityMetrics:
    """Accuracy, P/R/F1 (macro, weighted, per class), confusion matrix and confidence.

    Parameters
    ----------
    y_true, y_pred : ndarray of shape (n,)
        True and predicted class indices; ``y_true`` into ``label_names``, ``y_pred`` into
        ``label_names`` followed by ``outside_labels`` (or :data:`NO_PREDICTION`).
    proba : ndarray of shape (n, n_classes), or None
        Class probabilities (rows sum to 1; NaN rows where there is no prediction), columns in
        ``label_names`` + ``outside_labels`` order; ``None`` for predictions stored without
        them (the confidence is then ``None``: not available).
    label_names : sequence of str
        The dataset's classes.
    outside_labels : sequence of str
        The model's classes the dataset does not hold.
    example_index : ndarray of shape (n,), optional
        The dataset index of each row, to name examples without a prediction (default: the row).

    Returns
    -------
    QualityMetrics
        Over every example, failures counted as wrong; per-class figures of a class with no
        example are 0 (``zero_division=0``), as scikit-learn gives, and the macro averages
        leave such classes out.

    Examples
    --------
    >>> import numpy as np
    >>> q = compute_quality(np.array([0, 1, 1]), np.array([0, 1, 0]),
    ...                     np.array([[.9, .1], [.2, .8], [.6, .4]]), ["neg", "pos"])
    >>> round(q.accuracy, 3), q.confusion_matrix
    (0.667, [[1, 0], [1, 1]])
    >>> q = compute_quality(np.array([0, 1]), np.array([0, 2]),
    ...                     np.array([[.9, .1, 0], [.1, .2, .7]]), ["neg", "pos"], ["other"])
    >>> q.accuracy, q.f1_macro, q.predicted_outside, q.confusion_labels, q.confusion_matrix
    (0.5, 0.5, 1, ['neg', 'pos', 'other'], [[1, 0, 0], [0, 0, 1], [0, 0, 0]])
    >>> q = compute_quality(np.array([0, 1, 1, 0]), np.array([0, 1, -1, 0]), None, ["neg", "pos"])
    >>> q.accuracy, q.n_failed, q.answered.accuracy
    (0.75, 1, 1.0)
    """
    from sklearn import metrics as skm  # on first use: a run checks its inputs before it imports scikit-learn

    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    valid = y_pred != NO_PREDICTION
    rows = np.arange(len(y_true)) if example_index is None else np.asarray(example_index)
    failed = rows[~valid]
    k = len(label_names)
    # a failure is nobody's prediction: a label outside every class scikit-learn is asked about
    scored_pred = np.where(valid, y_pred, -1)
    prf = _points(y_true, scored_pred, k)
    p_c, r_c, f_c, s_c = skm.precision_recall_fscore_support(
        y_true, scored_pred, labels=np.arange(k), average=None, zero_division=0
    )
    predicted_outside = np.unique(y_pred[valid & (y_pred >= k)])
    union = np.concatenate([np.arange(k), predicted_outside])
    confusion = skm.confusion_matrix(y_true, scored_pred, labels=np.concatenate([union, [-1]]))
    if not len(failed):  # a "(no prediction)" column (and its row of zeros, as an outside class has) only when needed
        confusion = confusion[:-1, :-1]
    per_class = [
        ClassQuality(
            label=str(name),
            precision=float(p_c[i]),
            recall=float(r_c[i]),
            f1=float(f_c[i]),
            accuracy=float(confusion[i, i] / s_c[i]) if s_c[i] else 0.0,
            support=int(s_c[i]),
        )
        for i, name in enumerate(label_names)
    ]
    all_labels = [str(n) for n in label_names] + [str(n) for n in outside_labels]
    names = [all_labels[i] for i in union] + ([NO_PREDICTION_LABEL] if len(failed) else [])
    mean, std = _confidence(None if proba is None else np.asarray(proba)[valid])
    answered = None
    if len(failed) and valid.any():
        own = _points(y_true[valid], y_pred[valid], k)
        answered = AnsweredQuality(
            n_examples=int(valid.sum()), **{m: own[m] for m in AnsweredQuality.model_fields if m in own}
        )
    return QualityMetrics(
        n_examples=int(len(y_true)),
        **prf,
        per_class=per_class,
        confusion_matrix=confusion.astype(int).tolist(),
        confidence_mean=mean,
        confidence_std=std,
        confusion_labels=names if len(predicted_outside) or len(failed) else None,
        predicted_outside=int((valid & (y_pred >= k)).sum()),
        n_failed=int(len(failed)),
        failed_examples=[int(i) for i in failed[:FAILED_NAMED]],
        answered=answered,
    )


def _points(y_true: np.ndarray, y_pred: np.ndarray, k: int) -> dict[str, Any]:
    """Every default label metric of the catalogue (:mod:`headtohead.metrics`: scikit-learn's functions)."""
    return {m.name: float(m.point(y_true, y_pred, None, k) or 0.0) for m in defaults() if m.point and not m.needs_proba}


def _confidence(proba: np.ndarray | None) -> tuple[float | None, float | None]:
    """Mean and standard deviation of the top-class probability; ``None`` without probabilities."""
    if proba is None:
        return None, None
    confidence = proba.max(axis=1) if len(proba) else np.zeros(0)
    return (float(confidence.mean()), float(confidence.std())) if len(confidence) else (0.0, 0.0)
