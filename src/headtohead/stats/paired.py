"""The accuracy gap of two models on the same examples: one score statistic for the interval, the test and the gate.

Of ``n`` examples ``b`` only A got right and ``c`` only B; the gap (accuracy A − accuracy B) is
estimated by ``(b − c)/n``. Tango's score statistic ``Z(Δ0)`` gives the interval (every ``Δ0``
with ``|Z(Δ0)| ≤ z``), the test (``Z(0)²`` is McNemar's without continuity correction) and the
gate (non-inferiority at a margin δ: ``Z(−δ) > z``). With groups of related examples, the
cluster-robust form (Durkalski's clustered McNemar at ``Δ0 = 0``), reported as the union with
the ordinary interval; the same construction gives one model's clustered accuracy interval.
The statistic, its references and its checks: ``docs/statistics.md``, sections 7 and 9.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np

from headtohead.stats.mcnemar import RULE

__all__ = [
    "score_z",
    "difference_interval",
    "score_interval",
    "difference_pvalue",
    "ClusteredCounts",
    "clustered_counts",
    "clustered_difference_interval",
    "clustered_difference_pvalue",
    "proportion_interval",
    "examples_to_decide",
    "PairedCorrectness",
    "CLUSTERED_RULE",
    "IntervalMethod",
]

_BISECTIONS = 64
#: How an accuracy gap's interval is made (:attr:`PairedCorrectness.methods`).
IntervalMethod = Literal["tango-score", "tango-score+exact", "tango-score+clusters", "tango-score+clusters+exact"]


def _as_float(*values: object) -> list[np.ndarray]:
    return [np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(*(np.asarray(v) for v in values))]


def _constrained_rate(b: np.ndarray, c: np.ndarray, n: np.ndarray, delta0: np.ndarray) -> np.ndarray:
    """Maximum-likelihood ``P(only B right)`` under ``Δ = delta0`` (Tango 1998, eq. 4)."""
    a_coef = 2.0 * n
    b_coef = -(b + c) + delta0 * (2.0 * n - b + c)
    c_coef = -c * delta0 * (1.0 - delta0)
    root = np.sqrt(np.maximum(b_coef * b_coef - 4.0 * a_coef * c_coef, 0.0))
    return cast(np.ndarray, (-b_coef + root) / (2.0 * a_coef))


def score_z(
    b: np.ndarray | int, c: np.ndarray | int, n: np.ndarray | int, delta0: np.ndarray | float = 0.0
) -> np.ndarray:
    """Tango's score statistic ``Z(Δ0)`` (positive when the data favour a gap above ``Δ0``).

    Parameters
    ----------
    b, c, n : array_like of int
        Examples only A got right, only B got right, and all examples.
    delta0 : array_like of float in [−1, 1]
        The hypothesised gap ``accuracy(A) − accuracy(B)``.

    Returns
    -------
    ndarray of float
        ``±inf`` where the constrained variance is 0 and the data disagree with ``Δ0``.

    Examples
    --------
    At ``Δ0 = 0`` the square is McNemar's statistic without continuity correction:

    >>> round(float(score_z(10, 3, 100) ** 2), 12), round((10 - 3) ** 2 / 13, 12)
    (3.769230769231, 3.769230769231)
    """
    b, c, n, d0 = _as_float(b, c, n, delta0)
    p01 = _constrained_rate(b, c, n, d0)
    variance = n * (2.0 * p01 + d0 * (1.0 - d0))
    numerator = b - c - n * d0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = numerator / np.sqrt(variance)
    # variance 0: the hypothesis puts all mass on one outcome; the data either agree (0) or refute it
    return np.where(variance > 1e-300, z, np.where(np.abs(numerator) < 1e-9, 0.0, np.copysign(np.inf, numerator)))


def _critical(confidence: float) -> float:
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), not {confidence}")
    return float(stats.norm.isf((1.0 - confidence) / 2.0))


def _bisect(
    statistic: Callable[[np.ndarray], np.ndarray], low: np.ndarray, high: np.ndarray, rejects_low_side: bool
) -> np.ndarray:
    """The boundary between rejected and kept hypotheses in ``[low, high]`` (one crossing, vectorised).

    ``statistic(x)`` is True where ``x`` is rejected. With ``rejects_low_side`` the rejected
    values lie below the boundary (a lower bound), otherwise above it (an upper bound). The
    result is the kept side of the final bracket, so the estimate stays inside.
    """
    low, high = low.copy(), high.copy()
    for _ in range(_BISECTIONS):
        mid = 0.5 * (low + high)
        rejected = statistic(mid)
        if rejects_low_side:
            low, high = np.where(rejected, mid, low), np.where(rejected, high, mid)
        else:
            low, high = np.where(rejected, low, mid), np.where(rejected, mid, high)
    return high if rejects_low_side else low


def difference_interval(
    b: np.ndarray | int, c: np.ndarray | int, n: np.ndarray | int, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Tango's score interval of ``accuracy(A) − accuracy(B)`` on paired examples (vectorised).

    Where one discordant count is 0 it is joined with the exact (Clopper–Pearson) interval of
    the other's share, which Tango's alone undercovers there (:func:`score_interval` is Tango's alone).

    Parameters
    ----------
    b, c, n : array_like of int
        Only-A-right, only-B-right and all examples (``n ≥ 1``).
    confidence : float

    Returns
    -------
    low, high : ndarray of float
        Always contain the estimate ``(b − c)/n``; never a point (with ``b = c = 0`` it is
        ``±z²/(n + z²)``). It excludes 0 exactly when :func:`difference_pvalue` ≤ 1 − confidence.

    Examples
    --------
    Identical predictions on 60 examples still leave a gap of up to 6 points either way:

    >>> low, high = difference_interval(0, 0, 60)
    >>> round(float(low), 4), round(float(high), 4)
    (-0.0602, 0.0602)
    """
    low, high = score_interval(b, c, n, confidence)
    only_a, only_b, examples = _as_float(b, c, n)
    return _one_model_never_right_alone(only_a, only_b, examples, low, high, confidence)


