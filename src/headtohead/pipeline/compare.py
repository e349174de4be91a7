"""``headtohead.compare``: a comparison of models and data held in memory, for a notebook.

See ``docs/api/index.md``, the section of this title.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from headtohead.config.models import family
from headtohead.config.models.passes import FACTORS, factor_error
from headtohead.config.schema import DataConfig
from headtohead.data.base import Dataset, DataSplits
from headtohead.data.memory import dataset_from_memory, describe_data
from headtohead.engines.evaluate import ProgressCallback
from headtohead.errors import ConfigError, ModelError, did_you_mean
from headtohead.pipeline.quick import infer_kind
from headtohead.pipeline.run import Run, run
from headtohead.pipeline.setup import InMemory

__all__ = ["compare"]


def compare(
    models: Mapping[str, Any],
    data: Any,
    *,
    text_column: str | None = None,
    text_pair_column: str | None = None,
    label_column: str = "label",
    label_names: Sequence[str] | None = None,
    id_column: str | None = None,
    slice_columns: Sequence[str] = (),
    group_column: str | None = None,
    outputs: Mapping[str, Literal["logits", "probabilities"]] | None = None,
    passes: Mapping[str, str] | None = None,
    repeats: int | Mapping[str, int] | None = None,
    noise_floor: bool = False,
    name: str = "compare",
    out_dir: str | Path | None = None,
    report: bool = False,
    speed: bool = False,
    batch_size: int = 32,
    device: str = "auto",
    seed: int = 42,
    stats: Mapping[str, Any] | None = None,
    progress: ProgressCallback | None = None,
    response_cache: bool = True,
    allow_missing: bool = False,
    until_decided: bool = False,
    chunk_size: int | None = None,
    equivalence_margin: float | None = None,
) -> Run:
    """Compare models held in memory on data held in memory.

    Parameters
    ----------
    models : mapping of str to object
        Name → model (see the module docstring for what a model may be), at least one.
    data : pandas.DataFrame, (X, y) or Dataset
        A DataFrame with a text column (``text``) and a label column (``label``), or with
        numeric feature columns and a label column; arrays ``(X, y)``; or a headtohead Dataset.
    text_column, text_pair_column, label_column, label_names, id_column, slice_columns, group_column
        As in the ``data:`` section of an experiment file (``group_column``: the column of users,
        documents or conversations whose examples belong together).
    outputs : mapping of str to {"logits", "probabilities"}, optional
        What a callable or module returns (default: logits).
    passes : mapping of str to str, optional
        What differs between the predictions of a model given as a list of them — arrays, tables or
        prediction files, one per prompt a system was asked with (``prompt``, the default) or one per
        run of the same system (``repeat``) — pooled as one model's passes.
    repeats : int or mapping of str to int, optional
        Run each model that runs (not stored predictions) this many times, each run seeded with a
        seed of its own (``eval.repeats``), or name → runs for some models (``repeats:`` of each):
        its run-to-run noise is measured and its comparisons use every run.
    noise_floor : bool
        Measure each model's noise floor, how far two means of its runs differ: every model that runs (not
        stored predictions) and is given no ``repeats`` is run ``repeats`` times, 5 when not given
        (``h2h run --noise-floor``, ``eval.noise_floor``). A gap within a pair's larger floor is never
        called better.
    name : str
        The run's name.
    out_dir : str or Path, optional
        Where to save ``results.json``, ``predictions.npz`` and ``disagreements.csv``.
    report : bool
        Also write ``report.html`` into ``out_dir``.
    speed : bool
        Measure speed too (the models that compute; memory and cold start are not measured, as
        a model in memory cannot be loaded again in a fresh process).
    batch_size, device, seed
        As in the ``eval:`` section and ``seed`` of an experiment.
    stats : mapping, optional
        The ``stats:`` section (``alpha``, ``n_resamples`` …).
    progress : callable, optional
        ``progress(task, done, total)``.
    response_cache : bool
        Endpoint models (a mapping ``{"kind": "openai", …}``) answer from the on-disk response
        cache where they can; ``False`` asks every example again (``--no-cache``).
    allow_missing : bool
        Judge on the examples every model answered when an endpoint never answered some (as
        :func:`headtohead.run`; without it such a model decides nothing and ``AnswersMissing`` is raised).
    until_decided : bool
        Evaluate in a seeded random order, chunk by chunk, and stop once an anytime-valid test
        has decided every pair: ``h2h run --until-decided`` (``eval.until_decided``), the same
        stop on the same data and seed.
    chunk_size, equivalence_margin : optional
        As ``eval.chunk_size`` and ``eval.equivalence_margin`` of ``until_decided``.

    Returns
    -------
    Run
        The same record :func:`headtohead.run` returns.

    Raises
    ------
    ConfigError, DataError, ModelError
        One line: no models, a model of no known kind, data of no known shape, predictions
        that do not fit the data …

    Examples
    --------
    >>> import pandas as pd, headtohead
    >>> frame = pd.DataFrame({"text": ["good", "bad", "fine", "awful"], "label": ["pos", "neg", "pos", "neg"]})
    >>> outcome = headtohead.compare({"rule": lambda texts: [[t in ("bad", "awful"), t in ("good", "fine")]
    ...                                                       for t in texts],
    ...                               "guess": ["pos", "pos", "pos", "neg"]}, frame,
    ...                              outputs={"rule": "probabilities"}, stats={"n_resamples": 200})
    >>> [m.quality.accuracy for m in outcome.result.models]
    [1.0, 0.75]
    """
    if not isinstance(models, Mapping) or not models:
        raise ConfigError(
            "compare: models must be a non-empty mapping of names to models, e.g. "
            "{'bert': model, 'baseline': predictions}"
        )
    _check_outputs(outputs, models)
    _check_passes(passes, models)
    _check_repeats(repeats, models)
    section = DataConfig(
        path=describe_data(data),
        text_column=text_column,
        text_pair_column=text_pair_column,
        label_column=label_column,
        label_names=list(label_names) if label_names else None,
        id_column=id_column,
        slice_columns=list(slice_columns),
        group_column=group_column,
    )
    dataset = dataset_from_memory(data, section)
    entries, objects = [], {}
    for model_name, model in models.items():
        entry, held = (
            _passes_entry(str(model_name), model, dataset, (passes or {}).get(str(model_name)))
            if _as_passes(model, dataset) is not None
            else _model_entry(str(model_name), model, dataset, (outputs or {}).get(str(model_name)))
        )
        if isinstance(repeats, Mapping) and str(model_name) in {str(m) for m in repeats}:
            entry["repeats"] = {str(m): r for m, r in repeats.items()}[str(model_name)]
        entries.append(entry)
        if held is not None:
            objects[str(model_name)] = held
    experiment = {
        "name": name,
        "seed": seed,
        "data": section.model_dump(exclude_none=True),
        "models": entries,
        "eval": {
            "batch_size": batch_size,
            "device": device,
            "until_decided": until_decided,
            "chunk_size": chunk_size,
            "equivalence_margin": equivalence_margin,
            "repeats": repeats if not isinstance(repeats, Mapping) else None,
            "noise_floor": noise_floor,
        },
        "stats": dict(stats or {}),
        "speed": {"enabled": speed, "memory": False},
    }
    return run(
        experiment,
        out_dir=out_dir,
        base_dir=Path.cwd(),
        progress=progress,
        speed=speed,
        report=report,
        in_memory=InMemory(splits=DataSplits(eval=dataset), objects=objects),
        response_cache=response_cache,
        allow_missing=allow_missing,
    )


def _check_outputs(outputs: Any, models: Mapping[str, Any]) -> None:
    """``outputs`` maps names of ``models`` to what they return (one line naming the mistake otherwise)."""
    if outputs is None:
        return
    first = next(iter(models))
    if not isinstance(outputs, Mapping):
        raise ConfigError(
            f"compare: outputs={outputs!r} must map model names to 'logits' or 'probabilities', one entry per "
            f"callable that returns probabilities, e.g. outputs={{{str(first)!r}: {str(outputs)!r}}}"
        )
    unknown = [str(n) for n in outputs if str(n) not in {str(m) for m in models}]
    if unknown:
        raise ConfigError(
            f"compare: outputs names {', '.join(map(repr, unknown))}{did_you_mean(unknown[0], map(str, models))}, "
            f"which is not one of the models ({', '.join(map(repr, map(str, models)))})"
        )


def _check_repeats(repeats: Any, models: Mapping[str, Any]) -> None:
    """``repeats`` is a count of runs, or maps names of ``models`` to one (one line naming the mistake otherwise)."""
    if repeats is None or (isinstance(repeats, int) and not isinstance(repeats, bool)):
        return
    first = next(iter(models))
    if not isinstance(repeats, Mapping):
        raise ConfigError(
            f"compare: repeats={repeats!r} must be a number of runs (repeats=5) or map model names to one, "
            f"e.g. repeats={{{str(first)!r}: 5}}"
        )
    unknown = [str(n) for n in repeats if str(n) not in {str(m) for m in models}]
    if unknown:
        raise ConfigError(
            f"compare: repeats names {', '.join(map(repr, unknown))}{did_you_mean(unknown[0], map(str, models))}, "
            f"which is not one of the models ({', '.join(map(repr, map(str, models)))})"
        )


def _check_passes(passes: Any, models: Mapping[str, Any]) -> None:
    """``passes`` maps names of models given as lists of predictions to a factor (one line otherwise)."""
    if passes is None:
        return
    if not isinstance(passes, Mapping):
        raise ConfigError(f"compare: passes={passes!r} must map model names to what differs between their passes")
    for name, factor in passes.items():
        if str(name) not in {str(m) for m in models}:
            raise ConfigError(
                f"compare: passes names {str(name)!r}{did_you_mean(str(name), map(str, models))}, which is not one of "
                f"the models ({', '.join(map(repr, map(str, models)))})"
            )
        if factor not in FACTORS:
            raise ConfigError(factor_error(str(factor), f"compare: model '{name}'"))
        if not isinstance(models[name], list):
            raise ConfigError(
                f"compare: passes names '{name}', which is not given as a list of predictions; give its passes as a "
                f"list (one array, table or prediction file per prompt)"
            )


def _as_passes(model: Any, dataset: Dataset) -> list[Any] | None:
    """``model`` as a list of passes' predictions (arrays, tables, prediction files), or ``None`` when it is not.

    A list of labels (one per example) is one model's predictions, not passes.
    """
    if not isinstance(model, list) or len(model) < 2:
        return None
    if all(isinstance(item, (str, Path)) for item in model):
        files = [Path(item) for item in model]
        suffixes = family("predictions").suffixes
        return model if all(f.suffix.lower() in suffixes and f.is_file() for f in files) else None
    n = len(dataset)

    def one_pass(item: Any) -> bool:  # a pass: a table of columns, or one prediction (row) per example
        return isinstance(item, Mapping) or (not isinstance(item, (str, bytes)) and _sized(item) == n)

    rows = len(model) == n and all(_sized(item) == dataset.num_classes for item in model)  # probability rows
    return model if not rows and all(one_pass(item) for item in model) else None


def _sized(item: Any) -> int | None:
    try:
        return len(item)
    except TypeError:
        return None


def _passes_entry(name: str, model: list[Any], dataset: Dataset, factor: str | None) -> tuple[dict[str, Any], Any]:
    """A model given as a list of predictions, one per pass: its entry (``kind: predictions`` with ``passes``) and
    the tables its passes read (``None`` for files, read by path)."""
    entry: dict[str, Any] = {"name": name, "kind": "predictions", "passes": factor or "prompt"}
    if all(isinstance(item, (str, Path)) for item in model):
        return {**entry, "source": [str(item) for item in model]}, None
    tables = [prediction_table(name, item, dataset) for item in model]
    return {**entry, "source": [f"<in memory: pass {k}>" for k in range(1, len(model) + 1)]}, tables


def _model_entry(name: str, model: Any, dataset: Dataset, outputs: str | None) -> tuple[dict[str, Any], Any]:
    """The model's section of the experiment, and the object its adapter takes (``None`` for a path)."""
    entry: dict[str, Any] = {"name": name}
    if outputs is not None:
        entry["outputs"] = outputs
    if isinstance(model, (str, Path)):
        return {**entry, "kind": infer_kind(str(model)), "source": str(model)}, None
    if isinstance(model, Mapping) and "kind" in model:  # a model entry as in an experiment file (kind: openai …)
        return {**entry, **{str(k): v for k, v in model.items() if k != "name"}}, None
    held = f"<in memory: {type(model).__name__}>"
    if _is_torch_module(model):
        return {**entry, "kind": "python", "source": held}, model
    if isinstance(model, tuple) and len(model) == 2 and _is_torch_module(model[0]) and callable(model[1]):
        return {
            **entry,
            "kind": "python",
            "source": f"<in memory: {type(model[0]).__name__} + tokenizer>",
        }, TokenizedModel(*model)
    if hasattr(model, "predict") and (hasattr(model, "classes_") or hasattr(model, "predict_proba")):
        return {**entry, "kind": "sklearn", "source": held}, model
    if callable(model):
        return {**entry, "kind": "python", "source": held}, model
    return {**entry, "kind": "predictions", "source": held}, prediction_table(name, model, dataset)


