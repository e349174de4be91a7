"""Vectorised bootstrap confidence intervals: one model's metrics, or the paired difference of two.

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal, cast

import numpy as np
from scipy import sparse

from headtohead.stats.bootstrap_intervals import Interval, acceleration, interval_from_distribution
from headtohead.stats.bootstrap_metrics import Examples, MetricSpec, Stat, example_stats, metric_spec
from headtohead.stats.example_blocks import resampled_sums

__all__ = ["Interval", "bootstrap_metrics", "paired_bootstrap", "interval_from_distribution"]

CIMethod = Literal["bca", "percentile"]
Sampler = Literal["auto", "multinomial", "index"]

# Elements per work block (counts, sums): ~32 MB of float64 — bounded memory for any n.
_BLOCK = 2**22
#: Most cells whose leave-one-out values a weighted metric (ROC AUC) computes for BCa: each costs a pass over the rows.
_JACKKNIFE_CELLS = 1000


class _Design:
    """Cells of identical examples, their feature rows, and where each (model, statistic) sits."""

    def __init__(
        self, per_model: Sequence[dict[str, Stat]], n: int, *, compress: bool, groups: np.ndarray | None = None
    ) -> None:
        self.n = n
        self.size_column: int | None = None  # with groups: the feature that counts a resample's examples
        self.blocks: list[dict[str, slice]] = []
        keys, offset = [], 0
        for stats in per_model:
            blocks = {}
            for name, stat in stats.items():
                blocks[name] = slice(offset, offset + stat.size)
                offset += stat.size
                if compress:
                    keys.append(stat.codes.astype(np.float64))
                    keys.append(np.ones(n) if stat.weights is None else stat.weights.astype(np.float64))
            self.blocks.append(blocks)
        self.width = offset
        if groups is not None:
            self._clustered(per_model, groups)
            return
        if compress:
            key = np.column_stack(keys) if keys else np.zeros((n, 0))
            rows = _row_numbers(key)
            _, first, inverse, self.cell_counts = np.unique(
                rows, axis=None if rows.ndim == 1 else 0, return_index=True, return_inverse=True, return_counts=True
            )
            self.cell_of_example: np.ndarray | None = inverse.reshape(-1)
        else:  # continuous features: (nearly) every example is its own cell
            first, self.cell_of_example, self.cell_counts = np.arange(n), None, np.ones(n, dtype=np.int64)
        self.m = len(first)
        # one entry per statistic for every cell: (m, statistics), columns in increasing order
        cols = np.column_stack(
            [
                blocks[name].start + stat.codes[first]
                for stats, blocks in zip(per_model, self.blocks, strict=True)
                for name, stat in stats.items()
            ]
        )
        vals = np.column_stack(
            [
                np.ones(self.m) if stat.weights is None else stat.weights[first].astype(np.float64)
                for stats in per_model
                for stat in stats.values()
            ]
        )
        # stored transposed, (width, m): OpenBLAS is >10x faster on F.T @ counts.T than on counts @ F
        # for these tall-skinny shapes (measured); by columns (cells) where example blocks read slices
        features_t = sparse.csc_matrix(
            (vals.ravel(), cols.ravel(), np.arange(0, cols.size + 1, cols.shape[1])), shape=(self.width, self.m)
        )
        features_t = features_t.tocsr() if compress else features_t
        # dense BLAS while it fits; very many classes keep the sparse form
        self.features_t = features_t.toarray() if self.m * self.width <= _BLOCK * 4 else features_t
        self.draws = n  # examples drawn per resample

    def _clustered(self, per_model: Sequence[dict[str, Stat]], groups: np.ndarray) -> None:
        """Cells are groups: each group's features summed over its examples, plus its number of examples."""
        _, codes = np.unique(np.asarray(groups), return_inverse=True)
        codes = codes.reshape(-1)
        k = int(codes.max()) + 1
        rows, cols, vals = [], [], []
        for stats, blocks in zip(per_model, self.blocks, strict=True):
            for name, stat in stats.items():
                rows.append(blocks[name].start + stat.codes)
                cols.append(codes)
                vals.append(np.ones(self.n) if stat.weights is None else stat.weights.astype(np.float64))
        rows.append(np.full(self.n, self.width))
        cols.append(codes)
        vals.append(np.ones(self.n))
        self.size_column = self.width
        self.width += 1
        self.features_t = sparse.csc_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(self.width, k)
        )
        if k * self.width <= _BLOCK * 4:
            self.features_t = self.features_t.toarray()
        self.cell_of_example = None
        self.cell_counts = np.ones(k, dtype=np.int64)
        self.m = self.draws = k

    def examples(self, sums: np.ndarray, n: float) -> Examples:
        """Examples behind each row of ``sums``: ``n`` itself, or per resample with groups."""
        return n if self.size_column is None else sums[:, self.size_column]

    def sums(self, counts: np.ndarray) -> np.ndarray:
        """``(R, m)`` counts per cell → ``(R, width)`` summed features."""
        return cast(np.ndarray, np.asarray(self.features_t @ np.asarray(counts, dtype=np.float64).T).T)

    def feature_rows(self, start: int, stop: int) -> np.ndarray:
        """Feature rows of cells ``start:stop``, dense, shape ``(stop − start, width)``."""
        cols = self.features_t[:, start:stop]
        return cast(np.ndarray, (cols.toarray() if sparse.issparse(cols) else cols).T)


