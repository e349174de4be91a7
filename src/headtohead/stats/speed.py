"""Statistics of speed measurements: the paired A/B speed ratio (latency summaries: :mod:`headtohead.results.latency`).

See ``docs/statistics.md`` §3.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from headtohead.stats.speed_sequence import confidence_sequence

__all__ = [
    "SpeedRatio",
    "speed_ratio",
    "paired_speed_ratio",
    "round_log_ratios",
    "log_ratio_t_test",
    "Trend",
    "trend_test",
    "round_medians",
    "latency_summary",
    "tukey_fences",
    "count_outliers",
    "iqr_over_median",
]

# A record summarises its own raw latencies (results.latency); re-exported here beside the ratios.
from headtohead.results.latency import (  # noqa: E402
    count_outliers,
    iqr_over_median,
    latency_summary,
    tukey_fences,
)


@dataclass(frozen=True)
class SpeedRatio:
    """How much faster model B ran than model A, with a confidence interval.

    Attributes
    ----------
    ratio : float
        ``time_a / time_b``: above 1 B is faster, below 1 A is faster.
    low, high : float
        The confidence interval of ``ratio``.
    confidence : float
        Its level (``0.95``).
    n_rounds : int
        Number of paired rounds it rests on.
    p_value : float
        Two-sided p-value of the one-sample t test of the mean log ratio against 0 (no
        difference): the test the t interval inverts, so ``p_value ≤ 1 − confidence`` exactly
        when the t interval excludes 1. Not adjusted for other comparisons.
    """

    ratio: float
    low: float
    high: float
    confidence: float
    n_rounds: int
    p_value: float

    @property
    def faster(self) -> Literal["a", "b"] | None:
        """``"b"`` when the whole interval lies above 1, ``"a"`` below 1, else ``None``."""
        if self.low > 1.0:
            return "b"
        if self.high < 1.0:
            return "a"
        return None

    @property
    def halfwidth(self) -> float:
        """The interval's larger relative distance from ``ratio`` (``0.02`` means ±2 %)."""
        return float(max(self.high / self.ratio - 1.0, 1.0 - self.low / self.ratio))


def round_medians(rounds: Sequence[Sequence[float]]) -> np.ndarray:
    """The median latency of each round (robust to a single interrupted iteration).

    Examples
    --------
    >>> round_medians([[1, 2, 30], [2, 2, 3]])
    array([2., 2.])
    """
    if any(len(r) == 0 for r in rounds):
        raise ValueError("every round needs at least one latency")
    return np.array([np.median(np.asarray(r, dtype=np.float64)) for r in rounds])


def _check_latencies(*latencies: np.ndarray) -> None:
    if not all(np.all(x > 0) and np.all(np.isfinite(x)) for x in latencies):
        raise ValueError("latencies must be positive and finite")