def _is_torch_module(model: Any) -> bool:
    torch = sys.modules.get("torch")  # a module exists only if torch was imported: no import for the others
    return torch is not None and isinstance(model, torch.nn.Module)


def prediction_table(name: str, predictions: Any, dataset: Dataset) -> Any:
    """Stored predictions in memory as a table in the prediction-file format (columns ``prediction``, ``proba_<label>``).

    Raises
    ------
    ModelError
        An object that is no kind of prediction (one line naming what is accepted).
    """
    import pandas as pd

    if isinstance(predictions, pd.DataFrame):
        return predictions
    if isinstance(predictions, Mapping):
        columns = dict(predictions)
        proba = columns.pop("proba", None)
        frame = pd.DataFrame(columns)
        return _with_probabilities(frame, proba, dataset, name) if proba is not None else frame
    values = np.asarray(predictions.to_numpy() if hasattr(predictions, "to_numpy") else predictions)
    if values.ndim == 1 and len(values):
        return pd.DataFrame({"prediction": values.tolist()})
    if values.ndim == 2 and np.issubdtype(values.dtype, np.number):
        frame = _with_probabilities(pd.DataFrame(index=range(len(values))), values, dataset, name)
        frame.insert(0, "prediction", [dataset.label_names[i] for i in values.argmax(axis=1)])
        return frame
    raise ModelError(
        f"model '{name}': a {type(predictions).__name__} is not a model compare() can use; give a torch "
        f"module, (model, tokenizer), a fitted estimator, a callable, or predictions (labels, "
        f"probabilities, a dict or a DataFrame)"
    )


