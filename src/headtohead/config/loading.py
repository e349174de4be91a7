"""Read an experiment from YAML, a dict or ``--set`` overrides, with errors that teach.

Validation happens once, here, at the edge: everything after this trusts an
:class:`~headtohead.config.schema.Experiment`.
"""

from __future__ import annotations

import copy
import re
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from headtohead.config.models import MODEL_KINDS, ModelConfig, family
from headtohead.config.schema import Experiment
from headtohead.config.train import TrainConfig, train_config_from_dict
from headtohead.errors import ConfigError, did_you_mean, listing

__all__ = ["load_experiment", "load_train_experiment", "experiment_from_dict", "apply_overrides", "parse_override"]

_INDEX_RE = re.compile(r"^(?P<key>[^\[\]]+)((?:\[\d+\])*)$")


def load_experiment(path: str | Path, overrides: Sequence[str] = ()) -> Experiment:
    """Load and validate an experiment file.

    Parameters
    ----------
    path : str or Path
        A YAML file.
    overrides : sequence of str
        ``key.path=value`` strings applied before validation, e.g. ``eval.batch_size=16``,
        ``models[1].max_length=64`` or ``models.bert.max_length=64``.

    Returns
    -------
    Experiment

    Raises
    ------
    ConfigError
        The file is missing, is not valid YAML, or does not describe a valid experiment.
    """
    path = Path(path)
    raw, text = _read_experiment_file(path)
    return experiment_from_dict(raw, overrides=overrides, source=str(path), yaml_text=text)


def load_train_experiment(
    experiment: Experiment | str | Path | Mapping[str, Any],
    overrides: Sequence[str] = (),
) -> tuple[Experiment, TrainConfig, Path]:
    """Validate an experiment and its ``train:`` section (``h2h train``).

    Parameters
    ----------
    experiment : Experiment, path or mapping
        A YAML file (its folder is the base of relative paths), a dict or a record.
    overrides : sequence of str
        ``--set`` strings; ``train.epochs=1`` reaches the train section.

    Returns
    -------
    (Experiment, TrainConfig, Path)
        The experiment (without its train section), the train settings, the base folder.

    Raises
    ------
    ConfigError
        As :func:`load_experiment`, and for an invalid ``train:`` section.
    """
    if isinstance(experiment, Experiment):
        train = getattr(experiment, "train", None) or TrainConfig()
        if overrides:
            raw = experiment.model_dump(mode="json")
            raw["train"] = train.model_dump(mode="json")
            return (*_split_train(raw, overrides, "experiment"), Path.cwd())
        return experiment, train, Path.cwd()
    if isinstance(experiment, (str, Path)):
        path = Path(experiment)
        return (*_split_train(_read_experiment_file(path)[0], overrides, str(path)), path.resolve().parent)
    return (*_split_train(dict(experiment), overrides, "experiment"), Path.cwd())


def _split_train(raw: dict[str, Any], overrides: Sequence[str], source: str) -> tuple[Experiment, TrainConfig]:
    data = apply_overrides(raw, overrides)
    train = train_config_from_dict(data.pop("train", None), source=source)
    return experiment_from_dict(data, source=source), train


def _read_experiment_file(path: Path, what: str = "experiment") -> tuple[dict[str, Any], str]:
    """The experiment (or suite) file as a mapping, and its text (for line numbers in messages)."""
    if not path.is_file():
        hint = f"it is a folder; give the {what} .yaml file inside it" if path.is_dir() else "check the path"
        raise ConfigError(f"{path}: {what} file not found ({hint})")
    text = _read_text(path, what)
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{where}: YAML syntax error: {problem} (fix the file's indentation/quoting)") from exc
    if raw is None:
        raise ConfigError(f"{path}: the {what} file is empty (see examples/ for a starting point)")
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{path}: the {what} must be a YAML mapping of keys (name, data, models …), not a {type(raw).__name__}"
        )
    _the_other_kind_of_file(path, raw, what)
    return raw, text


#: The keys only a suite file has (``SuiteConfig``'s beyond ``Experiment``'s; a test keeps them so).
SUITE_KEYS = ("datasets", "across", "datasets_at_once")


def _the_other_kind_of_file(path: Path, raw: Mapping[str, Any], what: str) -> None:
    """Refuse a suite file given as an experiment (``h2h run``, ``validate``) and an experiment given as a suite.

    Told by their keys, before any validation: otherwise each reads as the other with required keys missing.
    """
    suite_keys = [key for key in SUITE_KEYS if key in raw]
    if what == "experiment" and suite_keys and "data" not in raw:
        raise ConfigError(
            f"{path}: this is a suite file ({', '.join(k + ':' for k in suite_keys)}), not an experiment "
            f"(data:); run it with h2h suite {path}"
        )
    if what == "suite" and "data" in raw and not suite_keys:
        raise ConfigError(
            f"{path}: this is an experiment file (data:), not a suite (datasets:); run it with h2h run {path}"
        )


def experiment_from_dict(
    raw: Mapping[str, Any], *, overrides: Sequence[str] = (), source: str = "experiment", yaml_text: str | None = None
) -> Experiment:
    """Validate a plain dict as an :class:`Experiment`, after applying ``overrides``.

    Parameters
    ----------
    raw : mapping
        The experiment as nested dicts and lists (as YAML or JSON gives it).
    overrides : sequence of str
        ``key.path=value`` strings, see :func:`load_experiment`.
    source : str
        Where ``raw`` came from, used in error messages.
    yaml_text : str, optional
        The YAML text ``raw`` was read from, to point errors at a line.

    Returns
    -------
    Experiment
    """
    data = apply_overrides(raw, overrides)
    try:
        return Experiment.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            _format_validation_error(exc, source, yaml_text if not overrides else None, data=data)
        ) from exc


