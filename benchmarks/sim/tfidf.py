"""Real text classifiers built in seconds: TF-IDF + logistic regression on the first N rows of a table.

As ``examples/build_offline_models.py`` builds them (saved with skops, no pickles), with the
number of training rows as the knob: on SST-2, 20,000 rows give ≈ 0.78 dev accuracy and 300
rows ≈ 0.64, a clear gap between two real models for tests and benchmarks.
"""

from __future__ import annotations

import csv
from pathlib import Path

__all__ = ["save_tfidf_logreg"]


def save_tfidf_logreg(train_table: str | Path, rows: int, path: str | Path, *, C: float = 4.0) -> Path:
    """Fit TF-IDF (word 1–2-grams) + logistic regression on the first ``rows`` rows and save it as ``.skops``.

    Parameters
    ----------
    train_table : str or Path
        A tab-separated file with ``text`` and ``label`` columns (SST-2's ``train.tsv``).
    rows : int
        Training rows used, from the top.
    path : str or Path
        Where the ``.skops`` file goes.
    C : float
        Inverse regularisation strength of the logistic regression.

    Returns
    -------
    Path
        ``path``, loadable as ``kind: sklearn``.
    """
    import pandas as pd
    import skops.io as sio
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    train = pd.read_csv(train_table, sep="\t", quoting=csv.QUOTE_NONE).head(rows)
    pipeline = make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), min_df=2 if rows >= 1000 else 1, sublinear_tf=True),
        LogisticRegression(max_iter=1000, C=C),
    )
    pipeline.fit(train["text"].astype(str), train["label"].astype(str))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sio.dump(pipeline, path)
    return path
