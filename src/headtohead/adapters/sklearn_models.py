"""Fitted scikit-learn estimators and pipelines (``kind: sklearn``).

See ``docs/api/adapters.md``, the section of this title.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.adapters.weights import error_summary
from headtohead.config.models.sklearn import PICKLE_SUFFIXES, SklearnSettings
from headtohead.config.schema import ModelConfig
from headtohead.errors import ModelError, listing

__all__ = ["SklearnAdapter", "load_estimator", "PICKLE_SUFFIXES"]


class SklearnAdapter(ModelAdapter):
    """A fitted scikit-learn estimator (or pipeline) read from a ``.skops`` or pickle file."""

    kind: ClassVar[str] = "sklearn"
    #: The readers, and the estimator modules most fitted files name (a file's others are imported by
    #: the fresh process's template when it first forks: a pause before the memory probe, not an error).
    load_imports: ClassVar[tuple[str, ...]] = (
        "joblib",
        "skops.io",
        "sklearn.pipeline",
        "sklearn.compose",
        "sklearn.preprocessing",
        "sklearn.feature_extraction.text",
        "sklearn.linear_model",
        "sklearn.naive_bayes",
        "sklearn.svm",
        "sklearn.ensemble",
    )

    def __init__(self, config: ModelConfig, context: LoadContext) -> None:
        super().__init__(config, context)
        self.estimator: Any = None
        self._score: Literal["predict_proba", "decision_function", "predict"] = "predict_proba"

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> SklearnAdapter:
        """Read the estimator file, or take the fitted one given in memory; decide how its scores are obtained."""
        assert isinstance(config, SklearnSettings)  # the registry builds this adapter for its kind only
        adapter = cls(config, context)
        estimator = (
            context.objects[config.name]
            if config.name in context.objects
            else load_estimator(
                context.resolve_path(config.source), model=config.name, allow_pickle=config.allow_pickle
            )
        )
        adapter.estimator = estimator
        classes = _fitted_classes(estimator, config.name)
        if config.label_names is not None and len(config.label_names) != len(classes):
            raise ModelError(
                f"model '{config.name}': label_names has {len(config.label_names)} names but the "
                f"estimator has {len(classes)} classes {[str(c) for c in classes]}; give one name "
                f"per class, in classes_ order"
            )
        adapter.label_names = tuple(str(c) for c in (config.label_names or classes))
        if hasattr(estimator, "predict_proba"):
            adapter._score, adapter.output_kind = "predict_proba", "probabilities"
        elif hasattr(estimator, "decision_function"):
            adapter._score, adapter.output_kind = "decision_function", "logits"
            adapter.warn(
                f"model '{config.name}' has no predict_proba; its decision_function margins are used "
                f"as logits, so probability-based metrics (log loss, calibration) reflect the margin "
                f"scale, not calibrated probabilities"
            )
        else:
            adapter._score, adapter.output_kind = "predict", "probabilities"
            adapter.warn(
                f"model '{config.name}' has neither predict_proba nor decision_function; its "
                f"predictions are scored as one-hot probabilities"
            )
        return adapter

    def preprocess(self, examples: Sequence[Any]) -> Any:
        """Raw examples → what the estimator's ``predict_proba`` takes (see the module docstring)."""
        modality = self.context.modality
        if modality == "text":
            return [str(e) for e in examples]
        if modality == "image":
            return self._image_rows(examples)
        return np.asarray(examples, dtype=np.float64).reshape(len(examples), -1)

    def _image_rows(self, examples: Sequence[Any]) -> np.ndarray:
        from headtohead.data.image_io import to_pil

        rows = []
        for example in examples:
            if isinstance(example, (str, Path)):
                # A file is read as a grey image: a flat classifier sees one value per pixel.
                example = np.asarray(to_pil(example).convert("L"))
            rows.append(np.asarray(example, dtype=np.float64).ravel())
        sizes = {row.size for row in rows}
        if len(sizes) > 1:
            raise ModelError(
                f"model '{self.name}': images have different sizes ({sorted(sizes)[:4]} pixels); "
                f"a scikit-learn model needs one size, resize the images first"
            )
        return np.stack(rows) if rows else np.zeros((0, 0))

    def forward(self, inputs: Any) -> np.ndarray:
        """Scores ``(n, n_classes)``: probabilities, or logits when only margins are available."""
        try:
            raw = getattr(self.estimator, self._score)(inputs)
        except ValueError as exc:  # typically the wrong number of features
            raise ModelError(
                f"model '{self.name}': the estimator rejected the {self.context.modality} inputs "
                f"({error_summary(exc)}); check it was trained on data shaped like this dataset"
            ) from exc
        if self._score == "predict":
            return _one_hot(np.asarray(raw), self.estimator.classes_)
        scores = np.asarray(raw, dtype=np.float64)
        if scores.ndim == 1:
            # Binary margin d for classes_[1]: softmax([-d/2, d/2]) gives sigmoid(d) for that class.
            scores = np.stack([-scores / 2, scores / 2], axis=1)
        return scores

    def num_parameters(self) -> int | None:
        """Fitted coefficient entries (``coef_`` + ``intercept_`` of the final estimator); ``None`` otherwise.

        Only linear models have a cheap, meaningful count; for naive Bayes, trees, ensembles
        and neighbour models the size is unknown (``None``, shown as "unknown") rather than
        an invented number or 0.
        """
        arrays = _coefficients(self.estimator)
        return sum(int(a.size) for a in arrays) if arrays else None

    def parameter_bytes(self) -> int | None:
        """Bytes of the arrays counted by :meth:`num_parameters`; ``None`` when unknown."""
        arrays = _coefficients(self.estimator)
        return sum(int(a.nbytes) for a in arrays) if arrays else None