def round_log_ratios(
    rounds_a: Sequence[Sequence[float]], rounds_b: Sequence[Sequence[float]], inputs: int = 1
) -> np.ndarray:
    """Each round's ``log(time A / time B)``, paired by input: the median over the timed inputs of each input's log ratio.

    In a round both models run whole passes over the same ``inputs`` timed inputs (call ``j``
    ran input ``j mod inputs``). Each input's latency in the round (the median of its calls
    there) is divided by the other model's on the same input, and the round's log ratio is the
    median of those. Inputs of different lengths then cancel input by input: a round's median
    latency alone jumps between a short and a long input as calls jitter around it, and on a
    shared machine that jump, not the models, set how many rounds a ratio took to be known
    (``docs/statistics.md`` §3). With one input (an offline batch) it is
    ``log(median A / median B)`` of the round; rounds that are not whole passes are read that
    way too.

    Parameters
    ----------
    rounds_a, rounds_b : sequence of sequence of float
        Each model's latencies, per round (``ScenarioTiming.rounds_ns``), paired by round.
    inputs : int
        Distinct timed inputs cycled in every round (``ScenarioTiming.inputs``).

    Returns
    -------
    ndarray of shape (n_rounds,)

    Examples
    --------
    >>> # input 0 is short, input 1 long; B takes 2× A's time on each, whatever the jitter
    >>> a = [[1.0, 10.0, 1.1, 10.4], [1.2, 9.0, 1.0, 9.1]]
    >>> b = [[2.0, 20.0, 2.2, 20.8], [2.4, 18.0, 2.0, 18.2]]
    >>> np.exp(round_log_ratios(a, b, inputs=2)).round(3).tolist()
    [0.5, 0.5]
    """
    if len(rounds_a) != len(rounds_b):
        raise ValueError(f"paired rounds needed: got {len(rounds_a)} and {len(rounds_b)}")
    if inputs < 1:
        raise ValueError(f"inputs must be at least 1, not {inputs}")
    out = np.empty(len(rounds_a))
    for r, (ra, rb) in enumerate(zip(rounds_a, rounds_b, strict=True)):
        a, b = np.asarray(ra, dtype=np.float64), np.asarray(rb, dtype=np.float64)
        if a.size == 0 or b.size == 0:
            raise ValueError("every round needs at least one latency")
        _check_latencies(a, b)
        if inputs > 1 and a.size % inputs == 0 and b.size % inputs == 0:
            per_a = np.median(a.reshape(-1, inputs), axis=0)
            per_b = np.median(b.reshape(-1, inputs), axis=0)
            out[r] = np.median(np.log(per_a) - np.log(per_b))
        else:
            out[r] = math.log(np.median(a)) - math.log(np.median(b))
    return out


