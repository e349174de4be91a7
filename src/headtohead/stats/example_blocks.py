"""Bootstrap resamples of continuous per-example features, summed a block of examples at a time.

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

__all__ = ["resampled_sums"]

_BLOCK = 256  # examples per block: 2**8, so one random byte picks one
_GROUP = 256 * _BLOCK  # examples per group of blocks (the first multinomial level)
_RESAMPLES_AT_ONCE = 2**14  # counts of one block: at most 2**22 elements (32 MB of int64)


def resampled_sums(features_t: np.ndarray | sparse.spmatrix, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Summed features of ``n_resamples`` bootstrap resamples of the examples (columns).

    Parameters
    ----------
    features_t : ndarray or sparse matrix of shape (width, n)
        Each example's features, one column per example.
    n_resamples : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_resamples, width)
        Row ``r``: the features summed over resample ``r`` (``n`` examples drawn with
        replacement, each counted as often as it was drawn).

    Examples
    --------
    >>> sums = resampled_sums(np.ones((1, 1000)), 5, np.random.default_rng(0))
    >>> sums.ravel().tolist()
    [1000.0, 1000.0, 1000.0, 1000.0, 1000.0]
    """
    features: Any = sparse.csc_matrix(features_t) if sparse.issparse(features_t) else np.asarray(features_t)
    sums = np.zeros((n_resamples, features.shape[0]))
    for first in range(0, n_resamples, _RESAMPLES_AT_ONCE):
        rows = slice(first, min(first + _RESAMPLES_AT_ONCE, n_resamples))
        sums[rows] = _sums(features, rows.stop - rows.start, rng)
    return sums


def _sums(features: np.ndarray | sparse.csc_matrix, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    n = features.shape[1]
    groups = np.arange(0, n, _GROUP)
    per_group = rng.multinomial(n, np.minimum(_GROUP, n - groups) / n, size=n_resamples)  # (R, groups)
    resample = np.arange(n_resamples, dtype=np.int64)
    sums = np.zeros((n_resamples, features.shape[0]))
    for g, group_start in enumerate(groups):
        starts = np.arange(group_start, min(group_start + _GROUP, n), _BLOCK)
        sizes = np.minimum(_BLOCK, n - starts)
        per_block = rng.multinomial(per_group[:, g], sizes / sizes.sum())  # (R, blocks of this group)
        for b, (start, size) in enumerate(zip(starts, sizes, strict=True)):
            draws = per_block[:, b]
            picks = np.repeat(resample * size, draws)  # each draw's resample, as the offset of its row
            total = len(picks)
            picks += np.frombuffer(rng.bytes(total), np.uint8) if size == _BLOCK else rng.integers(0, size, total)
            counts = np.bincount(picks, minlength=n_resamples * size).reshape(n_resamples, size)
            rows: Any = features[:, start : start + size]
            sums += counts.astype(np.float64) @ (rows.toarray() if sparse.issparse(rows) else rows).T
    return sums
