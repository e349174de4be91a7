"""``kind: sklearn``: a fitted scikit-learn estimator saved with skops (or, if trusted, pickled)."""

from __future__ import annotations

from typing import Literal

from headtohead.config.models.keys import OutputNames, Pickles

__all__ = ["SklearnSettings", "SKLEARN_SUFFIXES", "PICKLE_SUFFIXES"]

#: Files read with :mod:`pickle` (only with ``allow_pickle: true``).
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib")
#: Files a sklearn model is recognised by.
SKLEARN_SUFFIXES = (".skops", *PICKLE_SUFFIXES)


class SklearnSettings(Pickles, OutputNames):
    """A scikit-learn estimator: its output names and whether a pickle may be read."""

    kind: Literal["sklearn"]