def speed_ratio(
    time_a: Sequence[float] | np.ndarray,
    time_b: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    method: Literal["t", "bootstrap", "anytime"] = "t",
) -> SpeedRatio:
    """The paired speed ratio ``time_a / time_b`` over rounds, with a confidence interval.

    Parameters
    ----------
    time_a, time_b : array-like of shape (n_rounds,)
        One representative latency per round for each model (e.g. :func:`round_medians`),
        paired by round.
    confidence : float
        Level of the interval.
    n_resamples, seed : int
        Resamples and seed of ``method="bootstrap"``; the t interval uses neither.
    method : {"t", "bootstrap", "anytime"}
        ``t`` (default): Student t interval on the mean per-round log ratio, which keeps
        its level from 2 rounds on (see the module docstring) when the number of rounds was fixed
        in advance. ``anytime``: the confidence sequence of
        :func:`headtohead.stats.speed_sequence.confidence_sequence`, which keeps its level at a
        round chosen by looking at the data (the speed engine's stopping rule), with its
        anytime-valid p-value. ``bootstrap``: the expanded percentile bootstrap used before,
        anti-conservative below ~10 rounds.

    Returns
    -------
    SpeedRatio
        With the p-value of the t test (``t``, ``bootstrap``) or the anytime-valid one (``anytime``).

    Raises
    ------
    ValueError
        Fewer than two rounds, unequal lengths, non-positive times, or an unknown method.

    Examples
    --------
    >>> r = speed_ratio([2.0, 2.1, 1.9, 2.0], [1.0, 1.0, 1.0, 1.0])
    >>> round(r.ratio, 2), r.faster, round(r.low, 2), round(r.high, 2), r.p_value < 0.001
    (2.0, 'b', 1.87, 2.13, True)
    """
    a = np.asarray(time_a, dtype=np.float64)
    b = np.asarray(time_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired rounds needed: got shapes {a.shape} and {b.shape}")
    _check_latencies(a, b)
    return paired_speed_ratio(
        np.log(a) - np.log(b), confidence=confidence, n_resamples=n_resamples, seed=seed, method=method
    )


def paired_speed_ratio(
    log_ratio: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    method: Literal["t", "bootstrap", "anytime"] = "t",
) -> SpeedRatio:
    """:func:`speed_ratio` from each round's log ratio (e.g. :func:`round_log_ratios`).

    Parameters
    ----------
    log_ratio : array-like of shape (n_rounds,)
        ``log(time A / time B)`` of each round.
    confidence, n_resamples, seed, method
        As in :func:`speed_ratio`.

    Returns
    -------
    SpeedRatio

    Examples
    --------
    >>> r = paired_speed_ratio(np.log([2.0, 2.1, 1.9, 2.0]))
    >>> round(r.ratio, 2), r.faster
    (2.0, 'b')
    """
    log_ratio = np.asarray(log_ratio, dtype=np.float64)
    if log_ratio.ndim != 1:
        raise ValueError(f"one log ratio per round needed, got shape {log_ratio.shape}")
    if len(log_ratio) < 2:
        raise ValueError(f"a speed ratio needs at least 2 rounds, got {len(log_ratio)}")
    if not np.all(np.isfinite(log_ratio)):
        raise ValueError("latencies must be positive and finite")
    if method not in ("t", "bootstrap", "anytime"):
        raise ValueError(f"method must be 't', 'bootstrap' or 'anytime', not {method!r}")
    test = confidence_sequence if method == "anytime" else log_ratio_t_test
    centre, half, p_value = (float(x) for x in test(log_ratio, confidence))
    if method != "bootstrap" or half == 0.0:  # identical rounds: no spread to estimate, a point interval
        low, high = centre - half, centre + half
    else:
        low, high = _bootstrap_mean_ci(log_ratio, confidence, n_resamples, seed)
    return SpeedRatio(
        float(np.exp(centre)), float(np.exp(low)), float(np.exp(high)), confidence, len(log_ratio), p_value
    )


def log_ratio_t_test(log_ratios: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The t interval and t test of the mean per-round log ratio, for one benchmark or many at once.

    Parameters
    ----------
    log_ratios : ndarray of shape (..., n_rounds)
        ``log(time_a / time_b)`` per round; the last axis holds the rounds (``n_rounds ≥ 2``).
    confidence : float
        Level of the interval.

    Returns
    -------
    centre, half, p_value : ndarray of shape (...)
        The mean log ratio, the half-width of its Student t interval (``t_{n−1} · s / √n``; the
        interval is ``centre ± half`` on the log scale) and the two-sided p-value of the t test
        of ``mean = 0``. They agree: ``p_value ≤ 1 − confidence`` exactly when ``|centre| >
        half``. Rounds that are all equal give ``half = 0`` and ``p_value`` 0 (or 1 when the
        mean is 0).

    Examples
    --------
    >>> centre, half, p = log_ratio_t_test(np.log([[2.0, 2.1, 1.9, 2.0], [1.0, 1.1, 0.9, 1.0]]))
    >>> (p < 0.05).tolist(), (np.abs(centre) > half).tolist()
    ([True, False], [True, False])
    """
    from scipy import special  # here, so reading result records does not import SciPy

    x = np.asarray(log_ratios, dtype=np.float64)
    n = x.shape[-1]
    centre = x.mean(axis=-1)
    sd = x.std(axis=-1, ddof=1)
    flat = np.ptp(x, axis=-1) == 0.0
    se = np.where(flat, 0.0, sd) / np.sqrt(n)
    # stdtrit is the t quantile (scipy.stats.t.ppf) without the distribution-object overhead
    half = special.stdtrit(n - 1, 0.5 + confidence / 2) * se
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(
            flat,
            np.where(centre == 0.0, 1.0, 0.0),
            2.0 * special.stdtr(n - 1, -np.abs(centre) / np.where(flat, 1.0, se)),
        )
    return centre, half, p


@dataclass(frozen=True)
class Trend:
    """A straight-line trend across rounds of a log-scale series (one benchmark, or many at once).

    Attributes
    ----------
    change : float or ndarray
        The fitted line's change from the first round to the last, as a factor minus one
        (``0.12``: the series ends 12 % above where it started; ``exp(slope · (n − 1)) − 1``).
    p_value : float or ndarray
        Two-sided p-value of the t test of ``slope = 0`` (ordinary least squares; NaN when
        there are too few rounds for a residual degree of freedom).
    """

    change: float | np.ndarray
    p_value: float | np.ndarray


def trend_test(
    log_values: Sequence[float] | np.ndarray, covariate: Sequence[float] | np.ndarray | None = None
) -> Trend:
    """Is there a linear trend across rounds? OLS of the values on the round index, t test of its slope.

    Used for drift: of the per-round log ratio of two models (the ratio a run reports changed
    while it ran), and of the machine's level (the round medians' logs). The test is exact
    when the rounds' deviations from the line are independent and normal, which a steady
    machine gives (the log of a median of many calls is close to normal); a random walk of
    the machine's level is not steady, and the test then finds a trend in it, as it should.

    Parameters
    ----------
    log_values : array-like of shape (..., n_rounds)
        Log-scale values per round, rounds on the last axis.
    covariate : array-like of shape (n_rounds,), optional
        A nuisance regressor fitted beside the trend, e.g. ``+1``/``−1`` for which of the two
        models ran first in each round, so that a steady order effect is not read as drift.
        Dropped when it is constant or collinear with the round index.

    Returns
    -------
    Trend
        Floats for one series, arrays of shape ``(...)`` for many.

    Examples
    --------
    >>> t = trend_test(np.log([1.00, 1.02, 1.05, 1.06, 1.09, 1.10, 1.13, 1.15]))
    >>> round(float(t.change), 2), bool(t.p_value < 0.001)
    (0.15, True)
    >>> bool(trend_test(np.log([1.0, 1.02, 0.99, 1.01, 1.0, 0.98, 1.01, 1.0])).p_value > 0.5)
    True
    """
    from scipy import special  # here, so reading result records does not import SciPy

    y = np.asarray(log_values, dtype=np.float64)
    n = y.shape[-1]
    x = np.arange(n, dtype=np.float64)
    columns = [np.ones(n), x - x.mean()]
    if covariate is not None:
        extra = np.asarray(covariate, dtype=np.float64)
        if np.linalg.matrix_rank(np.column_stack([*columns, extra])) == 3:
            columns.append(extra)
    design = np.column_stack(columns)
    df = n - design.shape[1]
    coef = y @ np.linalg.pinv(design).T  # (..., k)
    residual = y - coef @ design.T
    slope = coef[..., 1]
    unscaled = float(np.linalg.inv(design.T @ design)[1, 1])
    change = np.expm1(slope * (n - 1))
    if df < 1:
        p = np.full(slope.shape, np.nan)
    else:
        se = np.sqrt(np.sum(residual**2, axis=-1) / df * unscaled)
        scale = np.abs(y).max(axis=-1, initial=1.0) * 1e-12  # exact fits (e.g. equal rounds) have se ≈ 0
        exact = se <= scale
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(
                exact,
                np.where(np.abs(slope) * n <= scale, 1.0, 0.0),
                2.0 * special.stdtr(df, -np.abs(slope) / np.where(exact, 1.0, se)),
            )
    if np.ndim(p) == 0:
        return Trend(float(change), float(p))
    return Trend(change, p)


def _bootstrap_mean_ci(values: np.ndarray, confidence: float, n_resamples: int, seed: int) -> tuple[float, float]:
    # The expanded percentile interval (Hesterberg 2015) widens the level by the t/normal
    # small-sample factor; it still calls identical models different ~7-8 % of the time at
    # 5 rounds (benchmarks/speed_aa.py), hence no longer the default.
    from scipy import stats as _scipy_stats  # here, so reading result records does not import SciPy

    n = len(values)
    t_quantile = _scipy_stats.t.ppf(0.5 + confidence / 2, n - 1)
    expanded = float(1.0 - 2.0 * _scipy_stats.norm.sf(np.sqrt(n / (n - 1)) * t_quantile))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning: handled by the finiteness check below
        result = _scipy_stats.bootstrap(
            (values,),
            np.mean,
            confidence_level=min(expanded, 1.0 - 1e-12),
            n_resamples=n_resamples,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(seed),
        )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError("the bootstrap interval of the speed ratio could not be computed")
    return low, high