def load_estimator(path: Path, *, model: str, allow_pickle: bool) -> Any:
    """Read a fitted estimator from ``.skops`` (safe) or a pickle file (``allow_pickle`` only).

    Parameters
    ----------
    path : Path
        The file.
    model : str
        The model's name, for messages.
    allow_pickle : bool
        Permit pickle files, and untrusted types inside ``.skops`` files.

    Returns
    -------
    object
        The estimator (anything with ``predict``).

    Raises
    ------
    ModelError
        Missing file, unsupported suffix, pickle without permission, untrusted types,
        unreadable file, or an object that is not an estimator.
    """
    if not path.is_file():
        raise ModelError(
            f"model '{model}': {path} not found (sklearn source is a .skops or pickle file, read "
            f"relative to the experiment file's folder)"
        )
    suffix = path.suffix.lower()
    if suffix == ".skops":
        estimator = _load_skops(path, model, allow_pickle)
    elif suffix in PICKLE_SUFFIXES:
        if not allow_pickle:
            raise ModelError(
                f"model '{model}': {path} is a pickle, and loading a pickle can run arbitrary code; "
                f"set allow_pickle: true only if you trust the file, or save it with skops.io.dump "
                f"as .skops"
            )
        estimator = _load_pickle(path, model)
    else:
        raise ModelError(
            f"model '{model}': cannot read '{suffix or path.name}' estimator files; save the model "
            f"as .skops (skops.io.dump) or, if trusted, {'/'.join(PICKLE_SUFFIXES)}"
        )
    if not hasattr(estimator, "predict"):
        raise ModelError(
            f"model '{model}': {path} holds a {type(estimator).__name__}, not a fitted "
            f"scikit-learn estimator (no predict method)"
        )
    return estimator


def _load_skops(path: Path, model: str, allow_pickle: bool) -> Any:
    import zipfile

    import skops.io as sio  # not installed: create_adapter names the extra that brings it (skops)
    from skops.io.exceptions import UntrustedTypesFoundException

    try:
        with zipfile.ZipFile(path) as archive:
            archive.getinfo("schema.json")
    except (zipfile.BadZipFile, KeyError) as exc:  # not a zip, or a zip that skops did not write
        raise ModelError(
            f"model '{model}': {path} is not a readable .skops file ({error_summary(exc)}); "
            f"re-save it with skops.io.dump"
        ) from exc
    # One reading of the file when it holds only types skops trusts (skops audits them before it builds
    # anything); a second, get_untrusted_types, only to name the others: parsing a fitted TF-IDF
    # vocabulary is most of a load, and the speed phase's fresh process loads the model once more.
    try:
        return sio.load(path)
    except UntrustedTypesFoundException:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as exc:  # skops raises many kinds for damaged or version-incompatible files
        raise _unloadable(path, model, exc) from exc
    if not allow_pickle:
        raise ModelError(
            f"model '{model}': {path} contains types skops does not trust by default ({listing(untrusted)}); "
            f"loading them can run their code, so set allow_pickle: true only if you trust the file"
        )
    try:
        return sio.load(path, trusted=untrusted)
    except Exception as exc:
        raise _unloadable(path, model, exc) from exc


def _unloadable(path: Path, model: str, exc: Exception) -> ModelError:
    return ModelError(
        f"model '{model}': {path} could not be loaded by skops ({type(exc).__name__}: "
        f"{error_summary(exc)}); check the scikit-learn version it was saved with"
    )


def _load_pickle(path: Path, model: str) -> Any:
    import joblib  # reads plain pickles as well as joblib's own format

    try:
        return joblib.load(path)
    except Exception as exc:  # unpickling raises whatever the pickled code raises
        raise ModelError(
            f"model '{model}': {path} could not be unpickled ({type(exc).__name__}: "
            f"{error_summary(exc)}); check the file and the library versions it needs"
        ) from exc


def _fitted_classes(estimator: Any, model: str) -> np.ndarray:
    classes = getattr(estimator, "classes_", None)
    if classes is None:
        raise ModelError(
            f"model '{model}': the estimator has no classes_ (not fitted, or not a classifier); "
            f"save a fitted classifier"
        )
    return np.asarray(classes)


def _final_step(estimator: Any) -> Any:
    steps = getattr(estimator, "steps", None)
    return steps[-1][1] if steps else estimator


def _coefficients(estimator: Any) -> list[np.ndarray]:
    final = _final_step(estimator)
    arrays = [getattr(final, name, None) for name in ("coef_", "intercept_")]
    return [np.asarray(a) for a in arrays if a is not None and hasattr(a, "size")]


def _one_hot(predicted: np.ndarray, classes: np.ndarray) -> np.ndarray:
    position = {c: i for i, c in enumerate(np.asarray(classes).tolist())}
    scores = np.zeros((len(predicted), len(position)))
    scores[np.arange(len(predicted)), [position[p] for p in np.asarray(predicted).tolist()]] = 1.0
    return scores
