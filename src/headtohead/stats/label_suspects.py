"""The examples every model got wrong with the same answer: candidates for a wrong gold label.

When models built differently agree on one answer that the gold label says is wrong, the
label is as likely to be wrong as the models (Northcutt et al. 2021 found 3.4 % of test labels
wrong across ten benchmarks, and such agreement is how their candidates were found). A run
lists them; it changes no statistic (``data.label_ok`` leaves out rows a person judged wrong).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from headtohead.results.label_suspects import LabelSuspect, LabelSuspects
from headtohead.results.predictions import Predictions

__all__ = ["label_suspects", "SUSPECTS_KEPT"]

#: Suspects kept in ``results.json`` and shown in a report (all of them: ``label_suspects.csv``).
SUSPECTS_KEPT = 20


def label_suspects(
    predictions: Predictions, ids: Sequence[str] | None = None, *, kept: int | None = SUSPECTS_KEPT
) -> LabelSuspects | None:
    """The examples every model (every pass of each) got wrong with one and the same answer.

    Parameters
    ----------
    predictions : Predictions
        A run's predictions (plan order); a model measured several ways agrees only if all its passes do.
    ids : sequence of str, optional
        Example ids in dataset order.
    kept : int, optional
        Rows kept (``None``: all); ``n_suspects`` stays complete.

    Returns
    -------
    LabelSuspects or None
        ``None`` with fewer than two models. ``index`` is the example's position in the dataset.

    Examples
    --------
    >>> p = Predictions(np.arange(4), np.array([0, 1, 1, 0]), ("neg", "pos"))
    >>> p.add("a", np.array([0, 0, 1, 1]), None)
    >>> p.add("b", np.array([0, 0, 0, 1]), None)
    >>> found = label_suspects(p)
    >>> found.n_suspects, [(r.index, r.true_label, r.answer) for r in found.rows]
    (2, [(1, 'pos', 'neg'), (3, 'neg', 'pos')])
    """
    if len(predictions.models) < 2:
        return None
    flat = predictions.per_pass()
    preds = np.stack([np.asarray(flat[m].pred) for m in flat.models])
    y = np.asarray(predictions.y_true)
    shared = preds[0]
    suspect = np.all(preds == shared, axis=0) & (shared >= 0) & (shared != y)
    rows = np.flatnonzero(suspect)
    probas = [flat[m].proba for m in flat.models]
    confidence = None
    if all(p is not None for p in probas):
        taken = np.stack([np.asarray(p)[rows, shared[rows]] for p in probas if p is not None])
        confidence = taken.mean(axis=0)  # NaN where a model kept no probabilities for its answer
    order = np.asarray(predictions.order, dtype=np.int64)
    positions = order[rows]
    score = np.nan_to_num(confidence, nan=-1.0) if confidence is not None else np.zeros(len(rows))
    ranked = np.lexsort((positions, -score))  # most confident first, ties by dataset position
    names = predictions.all_labels
    found = [
        LabelSuspect(
            index=int(positions[i]),
            example_id=None if ids is None else str(ids[positions[i]]),
            true_label=names[y[rows[i]]],
            answer=names[shared[rows[i]]],
            confidence=None if confidence is None or np.isnan(confidence[i]) else float(confidence[i]),
        )
        for i in ranked
    ]
    return LabelSuspects(
        models=list(predictions.models),
        n_examples=len(y),
        n_suspects=len(found),
        rows=found if kept is None else found[:kept],
    )
