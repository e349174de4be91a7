"""The settings known to move scores, read from stored runs, and where two or more runs differ in them.

A score measured twice can move for reasons that are not the model: the batch size, the numeric
precision, the device, the truncation length, the decoding settings, the prompt, the versions of
the libraries that compute it, the server that answered, the data. :func:`score_settings` reads
those fields from a run's record (:func:`training_settings` from a fine-tune's); :func:`setting_differences`
compares two or more runs and returns one :class:`SettingDifference` per field whose known values
differ, as pyperf's ``compare_to`` names the metadata that differ between two benchmark files.
Per-model fields are compared model by model (the batch size of ``bert`` in one run against that of
``bert`` in the other), the others run by run.

A field a run did not record (a file written before it was) is *unknown*, never a value: it is
left out of the comparison, and a field left unchecked because of it is returned as a difference
whose ``kind`` is ``"unknown"``, never ``"differs"``. The words are
:mod:`headtohead.report.words.score_settings`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from headtohead.results.environment import SOFTWARE_VERSIONS
from headtohead.results.records import Environment, ModelRecord, RunResult

__all__ = [
    "SCORE_FIELDS",
    "RUN_FIELDS",
    "MODEL_FIELDS",
    "NOT_SET",
    "RECORDED_SINCE",
    "RunSettings",
    "SettingDifference",
    "score_settings",
    "training_settings",
    "setting_differences",
]

#: What an unset key of the experiment (its default) is recorded as: a known value, never unknown.
NOT_SET = "not set"

#: The fields compared per model (the same model's name in each run), in the order they are named.
MODEL_FIELDS: tuple[str, ...] = (
    "batch_size",
    "dtype",
    "device",
    "max_length",
    "temperature",
    "top_p",
    "seed",
    "prompt",
    "llm_backend",
)
#: The fields compared per run: the experiment's seed, every library version that matters, the data.
RUN_FIELDS: tuple[str, ...] = ("run_seed", *SOFTWARE_VERSIONS, "data")
#: Every field known to move scores, per model then per run.
SCORE_FIELDS: tuple[str, ...] = (*MODEL_FIELDS, *RUN_FIELDS)
#: The ``results.json`` schema version from which a field is recorded (unknown in older files).
RECORDED_SINCE: dict[str, int] = {"onnxruntime": 8}

#: A setting's value: a number, a text, or a structure compared as its JSON; ``None``: unknown.
Value = int | float | str | None


@dataclass(frozen=True)
class RunSettings:
    """One run's settings known to move scores.

    Attributes
    ----------
    label : str
        How the run is named where a difference is shown.
    run : dict of str to value
        :data:`RUN_FIELDS` → the run's value (``None``: unknown; absent: not applicable).
    models : dict of str to dict of str to value
        Model name → :data:`MODEL_FIELDS` → its value in this run (the same conventions).
    """

    label: str
    run: dict[str, Value] = field(default_factory=dict)
    models: dict[str, dict[str, Value]] = field(default_factory=dict)


@dataclass(frozen=True)
class SettingDifference:
    """A field whose value is not the same in every run that holds it, or that could not be checked.

    Attributes
    ----------
    field : str
        A name of :data:`SCORE_FIELDS`.
    kind : {"differs", "unknown"}
        ``differs``: two runs recorded different values; ``unknown``: the runs that recorded it
        agree, and some did not record it (nothing is said to differ; a field no run recorded is
        not returned).
    values : tuple of (str, value)
        Each run's label and its value, for the runs that recorded it, in the runs' order.
    unknown : tuple of str
        The labels of the runs that did not record it.
    models : tuple of str
        The models it is about (a per-model field, every model whose values read the same);
        empty for a per-run field.
    """

    field: str
    kind: Literal["differs", "unknown"]
    values: tuple[tuple[str, Value], ...]
    unknown: tuple[str, ...] = ()
    models: tuple[str, ...] = ()


def _config_value(entry: Mapping[str, Any], *keys: str) -> Value:
    """The first of ``keys`` set in the model's entry, its ``model_args`` or its ``extra_body`` (:data:`NOT_SET`)."""
    for where in (entry, entry.get("model_args") or {}, entry.get("extra_body") or {}):
        for key in keys:
            value = where.get(key) if isinstance(where, Mapping) else None
            if value is not None:
                return value if isinstance(value, (int, float, str)) else json.dumps(value, sort_keys=True)
    return NOT_SET


def _device(record: ModelRecord, environment: Environment) -> str:
    """The device type (``cpu``, ``cuda``, ``mps`` …) and, on a GPU, its model."""
    kind, _, index = record.device.partition(":")
    if kind != "cuda":
        return kind
    where = record.workers[0].environment if record.workers else environment
    number = int(index) if index.isdigit() else 0
    names = [g.name for g in where.gpus if g.index == number] or [g.name for g in where.gpus[:1]]
    return f"cuda ({names[0]})" if names else kind


def _prompt(entry: Mapping[str, Any], record: ModelRecord) -> Value:
    """The prompt as asked: each pass's template as rendered, else the entry's templates and few-shot count."""
    if record.passes and all(p.template is not None for p in record.passes):
        return json.dumps([p.template for p in record.passes])
    asked = {key: entry[key] for key in ("prompt", "system_prompt", "prompts", "few_shot") if key in entry}
    return json.dumps(asked, sort_keys=True) if "prompt" in asked else None