def parse_override(text: str) -> tuple[list[str | int], Any]:
    """Split ``"models[1].max_length=64"`` into ``(["models", 1, "max_length"], 64)``.

    The value is parsed as YAML, so ``16`` is an int, ``true`` a bool and ``[1, 2]`` a list.
    """
    if "=" not in text:
        raise ConfigError(f"--set {text}: expected KEY=VALUE, e.g. --set eval.batch_size=16")
    key, value_text = text.split("=", 1)
    path: list[str | int] = []
    for part in key.strip().split("."):
        match = _INDEX_RE.match(part)
        if not match:
            raise ConfigError(f"--set {text}: cannot read key '{key}' (use dots and [N], e.g. models[0].max_length)")
        path.append(match.group("key"))
        path.extend(int(i) for i in re.findall(r"\[(\d+)\]", part))
    try:
        value = yaml.safe_load(value_text) if value_text.strip() else ""
    except yaml.YAMLError:
        value = value_text
    return path, value


def apply_overrides(raw: Mapping[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Return a copy of ``raw`` with each ``key.path=value`` override applied.

    A list of models can be addressed by index (``models[1]`` or ``models.1``) or by the
    model's name (``models.bert``). Two overrides of the same key with different values
    are a conflict, not a silent "last one wins".
    """
    data = copy.deepcopy(dict(raw))
    seen: dict[tuple[str | int, ...], tuple[str, Any]] = {}
    for text in overrides:
        path, value = parse_override(text)
        node: Any = data
        resolved: list[str | int] = []
        for depth, part in enumerate(path):
            last = depth == len(path) - 1
            if isinstance(node, list):
                index = _list_index(node, part, text)
                resolved.append(index)
                if last:
                    node[index] = value
                else:
                    node = node[index]
            else:
                if not isinstance(node, dict):
                    raise ConfigError(f"--set {text}: '{'.'.join(map(str, resolved))}' is a value, not a section")
                resolved.append(str(part))
                if last:
                    node[str(part)] = value
                else:
                    node = node.setdefault(str(part), {})
        key = tuple(resolved)
        if key in seen and seen[key][1] != value:
            raise ConfigError(f"--set {seen[key][0]} and --set {text} conflict: both set {_format_loc(key)}; keep one")
        seen[key] = (text, value)
    return data


def _list_index(items: list[Any], part: str | int, text: str) -> int:
    if isinstance(part, int) or (isinstance(part, str) and part.isdigit()):
        index = int(part)
        if not 0 <= index < len(items):
            raise ConfigError(f"--set {text}: index {index} is out of range (there are {len(items)} entries)")
        return index
    names = [item.get("name") for item in items if isinstance(item, dict)]
    if part in names:
        return names.index(part)
    raise ConfigError(
        f"--set {text}: no entry named '{part}'{did_you_mean(str(part), [n for n in names if n])} "
        f"(names: {listing(names)})"
    )


def _read_text(path: Path, what: str = "experiment") -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a UTF-8 text file (is it the {what} YAML?)") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {what} file: {exc.strerror}") from exc


def _format_loc(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _format_validation_error(
    exc: ValidationError,
    source: str,
    yaml_text: str | None,
    schema: type[BaseModel] = Experiment,
    data: Mapping[str, Any] | None = None,
) -> str:
    errors = exc.errors()
    first = errors[0]
    loc = [p for p in first["loc"]]
    where = _format_loc(loc) or "(top level)"
    kind = first["type"]
    if kind == "extra_forbidden":
        allowed = _fields_at(loc[:-1], schema, _entry_at(data, loc[:-1]).get("kind"))
        message = f"unknown key{did_you_mean(str(loc[-1]), allowed)}"
        if allowed:
            message += f" (valid keys: {listing(allowed)})"
    elif kind == "missing":
        message = f"missing required field; add '{loc[-1]}' here (examples/ has complete experiments)"
    else:
        message = first["msg"].removeprefix("Value error, ")
        if "input" in first and kind not in ("value_error",) and not isinstance(first["input"], (dict, list)):
            message += f" (got {first['input']!r})"
    line = _line_of(yaml_text, loc) if yaml_text else None
    prefix = f"{source}:{line}" if line else source
    more = f" (+{len(errors) - 1} more error{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return f"{prefix}: {where}: {message}{more}"


def _fields_at(loc: Sequence[str | int], schema: type[BaseModel] = Experiment, kind: str | None = None) -> list[str]:
    """The valid keys of the section at ``loc`` in ``schema`` (the Experiment's unless a suite's).

    A model entry's keys are its family's (``kind``, which the error's context carries)."""
    model: Any = schema
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            return []
        model = _model_in(field.annotation)
        if model is None:
            return []
    if issubclass(model, ModelConfig) and kind in MODEL_KINDS:  # an entry of models: (the union on kind)
        model = family(kind).settings
    return list(model.model_fields)


def _entry_at(data: Any, loc: Sequence[str | int]) -> Mapping[str, Any]:
    """The mapping at ``loc`` in the validated input (empty when there is none)."""
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return {}
    return data if isinstance(data, Mapping) else {}


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _line_of(yaml_text: str, loc: Sequence[str | int]) -> int | None:
    """1-based line of the deepest node of ``loc`` that exists in the YAML text."""
    try:
        node = yaml.compose(yaml_text)
    except yaml.YAMLError:
        return None
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if k.value == part), None)
            if match is None:
                break
            line = match[0].start_mark.line + 1
            node = match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line
