"""One recipe of three scikit-learn models, fitted in seconds on any data set's training part (for suites).

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from headtohead.config.schema import DataConfig

__all__ = ["RECIPE", "fit_recipe"]

#: The models of the recipe, in the order a suite lists them.
RECIPE = ("logreg", "nb", "ridge")


def _pipelines(modality: str) -> dict[str, Any]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression, RidgeClassifier
    from sklearn.naive_bayes import ComplementNB, GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if modality == "text":

        def tfidf() -> TfidfVectorizer:
            return TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)

        return {
            "logreg": make_pipeline(tfidf(), LogisticRegression(max_iter=1000, C=4.0)),
            "nb": make_pipeline(tfidf(), ComplementNB()),
            "ridge": make_pipeline(tfidf(), RidgeClassifier()),
        }
    return {
        "logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        "nb": GaussianNB(),
        "ridge": make_pipeline(StandardScaler(), RidgeClassifier()),
    }


def fit_recipe(
    data: DataConfig,
    folder: str | Path,
    *,
    seed: int = 42,
    train_rows: int | None = 20_000,
) -> dict[str, Path]:
    """Fit :data:`RECIPE` on the training part of ``data`` and save each model as ``<folder>/<name>.skops``.

    Parameters
    ----------
    data : DataConfig
        The data set's section as the suite gives it; it needs training data (``train:`` or
        ``split:``). Paths must be absolute or relative to the working directory.
    folder : str or Path
        Where the three ``.skops`` files go.
    seed : int
        The suite's seed (of the split).
    train_rows : int, optional
        Train on the first rows only (SST-2 has 67,349; 20,000 fit in seconds).

    Returns
    -------
    dict
        model name → file.
    """
    import numpy as np
    import skops.io as sio

    from headtohead.data import create_dataset

    splits = create_dataset(data, seed=seed)
    if splits.train is None:
        raise ValueError(f"{data.path}: no training part; give data.train or data.split")
    train = splits.train
    rows = len(train) if train_rows is None else min(train_rows, len(train))
    labels = [train.label_names[i] for i in train.labels[:rows]]
    inputs: Any
    if train.modality == "text":
        inputs = [str(e) for e in train.examples[:rows]]
    else:
        inputs = np.asarray(train.examples[:rows], dtype=np.float64).reshape(rows, -1)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, pipeline in _pipelines(train.modality).items():
        pipeline.fit(inputs, labels)
        written[name] = out / f"{name}.skops"
        sio.dump(pipeline, written[name])
    return written
