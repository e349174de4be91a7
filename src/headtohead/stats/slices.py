"""Where do two models differ? Accuracy per slice of the data, with paired tests adjusted over slices.

See ``docs/statistics.md`` §5.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from headtohead.results.comparison import ContingencyTable, Estimate
from headtohead.results.slices import SliceAccuracy, SliceKind, SlicePair, SliceResult, SliceSummary
from headtohead.stats.intervals import proportion_estimate
from headtohead.stats.multiple import holm_adjust
from headtohead.stats.paired import ClusteredCounts, IntervalMethod, PairedCorrectness, clustered_counts

__all__ = [
    "SliceSpec",
    "class_slices",
    "size_slices",
    "column_slices",
    "compare_slices",
    "significant_slices",
    "MISSING",
    "MAX_CATEGORIES",
]

#: Label of the examples whose slice-column value is missing.
MISSING = "(missing)"
#: Values of a categorical column shown as slices of their own; rarer values are pooled.
MAX_CATEGORIES = 20


@dataclass(frozen=True)
class SliceSpec:
    """Which examples form a slice, and how to name it (the fields of :class:`SliceResult`)."""

    kind: SliceKind
    label: str
    mask: np.ndarray
    column: str | None = None
    value: str | None = None
    lower: float | None = None
    upper: float | None = None
    unit: str | None = None


def class_slices(y_true: np.ndarray, label_names: Sequence[str]) -> list[SliceSpec]:
    """One slice per true class that has examples.

    Examples
    --------
    >>> [s.label for s in class_slices(np.array([0, 1, 1]), ["neg", "pos"])]
    ['neg', 'pos']
    """
    y = np.asarray(y_true)
    return [
        SliceSpec("class", str(name), y == k, value=str(name)) for k, name in enumerate(label_names) if np.any(y == k)
    ]


def size_slices(sizes: np.ndarray, unit: str, n_bins: int = 4) -> list[SliceSpec]:
    """Quantile bins of input size (quartiles by default).

    Edges are observed values (``numpy.quantile(method="inverted_cdf")``), so a bin holds
    every example whose size lies between its smallest and largest member; ties never
    straddle two bins, which is why bins can differ in size and be fewer than ``n_bins``.

    Parameters
    ----------
    sizes : ndarray of shape (n,)
    unit : str
        ``words``, ``characters``, ``pixels`` …, kept on the records for the report.
    n_bins : int

    Examples
    --------
    >>> [s.label for s in size_slices(np.arange(1, 9), "words", 4)]
    ['1–2 words', '3–4 words', '5–6 words', '7–8 words']
    """
    return [
        SliceSpec("size", f"{_range(lo, hi)} {unit}", mask, lower=lo, upper=hi, unit=unit)
        for mask, lo, hi in _quantile_bins(np.asarray(sizes, dtype=np.float64), n_bins)
    ]


def column_slices(
    name: str, values: Sequence[object], *, max_categories: int = MAX_CATEGORIES, n_bins: int = 4
) -> list[SliceSpec]:
    """Slices by an extra column: one per value, or quantile bins for a numeric column with many values.

    Missing values (``None``) form a slice labelled :data:`MISSING`. A categorical column
    with more than ``max_categories`` values keeps the most frequent as slices and pools
    the rest into one ``"(other: N values)"`` slice.

    Examples
    --------
    >>> [(s.label, int(s.mask.sum())) for s in column_slices("source", ["web", "news", "web", None])]
    [('web', 2), ('news', 1), ('(missing)', 1)]
    """
    cells = [None if v is None or (isinstance(v, float) and np.isnan(v)) else v for v in values]
    numbers = _as_numbers(cells)
    if numbers is not None and len({v for v in numbers if not np.isnan(v)}) > max_categories:
        present = ~np.isnan(numbers)
        specs = [
            SliceSpec("column", _range(lo, hi), _within(present, mask), column=name, lower=lo, upper=hi)
            for mask, lo, hi in _quantile_bins(numbers[present], n_bins)
        ]
        if not present.all():
            specs.append(SliceSpec("column", MISSING, ~present, column=name))
        return specs
    keys = np.array([MISSING if v is None else str(v) for v in cells], dtype=object)
    counts = Counter(keys.tolist())
    ranked = sorted(counts, key=lambda k: (k == MISSING, -counts[k], k))
    kept = [k for k in ranked if k != MISSING][:max_categories]
    specs = [SliceSpec("column", k, keys == k, column=name, value=k) for k in kept]
    rest = [k for k in ranked if k != MISSING and k not in kept]
    if rest:
        specs.append(SliceSpec("column", f"(other: {len(rest)} values)", np.isin(keys, rest), column=name))
    if MISSING in counts:
        specs.append(SliceSpec("column", MISSING, keys == MISSING, column=name))
    return specs


def compare_slices(
    y_true: np.ndarray,
    predictions: Mapping[str, np.ndarray],
    slices: Sequence[SliceSpec],
    *,
    alpha: float = 0.05,
    groups: np.ndarray | None = None,
    unpaired: Collection[str] = (),
) -> SliceSummary:
    """Accuracy of every model on every slice, and every pair of models compared on it.

    Parameters
    ----------
    y_true : ndarray of shape (n,)
        True class indices.
    predictions : mapping of str to ndarray of shape (n,)
        Each model's predicted class indices, same examples in the same order (``-1``: no
        prediction, a wrong answer).
    slices : sequence of SliceSpec
        From :func:`class_slices`, :func:`size_slices`, :func:`column_slices`; empty slices
        are left out.
    alpha : float
        Family-wise significance level over all (slice, pair) tests; intervals are at
        ``1 − alpha`` confidence.
    groups : ndarray of shape (n,), optional
        Group of each example: the clustered test and intervals within each slice.
    unpaired : collection of str
        Models with an accuracy on every slice but in no pair (a prompted model's passes: a pass is
        not a model), so not in the Holm family either.

    Returns
    -------
    SliceSummary
        Pairs in the order of ``predictions`` (``a`` before ``b``), as in the main comparison.

    Examples
    --------
    >>> y = np.array([0, 1] * 50)
    >>> a = y.copy(); b = np.where(np.arange(100) < 30, 1 - y, y)   # b wrong on the first 30
    >>> summary = compare_slices(y, {"a": a, "b": b}, size_slices(np.arange(100), "words", 2))
    >>> [(s.label, s.pairs[0].table.only_a_correct, s.pairs[0].significant) for s in summary.slices]
    [('0–49 words', 30, True), ('50–99 words', 0, False)]
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), not {alpha}")
    y = np.asarray(y_true)
    for name, pred in predictions.items():
        if np.shape(pred) != y.shape:
            raise ValueError(f"predictions of '{name}' have shape {np.shape(pred)}, expected {y.shape}")
    kept = [spec for spec in slices if np.any(spec.mask)]
    for spec in kept:
        if spec.mask.shape != y.shape:
            raise ValueError(f"slice '{spec.label}' has a mask of shape {spec.mask.shape}, expected {y.shape}")
    names = list(predictions)
    pairs = [
        (i, j) for i, j in itertools.combinations(range(len(names)), 2) if not {names[i], names[j]} & set(unpaired)
    ]
    confidence = 1.0 - alpha
    # one vectorised pass: (slices × examples) masks against (models × examples) correctness
    masks = np.array([spec.mask for spec in kept], dtype=np.int64).reshape(len(kept), len(y))
    right = np.array([np.asarray(predictions[name]) == y for name in names], dtype=np.int64).reshape(len(names), -1)
    sizes = masks.sum(axis=1)
    correct = masks @ right.T  # (S, M)
    both = np.stack([masks @ (right[i] & right[j]) for i, j in pairs], axis=1) if pairs else np.zeros((len(kept), 0))
    only_a = np.stack([correct[:, i] for i, _ in pairs], axis=1) - both if pairs else both
    only_b = np.stack([correct[:, j] for _, j in pairs], axis=1) - both if pairs else both
    neither = sizes[:, None] - both - only_a - only_b
    n_rows = np.broadcast_to(sizes[:, None], only_a.shape)
    paired = PairedCorrectness(only_a, only_b, n_rows, _pair_clusters(masks.astype(bool), right, pairs, groups))
    p_values, (low, high) = paired.p_value, paired.interval(confidence)
    accuracy = [
        [proportion_estimate(right[m], confidence, groups, spec.mask) for m in range(len(names))] for spec in kept
    ]
    p_adjusted = holm_adjust(np.asarray(p_values, dtype=np.float64).ravel()).reshape(np.shape(p_values))
    results = []
    for s, spec in enumerate(kept):
        accuracies = [
            SliceAccuracy(
                model=name,
                correct=int(correct[s, m]),
                accuracy=Estimate(
                    value=float(correct[s, m] / sizes[s]),
                    low=accuracy[s][m].low,
                    high=accuracy[s][m].high,
                    method="wilson",
                    confidence=confidence,
                ),
            )
            for m, name in enumerate(names)
        ]
        compared = []
        for p, (i, j) in enumerate(pairs):
            b_count, c_count = int(only_a[s, p]), int(only_b[s, p])
            significant = bool(p_adjusted[s, p] <= alpha)
            compared.append(
                SlicePair(
                    model_a=names[i],
                    model_b=names[j],
                    table=ContingencyTable(
                        both_correct=int(both[s, p]),
                        only_a_correct=b_count,
                        only_b_correct=c_count,
                        both_wrong=int(neither[s, p]),
                    ),
                    difference=(b_count - c_count) / int(sizes[s]),
                    ci_low=float(low[s, p]),
                    ci_high=float(high[s, p]),
                    confidence=confidence,
                    test=paired.test,
                    ci_method=cast(IntervalMethod, str(paired.methods[s, p])),
                    p_value=float(p_values[s, p]),
                    p_adjusted=float(p_adjusted[s, p]),
                    significant=significant,
                    winner=(names[i] if b_count > c_count else names[j]) if significant else None,
                )
            )
        results.append(
            SliceResult(
                kind=spec.kind,
                column=spec.column,
                label=spec.label,
                value=spec.value,
                lower=spec.lower,
                upper=spec.upper,
                unit=spec.unit,
                n_examples=int(sizes[s]),
                accuracies=accuracies,
                pairs=compared,
            )
        )
    return SliceSummary(
        alpha=alpha,
        confidence=confidence,
        n_tests=len(kept) * len(pairs),
        mcnemar_rule=paired.rule,
        slices=results,
    )


