"""Quality metrics of one model's predictions, computed with scikit-learn (never by hand)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn import metrics as skm

from headtohead.results.records import ClassQuality, QualityMetrics

__all__ = ["compute_quality"]


def compute_quality(y_true: np.ndarray, y_pred: np.ndarray, proba: np.ndarray | None,
                    label_names: Sequence[str]) -> QualityMetrics:
    """Accuracy, P/R/F1 (macro, weighted, per class), confusion matrix and confidence.

    Parameters
    ----------
    y_true, y_pred : ndarray of shape (n,)
        True and predicted class indices into ``label_names``.
    proba : ndarray of shape (n, n_classes), or None
        Class probabilities (rows sum to 1), columns in ``label_names`` order; ``None`` for
        predictions stored without them (the confidence is then ``None``: not available).
    label_names : sequence of str

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
    """
    labels = np.arange(len(label_names))
    prf = {}
    for average in ("macro", "weighted"):
        p, r, f, _ = skm.precision_recall_fscore_support(y_true, y_pred, labels=labels, average=average,
                                                         zero_division=0)
        prf[average] = (float(p), float(r), float(f))
    p_c, r_c, f_c, s_c = skm.precision_recall_fscore_support(y_true, y_pred, labels=labels, average=None,
                                                             zero_division=0)
    confusion = skm.confusion_matrix(y_true, y_pred, labels=labels)
    per_class = [
        ClassQuality(label=str(name), precision=float(p_c[i]), recall=float(r_c[i]), f1=float(f_c[i]),
                     accuracy=float(confusion[i, i] / s_c[i]) if s_c[i] else 0.0, support=int(s_c[i]))
        for i, name in enumerate(label_names)
    ]
    mean, std = _confidence(proba)
    return QualityMetrics(
        n_examples=int(len(y_true)),
        accuracy=float(skm.accuracy_score(y_true, y_pred)),
        balanced_accuracy=float(_balanced_accuracy(y_true, y_pred)),
        precision_macro=prf["macro"][0], recall_macro=prf["macro"][1], f1_macro=prf["macro"][2],
        precision_weighted=prf["weighted"][0], recall_weighted=prf["weighted"][1], f1_weighted=prf["weighted"][2],
        per_class=per_class,
        confusion_matrix=confusion.astype(int).tolist(),
        confidence_mean=mean,
        confidence_std=std,
    )


def _confidence(proba: np.ndarray | None) -> tuple[float | None, float | None]:
    """Mean and standard deviation of the top-class probability; ``None`` without probabilities."""
    if proba is None:
        return None, None
    confidence = proba.max(axis=1) if len(proba) else np.zeros(0)
    return (float(confidence.mean()), float(confidence.std())) if len(confidence) else (0.0, 0.0)


def _balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    import warnings

    with warnings.catch_warnings():  # "y_pred contains classes not in y_true" is expected on small sets
        warnings.simplefilter("ignore")
        return skm.balanced_accuracy_score(y_true, y_pred)