def _row_numbers(key: np.ndarray) -> np.ndarray:
    """Rows of small non-negative integers as one int64 each, in lexicographic order (fast to sort)."""
    radices = key.max(axis=0).astype(np.int64) + 1 if key.size else None
    if radices is None or key.min() < 0 or not np.array_equal(key, np.floor(key)) or np.prod(radices * 1.0) >= 2**62:
        return key
    numbers = np.zeros(len(key), dtype=np.int64)
    for column, radix in zip(key.T.astype(np.int64), radices, strict=True):
        numbers = numbers * radix + column
    return numbers


def _evaluate(design: _Design, specs: Sequence[MetricSpec], sums: np.ndarray, n: float) -> np.ndarray:
    """Metric values ``(M, R)``: model 0 minus model 1 when there are two models."""
    out = np.empty((len(specs), sums.shape[0]))
    examples = design.examples(sums, n)
    for i, spec in enumerate(specs):
        values = [spec.from_sums({s: sums[:, blocks[s]] for s in spec.needs}, examples) for blocks in design.blocks]
        out[i] = values[0] - values[1] if len(values) == 2 else values[0]
    return out


def _resample_counts(design: _Design, rng: np.random.Generator, size: int, sampler: str) -> np.ndarray:
    """Cell counts of ``size`` bootstrap resamples, shape ``(size, m)``."""
    if sampler == "multinomial":
        return rng.multinomial(design.draws, design.cell_counts / design.draws, size=size)
    # int32 while offsets fit: half the memory traffic of int64 on the hot path
    dtype = np.int32 if size * max(design.m, design.draws) < 2**31 else np.int64
    cells = rng.integers(0, design.draws, size=(size, design.draws), dtype=dtype)
    if design.cell_of_example is not None:
        cells = design.cell_of_example.astype(dtype, copy=False)[cells]
    cells += (np.arange(size, dtype=dtype) * design.m)[:, None]
    return np.bincount(cells.ravel(), minlength=size * design.m).reshape(size, design.m)


def _choose_sampler(design: _Design, sampler: str) -> str:
    if sampler == "auto":
        # a multinomial draw costs ~8x an index draw per category (measured), so it wins
        # when there are at least 8x fewer cells than examples
        return "multinomial" if design.m * 8 <= design.draws else "index"
    if sampler not in ("multinomial", "index"):
        raise ValueError(f"sampler must be 'auto', 'multinomial' or 'index', not {sampler!r}")
    return sampler


