"""The small datasets bundled with scikit-learn (no download): ``sklearn:<name>``.

* ``sklearn:digits`` — 1,797 8×8 grey images of digits, modality ``"image"``; pixel values
  (0..16 in scikit-learn) are scaled to ``uint8`` 0..255 so image models and
  :func:`~headtohead.data.image_io.to_pil` read them like any picture.
* ``sklearn:iris``, ``sklearn:wine``, ``sklearn:breast_cancer`` — modality ``"features"``,
  a ``float32`` 2-D array, class names from scikit-learn's ``target_names``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from headtohead.config.schema import DataConfig
from headtohead.data.base import Dataset, Modality, encode_labels
from headtohead.data.columns import refuse_extra_columns
from headtohead.errors import DataError, did_you_mean, listing

__all__ = ["load_sklearn", "SKLEARN_DATASETS"]

PREFIX = "sklearn:"


def _digits(bunch: Any) -> tuple[Modality, np.ndarray]:
    # 0..16 → 0..255, rounded, so the images are ordinary 8-bit greyscale.
    images = np.rint(np.asarray(bunch.images, dtype=np.float64) * (255.0 / 16.0)).astype(np.uint8)
    return "image", images


def _features(bunch: Any) -> tuple[Modality, np.ndarray]:
    return "features", np.asarray(bunch.data, dtype=np.float32)


#: name -> (scikit-learn loader function name, how to turn its bunch into (modality, examples)).
SKLEARN_DATASETS: dict[str, tuple[str, Callable[[Any], tuple[Modality, np.ndarray]]]] = {
    "digits": ("load_digits", _digits),
    "iris": ("load_iris", _features),
    "wine": ("load_wine", _features),
    "breast_cancer": ("load_breast_cancer", _features),
}


def load_sklearn(spec: str, config: DataConfig) -> Dataset:
    """Load a dataset bundled with scikit-learn.

    Parameters
    ----------
    spec : str
        ``"sklearn:<name>"`` with a name of :data:`SKLEARN_DATASETS`.
    config : DataConfig
        ``label_names``, if given, renames the classes ``0..K-1`` (must give K names).

    Returns
    -------
    Dataset
        ``digits``: modality ``"image"``, examples an ``(n, 8, 8)`` ``uint8`` array, classes
        ``"0"``..``"9"``. Others: modality ``"features"``, an ``(n, d)`` ``float32`` array.

    Raises
    ------
    DataError
        Unknown name (the valid names and the closest are given), ``label_names`` of the
        wrong length, or ``id_column``/``slice_columns`` (these arrays have no columns).

    Examples
    --------
    >>> ds = load_sklearn("sklearn:iris", DataConfig(path="sklearn:iris"))
    >>> ds.modality, ds.examples.shape, ds.label_names
    ('features', (150, 4), ('setosa', 'versicolor', 'virginica'))
    """
    import sklearn.datasets

    name = spec[len(PREFIX) :] if spec.startswith(PREFIX) else spec
    if name not in SKLEARN_DATASETS:
        raise DataError(
            f"{spec}: unknown scikit-learn dataset '{name}'{did_you_mean(name, SKLEARN_DATASETS)} "
            f"(choose one of: {', '.join(PREFIX + n for n in SKLEARN_DATASETS)})"
        )
    refuse_extra_columns(spec, config, "a scikit-learn dataset")
    if config.id_column is not None:
        raise DataError(
            f"{spec}: a scikit-learn dataset has no id column; remove data.id_column (prediction "
            f"files for it are matched by row order)"
        )
    loader_name, convert = SKLEARN_DATASETS[name]
    bunch = getattr(sklearn.datasets, loader_name)()
    modality, examples = convert(bunch)
    target_names = [str(n) for n in bunch.target_names]
    names = config.label_names if config.label_names is not None else target_names
    if len(names) != len(target_names):
        raise DataError(
            f"{spec}: data.label_names has {len(names)} names but {name} has {len(target_names)} "
            f"classes ({listing(target_names)}); give {len(target_names)} names or leave it out"
        )
    labels, label_names = encode_labels(np.asarray(bunch.target).tolist(), source=spec, column="target", names=names)
    return Dataset(spec, modality, examples, labels, label_names, {})
