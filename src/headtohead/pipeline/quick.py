"""A comparison without an experiment file: ``h2h run --data dev.tsv --model a=preds.csv --model b=path/to/model``.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from headtohead.config import Experiment, experiment_from_dict
from headtohead.config.models import FAMILIES, MODEL_KINDS
from headtohead.errors import ConfigError

__all__ = ["quick_experiment", "infer_kind", "parse_model_option"]

_NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")


def infer_kind(source: str, base_dir: Path | None = None) -> str:
    """The model kind a source stands for (see the module docstring).

    Parameters
    ----------
    source : str
        A file, a folder, ``package.module:factory`` or a hub id.
    base_dir : Path, optional
        Folder relative paths are read from (default: the current directory).

    Raises
    ------
    ConfigError
        The source fits no kind (one line naming the kinds and how to write one).

    Examples
    --------
    >>> infer_kind("preds.parquet"), infer_kind("headtohead.testing.models:tiny_mlp")
    ('predictions', 'python')
    """
    path = Path(source).expanduser()
    path = path if path.is_absolute() else (base_dir or Path.cwd()) / path
    suffix = path.suffix.lower()
    # a file's suffix decides first; then the families' own rules (a folder's files, a hub id, a factory)
    for row in FAMILIES:
        if suffix in row.suffixes:
            return row.kind
    for row in FAMILIES:
        if row.recognises is not None and row.recognises(source, path):
            return row.kind
    what = (
        "a folder without config.json"
        if path.is_dir()
        else "not found"
        if not path.exists()
        else f"a '{suffix or path.name}' file"
    )
    raise ConfigError(
        f"--model {source}: cannot tell its kind ({what}); write it first, e.g. "
        f"--model name=timm:{source} (kinds: {', '.join(MODEL_KINDS)})"
    )


def parse_model_option(spec: str, base_dir: Path | None = None) -> tuple[str, str, str]:
    """``name=kind:source``, ``name=source`` or ``source`` → ``(name, kind, source)``.

    The name defaults to the file's stem (``preds_a.csv`` → ``preds_a``); the kind is
    inferred when not written (a ``python`` source ``package.module:factory`` keeps its colon).

    Examples
    --------
    >>> parse_model_option("b=transformers:textattack/bert-base-uncased-SST-2")
    ('b', 'transformers', 'textattack/bert-base-uncased-SST-2')
    >>> parse_model_option("a=preds_a.csv")
    ('a', 'predictions', 'preds_a.csv')
    """
    name, sep, rest = spec.partition("=")
    if not sep:
        name, rest = "", spec
    if not rest.strip():
        raise ConfigError(f"--model {spec}: no source; write --model name=path (e.g. --model a=preds.csv)")
    kind, colon, source = rest.partition(":")
    if not colon or kind not in MODEL_KINDS:
        kind, source = infer_kind(rest, base_dir), rest
    name = name.strip() or Path(source.rstrip("/")).stem or source
    if not _NAME.match(name):
        raise ConfigError(
            f"--model {spec}: the name '{name}' may hold only letters, digits and . _ + -; write --model name=source"
        )
    return name, kind, source


def quick_experiment(
    data: str | None,
    models: Sequence[str],
    *,
    name: str | None = None,
    overrides: Sequence[str] = (),
    base_dir: Path | None = None,
    **data_options: Any,
) -> Experiment:
    """The experiment of ``h2h run --data … --model …``.

    Parameters
    ----------
    data : str, optional
        ``data.path``: a table, an image folder, ``sklearn:<name>`` or ``hf:<…>``; ``None`` when
        every model is a harness's log (``kind: lm-eval``, ``inspect``): the logs' items, ``logs:``.
    models : sequence of str
        ``--model`` values (:func:`parse_model_option`).
    name : str, optional
        The experiment's name (default: the data file's stem and the model names).
    overrides : sequence of str
        ``--set key=value``.
    base_dir : Path, optional
        Folder relative paths are read from (default: the current directory).
    **data_options
        More ``data:`` keys (``text_column``, ``label_column``, ``id_column``, ``slice_columns`` …);
        ``None`` values are left out.

    Returns
    -------
    Experiment

    Raises
    ------
    ConfigError
        No model, a model name given twice, a source of no known kind, an invalid data key.
    """
    if not models:
        raise ConfigError("--data needs at least one --model name=source (e.g. --model a=preds_a.csv)")
    parsed = [parse_model_option(spec, base_dir) for spec in models]
    data = data if data is not None else _logs_of(parsed)
    names = [n for n, _, _ in parsed]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(
            f"--model: the name(s) {', '.join(repeated)} are used twice; give each model its own "
            f"name (--model a=… --model b=…)"
        )
    stem = Path(data.split(":")[-1]).stem or data.split(":")[0] or "data"
    section = {"path": data, **{k: v for k, v in data_options.items() if v is not None and v != []}}
    return experiment_from_dict(
        {
            "name": name or f"{stem}-{'-vs-'.join(names)}",
            "data": section,
            "models": [{"name": n, "kind": k, "source": s} for n, k, s in parsed],
        },
        overrides=overrides,
    )


def _logs_of(parsed: Sequence[tuple[str, str, str]]) -> str:
    """``logs:`` when every model is a harness's log (its items are the data); else the error of a missing ``--data``."""
    from headtohead.config.models import family
    from headtohead.data.logged import LOGS

    if all(family(kind).holds_data for _, kind, _ in parsed):
        return LOGS
    logs = [row.kind for row in FAMILIES if row.holds_data]
    raise ConfigError(
        f"give an experiment file (h2h run exp.yaml), or --data and --model for a quick comparison (h2h run "
        f"--data dev.tsv --model a=preds_a.csv); --model without --data reads harnesses' logs only (kind "
        f"{', '.join(logs)}: --model a=lm-eval:runs/a)"
    )


def command_experiment(
    experiment: str | Path | None,
    *,
    data: str | None = None,
    models: Sequence[str] = (),
    overrides: Sequence[str] = (),
    **data_options: Any,
) -> tuple[Experiment, Path]:
    """What ``h2h run`` compares: the experiment file, or one built from ``--data`` and ``--model``.

    Returns
    -------
    (Experiment, Path)
        The experiment and the folder its relative paths are read from.

    Raises
    ------
    ConfigError
        Both a file and ``--data``/``--model``, or neither; ``--model`` without ``--data``.
    """
    from headtohead.pipeline.setup import resolve_experiment

    quick = data is not None or bool(models)
    if experiment is not None and quick:
        raise ConfigError(
            f"{experiment}: give an experiment file or --data with --model, not both (models of a "
            f"file are listed in it)"
        )
    if experiment is not None:
        return resolve_experiment(experiment, overrides)
    if data is None and not models:
        raise ConfigError(
            "give an experiment file (h2h run exp.yaml), or --data and --model for a quick comparison "
            "(h2h run --data dev.tsv --model a=preds_a.csv --model b=path/to/model)"
        )
    return quick_experiment(data, models, overrides=overrides, **data_options), Path.cwd()
