"""DeLong's paired test of two ROC AUCs measured on the same examples, by Sun & Xu's fast algorithm.

DeLong, DeLong & Clarke-Pearson (1988) write each model's AUC as a two-sample U-statistic: the
share of (positive, negative) pairs the model ranks the right way round, a tie counting a half.
Its *structural components* — for each positive, the share of negatives scored below it
(``V10``); for each negative, the share of positives scored above it (``V01``) — give the
covariance of two AUCs on the same examples:
``S = cov(V10) / m + cov(V01) / n`` over ``m`` positives and ``n`` negatives, and the
difference's variance ``S_aa + S_bb − 2·S_ab``. Its z-statistic is referred to the normal
distribution, as pROC's ``roc.test(method = "delong")`` does.

Sun & Xu (2014, IEEE Signal Processing Letters 21(11)) compute the components from midranks
in ``O((m + n)·log(m + n))`` rather than over all ``m·n`` pairs: with ``T_z`` the midranks over
all examples and ``T_x``, ``T_y`` those within the positives and within the negatives,
``V10 = (T_z − T_x) / n`` on the positives and ``V01 = 1 − (T_z − T_y) / m`` on the negatives.

With more classes, the one-vs-rest macro AUC (:func:`delong_ovr`) is a mean of K such AUCs on the
same examples, each example a positive of one and a negative of the others, so their errors are
correlated across classes as well as across models. Each example's influence on class ``c``'s AUC
is ``(V10_c − AUC_c) / p_c`` where it is of class ``c`` and ``(V01_c − AUC_c) / (1 − p_c)`` where it
is not (``p_c`` the class's share); the macro AUC's influence is their mean over the classes, and
the two models' covariance ``Σ_k n_k/(n_k − 1) · Σ_{i of class k} IF_a(i)·IF_b(i) / N²``. With two
classes this is DeLong's covariance exactly (the ``n_k/(n_k − 1)`` is his ``m − 1`` and ``n − 1``).

See ``docs/statistics.md``, "ROC AUC of two models: DeLong's test".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

__all__ = ["DeLong", "delong_components", "delong_ovr", "delong_paired"]


@dataclass(frozen=True)
class DeLong:
    """DeLong's comparison of two correlated AUCs (``a − b``).

    Attributes
    ----------
    auc_a, auc_b : float
        Each model's ROC AUC (ties count a half: scikit-learn's ``roc_auc_score``).
    difference : float
        ``auc_a − auc_b``.
    covariance : ndarray of shape (2, 2)
        DeLong's estimate of the two AUCs' covariance matrix.
    variance : float
        Of the difference: ``covariance[0, 0] + covariance[1, 1] − 2·covariance[0, 1]``.
    z : float or None
        ``difference / sqrt(variance)``; ``None`` when the variance is 0.
    p_value : float or None
        Two-sided, from the normal distribution; ``None`` when the variance is 0.
    low, high : float or None
        ``difference ± z_{(1 + confidence)/2}·sqrt(variance)``; ``None`` when the variance is 0.
    confidence : float
    counts : tuple of int
        Examples per class (two classes: negatives, then positives).
    """

    auc_a: float
    auc_b: float
    difference: float
    covariance: np.ndarray
    variance: float
    z: float | None
    p_value: float | None
    low: float | None
    high: float | None
    confidence: float
    counts: tuple[int, ...]

    @property
    def std_error(self) -> float:
        """The standard error of the difference."""
        return math.sqrt(max(self.variance, 0.0))


def delong_components(scores: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each model's AUC and DeLong's structural components, from midranks (Sun & Xu 2014).

    Parameters
    ----------
    scores : ndarray of shape (k, n_examples)
        One row of scores per model (higher: more likely positive).
    positive : ndarray of bool, shape (n_examples,)

    Returns
    -------
    auc : ndarray of shape (k,)
    v10 : ndarray of shape (k, m)
        Per positive: the share of negatives it outscores (a tie counts a half).
    v01 : ndarray of shape (k, n)
        Per negative: the share of positives that outscore it (a tie counts a half).

    Examples
    --------
    >>> auc, v10, v01 = delong_components(np.array([[0.9, 0.4, 0.4, 0.1]]), np.array([True, True, False, False]))
    >>> auc.tolist(), v10.tolist(), v01.tolist()
    ([0.875], [[1.0, 0.75]], [[0.75, 1.0]])
    """
    scores = np.atleast_2d(np.asarray(scores, np.float64))
    positive = np.asarray(positive, bool)
    x, y = scores[:, positive], scores[:, ~positive]
    m, n = x.shape[1], y.shape[1]
    if m == 0 or n == 0:
        raise ValueError(f"an AUC needs positives and negatives, got {m} and {n}")
    tz = sps.rankdata(np.concatenate([x, y], axis=1), axis=1)  # midranks ("average") over every example
    tx, ty = sps.rankdata(x, axis=1), sps.rankdata(y, axis=1)
    v10 = (tz[:, :m] - tx) / n  # negatives ranked below each positive (midranks count a tie as a half)
    v01 = 1.0 - (tz[:, m:] - ty) / m  # positives ranked above each negative
    auc = (tz[:, :m].sum(axis=1) - m * (m + 1) / 2.0) / (m * n)
    return auc, v10, v01


