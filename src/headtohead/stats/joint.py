"""One set of bootstrap resamples for the calibration metrics of every model and every pair.

See ``docs/statistics.md`` §2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from headtohead.stats.bootstrap import _BLOCK, CIMethod, _Design, _prepare
from headtohead.stats.bootstrap_intervals import Interval, acceleration, interval_from_distribution
from headtohead.stats.bootstrap_metrics import MetricSpec, example_stats
from headtohead.stats.example_blocks import resampled_sums

__all__ = ["joint_bootstrap"]


def joint_bootstrap(
    y_true: np.ndarray,
    models: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    metrics: Sequence[str | MetricSpec],
    pairs: Sequence[tuple[str, str]] = (),
    label_names: Sequence[str] | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    method: CIMethod = "bca",
    n_bins: int = 15,
    seed: int | np.random.Generator = 0,
    groups: np.ndarray | None = None,
) -> tuple[dict[str, dict[str, Interval]], dict[tuple[str, str], dict[str, Interval]]]:
    """Bootstrap intervals of each model's metrics and of each pair's differences, from one draw.

    Parameters
    ----------
    y_true : ndarray of shape (n,)
    models : mapping of str to (pred, proba)
        Every model's predicted classes ``(n,)`` and probabilities ``(n, K)``, same examples.
    metrics : sequence of str or MetricSpec
        Metrics of the probabilities (``ece``, ``mce``, ``brier``, ``nll``); class-count
        metrics work too but are cheaper per model with :func:`~headtohead.stats.bootstrap.bootstrap_metrics`.
    pairs : sequence of (str, str)
        Pairs ``(a, b)`` whose difference ``metric(a) − metric(b)`` is wanted.
    label_names, n_resamples, confidence, method, n_bins, seed, groups
        As for :func:`~headtohead.stats.bootstrap.bootstrap_metrics` (``groups``: the cluster bootstrap).

    Returns
    -------
    per_model : dict of str to dict of str to Interval
    per_pair : dict of (str, str) to dict of str to Interval

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> top = rng.uniform(0.8, 1.0, 400)[:, None]
    >>> sharp = np.where(y[:, None] == [0, 1], top, 1 - top)
    >>> blunt = np.full((400, 2), 0.5)
    >>> one, two = joint_bootstrap(y, {"a": (y, sharp), "b": (y, blunt)}, metrics=["brier"],
    ...                            pairs=[("a", "b")], n_resamples=200)
    >>> round(two[("a", "b")]["brier"].estimate, 2), two[("a", "b")]["brier"].high < 0
    (-0.24, True)
    """
    y_true = np.asarray(y_true, np.int64)
    names = list(models)
    n = len(y_true)
    if n < 1 or n_resamples < 2:
        raise ValueError("the bootstrap needs at least one example and two resamples")
    preds = [np.asarray(models[m][0], np.int64) for m in names]
    specs, k, _ = _prepare(metrics, label_names, y_true, *preds)
    needs = sorted({s for spec in specs for s in spec.needs})
    per_model = [
        example_stats(needs, y_true, pred, models[m][1], n_classes=k, n_bins=n_bins)
        for m, pred in zip(names, preds, strict=True)
    ]
    design = _Design(per_model, n, compress=False, groups=groups)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    estimates = _each(design, specs, design.sums(design.cell_counts[None, :]), n)[:, :, 0]
    theta = _each(design, specs, resampled_sums(design.features_t, n_resamples, rng), n)
    jack = _jackknife_each(design, specs) if method == "bca" and design.m > 1 else None

    def intervals(estimate: np.ndarray, distribution: np.ndarray, jackknife: np.ndarray | None) -> dict[str, Interval]:
        out = {
            spec.name: interval_from_distribution(
                spec.name,
                float(estimate[s]),
                distribution[s],
                confidence=confidence,
                method=method,
                acceleration=None if jackknife is None else acceleration(jackknife[s], design.cell_counts),
            )
            for s, spec in enumerate(specs)
        }
        if groups is None:
            return out
        return {name: i if i.method == "none" else replace(i, method=f"cluster-{i.method}") for name, i in out.items()}

    position = {m: i for i, m in enumerate(names)}
    one = {m: intervals(estimates[i], theta[i], None if jack is None else jack[i]) for i, m in enumerate(names)}
    two = {}
    for a, b in pairs:
        i, j = position[a], position[b]
        two[(a, b)] = intervals(
            estimates[i] - estimates[j], theta[i] - theta[j], None if jack is None else jack[i] - jack[j]
        )
    return one, two


def _each(design: _Design, specs: Sequence[MetricSpec], sums: np.ndarray, n: float) -> np.ndarray:
    """Every model's metric values ``(models, metrics, R)`` from summed features ``(R, width)``."""
    out = np.empty((len(design.blocks), len(specs), sums.shape[0]))
    examples = design.examples(sums, n)
    for i, blocks in enumerate(design.blocks):
        for s, spec in enumerate(specs):
            out[i, s] = spec.from_sums({name: sums[:, blocks[name]] for name in spec.needs}, examples)
    return out


def _jackknife_each(design: _Design, specs: Sequence[MetricSpec]) -> np.ndarray:
    """Leave-one-out values ``(models, metrics, m)`` of every model's metrics."""
    full = design.sums(design.cell_counts[None, :])[0]
    chunk = max(1, _BLOCK // max(design.width, 1))
    out = np.empty((len(design.blocks), len(specs), design.m))
    for start in range(0, design.m, chunk):
        stop = min(start + chunk, design.m)
        out[:, :, start:stop] = _each(design, specs, full[None, :] - design.feature_rows(start, stop), design.n - 1)
    return out
