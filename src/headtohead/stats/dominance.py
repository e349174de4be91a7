"""One decision across quality, speed and cost: which model dominates which, and the front with its uncertainty.

"A dominates B" when A is not worse in quality beyond the quality margin **and** faster **and** cheaper
(and, when asked, lighter in memory), each read off its own interval at ``1 − α`` (two-sided, so each
bound is a one-sided test at ``α/2``) and read together as an intersection–union test: every null must
fall, so "dominates" is wrong at most as often as its weakest part, with no correction. A model is **on
the front** when, against every other model, some axis decides it better (more accurate beyond the
margin, faster, cheaper); **dominated** when some model dominates it; **undecided** otherwise. Its
``p_front`` is the share of one joint resampling — examples (quality; per-token cost), rounds (speed;
throughput-priced cost), requests (an endpoint's latency) — in which no model is at least as good on
every axis and better on one. ``docs/statistics.md`` §17.

A model measured several ways (run k times, ``repeats:``, or asked with several prompts) is decided on its
mean accuracy over its passes, as the verdict pools it: a pair with such a model reads its quality gap on
the two-level interval (examples, then passes within examples: ``stats.repeat_pool.two_level_gap``), and
the joint resampling draws its passes too.

Pure NumPy/SciPy; no torch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

import numpy as np

from headtohead.stats.intervals import wilson_interval
from headtohead.stats.paired import PairedCorrectness
from headtohead.stats.repeat_pool import two_level_gap
from headtohead.stats.speed import paired_speed_ratio, round_log_ratios

__all__ = [
    "AXES",
    "Axis",
    "Measured",
    "Ratio",
    "PairDecision",
    "FrontLabel",
    "Decision",
    "ratio_interval",
    "axis_interval",
    "decide",
    "front_probabilities",
    "pareto_mask",
    "quality_interval",
    "TWO_LEVEL",
]

#: The axes of a decision, in order; every axis but quality is lower-is-better and compared as a ratio.
AXES = ("quality", "latency", "cost", "memory")
Axis = Literal["quality", "latency", "cost", "memory"]


@dataclass(frozen=True)
class Measured:
    """One model's measurement on one lower-is-better axis (latency, cost, memory).

    Exactly one of the three forms:

    * ``rounds``: per-round raw calls (``ScenarioTiming.rounds_ns``), paired by round with every other
      model timed in the same rounds, divided by ``per_call`` (a batch size; a price factor for cost
      is ``scale``); the estimate is ``scale · exp(mean log round median / per_call)``;
    * ``sample``: independent observations whose mean is the estimate (an endpoint's per-request
      latencies, per-example costs);
    * ``exact``: a value known without sampling noise at this resolution (peak memory; an endpoint's
      mean price per prediction where per-example costs were not kept).
    """

    rounds: tuple[tuple[float, ...], ...] | None = None
    inputs: int = 1
    per_call: float = 1.0
    scale: float = 1.0
    sample: np.ndarray | None = None
    exact: float | None = None

    def __post_init__(self) -> None:
        given = sum(x is not None for x in (self.rounds, self.sample, self.exact))
        if given != 1:
            raise ValueError("a measurement is rounds, a sample or an exact value: give exactly one")

    @property
    def log_rounds(self) -> np.ndarray:
        """Each round's log value (log of the round's median over ``per_call``, times ``scale``)."""
        assert self.rounds is not None
        medians = np.array([np.median(np.asarray(r, dtype=np.float64)) for r in self.rounds])
        return np.log(medians / self.per_call * self.scale)

    @property
    def estimate(self) -> float:
        """The axis value: per-prediction time in the rounds' unit, the sample's mean, or the exact value."""
        if self.rounds is not None:
            return float(np.exp(self.log_rounds.mean()))
        if self.sample is not None:
            return float(np.mean(self.sample))
        assert self.exact is not None
        return float(self.exact)

    @property
    def degrees_of_freedom(self) -> float:
        """The degrees of freedom of :meth:`log_variance`: rounds − 1, sample size − 1, or infinite when exact."""
        if self.rounds is not None:
            return float(len(self.rounds) - 1)
        if self.sample is not None:
            return float(len(self.sample) - 1)
        return math.inf

    def log_variance(self) -> float:
        """The variance of the log estimate (delta method for a sample; 0 when exact)."""
        if self.rounds is not None:
            x = self.log_rounds
            return float(x.var(ddof=1) / len(x)) if len(x) > 1 else math.inf
        if self.sample is not None:
            s = np.asarray(self.sample, dtype=np.float64)
            mean = s.mean()
            return float(s.var(ddof=1) / len(s) / mean**2) if len(s) > 1 and mean > 0 else math.inf
        return 0.0


@dataclass(frozen=True)
class Ratio:
    """``value(A) / value(B)`` on a lower-is-better axis, with its interval at ``confidence``."""

    ratio: float
    low: float
    high: float
    method: str

    @property
    def a_lower(self) -> bool:
        """A is decided lower (faster, cheaper, lighter): the whole interval below 1."""
        return self.high < 1.0

    @property
    def b_lower(self) -> bool:
        return self.low > 1.0


def ratio_interval(a: Measured, b: Measured, *, confidence: float, anytime: bool = False) -> Ratio:
    """The interval of ``a / b``: paired over rounds when both were timed in the same rounds, else unpaired.

    Parameters
    ----------
    a, b : Measured
    confidence : float
        Two-sided level (``1 − α``).
    anytime : bool
        The rounds stopped on the data (``speed.precision``): the confidence sequence, as the speed verdicts.

    Returns
    -------
    Ratio
        Paired rounds: the speed engine's per-round log ratios (``stats.speed.round_log_ratios``, paired by
        input) with its t interval or confidence sequence, times the two scales' ratio. Otherwise a Welch
        interval on ``log a − log b``: the two log variances added (delta method; exact values add none), the t
        quantile at Satterthwaite's degrees of freedom (two exact values give a point: decided whenever they
        differ).

    Examples
    --------
    >>> r = ratio_interval(Measured(exact=100.0), Measured(exact=200.0), confidence=0.95)
    >>> round(r.ratio, 6), r.a_lower
    (0.5, True)
    """
    if a.rounds is not None and b.rounds is not None and len(a.rounds) == len(b.rounds) and len(a.rounds) >= 2:
        logs = round_log_ratios(a.rounds, b.rounds, inputs=min(a.inputs, b.inputs))
        logs = logs + math.log(a.scale / a.per_call * b.per_call / b.scale)
        found = paired_speed_ratio(logs, confidence=confidence, method="anytime" if anytime else "t")
        return Ratio(found.ratio, found.low, found.high, "anytime" if anytime else "t")
    from scipy import special

    centre = math.log(a.estimate) - math.log(b.estimate)
    parts = [(m.log_variance(), m.degrees_of_freedom) for m in (a, b)]
    variance = sum(v for v, _ in parts)
    if variance == 0.0:
        value = math.exp(centre)
        return Ratio(value, value, value, "exact")
    # Welch–Satterthwaite: a few rounds' variance is known to few degrees of freedom (a sample's to many)
    df = variance**2 / sum(v**2 / d for v, d in parts if v > 0)
    quantile = (
        float(special.stdtrit(df, 0.5 + confidence / 2))
        if math.isfinite(df)
        else float(special.ndtri(0.5 + confidence / 2))
    )
    half = quantile * math.sqrt(variance)
    return Ratio(math.exp(centre), math.exp(centre - half), math.exp(centre + half), "welch")


def axis_interval(m: Measured, confidence: float) -> tuple[float, float | None, float | None]:
    """One model's value on a lower-is-better axis with its interval (``None`` bounds: known exactly).

    Rounds: the t interval of the mean per-round log value; a sample: a normal interval on the log of its mean
    (delta method); an exact value: no interval.

    Examples
    --------
    >>> axis_interval(Measured(exact=3.0), 0.95)
    (3.0, None, None)
    """
    from scipy import special

    if m.exact is not None:
        return float(m.exact), None, None
    centre, variance = math.log(m.estimate), m.log_variance()
    if m.rounds is not None:
        n = len(m.rounds)
        quantile = float(special.stdtrit(n - 1, 0.5 + confidence / 2)) if n > 1 else math.inf
    else:
        quantile = float(special.ndtri(0.5 + confidence / 2))
    half = quantile * math.sqrt(variance) if math.isfinite(variance) else math.inf
    return m.estimate, math.exp(centre - half), math.exp(centre + half)


@dataclass(frozen=True)
class PairDecision:
    """Whether ``a`` dominates ``b``, axis by axis.

    Attributes
    ----------
    quality_gap : tuple of float
        ``accuracy(a) − accuracy(b)`` and its interval at ``1 − α`` (Tango's, ``stats.paired``).
    ratios : mapping of axis to Ratio
        ``value(a) / value(b)`` on each lower-is-better axis decided.
    holds : mapping of axis to bool
        Each part of "a dominates b": quality not worse beyond the margin (lower bound above −margin), each
        ratio's whole interval below 1.
    """

    a: str
    b: str
    quality_gap: tuple[float, float, float]
    margin: float
    ratios: Mapping[str, Ratio]
    holds: Mapping[str, bool]
    quality_method: str = "tango-score"

    @property
    def dominates(self) -> bool:
        """Every part holds (the intersection–union test)."""
        return all(self.holds.values())

    @property
    def open_axes(self) -> list[str]:
        """The axes that keep "a dominates b" open, in :data:`AXES` order."""
        return [axis for axis in AXES if axis in self.holds and not self.holds[axis]]

    def b_protected(self) -> bool:
        """Some axis decides ``b`` better than ``a``: more accurate beyond the margin, or lower on a ratio."""
        _, low, high = self.quality_gap
        return high < -self.margin or any(r.b_lower for r in self.ratios.values())


FrontLabel = Literal["front", "dominated", "undecided"]


@dataclass(frozen=True)
class Decision:
    """The decision over every model: each ordered pair, each model's label and ``p_front``."""

    axes: tuple[str, ...]
    pairs: tuple[PairDecision, ...]
    labels: Mapping[str, FrontLabel]
    dominated_by: Mapping[str, tuple[str, ...]]
    p_front: Mapping[str, float]
    resamples: int
    alpha: float
    margin: float
    estimates: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


def _pair(
    a: str,
    b: str,
    correct: Mapping[str, np.ndarray],
    measured: Mapping[str, Mapping[str, Measured]],
    axes: Sequence[str],
    *,
    alpha: float,
    margin: float,
    groups: np.ndarray | None,
    anytime: Mapping[str, bool],
) -> PairDecision:
    if _passes(correct[a]) > 1 or _passes(correct[b]) > 1:  # over every pass: examples, then passes within them
        pooled = two_level_gap(correct[a], correct[b], groups, 1.0 - alpha)
        gap, method = (pooled.estimate, pooled.low, pooled.high), TWO_LEVEL
    else:
        counts = PairedCorrectness.of(np.ravel(correct[a]), np.ravel(correct[b]), groups)
        low, high = (float(x) for x in counts.interval(1.0 - alpha))
        gap, method = (float(counts.estimate), low, high), counts.method
    ratios = {
        axis: ratio_interval(
            measured[axis][a], measured[axis][b], confidence=1.0 - alpha, anytime=anytime.get(axis, False)
        )
        for axis in axes
        if axis != "quality"
    }
    holds = {"quality": gap[1] > -margin} if "quality" in axes else {}
    holds.update({axis: r.a_lower for axis, r in ratios.items()})
    return PairDecision(a, b, gap, margin, ratios, holds, method)


#: How a quality gap with a model measured several ways is read (``PairDecision.quality_method``).
TWO_LEVEL = "two-level t over passes"


def _passes(correct: np.ndarray) -> int:
    """How many passes a correctness array holds: its rows, or 1 for a model measured once (shape (n,))."""
    return 1 if np.ndim(correct) == 1 else int(np.shape(correct)[0])


def quality_interval(correct: np.ndarray, confidence: float, groups: np.ndarray | None = None) -> tuple[float, ...]:
    """A model's accuracy (its mean over its passes) and its interval at ``confidence``.

    Measured once: Wilson's interval; several passes: the two-level t interval (examples, then passes within
    examples), the gap to a model never right, bounded by 0 and 1.

    Examples
    --------
    >>> [round(x, 4) for x in quality_interval(np.arange(100) < 90, 0.95)]
    [0.9, 0.8256, 0.9448]
    """
    c = np.asarray(correct, dtype=bool)
    if _passes(c) == 1:
        right = np.ravel(c)
        low, high = wilson_interval(int(right.sum()), len(right), confidence)
        return float(right.mean()), float(low), float(high)
    pooled = two_level_gap(c, np.zeros((1, c.shape[1]), dtype=bool), groups, confidence)
    return pooled.estimate, max(0.0, pooled.low), min(1.0, pooled.high)


def decide(
    correct: Mapping[str, np.ndarray],
    measured: Mapping[str, Mapping[str, Measured]],
    *,
    alpha: float = 0.05,
    margin: float = 0.01,
    groups: np.ndarray | None = None,
    anytime: Mapping[str, bool] | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> Decision:
    """Every ordered pair's dominance, each model's label on the front and its ``p_front``.

    Parameters
    ----------
    correct : mapping of str to ndarray of bool
        Each model's per-example correctness, in one order (the run's models, in order): shape ``(n,)``, or
        ``(passes, n)`` for a model measured several ways (decided on its mean over them).
    measured : mapping of axis to mapping of str to Measured
        Each lower-is-better axis decided (``latency``, ``cost``, ``memory``), every model's measurement on it.
        An axis not measured for every model is left out by the caller.
    alpha : float
        Each part's level: its two-sided interval at ``1 − alpha``.
    margin : float
        The quality margin, a share (``0.01``: 1 pp).
    groups : ndarray, optional
        Groups of related examples (the paired interval is then clustered; the resampling draws whole groups).
    anytime : mapping of axis to bool, optional
        The axes whose rounds stopped on the data: read on the confidence sequence.
    resamples, seed : int
        The joint resampling of ``p_front``.

    Returns
    -------
    Decision
    """
    names = list(correct)
    axes = ("quality", *[axis for axis in AXES[1:] if axis in measured])
    pairs = tuple(
        _pair(a, b, correct, measured, axes, alpha=alpha, margin=margin, groups=groups, anytime=anytime or {})
        for a in names
        for b in names
        if a != b
    )
    by_pair = {(p.a, p.b): p for p in pairs}
    dominated_by = {m: tuple(x for x in names if x != m and by_pair[(x, m)].dominates) for m in names}
    labels: dict[str, FrontLabel] = {}
    for m in names:
        if dominated_by[m]:
            labels[m] = "dominated"
        elif all(by_pair[(x, m)].b_protected() for x in names if x != m):
            labels[m] = "front"
        else:
            labels[m] = "undecided"
    p_front = front_probabilities(correct, measured, resamples=resamples, seed=seed, groups=groups)
    estimates = {
        m: {"quality": float(np.mean(correct[m])), **{axis: measured[axis][m].estimate for axis in axes[1:]}}
        for m in names
    }
    return Decision(axes, pairs, labels, dominated_by, p_front, resamples, alpha, margin, estimates)


def pareto_mask(values: np.ndarray) -> np.ndarray:
    """Which points no other point matches on every axis and beats on one (higher is better on every axis).

    Parameters
    ----------
    values : ndarray of shape (..., k, d)
        ``k`` points of ``d`` axes, for any number of leading (resample) axes.

    Returns
    -------
    ndarray of bool, shape (..., k)

    Examples
    --------
    >>> pareto_mask(np.array([[0.9, -1.0], [0.8, -3.0], [0.93, -6.0]])).tolist()
    [True, False, True]
    """
    x = values[..., :, None, :]  # the point judged
    y = values[..., None, :, :]  # every other point
    dominated = np.all(y >= x, axis=-1) & np.any(y > x, axis=-1)
    return cast(np.ndarray, ~np.any(dominated, axis=-1))


def _resampled_axis(m: Measured, rng: np.random.Generator, rows: np.ndarray | None, draws: int) -> np.ndarray:
    """``draws`` resampled log values of one model's measurement (``rows``: the shared round draws)."""
    if m.rounds is not None:
        assert rows is not None
        return cast(np.ndarray, m.log_rounds[rows].mean(axis=-1))
    if m.sample is not None:
        s = np.asarray(m.sample, dtype=np.float64)
        picked = rng.integers(0, len(s), (draws, len(s)))
        return cast(np.ndarray, np.log(np.maximum(s[picked].mean(axis=-1), 1e-300)))
    assert m.exact is not None
    return np.full(draws, math.log(m.exact))


def front_probabilities(
    correct: Mapping[str, np.ndarray],
    measured: Mapping[str, Mapping[str, Measured]],
    *,
    resamples: int = 1000,
    seed: int = 0,
    groups: np.ndarray | None = None,
) -> dict[str, float]:
    """Each model's share of joint resamples in which it is on the Pareto front.

    One draw resamples the examples — whole groups where the data has them (``groups``) — the same for every
    model (quality is paired), the passes of a model measured several ways (its own draw: a pass's accuracy
    moves as a whole), the rounds (the same round indices for every model timed in them: the rounds are
    paired) and each independent sample (its own draw), and puts every model's axis values in the draw on one
    front.

    Examples
    --------
    >>> correct = {"a": np.arange(100) < 90, "b": np.arange(100) < 85}
    >>> lat = {"a": Measured(exact=1.0), "b": Measured(exact=3.0)}
    >>> front_probabilities(correct, {"latency": lat}, resamples=200)
    {'a': 1.0, 'b': 0.0}
    """
    names = list(correct)
    rng = np.random.default_rng(seed)
    passes = {m: np.atleast_2d(np.asarray(correct[m], dtype=np.float64)) for m in names}  # (passes, n) each
    n = next(iter(passes.values())).shape[1]
    units = np.arange(n) if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1]
    sizes = np.bincount(units).astype(np.float64)  # (G,)
    draws = rng.multinomial(len(sizes), np.full(len(sizes), 1.0 / len(sizes)), size=resamples)  # (B, G)
    accuracy = []
    for m in names:  # whole numbers summed: exact, so equal counts give equal accuracies (ties stay ties)
        sums = np.stack([np.bincount(units, weights=row, minlength=len(sizes)) for row in passes[m]])  # (passes, G)
        per_pass = (draws @ sums.T) / (draws @ sizes)[:, None]  # (B, passes): each draw's accuracy, paired
        if per_pass.shape[1] > 1:  # the passes drawn too, with replacement
            picked = rng.integers(0, per_pass.shape[1], per_pass.shape)
            per_pass = np.take_along_axis(per_pass, picked, axis=1)
        accuracy.append(per_pass.mean(axis=1))
    columns = [np.stack(accuracy, axis=1)]  # (B, k)
    for axis in AXES[1:]:
        if axis not in measured:
            continue
        lengths = {len(measured[axis][m].rounds or ()) for m in names if measured[axis][m].rounds is not None}
        rows = {length: rng.integers(0, length, (resamples, length)) for length in lengths}
        logs = [
            _resampled_axis(
                measured[axis][m],
                rng,
                rows.get(len(measured[axis][m].rounds or ())),
                resamples,
            )
            for m in names
        ]
        columns.append(-np.stack(logs, axis=1))  # lower is better: negated
    values = np.stack(columns, axis=-1)  # (B, k, d)
    on = pareto_mask(values).mean(axis=0)
    return {m: float(p) for m, p in zip(names, on, strict=True)}
