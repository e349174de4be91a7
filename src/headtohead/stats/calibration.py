"""Calibration from stored probabilities: ECE, MCE, Brier, NLL and reliability-diagram bins.

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from headtohead.results.comparison import Calibration, Estimate, ReliabilityBin
from headtohead.stats.bootstrap_metrics import as_probabilities, bin_index, per_example_brier

__all__ = [
    "calibration",
    "reliability_bins",
    "top_label",
    "SquaredCalibrationError",
    "debiased_squared_calibration_error",
    "ece_l2_debiased",
    "CLIPPED_NOTE",
]

#: The note of a debiased ℓ2 error whose squared estimate is at or below 0: its value 0 is a clip, not a measurement.
CLIPPED_NOTE = (
    "the debiased squared error is at or below 0: these examples cannot tell the calibration error from 0, "
    "and the value 0 is a clip, not a measurement; read the upper bound"
)


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
    return [
        ReliabilityBin(
            lower=float(edges[b]),
            upper=float(edges[b + 1]),
            confidence=float(conf_sum[b] / count[b]) if count[b] else None,
            accuracy=float(correct_sum[b] / count[b]) if count[b] else None,
            count=int(count[b]),
        )
        for b in range(n_bins)
    ]


@dataclass(frozen=True)
class SquaredCalibrationError:
    """The debiased squared ℓ2 calibration error and its standard error.

    Attributes
    ----------
    estimate : float
        Unbiased for ``Σ_b P(b)·(E[correct − confidence | b])²``; may be slightly negative.
    standard_error : float
        Conservative (see :func:`debiased_squared_calibration_error`).
    n_bins : int
        Equal-mass bins used.
    """

    estimate: float
    standard_error: float
    n_bins: int

    def interval(self, level: float = 0.95) -> Estimate:
        """The ℓ2 calibration error ``√max(estimate, 0)`` with a normal interval made on the squared scale.

        The square root of a nonnegative quantity's bounds keeps the coverage of the
        squared-scale interval; a lower bound below 0 becomes 0.
        """
        from scipy import stats

        z = float(stats.norm.ppf(0.5 + level / 2.0))
        low, high = self.estimate - z * self.standard_error, self.estimate + z * self.standard_error
        return Estimate(
            value=float(np.sqrt(max(self.estimate, 0.0))),
            low=float(np.sqrt(max(low, 0.0))),
            high=float(np.sqrt(max(high, 0.0))),
            method="debiased-normal",
            confidence=level,
            note=CLIPPED_NOTE if self.clipped else None,
        )

    @property
    def clipped(self) -> bool:
        """Whether the estimate is at or below 0: the data cannot tell the error from 0 (its value reads 0, a bound)."""
        return self.estimate <= 0.0


def debiased_squared_calibration_error(
    confidence: np.ndarray, correct: np.ndarray, n_bins: int = 15
) -> SquaredCalibrationError | None:
    """Squared ℓ2 calibration error over equal-mass bins, without the plug-in's upward bias.

    Kumar, Liang & Ma (2019, "Verified Uncertainty Calibration", NeurIPS, §5) debias the
    binned squared error by subtracting each bin's sampling variance. Here, with
    ``d = correct − confidence`` and a bin of ``m`` examples, the bin's term is the
    U-statistic ``d̄² − S²/m`` (``S²`` the sample variance of ``d``), unbiased for
    ``(E[d | bin])²`` (Kumar et al. subtract the variance of the labels only, which leaves
    the spread of confidence within a bin in). Bins hold equal numbers of examples (sorted
    by confidence), as Kumar et al. recommend; the estimate is ``Σ_b (m_b/n)·(d̄_b² − S_b²/m_b)``.

    Standard error: a U-statistic's variance (Hoeffding 1948) is ``4μ²σ²/m + 2σ⁴/(m(m−1))``
    per bin; ``σ⁴`` is estimated without bias by ``Σ_{i≠j} e_i² e_j² / (m(m−1))`` and the
    ``μ²σ²`` part by the larger of ``Σ_b max(term_b, 0)·S_b²`` and ``max(estimate, 0) ·
    max_b S_b²`` (weighted as above), a conservative choice: simulated 95 % intervals cover
    the truth in ≥ 95 % of samples for calibrated and miscalibrated models alike
    (``benchmarks/calibration_coverage.py``, ``docs/statistics.md``).

    Parameters
    ----------
    confidence : ndarray of float, shape (n,)
        Probability of the predicted class.
    correct : ndarray of bool, shape (n,)
    n_bins : int
        Equal-mass bins; fewer when there are under two examples per bin.

    Returns
    -------
    SquaredCalibrationError or None
        ``None`` with fewer than 4 examples (two bins of two).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, 5000)
    >>> sq = debiased_squared_calibration_error(conf, rng.random(5000) < conf - 0.1)
    >>> round(float(np.sqrt(sq.estimate)), 2)
    0.1
    """
    conf = np.asarray(confidence, dtype=np.float64)
    d = np.asarray(correct, dtype=np.float64) - conf
    n = len(d)
    if n < 4:
        return None
    n_bins = max(1, min(int(n_bins), n // 2))
    bins = np.empty(n, dtype=np.int64)
    bins[np.argsort(conf, kind="stable")] = (np.arange(n) * n_bins) // n
    m = np.bincount(bins, minlength=n_bins).astype(np.float64)
    mean = np.bincount(bins, weights=d, minlength=n_bins) / m
    e = d - mean[bins]
    e2 = np.bincount(bins, weights=e**2, minlength=n_bins)
    e4 = np.bincount(bins, weights=e**4, minlength=n_bins)
    variance = e2 / (m - 1.0)
    term = mean**2 - variance / m
    weight = m / n
    estimate = float(np.sum(weight * term))
    sigma4 = (e2**2 - e4) / (m * (m - 1.0))
    quadratic = np.sum(weight**2 * 2.0 * sigma4 / (m * (m - 1.0)))
    linear = 4.0 * max(
        float(np.sum(weight**2 * np.maximum(term, 0.0) * variance / m)),
        max(estimate, 0.0) * float(np.max(weight * variance / m)),
    )
    return SquaredCalibrationError(estimate, float(np.sqrt(quadratic + linear)), n_bins)


def ece_l2_debiased(
    confidence: np.ndarray, correct: np.ndarray, n_bins: int = 15, level: float = 0.95
) -> Estimate | None:
    """The debiased ℓ2 calibration error with its interval (:func:`debiased_squared_calibration_error`).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> conf = 0.5 + 0.5 * rng.beta(6, 1, 872)            # a calibrated model: true error 0
    >>> e = ece_l2_debiased(conf, rng.random(872) < conf)
    >>> e.low
    0.0
    """
    squared = debiased_squared_calibration_error(confidence, correct, n_bins)
    return None if squared is None else squared.interval(level)


def calibration(
    y_true: np.ndarray,
    pred: np.ndarray,
    proba: np.ndarray,
    n_bins: int = 15,
    level: float = 0.95,
    *,
    n_classes: int | None = None,
) -> Calibration:
    """All calibration numbers of one model.

    Parameters
    ----------
    y_true, pred : ndarray of int, shape (n,)
    proba : ndarray of shape (n, K)
        Class probabilities in dataset label order (rows sum to 1).
    n_bins : int
        Equal-width confidence bins for ECE/MCE and the diagram; as many equal-mass bins
        for the debiased ℓ2 error.
    level : float
        Confidence level of the debiased ℓ2 error's interval.
    n_classes : int, optional
        The data's classes (the Brier score is halved for two; default: the columns of ``proba``).

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
    from sklearn.metrics import log_loss

    y_true = np.asarray(y_true)
    proba = as_probabilities(proba)
    if len(y_true) == 0:
        raise ValueError("calibration needs at least one example")
    confidence, correct = top_label(y_true, pred, proba)
    squared = debiased_squared_calibration_error(confidence, correct, n_bins)
    bins = reliability_bins(confidence, correct, n_bins)
    filled = [
        (b.count, abs(b.accuracy - b.confidence))
        for b in bins
        if b.count and b.accuracy is not None and b.confidence is not None
    ]
    gaps = [gap for _, gap in filled]
    ece = sum(count * gap for count, gap in filled) / len(y_true)
    labels = np.arange(proba.shape[1])
    return Calibration(
        n_bins=n_bins,
        ece=float(ece),
        mce=float(max(gaps)),
        ece_l2_debiased=None if squared is None else squared.interval(level),
        ece_l2_squared_debiased=None if squared is None else squared.estimate,
        brier=float(
            np.mean(per_example_brier(y_true, proba, binary=(proba.shape[1] if n_classes is None else n_classes) == 2))
        ),
        nll=float(log_loss(y_true, proba, labels=labels)),
        bins=bins,
    )