def score_interval(
    b: np.ndarray | int, c: np.ndarray | int, n: np.ndarray | int, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Tango's score interval alone: every ``Δ0`` with ``|Z(Δ0)| ≤ z`` (:func:`difference_interval` is what is shown).

    Examples
    --------
    >>> [round(float(x), 3) for x in score_interval(5, 0, 40)], [round(float(x), 3) for x in difference_interval(5, 0, 40)]
    ([0.026, 0.261], [0.026, 0.268])
    """
    b, c, n = _as_float(b, c, n)
    if np.any(n < 1) or np.any(b < 0) or np.any(c < 0) or np.any(b + c > n):
        raise ValueError("need 0 ≤ b, c and b + c ≤ n with n ≥ 1")
    z = _critical(confidence)
    estimate = (b - c) / n
    low = _bisect(lambda d0: score_z(b, c, n, d0) > z, np.full(b.shape, -1.0), estimate, rejects_low_side=True)
    high = _bisect(lambda d0: score_z(b, c, n, d0) < -z, estimate, np.full(b.shape, 1.0), rejects_low_side=False)
    return low, high


def _one_model_never_right_alone(
    b: np.ndarray, c: np.ndarray, n: np.ndarray, low: np.ndarray, high: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Tango's interval joined with the exact one of ``b / n`` where one discordant count is 0.

    With ``c = 0`` the gap is the share ``b / n`` of a binomial (when one model is never right
    alone, on every run), and Tango's bounds are then Wilson-like: they undercover there (92.7 %
    at 100 examples with P(only A right) = 0.055, 84 % near P = 0.99, exactly enumerated). The
    interval is widened to contain the Clopper–Pearson interval of ``b / n`` (mirrored for
    ``b = 0``), which covers at least its level whatever the share. Its lower end is above 0
    whenever ``b ≥ 1``, so the interval still excludes 0 exactly when McNemar's score test rejects.
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    tail = (1.0 - confidence) / 2.0

    def exact(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # Clopper–Pearson bounds of k / n for k ≥ 1
        k = np.maximum(k, 1.0)
        return stats.beta.ppf(tail, k, n - k + 1.0), np.where(k < n, stats.beta.isf(tail, k + 1.0, n - k), 1.0)

    only_a, only_b = (c == 0) & (b > 0), (b == 0) & (c > 0)
    a_low, a_high = exact(b)
    b_low, b_high = exact(c)
    low = np.where(only_a, np.minimum(low, a_low), np.where(only_b, np.minimum(low, -b_high), low))
    high = np.where(only_a, np.maximum(high, a_high), np.where(only_b, np.maximum(high, -b_low), high))
    return low, high


def difference_pvalue(b: np.ndarray | int, c: np.ndarray | int) -> np.ndarray:
    """Two-sided p-value of "equal accuracy": McNemar's statistic ``(b − c)²/(b + c)`` on χ²₁, 1 when ``b + c = 0``.

    Examples
    --------
    >>> round(float(difference_pvalue(10, 3)), 4)
    0.0522
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    b, c = _as_float(b, c)
    d = b + c
    statistic = np.divide((b - c) ** 2, d, out=np.zeros_like(d), where=d > 0)
    return np.asarray(stats.chi2.sf(statistic, 1), dtype=np.float64)


@dataclass(frozen=True)
class ClusteredCounts:
    """Per-group sums of paired outcomes: what the clustered statistics need.

    Attributes
    ----------
    sums : ndarray of shape (groups,)
        ``S_g``: per group, examples only A got right minus those only B got right (for one
        model's accuracy: the correct examples).
    sizes : ndarray of shape (groups,)
        ``n_g``: examples per group.
    """

    sums: np.ndarray
    sizes: np.ndarray


def clustered_counts(values: np.ndarray, groups: np.ndarray) -> ClusteredCounts:
    """Sum ``values`` (``D`` per example, or correctness) within each group (codes of any kind).

    Examples
    --------
    >>> cc = clustered_counts(np.array([1, -1, 1, 0]), np.array(["u1", "u1", "u2", "u3"]))
    >>> cc.sums.tolist(), cc.sizes.tolist()
    ([0.0, 1.0, 0.0], [2.0, 1.0, 1.0])
    """
    _, codes = np.unique(np.asarray(groups), return_inverse=True)
    codes = codes.reshape(-1)
    sizes = np.bincount(codes).astype(np.float64)
    return ClusteredCounts(
        np.bincount(codes, weights=np.asarray(values, dtype=np.float64), minlength=len(sizes)), sizes
    )


def _robust_interval(counts: ClusteredCounts, confidence: float) -> tuple[float, float]:
    """``{θ : (S − θN)² ≤ q² Σ_g (S_g − θ n_g)²}``: a quadratic in θ, clipped to the scale."""
    q = _critical(confidence)
    s, sizes = counts.sums, counts.sizes
    total, n = float(s.sum()), float(sizes.sum())
    a = n * n - q * q * float(np.sum(sizes**2))
    half_b = total * n - q * q * float(np.sum(s * sizes))
    c = total * total - q * q * float(np.sum(s**2))
    if a <= 0.0:  # too few effective groups: the data bound nothing on this side
        return -1.0, 1.0
    root = np.sqrt(max(half_b * half_b - a * c, 0.0))
    return (half_b - root) / a, (half_b + root) / a


def clustered_difference_interval(
    counts: ClusteredCounts, b: int, c: int, n: int, confidence: float = 0.95
) -> tuple[float, float]:
    """The interval of ``accuracy(A) − accuracy(B)`` with grouped examples: Tango's ∪ the cluster-robust one.

    Parameters
    ----------
    counts : ClusteredCounts
        Per-group sums of ``D`` (:func:`clustered_counts`).
    b, c, n : int
        The ordinary paired counts.
    confidence : float

    Returns
    -------
    (low, high) : tuple of float
    """
    low_t, high_t = difference_interval(b, c, n, confidence)
    low_r, high_r = _robust_interval(counts, confidence)
    return max(-1.0, min(float(low_t), low_r)), min(1.0, max(float(high_t), high_r))


def clustered_difference_pvalue(counts: ClusteredCounts, b: int, c: int) -> float:
    """Two-sided p of "equal accuracy" with grouped examples: the larger of McNemar's and Durkalski's.

    Durkalski's clustered McNemar statistic ``(Σ S_g)² / Σ S_g²`` is referred to χ²₁.
    The larger p-value belongs to the union interval: it is significant exactly when
    :func:`clustered_difference_interval` excludes 0.
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    return max(float(difference_pvalue(b, c)), float(stats.chi2.sf(_durkalski(counts), 1)))


def _durkalski(counts: ClusteredCounts) -> float:
    """Durkalski's clustered McNemar statistic ``(Σ S_g)² / Σ S_g²`` (0 when every ``S_g`` is 0)."""
    total, squares = float(counts.sums.sum()), float(np.sum(counts.sums**2))
    return total * total / squares if squares > 0.0 else 0.0


def proportion_interval(
    correct: int, n: int, confidence: float = 0.95, counts: ClusteredCounts | None = None
) -> tuple[float, float]:
    """One model's accuracy: Wilson's score interval, or with groups its union with the cluster-robust one.

    Examples
    --------
    >>> [round(x, 4) for x in proportion_interval(90, 100)]
    [0.8256, 0.9448]
    """
    z = _critical(confidence)
    p, z2 = correct / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    if counts is None:
        return float(low), float(high)
    low_r, high_r = _robust_interval(counts, confidence)
    return max(0.0, min(float(low), low_r)), min(1.0, max(float(high), high_r))


def examples_to_decide(
    b: int, c: int, n: int, margin: float, *, confidence: float = 0.95, power: float = 0.8, design_effect: float = 1.0
) -> int | None:
    """About how many examples would settle "is A worse than B by more than ``margin``?" if the rates hold.

    The gate compares the score interval's bounds with ``−margin``. With the observed rates
    ``b/n``, ``c/n`` taken as true, the score test at ``−margin`` reaches ``power`` at
    ``n = ((z σ₀ + z_power σ₁) / |Δ + margin|)²·deff`` (σ₀ from the constrained rate at the margin,
    σ₁ the per-example spread of ``D``, deff the observed design effect of grouped examples).
    Models that have not disagreed yet (``b = c = 0``) need ``z²(1 − margin)/margin`` examples
    without a disagreement. ``None`` when the observed gap sits on the margin.
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    gap = (b - c) / n
    distance = abs(gap + margin)
    if distance < 1e-12:
        return None
    z, z_power = _critical(confidence), float(stats.norm.ppf(power))
    p10, p01 = b / n, c / n
    sigma1 = np.sqrt(max(p10 + p01 - gap * gap, 0.0))
    tilde = float(_constrained_rate(np.float64(p10), np.float64(p01), np.float64(1.0), np.float64(-margin)))
    sigma0 = np.sqrt(max(2.0 * tilde - margin * (1.0 + margin), 0.0))
    needed = ((z * sigma0 + z_power * sigma1) / distance) ** 2 * max(design_effect, 1.0)
    return max(int(np.ceil(needed)), n + 1)


#: The rule of the test with groups (the union interval's test).
CLUSTERED_RULE = RULE + "; with groups, the larger p of it and Durkalski's clustered statistic"


@dataclass(frozen=True)
class PairedCorrectness:
    """Two models' correctness on the same examples, counted once: what every paired accuracy statistic reads.

    The one place that tells grouped from independent examples: without groups the score
    statistics of the counts, with groups their clustered forms (the functions above). The
    counts may be arrays (one comparison per cell, e.g. slices × pairs); :meth:`of` counts one.

    Attributes
    ----------
    b, c, n : ndarray of int64
        Examples only A got right, only B got right, and all examples.
    clusters : tuple of ClusteredCounts, optional
        With groups: each cell's per-group sums of ``D`` (cells in C order).

    Examples
    --------
    >>> a, b = np.array([1, 1, 1, 0, 1, 0], bool), np.array([1, 0, 0, 1, 1, 0], bool)
    >>> pc = PairedCorrectness.of(a, b)
    >>> int(pc.b), int(pc.c), int(pc.n), pc.test, pc.design_effect
    (2, 1, 6, 'mcnemar-score', 1.0)
    >>> PairedCorrectness.of(a, b, groups=np.array([0, 0, 1, 1, 2, 2])).method
    'tango-score+clusters'
    >>> PairedCorrectness.of(a, a | b).method           # only B is ever right alone: joined with the exact interval
    'tango-score+exact'
    """

    b: np.ndarray
    c: np.ndarray
    n: np.ndarray
    clusters: tuple[ClusteredCounts, ...] | None = None

    def __post_init__(self) -> None:
        for name, value in zip("bcn", np.broadcast_arrays(self.b, self.c, self.n), strict=True):
            object.__setattr__(self, name, np.asarray(value, dtype=np.int64))
        if self.clusters is not None and len(self.clusters) != self.b.size:
            raise ValueError(f"{len(self.clusters)} clustered counts for {self.b.size} comparisons")

    @classmethod
    def of(
        cls,
        correct_a: np.ndarray,
        correct_b: np.ndarray,
        groups: np.ndarray | None = None,
        rows: np.ndarray | None = None,
    ) -> PairedCorrectness:
        """Count one pair from its per-example correctness (on the examples ``rows`` when given)."""
        a, b, members = (
            x if x is None or rows is None else np.asarray(x)[rows] for x in (correct_a, correct_b, groups)
        )
        a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
        clusters = None if members is None else (clustered_counts(a.astype(np.int64) - b.astype(np.int64), members),)
        return cls(np.sum(a & ~b), np.sum(~a & b), np.int64(len(a)), clusters)

    @property
    def estimate(self) -> np.ndarray:
        """``(b − c)/n``: accuracy(A) − accuracy(B)."""
        return cast(np.ndarray, (self.b - self.c) / self.n)

    @property
    def n_groups(self) -> int | None:
        return None if self.clusters is None else len(self.clusters[0].sizes)

    @property
    def test(self) -> Literal["mcnemar-score", "mcnemar-clustered"]:
        return "mcnemar-score" if self.clusters is None else "mcnemar-clustered"

    @property
    def methods(self) -> np.ndarray:
        """How each cell's interval is made (array of str, the cells' shape): ``tango-score`` (Tango's alone),
        ``tango-score+exact`` where exactly one discordant count is 0 and Tango's is joined with the exact
        Clopper–Pearson interval of the other's share (:func:`difference_interval`), ``+clusters`` with groups."""
        clustered = "" if self.clusters is None else "+clusters"
        joined = (self.b == 0) != (self.c == 0)
        return np.where(joined, f"tango-score{clustered}+exact", f"tango-score{clustered}")

    @property
    def method(self) -> str:
        """How the interval of one comparison is made (:attr:`methods`; the counts must be one cell)."""
        if self.b.size != 1:
            raise ValueError(f"{self.b.size} comparisons: read each one's label from .methods")
        return str(self.methods.ravel()[0])

    @property
    def rule(self) -> str:
        """The test in words (:data:`~headtohead.stats.mcnemar.RULE`; with groups, its clustered form)."""
        return RULE if self.clusters is None else CLUSTERED_RULE

    def _cells(self) -> zip[tuple[ClusteredCounts, int, int, int]]:
        assert self.clusters is not None
        return zip(
            self.clusters, self.b.ravel().tolist(), self.c.ravel().tolist(), self.n.ravel().tolist(), strict=True
        )

    def interval(self, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """The interval of the gap: Tango's, with groups its union with the cluster-robust one."""
        if self.clusters is None:
            return difference_interval(self.b, self.c, self.n, confidence)
        bounds = np.array([clustered_difference_interval(k, b, c, n, confidence) for k, b, c, n in self._cells()])
        return bounds.reshape(-1, 2)[:, 0].reshape(self.b.shape), bounds.reshape(-1, 2)[:, 1].reshape(self.b.shape)

    @property
    def p_value(self) -> np.ndarray:
        """Two-sided p of "equal accuracy": McNemar's, with groups the larger of it and Durkalski's."""
        if self.clusters is None:
            return difference_pvalue(self.b, self.c)
        return np.array([clustered_difference_pvalue(k, b, c) for k, b, c, _ in self._cells()]).reshape(self.b.shape)

    @property
    def statistic(self) -> float:
        """One comparison's test statistic: McNemar's ``(b − c)²/(b + c)``, with groups Durkalski's."""
        if self.clusters is None:
            b, c = int(self.b), int(self.c)
            return (b - c) ** 2 / (b + c) if b + c else 0.0
        return _durkalski(self.clusters[0])

    @property
    def design_effect(self) -> float:
        """How much grouping widens one comparison's interval: its cluster-robust variance over the independent one (≥ 1).

        Examples
        --------
        >>> a, b = np.array([1, 1, 0, 0], bool), np.array([0, 0, 1, 1], bool)
        >>> PairedCorrectness.of(a, b, groups=np.array([0, 0, 1, 1])).design_effect
        2.0
        """
        if self.clusters is None:
            return 1.0
        b, c, n, counts = int(self.b), int(self.c), int(self.n), self.clusters[0]
        gap = (b - c) / n
        independent = n * ((b + c) / n - gap * gap)
        robust = float(np.sum((counts.sums - gap * counts.sizes) ** 2))
        return max(1.0, robust / independent) if independent > 0 else 1.0

    def examples_to_decide(self, margin: float, *, confidence: float = 0.95, power: float = 0.8) -> int | None:
        """One comparison's :func:`examples_to_decide`, with its design effect."""
        b, c, n, deff = int(self.b), int(self.c), int(self.n), self.design_effect
        return examples_to_decide(b, c, n, margin, confidence=confidence, power=power, design_effect=deff)
