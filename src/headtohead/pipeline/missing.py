"""Examples a model never answered because of the transport: missing data, which decides nothing.

A transport failure after every retry (a refused or reset connection, a timeout, a 5xx, a
malformed body: ``AnswersRecord.missing``) says nothing about the model, unlike an unparseable
answer or a refusal, which are wrong answers. While any example is missing, the model's pass is
incomplete: no statistic involves it (the others are compared as usual), the run's record says so
(``RunResult.missing``, ``incomplete``) and :func:`headtohead.run` ends in
:class:`~headtohead.errors.AnswersMissing` (exit code 4) after saving everything answered;
``--resume`` asks exactly the missing examples again (the answers received come from the response
cache). With ``allow_missing`` the statistics are computed on the examples every model answered,
and the verdicts say so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from headtohead.results.predictions import Predictions
from headtohead.results.records import MissingAnswers, ModelRecord

__all__ = ["missing_answers", "judged_predictions"]


def missing_answers(
    records: Sequence[ModelRecord], predictions: Predictions, *, allowed: bool
) -> MissingAnswers | None:
    """What is missing, model by model, and how many rows the statistics use; ``None`` when nothing is."""
    counts = {r.name: len(r.missing_examples) for r in records if r.missing_examples}
    if not counts:
        return None
    rows = _answered_rows(records, predictions)
    return MissingAnswers(models=counts, allowed=allowed, rows_used=int(rows.sum()) if allowed else len(rows))


def judged_predictions(
    records: Sequence[ModelRecord], predictions: Predictions, missing: MissingAnswers | None
) -> Predictions | None:
    """The predictions the statistics may read (``None``: none at all).

    Nothing missing: all of them. Missing and not allowed: the models that answered every example,
    on every row. Allowed: every model, on the rows every model answered.
    """
    if missing is None:
        return predictions
    if missing.allowed:
        rows = _answered_rows(records, predictions)
        return predictions.restricted(rows=rows) if rows.any() else None
    complete = [name for name in predictions.models if name not in missing.models]
    return predictions.restricted(models=complete) if complete else None


def _answered_rows(records: Sequence[ModelRecord], predictions: Predictions) -> np.ndarray:
    """Rows (in plan order) that no model left unanswered."""
    missing = [i for r in records for i in r.missing_examples]
    return ~np.isin(predictions.order, np.asarray(missing, dtype=np.int64))
