"""Examples a model could not score (NaN or infinite outputs): which rows each statistic uses.

A model with no prediction for an example cannot be right or wrong there, and pairing needs
both models' answers, so each statistic uses the rows its models scored: a model's own
intervals and calibration its scored rows, a pair's McNemar test and paired intervals the rows
*both* models scored. What was left out is counted on the records (``ModelStats.n_excluded``,
``Comparison.n_excluded``) and worded by the report. Runs where every model scored every
example use all rows, exactly as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from headtohead.results.predictions import Predictions

__all__ = ["scored_rows"]


def scored_rows(predictions: Predictions, names: Sequence[str]) -> tuple[Predictions, int]:
    """The predictions of ``names`` on the rows every one of them scored, and how many rows that leaves out.

    Examples
    --------
    >>> p = Predictions(np.arange(3), np.array([0, 1, 0]), ("a", "b"))
    >>> p.add("m", np.array([0, -1, 0]), np.array([[1, 0], [np.nan, np.nan], [1, 0]]))
    >>> p.add("n", np.array([0, 1, 1]), np.eye(2)[[0, 1, 1]])
    >>> sub, left_out = scored_rows(p, ["m", "n"])
    >>> sub.y_true.tolist(), left_out
    ([0, 0], 1)
    """
    scored = np.ones(len(predictions.y_true), dtype=bool)
    for name in names:
        scored &= predictions[name].valid
    left_out = int((~scored).sum())
    if not left_out and list(predictions.models) == list(names):
        return predictions, 0
    return predictions.restricted(None if not left_out else scored, names), left_out
