"""Calibration from stored probabilities: ECE, MCE, Brier, NLL and reliability-diagram bins.

Top-label calibration: an example's *confidence* is the probability the model gave to the
class it predicted, and it counts as *correct* when that prediction is right. Bins are
``n_bins`` equal-width intervals ``(b/n_bins, (b+1)/n_bins]`` (Guo et al. 2017, "On
Calibration of Modern Neural Networks"). Brier and NLL come from scikit-learn.
"""

from __future__ import annotations

import numpy as np

from headtohead.results.comparison import Calibration, ReliabilityBin
from headtohead.stats.bootstrap_metrics import as_probabilities, bin_index

__all__ = ["calibration", "reliability_bins", "top_label"]


def top_label(y_true: np.ndarray, pred: np.ndarray, proba: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-example confidence (probability of the predicted class) and correctness.

    Examples
    --------
    >>> conf, ok = top_label(np.array([0, 1]), np.array([0, 0]), np.array([[.8, .2], [.6, .4]]))
    >>> conf.tolist(), ok.tolist()
    ([0.8, 0.6], [True, False])
    """
    confidence = as_probabilities(proba)[np.arange(len(pred)), pred]
    return confidence, np.asarray(pred) == np.asarray(y_true)


def reliability_bins(confidence: np.ndarray, correct: np.ndarray, n_bins: int = 15) -> list[ReliabilityBin]:
    """Per-bin mean confidence, accuracy and count (the data of a reliability diagram).

    Parameters
    ----------
    confidence : ndarray of float, shape (n,)
    correct : ndarray of bool, shape (n,)
    n_bins : int

    Returns
    -------
    list of ReliabilityBin
        All ``n_bins`` bins in order; empty ones have ``confidence``/``accuracy`` ``None``.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, not {n_bins}")
    bins = bin_index(confidence, n_bins)
    count = np.bincount(bins, minlength=n_bins)
    conf_sum = np.bincount(bins, weights=confidence, minlength=n_bins)
    correct_sum = np.bincount(bins, weights=np.asarray(correct, dtype=np.float64), minlength=n_bins)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return [ReliabilityBin(lower=float(edges[b]), upper=float(edges[b + 1]),
                           confidence=float(conf_sum[b] / count[b]) if count[b] else None,
                           accuracy=float(correct_sum[b] / count[b]) if count[b] else None,
                           count=int(count[b]))
            for b in range(n_bins)]


def calibration(y_true: np.ndarray, pred: np.ndarray, proba: np.ndarray, n_bins: int = 15) -> Calibration:
    """All calibration numbers of one model.

    Parameters
    ----------
    y_true, pred : ndarray of int, shape (n,)
    proba : ndarray of shape (n, K)
        Class probabilities in dataset label order (rows sum to 1).
    n_bins : int
        Equal-width confidence bins for ECE/MCE and the diagram.

    Returns
    -------
    Calibration

    Examples
    --------
    >>> c = calibration(np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0]),
    ...                 np.array([[.9, .1], [.2, .8], [.7, .3], [.6, .4]]), n_bins=5)
    >>> round(c.ece, 3), [b.count for b in c.bins]
    (0.25, [0, 0, 1, 2, 1])
    """
    from sklearn.metrics import brier_score_loss, log_loss

    y_true = np.asarray(y_true)
    proba = as_probabilities(proba)
    if len(y_true) == 0:
        raise ValueError("calibration needs at least one example")
    confidence, correct = top_label(y_true, pred, proba)
    bins = reliability_bins(confidence, correct, n_bins)
    gaps = [abs(b.accuracy - b.confidence) for b in bins if b.count]
    ece = sum(b.count * abs(b.accuracy - b.confidence) for b in bins if b.count) / len(y_true)
    labels = np.arange(proba.shape[1])
    return Calibration(n_bins=n_bins, ece=float(ece), mce=float(max(gaps)),
                       brier=float(brier_score_loss(y_true, proba, labels=labels)),
                       nll=float(log_loss(y_true, proba, labels=labels)), bins=bins)
