"""``kind: predictions``: a file of stored predictions (or probabilities), matched to the data by example."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from headtohead.config.models.keys import OutputNames

__all__ = ["PredictionsSettings", "PREDICTION_SUFFIXES"]

#: The prediction file formats.
PREDICTION_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet", ".pq")


class PredictionsSettings(OutputNames):
    """A prediction file: what an example without a row means.

    A row whose prediction is empty, whose ``failed`` column is true or whose probabilities
    are empty or NaN is a failure of the model (a wrong answer, counted and named), as for
    any model; the model's ``label_names`` (all its classes, the data's and more) let it
    predict classes the data does not hold (each such prediction a wrong answer).
    """

    kind: Literal["predictions"]

    missing_ids: Literal["error", "failed"] = Field(
        default="error",
        description="An example of the data whose id has no row: 'error' (a file cut short is a mistake) or "
        "'failed' (the model failed on it: a wrong answer, counted and named).",
    )