def _pair_clusters(
    masks: np.ndarray, right: np.ndarray, pairs: list[tuple[int, int]], groups: np.ndarray | None
) -> tuple[ClusteredCounts, ...] | None:
    """Per slice and pair (in that order): the per-group sums of ``D`` on the slice's examples; ``None`` without groups."""
    if groups is None:
        return None
    members = np.asarray(groups)
    return tuple(clustered_counts(right[i][mask] - right[j][mask], members[mask]) for mask in masks for i, j in pairs)


def significant_slices(summary: SliceSummary) -> list[tuple[SliceResult, SlicePair]]:
    """The (slice, pair) results significant after Holm's adjustment, smallest adjusted p first.

    These, and only these, may be named in a verdict.
    """
    found = [(result, pair) for result in summary.slices for pair in result.pairs if pair.significant]
    return sorted(found, key=lambda item: (item[1].p_adjusted, -abs(item[1].difference)))


def _quantile_bins(values: np.ndarray, n_bins: int) -> list[tuple[np.ndarray, float, float]]:
    """``(mask, smallest, largest)`` of each non-empty quantile bin of ``values``."""
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, not {n_bins}")
    if values.size == 0:
        return []
    inner = np.unique(np.quantile(values, np.arange(1, n_bins) / n_bins, method="inverted_cdf"))
    bin_of = np.searchsorted(inner, values, side="left")  # value ≤ edge i → bin i
    out = []
    for b in range(len(inner) + 1):
        mask = bin_of == b
        if mask.any():
            out.append((mask, float(values[mask].min()), float(values[mask].max())))
    return out


def _within(present: np.ndarray, mask: np.ndarray) -> np.ndarray:
    full = np.zeros(present.shape, dtype=bool)
    full[np.flatnonzero(present)[mask]] = True
    return full


def _as_numbers(cells: Sequence[object]) -> np.ndarray | None:
    """The column as floats (NaN for missing) when every present value is a number, else ``None``."""
    out = np.full(len(cells), np.nan)
    for i, cell in enumerate(cells):
        if cell is None:
            continue
        if isinstance(cell, bool):
            return None
        try:
            out[i] = float(cell)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
    return out


def _range(low: float, high: float) -> str:
    """A bin's name in the record (``SliceResult.label``); reports write the bin from its bounds, with their formatter."""
    return _bound(low) if low == high else f"{_bound(low)}–{_bound(high)}"


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(round(float(value), 4))