def _with_probabilities(frame: Any, proba: Any, dataset: Dataset, name: str) -> Any:
    matrix = np.asarray(proba, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[1] != dataset.num_classes:
        raise ModelError(
            f"model '{name}': probabilities of shape {matrix.shape}; give one column per class in the "
            f"data's label order ({', '.join(dataset.label_names)})"
        )
    for k, label in enumerate(dataset.label_names):
        frame[f"proba_{label}"] = matrix[:, k]
    return frame


class TokenizedModel:
    """A Hugging Face ``(model, tokenizer)`` pair as a callable of raw texts (or text pairs) → logits.

    Its ``label_names`` come from ``model.config.id2label`` when they are real names.
    """

    def __init__(self, model: Any, tokenizer: Callable[..., Any], max_length: int | None = None) -> None:
        self.model, self.tokenizer, self.max_length = model.eval(), tokenizer, max_length
        id2label = getattr(getattr(model, "config", None), "id2label", None) or {}
        names = [str(id2label[i]) for i in sorted(id2label)]
        self.label_names = names if names and not all(n.startswith("LABEL_") for n in names) else None

    def __call__(self, examples: Sequence[Any]) -> np.ndarray:
        import torch

        pairs = bool(examples) and isinstance(examples[0], (tuple, list))
        texts = [e[0] for e in examples] if pairs else list(examples)
        batch = self.tokenizer(
            texts,
            [e[1] for e in examples] if pairs else None,
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        device = next(self.model.parameters()).device
        with torch.inference_mode():
            output = self.model(**{k: v.to(device) for k, v in batch.items()})
        return np.asarray(getattr(output, "logits", output).float().cpu().numpy())
