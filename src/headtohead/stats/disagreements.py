"""The examples on which exactly one of two models is right, most striking first.

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from headtohead.results.disagreements import Disagreement, Disagreements
from headtohead.results.records import NO_PREDICTION_LABEL

__all__ = ["disagreements"]


def disagreements(
    y_true: np.ndarray,
    pred_a: np.ndarray,
    pred_b: np.ndarray,
    proba_a: np.ndarray | None = None,
    proba_b: np.ndarray | None = None,
    *,
    label_names: Sequence[str],
    model_a: str = "a",
    model_b: str = "b",
    ids: Sequence[str] | None = None,
    limit: int | None = None,
) -> Disagreements:
    """Every example exactly one model got right, both directions, sorted by confidence gap.

    Parameters
    ----------
    y_true, pred_a, pred_b : ndarray of shape (n,)
        True and predicted class indices, same examples in the same order.
    proba_a, proba_b : ndarray of shape (n, K), optional
        Class probabilities in ``label_names`` order; ``None`` for a model without them
        (then no gap is computed, and that model's probabilities are ``None``).
    label_names : sequence of str
    model_a, model_b : str
        Names recorded on the result.
    ids : sequence of str, optional
        Example ids (``Dataset.ids``), recorded with each row.
    limit : int, optional
        Keep only the first ``limit`` rows of each direction (the counts
        ``n_only_a_right``/``n_only_b_right`` stay complete).

    Returns
    -------
    Disagreements

    Examples
    --------
    >>> y = np.array([0, 1, 1, 0])
    >>> a, b = np.array([0, 1, 0, 0]), np.array([1, 0, 1, 0])
    >>> pa = np.array([[.9, .1], [.4, .6], [.7, .3], [.8, .2]])
    >>> pb = np.array([[.45, .55], [.9, .1], [.2, .8], [.6, .4]])
    >>> d = disagreements(y, a, b, pa, pb, label_names=["neg", "pos"])
    >>> [(r.index, round(r.confidence_gap, 2)) for r in d.only_a_right]
    [(1, 0.5), (0, 0.45)]
    """
    y = np.asarray(y_true, dtype=np.int64)
    pa, pb = np.asarray(pred_a, dtype=np.int64), np.asarray(pred_b, dtype=np.int64)
    if not (y.shape == pa.shape == pb.shape) or y.ndim != 1:
        raise ValueError(
            f"y_true, pred_a and pred_b must be 1-D and equal in length, got {y.shape}, {pa.shape}, {pb.shape}"
        )
    qa = _checked(proba_a, len(y), len(label_names), model_a)
    qb = _checked(proba_b, len(y), len(label_names), model_b)
    if ids is not None and len(ids) != len(y):
        raise ValueError(f"{len(ids)} ids for {len(y)} examples")
    right_a, right_b = pa == y, pb == y
    rows = np.arange(len(y))
    p_true_a = qa[rows, y] if qa is not None else None
    p_true_b = qb[rows, y] if qb is not None else None
    # a failure (NaN row) put nothing on the true class
    gap = np.nan_to_num(p_true_a) - np.nan_to_num(p_true_b) if p_true_a is not None and p_true_b is not None else None
    names = list(label_names) + [NO_PREDICTION_LABEL]  # index -1: no prediction

    def direction(where: np.ndarray, sign: float) -> list[Disagreement]:
        index = np.flatnonzero(where)
        if gap is not None:
            index = index[np.lexsort((index, -sign * gap[index]))]
        counts.append(len(index))
        return [
            Disagreement(
                index=int(i),
                example_id=None if ids is None else str(ids[i]),
                true_label=str(label_names[y[i]]),
                prediction_a=str(names[pa[i]]),
                prediction_b=str(names[pb[i]]),
                p_true_a=_value(p_true_a, i),
                p_true_b=_value(p_true_b, i),
                p_pred_a=None if qa is None or pa[i] < 0 else float(qa[i, pa[i]]),
                p_pred_b=None if qb is None or pb[i] < 0 else float(qb[i, pb[i]]),
                confidence_gap=None if gap is None else float(sign * gap[i]),
            )
            for i in index[:limit]
        ]

    counts: list[int] = []
    only_a, only_b = direction(right_a & ~right_b, 1.0), direction(right_b & ~right_a, -1.0)
    return Disagreements(
        model_a=model_a,
        model_b=model_b,
        n_examples=len(y),
        only_a_right=only_a,
        only_b_right=only_b,
        sorted_by="confidence_gap" if gap is not None else "index",
        n_only_a_right=counts[0],
        n_only_b_right=counts[1],
    )


def _checked(proba: np.ndarray | None, n: int, k: int, name: str) -> np.ndarray | None:
    if proba is None:
        return None
    matrix = np.asarray(proba, dtype=np.float64)
    if matrix.shape != (n, k):
        raise ValueError(f"probabilities of '{name}' have shape {matrix.shape}, expected {(n, k)}")
    return matrix


def _value(values: np.ndarray | None, i: int) -> float | None:
    return None if values is None or not np.isfinite(values[i]) else float(values[i])