def delong_paired(
    positive: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, *, confidence: float = 0.95
) -> DeLong:
    """DeLong's test and interval for ``AUC(a) − AUC(b)`` on the same examples.

    Parameters
    ----------
    positive : ndarray of bool, shape (n_examples,)
        The examples of the positive class.
    scores_a, scores_b : ndarray of shape (n_examples,)
        Each model's score of the positive class (its probability).
    confidence : float
        Of the interval.

    Returns
    -------
    DeLong

    Raises
    ------
    ValueError
        Fewer than two positives or two negatives (no covariance to estimate), or lengths that differ.

    Examples
    --------
    >>> positive = np.array([1, 1, 1, 1, 0, 0, 0, 0], bool)
    >>> a = np.array([0.9, 0.8, 0.7, 0.3, 0.4, 0.2, 0.1, 0.35])
    >>> b = np.array([0.6, 0.4, 0.7, 0.2, 0.5, 0.3, 0.1, 0.65])
    >>> result = delong_paired(positive, a, b)
    >>> round(result.auc_a, 4), round(result.auc_b, 4), round(result.p_value, 3)
    (0.875, 0.625, 0.083)
    """
    positive = np.asarray(positive, bool)
    scores_a, scores_b = np.asarray(scores_a, np.float64), np.asarray(scores_b, np.float64)
    if not (len(positive) == len(scores_a) == len(scores_b)):
        raise ValueError(f"DeLong needs equal lengths, got {len(positive)}, {len(scores_a)}, {len(scores_b)}")
    m, n = int(positive.sum()), int((~positive).sum())
    if m < 2 or n < 2:
        raise ValueError(f"DeLong's covariance needs two positives and two negatives, got {m} and {n}")
    auc, v10, v01 = delong_components(np.stack([scores_a, scores_b]), positive)
    covariance = np.cov(v10) / m + np.cov(v01) / n  # np.cov: rows are variables, n − 1 in the denominator
    return _tested(auc, covariance, confidence, (n, m))


def delong_ovr(y: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, *, confidence: float = 0.95) -> DeLong:
    """DeLong's test and interval for the difference of two one-vs-rest macro ROC AUCs on the same examples.

    The macro AUC is the mean over the classes present in ``y`` of each class's AUC against the rest
    (scikit-learn's ``roc_auc_score(y, p, multi_class="ovr", average="macro")``); its covariance comes from
    each example's influence through DeLong's components of every class (module docstring).

    Parameters
    ----------
    y : ndarray of int, shape (n_examples,)
        Class indices: columns of the scores.
    scores_a, scores_b : ndarray of shape (n_examples, n_columns)
        Each model's score (probability) of every class.
    confidence : float

    Returns
    -------
    DeLong
        ``counts``: examples of each class present, in class order.

    Raises
    ------
    ValueError
        Fewer than two classes present, a class with fewer than two examples, or shapes that differ.

    Examples
    --------
    >>> y = np.array([0, 0, 1, 1, 2, 2, 0, 1, 2])
    >>> a = np.eye(3)[[0, 0, 1, 1, 2, 2, 1, 1, 2]] * 0.6 + 0.4 / 3
    >>> b = np.eye(3)[[0, 1, 1, 2, 2, 0, 0, 1, 1]] * 0.6 + 0.4 / 3
    >>> result = delong_ovr(y, a, b)
    >>> round(result.auc_a, 4), round(result.auc_b, 4), result.counts
    (0.9167, 0.6667, (3, 3, 3))
    """
    y = np.asarray(y, np.int64)
    scores_a, scores_b = np.asarray(scores_a, np.float64), np.asarray(scores_b, np.float64)
    if scores_a.shape != scores_b.shape or scores_a.ndim != 2 or len(y) != len(scores_a):
        raise ValueError(f"DeLong needs scores of one shape for every example, got {scores_a.shape}, {scores_b.shape}")
    classes, index, counts = np.unique(y, return_inverse=True, return_counts=True)
    if len(classes) < 2 or counts.min() < 2:
        raise ValueError(f"DeLong's covariance needs two classes of two examples each, got counts {counts.tolist()}")
    n, k = len(y), len(classes)
    influence, auc = np.zeros((2, n)), np.zeros((2, k))
    for j, c in enumerate(classes):
        positive = y == c
        share = positive.mean()
        auc[:, j], v10, v01 = delong_components(np.stack([scores_a[:, c], scores_b[:, c]]), positive)
        influence[:, positive] += (v10 - auc[:, j, None]) / share / k
        influence[:, ~positive] += (v01 - auc[:, j, None]) / (1.0 - share) / k
    correction = (counts / (counts - 1.0))[index]  # DeLong's m − 1 and n − 1, class by class
    covariance = (influence * correction) @ influence.T / n**2
    return _tested(auc.mean(axis=1), covariance, confidence, tuple(int(c) for c in counts))


def _tested(auc: np.ndarray, covariance: np.ndarray, confidence: float, counts: tuple[int, ...]) -> DeLong:
    """The z-test and interval of ``auc[0] − auc[1]`` from the AUCs' covariance (none when its variance is 0)."""
    variance = float(covariance[0, 0] + covariance[1, 1] - 2.0 * covariance[0, 1])
    difference = float(auc[0] - auc[1])
    z = p_value = low = high = None
    if variance > 0.0 and math.isfinite(variance):
        se = math.sqrt(variance)
        z = difference / se
        p_value = float(min(1.0, 2.0 * sps.norm.sf(abs(z))))
        half = float(sps.norm.ppf(0.5 + confidence / 2.0)) * se
        low, high = difference - half, difference + half
    return DeLong(
        auc_a=float(auc[0]),
        auc_b=float(auc[1]),
        difference=difference,
        covariance=covariance,
        variance=variance,
        z=z,
        p_value=p_value,
        low=low,
        high=high,
        confidence=confidence,
        counts=counts,
    )
