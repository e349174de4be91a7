"""Quality metrics of one model's predictions, computed with scikit-learn (never by hand).

The classes that count are the dataset's (the true labels). A model may know more and
predict one the data does not hold: that prediction is an error (accuracy and recall count
it), while precision, F1 and their averages run over the dataset's classes only
(``labels=`` the dataset's classes, as scikit-learn's averages do when asked), so a class that
never occurs does not pull a macro average down. The confusion matrix covers the union:
the dataset's classes, then the outside classes the model predicted.

Examples without a prediction (NaN or infinite scores, :data:`~headtohead.results.predictions.NO_PREDICTION`)
are left out and counted.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from sklearn import metrics as skm

from headtohead.results.predictions import NO_PREDICTION
from headtohead.results.records import NONFINITE_NAMED, ClassQuality, QualityMetrics

__all__ = ["compute_quality"]


def compute_quality(y_true: np.ndarray, y_pred: np.ndarray, proba: np.ndarray | None, label_names: Sequence[str],
                    outside_labels: Sequence[str] = (), *, example_index: np.ndarray | None = None
                    ) -> QualityMetrics:
    """Accuracy, P/R/F1 (macro, weighted, per class), confusion matrix and confidence.

    Parameters
    ----------
    y_true, y_pred : ndarray of shape (n,)
        True and predicted class indices; ``y_true`` into ``label_names``, ``y_pred`` into
        ``label_names`` followed by ``outside_labels`` (or :data:`NO_PREDICTION`).
    proba : ndarray of shape (n, n_classes), or None
        Class probabilities (rows sum to 1), columns in ``label_names`` + ``outside_labels``
        order; ``None`` for predictions stored without them (the confidence is then ``None``:
        not available).
    label_names : sequence of str
        The dataset's classes.
    outside_labels : sequence of str
        The model's classes the dataset does not hold.
    example_index : ndarray of shape (n,), optional
        The dataset index of each row, to name examples without a prediction (default: the row).

    Returns
    -------
    QualityMetrics
        Classes absent from both ``y_true`` and ``y_pred`` score 0 (``zero_division=0``),
        as scikit-learn does, and still appear in the per-class list.

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
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    valid = y_pred != NO_PREDICTION
    rows = np.arange(len(y_true)) if example_index is None else np.asarray(example_index)
    missing = rows[~valid]
    y_true, y_pred = y_true[valid], y_pred[valid]
    proba = None if proba is None else np.asarray(proba)[valid]
    k = len(label_names)
    labels = np.arange(k)
    prf = {}
    for average in ("macro", "weighted"):
        p, r, f, _ = skm.precision_recall_fscore_support(y_true, y_pred, labels=labels, average=average,
                                                         zero_division=0)
        prf[average] = (float(p), float(r), float(f))
    p_c, r_c, f_c, s_c = skm.precision_recall_fscore_support(y_true, y_pred, labels=labels, average=None,
                                                             zero_division=0)
    predicted_outside = np.unique(y_pred[y_pred >= k])
    union = np.concatenate([labels, predicted_outside])
    confusion = skm.confusion_matrix(y_true, y_pred, labels=union)
    per_class = [
        ClassQuality(label=str(name), precision=float(p_c[i]), recall=float(r_c[i]), f1=float(f_c[i]),
                     accuracy=float(confusion[i, i] / s_c[i]) if s_c[i] else 0.0, support=int(s_c[i]))
        for i, name in enumerate(label_names)
    ]
    all_labels = [str(n) for n in label_names] + [str(n) for n in outside_labels]
    mean, std = _confidence(proba)
    return QualityMetrics(
        n_examples=int(len(y_true)),
        accuracy=float(skm.accuracy_score(y_true, y_pred)) if len(y_true) else 0.0,
        balanced_accuracy=float(_balanced_accuracy(y_true, y_pred)) if len(y_true) else 0.0,
        precision_macro=prf["macro"][0], recall_macro=prf["macro"][1], f1_macro=prf["macro"][2],
        precision_weighted=prf["weighted"][0], recall_weighted=prf["weighted"][1], f1_weighted=prf["weighted"][2],
        per_class=per_class,
        confusion_matrix=confusion.astype(int).tolist(),
        confidence_mean=mean,
        confidence_std=std,
        confusion_labels=[all_labels[i] for i in union] if len(predicted_outside) else None,
        predicted_outside=int((y_pred >= k).sum()),
        n_nonfinite=int(len(missing)),
        nonfinite_examples=[int(i) for i in missing[:NONFINITE_NAMED]],
    )


def _confidence(proba: np.ndarray | None) -> tuple[float | None, float | None]:
    """Mean and standard deviation of the top-class probability; ``None`` without probabilities."""
    if proba is None:
        return None, None
    confidence = proba.max(axis=1) if len(proba) else np.zeros(0)
    return (float(confidence.mean()), float(confidence.std())) if len(confidence) else (0.0, 0.0)


def _balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    # scikit-learn averages recall over the classes present in y_true, so a predicted outside
    # class lowers its true class's recall and adds no class of its own
    with warnings.catch_warnings():  # "y_pred contains classes not in y_true" is expected on small sets
        warnings.simplefilter("ignore")
        return skm.balanced_accuracy_score(y_true, y_pred)