def _distribution(
    design: _Design, specs: Sequence[MetricSpec], n_resamples: int, rng: np.random.Generator, sampler: str
) -> np.ndarray:
    """Bootstrap distribution ``(M, n_resamples)`` of every metric."""
    sampler = _choose_sampler(design, sampler)
    if sampler == "index" and design.cell_of_example is None:
        return _evaluate(design, specs, resampled_sums(design.features_t, n_resamples, rng), design.n)
    per_resample = design.draws if sampler == "index" else design.m
    chunk = max(1, _BLOCK // max(per_resample, design.width, 1))
    theta = np.empty((len(specs), n_resamples))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        counts = _resample_counts(design, rng, size, sampler)
        theta[:, start : start + size] = _evaluate(design, specs, design.sums(counts), design.n)
    return theta


def _jackknife(design: _Design, specs: Sequence[MetricSpec]) -> np.ndarray:
    """Leave-one-out values ``(M, m)``: dropping any example of a cell gives the same value."""
    full = design.sums(design.cell_counts[None, :])[0]
    chunk = max(1, _BLOCK // max(design.width, 1))
    out = np.empty((len(specs), design.m))
    for start in range(0, design.m, chunk):
        stop = min(start + chunk, design.m)
        out[:, start:stop] = _evaluate(
            design, specs, full[None, :] - design.feature_rows(start, stop), design.n - 1
        )  # with groups the size feature gives each group's own
    return out


def _run(
    models: Sequence[tuple[np.ndarray, np.ndarray | None]],
    y_true: np.ndarray,
    specs: Sequence[MetricSpec],
    *,
    n_classes: int,
    n_bins: int,
    n_resamples: int,
    confidence: float,
    method: str,
    seed: int | np.random.Generator,
    sampler: str,
    groups: np.ndarray | None = None,
) -> dict[str, Interval]:
    """Intervals for ``specs`` on one model, or on the difference of two ((pred, proba) pairs)."""
    n = len(y_true)
    if n < 1:
        raise ValueError("the bootstrap needs at least one example")
    if n_resamples < 2:
        raise ValueError(f"n_resamples must be at least 2, not {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), not {confidence}")
    if method not in ("bca", "percentile"):
        raise ValueError(f"method must be 'bca' or 'percentile', not {method!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    out: dict[str, Interval] = {}
    # Metrics of class counts compress to few cells; calibration metrics do not. Resampling
    # them apart keeps the fast path fast (each group's marginal intervals are unaffected).
    for continuous in (False, True):
        group = [spec for spec in specs if spec.compute is not None and spec.needs_proba == continuous]
        if not group:
            continue
        needs = sorted({s for spec in group for s in spec.needs})
        per_model = [
            example_stats(needs, y_true, pred, proba, n_classes=n_classes, n_bins=n_bins) for pred, proba in models
        ]
        design = _Design(per_model, n, compress=not continuous, groups=groups)
        estimates = _evaluate(design, group, design.sums(design.cell_counts[None, :]), n)[:, 0]
        theta_b = _distribution(design, group, n_resamples, rng, "auto" if groups is not None else sampler)
        jack = _jackknife(design, group) if method == "bca" and design.m > 1 else None
        for i, spec in enumerate(group):
            accel = None if jack is None else acceleration(jack[i], design.cell_counts)
            interval = interval_from_distribution(
                spec.name, float(estimates[i]), theta_b[i], confidence=confidence, method=method, acceleration=accel
            )
            if groups is not None and interval.method != "none":
                interval = replace(interval, method=f"cluster-{interval.method}")
            out[spec.name] = interval
    ranked = [spec for spec in specs if spec.compute is None]
    if ranked:
        out.update(_weighted_run(models, y_true, ranked, n_classes, n_resamples, rng, groups, confidence, method))
    return {spec.name: out[spec.name] for spec in specs}


def _weighted_run(
    models: Sequence[tuple[np.ndarray, np.ndarray | None]],
    y_true: np.ndarray,
    specs: Sequence[MetricSpec],
    n_classes: int,
    n_resamples: int,
    rng: np.random.Generator,
    groups: np.ndarray | None,
    confidence: float,
    method: str,
) -> dict[str, Interval]:
    """Intervals of metrics computed from each resample's example weights (ROC AUC: not a sum of statistics).

    Cells are examples (or groups); BCa's acceleration comes from leaving each cell out, up to
    :data:`_JACKKNIFE_CELLS` cells (beyond, the bias-corrected percentile interval).
    """
    if any(proba is None for _, proba in models):
        raise ValueError(f"{', '.join(s.name for s in specs)} need the class probabilities (proba)")
    n = len(y_true)
    codes = np.arange(n) if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1].reshape(-1)
    m = int(codes.max()) + 1

    def values(weights: np.ndarray) -> np.ndarray:
        out = np.empty((len(specs), len(weights)))
        for i, spec in enumerate(specs):
            assert spec.weighted is not None
            each = [spec.weighted(weights, y_true, np.asarray(proba), n_classes) for _, proba in models]
            out[i] = each[0] - each[1] if len(each) == 2 else each[0]
        return out

    estimates = values(np.ones((1, n)))[:, 0]
    chunk = max(1, _BLOCK // max(n, 1))
    theta = np.empty((len(specs), n_resamples))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        drawn = rng.integers(0, m, size=(size, m)) + (np.arange(size) * m)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=size * m).reshape(size, m)
        # float32 counts: exact integers, half the memory traffic; the estimate and jackknife stay float64
        theta[:, start : start + size] = values(counts[:, codes].astype(np.float32))
    jack = None
    if method == "bca" and 1 < m <= _JACKKNIFE_CELLS:
        jack = np.empty((len(specs), m))
        for start in range(0, m, chunk):
            cells = np.arange(start, min(start + chunk, m))
            jack[:, cells] = values((codes[None, :] != cells[:, None]).astype(np.float64))
    out = {}
    for i, spec in enumerate(specs):
        accel = (
            None
            if jack is None or not np.isfinite(jack[i]).all()
            else acceleration(jack[i], np.ones(m, dtype=np.int64))
        )
        defined = theta[i][np.isfinite(theta[i])]  # a resample holding one class has no AUC
        if not np.isfinite(estimates[i]) or len(defined) < 2:
            raise ValueError(f"{spec.name}: not defined on these rows (they hold one class)")
        interval = interval_from_distribution(
            spec.name, float(estimates[i]), defined, confidence=confidence, method=method, acceleration=accel
        )
        if groups is not None and interval.method != "none":
            interval = replace(interval, method=f"cluster-{interval.method}")
        out[spec.name] = interval
    return out


def _prepare(
    metrics: Sequence[str | MetricSpec], label_names: Sequence[str] | None, y_true: np.ndarray, *preds: np.ndarray
) -> tuple[list[MetricSpec], int, tuple[str, ...]]:
    if label_names is None:
        k = int(max([y_true.max(initial=0)] + [p.max(initial=0) for p in preds])) + 1
        label_names = tuple(str(i) for i in range(k))
    specs = [m if isinstance(m, MetricSpec) else metric_spec(m, label_names) for m in metrics]
    return specs, len(label_names), tuple(label_names)


def bootstrap_metrics(
    y_true: np.ndarray,
    pred: np.ndarray,
    proba: np.ndarray | None = None,
    *,
    metrics: Sequence[str | MetricSpec],
    label_names: Sequence[str] | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    method: CIMethod = "bca",
    n_bins: int = 15,
    seed: int | np.random.Generator = 0,
    sampler: Sampler = "auto",
    groups: np.ndarray | None = None,
) -> dict[str, Interval]:
    """Bootstrap confidence intervals for one model's metrics (all from the same resamples).

    Parameters
    ----------
    y_true, pred : ndarray of shape (n,)
        True and predicted class indices.
    proba : ndarray of shape (n, K), optional
        Class probabilities; needed for ``ece``, ``mce``, ``brier``, ``nll``.
    metrics : sequence of str or MetricSpec
        Names from :data:`headtohead.stats.bootstrap_metrics.METRICS` or ``recall:<class>`` etc.
    label_names : sequence of str, optional
        The classes in label order (default: ``0 … max label``).
    n_resamples : int
    confidence : float
    method : {"bca", "percentile"}
    n_bins : int
        Confidence bins of the calibration metrics.
    seed : int or numpy Generator
    sampler : {"auto", "multinomial", "index"}
        How resample counts are drawn (same distribution either way; ``auto`` picks the faster).
    groups : ndarray of shape (n,), optional
        Group of each example (any labels): resample whole groups (the cluster bootstrap).

    Returns
    -------
    dict of str to Interval

    Examples
    --------
    >>> y = np.array([0, 1] * 50); p = np.where(np.arange(100) % 10 == 0, 1 - y, y)
    >>> ci = bootstrap_metrics(y, p, metrics=["accuracy"], n_resamples=500)["accuracy"]
    >>> round(ci.estimate, 2), ci.low < 0.9 < ci.high
    (0.9, True)
    """
    y_true, pred = np.asarray(y_true, np.int64), np.asarray(pred, np.int64)
    specs, k, _ = _prepare(metrics, label_names, y_true, pred)
    return _run(
        [(pred, proba)],
        y_true,
        specs,
        n_classes=k,
        n_bins=n_bins,
        n_resamples=n_resamples,
        confidence=confidence,
        method=method,
        seed=seed,
        sampler=sampler,
        groups=groups,
    )


def paired_bootstrap(
    y_true: np.ndarray,
    pred_a: np.ndarray,
    pred_b: np.ndarray,
    proba_a: np.ndarray | None = None,
    proba_b: np.ndarray | None = None,
    *,
    metrics: Sequence[str | MetricSpec],
    label_names: Sequence[str] | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    method: CIMethod = "bca",
    n_bins: int = 15,
    seed: int | np.random.Generator = 0,
    sampler: Sampler = "auto",
    groups: np.ndarray | None = None,
) -> dict[str, Interval]:
    """Paired bootstrap intervals on ``metric(a) − metric(b)``, resampling examples (or groups) jointly.

    Parameters are those of :func:`bootstrap_metrics`, for two models evaluated on the same
    examples in the same order.

    Returns
    -------
    dict of str to Interval
        ``estimate`` is the observed difference a − b; a positive value favours ``a`` for
        metrics where higher is better and ``b`` for the losses.

    Examples
    --------
    >>> y = np.array([0, 1] * 100)
    >>> a = np.where(np.arange(200) % 10 == 0, 1 - y, y)   # 90 % correct
    >>> b = np.where(np.arange(200) % 5 == 0, 1 - y, y)    # 80 %, wrong wherever a is
    >>> ci = paired_bootstrap(y, a, b, metrics=["accuracy"], n_resamples=1000)["accuracy"]
    >>> round(ci.estimate, 2), ci.low > 0
    (0.1, True)
    """
    y_true = np.asarray(y_true, np.int64)
    pred_a, pred_b = np.asarray(pred_a, np.int64), np.asarray(pred_b, np.int64)
    if not (len(y_true) == len(pred_a) == len(pred_b)):
        raise ValueError(f"paired bootstrap needs equal lengths, got {len(y_true)}, {len(pred_a)}, {len(pred_b)}")
    specs, k, _ = _prepare(metrics, label_names, y_true, pred_a, pred_b)
    return _run(
        [(pred_a, proba_a), (pred_b, proba_b)],
        y_true,
        specs,
        n_classes=k,
        n_bins=n_bins,
        n_resamples=n_resamples,
        confidence=confidence,
        method=method,
        seed=seed,
        sampler=sampler,
        groups=groups,
    )