def _model_settings(record: ModelRecord, entry: Mapping[str, Any], environment: Environment) -> dict[str, Value]:
    values: dict[str, Value] = {
        "batch_size": record.batch_size,
        "dtype": _config_value(entry, "dtype", "torch_dtype"),
        "device": _device(record, environment),
        "max_length": _config_value(entry, "max_length"),
    }
    if "prompt" in entry:  # an LLM family: its decoding settings and its prompt
        values.update(
            temperature=_config_value(entry, "temperature"),
            top_p=_config_value(entry, "top_p"),
            seed=_config_value(entry, "seed"),
            prompt=_prompt(entry, record),
        )
    endpoint = record.answers.endpoint if record.answers is not None else None
    if endpoint is not None:  # asked over HTTP: the server that answered, where it said (None: unknown)
        values["llm_backend"] = endpoint.server
    return {key: value for key, value in values.items() if key != "prompt" or value is not None}


def _software(environment: Environment, schema_version: int) -> dict[str, Value]:
    """Each library's version (``not installed`` where absent), unknown where the file predates its field."""
    return {
        name: None
        if schema_version < RECORDED_SINCE.get(name, 0)
        else (getattr(environment, name, None) or "not installed")
        for name in SOFTWARE_VERSIONS
    }


def score_settings(result: RunResult, label: str | None = None) -> RunSettings:
    """Read a run's settings known to move scores from its record.

    Parameters
    ----------
    result : RunResult
        A run as written (``schema_version`` says which fields it could have recorded).
    label : str, optional
        How the run is named (default: its name).

    Returns
    -------
    RunSettings
    """
    entries = {str(m.get("name")): m for m in result.experiment.get("models", []) if isinstance(m, Mapping)}
    run: dict[str, Value] = {"run_seed": result.experiment.get("seed")}
    run.update(_software(result.environment, result.schema_version))
    run["data"] = result.dataset.fingerprint
    models = {m.name: _model_settings(m, entries.get(m.name, {}), result.environment) for m in result.models}
    return RunSettings(result.name if label is None else label, run, models)


def training_settings(
    label: str, environment: Environment, settings: Mapping[str, Any], data: str | None, *, schema_version: int
) -> RunSettings:
    """A fine-tune's settings known to move its scores: its batch size and precision, its libraries, its data.

    Parameters
    ----------
    label : str
        The machine's (or run's) label.
    environment : Environment
    settings : mapping
        The ``train:`` section as used (``TrainingSummary.settings``).
    data : str or None
        The training data's fingerprint.
    schema_version : int
        The ``results.json`` schema version the environment was written with (a ``training.json``
        of version 2 or later: the current one).
    """
    run: dict[str, Value] = {
        "batch_size": settings.get("batch_size"),
        "dtype": settings.get("precision"),
        **_software(environment, schema_version),
        "data": data,
    }
    return RunSettings(label, run, {})


def _values(rows: Sequence[tuple[str, Mapping[str, Value]]], name: str) -> list[tuple[str, Value]] | None:
    """Each run's value of ``name`` (``None``: unknown); ``None`` when no run has the field at all."""
    held = [(label, row[name]) for label, row in rows if name in row]
    return held or None


def _compared(name: str, held: Sequence[tuple[str, Value]], models: tuple[str, ...]) -> SettingDifference | None:
    known = tuple((label, value) for label, value in held if value is not None)
    unknown = tuple(label for label, value in held if value is None)
    if len({json.dumps(v, sort_keys=True) for _, v in known}) > 1:
        return SettingDifference(name, "differs", known, unknown, models)
    if unknown and known:  # unknown in every run: nothing to check, nothing worth a note
        return SettingDifference(name, "unknown", known, unknown, models)
    return None


def setting_differences(
    runs: Sequence[RunSettings | RunResult], *, ignore: Sequence[str] = ()
) -> list[SettingDifference]:
    """Every field known to move scores whose value differs between runs (or could not be checked).

    Parameters
    ----------
    runs : sequence of RunSettings or RunResult
        Two or more runs (a ``RunResult`` is read by :func:`score_settings`, named by its name).
    ignore : sequence of str
        Fields not to compare: what the comparison is about (the data in a suite, the device
        across machines).

    Returns
    -------
    list of SettingDifference
        Per-model fields first, in :data:`MODEL_FIELDS` order, a field's models with the same values
        in each run named together; then the per-run fields. Empty for one run, or runs alike in
        every field they recorded.

    Examples
    --------
    >>> a = RunSettings("a", models={"m": {"batch_size": 8}})
    >>> b = RunSettings("b", models={"m": {"batch_size": 32}})
    >>> [(d.field, d.kind, d.values, d.models) for d in setting_differences([a, b])]
    [('batch_size', 'differs', (('a', 8), ('b', 32)), ('m',))]
    """
    read = [r if isinstance(r, RunSettings) else score_settings(r) for r in runs]
    out: list[SettingDifference] = []
    names = list(dict.fromkeys(m for r in read for m in r.models))
    for name in (f for f in SCORE_FIELDS if f not in ignore):
        grouped: dict[str, list[str]] = {}
        found: dict[str, SettingDifference] = {}
        for model in names:
            held = _values([(r.label, r.models[model]) for r in read if model in r.models], name)
            one = _compared(name, held, (model,)) if held else None
            if one is not None:
                key = json.dumps([one.kind, one.values, one.unknown])
                grouped.setdefault(key, []).append(model)
                found.setdefault(key, one)
        out += [SettingDifference(d.field, d.kind, d.values, d.unknown, tuple(grouped[k])) for k, d in found.items()]
        held = _values([(r.label, r.run) for r in read], name)
        one = _compared(name, held, ()) if held else None
        out += [one] if one is not None else []
    return sorted(out, key=lambda d: not d.models)
