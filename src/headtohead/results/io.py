"""Reading and writing result files: schema-version checks (atomic writes: :mod:`headtohead.runtime.files`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ValidationError

from headtohead.errors import ResultsError
from headtohead.runtime.files import write_bytes_atomic, write_text_atomic

if TYPE_CHECKING:  # records import pydantic models of every section; io is read by them all
    from headtohead.results.records import RunResult

_Record = TypeVar("_Record", bound=BaseModel)

__all__ = ["write_bytes_atomic", "write_text_atomic", "save_result", "load_result", "read_versioned_json"]


def save_result(result: RunResult, path: str | Path) -> None:
    """Write a :class:`~headtohead.results.records.RunResult` as indented JSON, atomically."""
    write_text_atomic(Path(path), result.model_dump_json(indent=2) + "\n")


def read_versioned_json(
    path: str | Path, record_cls: type[_Record], *, version: int, what: str, writer: str, required: Sequence[str] = ()
) -> _Record:
    """Read a versioned JSON record file; refuse newer schema versions and invalid content.

    Parameters
    ----------
    path : str or Path
    record_cls : pydantic model class
        What the file holds (``RunResult``, ``SweepResult`` …).
    version : int
        The newest schema version this headtohead writes.
    what : str
        The file's usual name, for messages (``results.json``, ``sweep.json`` …).
    writer : str
        The command that writes it (``h2h run`` …), for the fix in messages.
    required : sequence of str
        Top-level keys that must be present (tell a sweep.json from a results.json).

    Raises
    ------
    ResultsError
        Missing, unreadable, of a newer schema version, or invalid.
    """
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: file not found; give a {what} written by {writer}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(
            f"{path}: not a readable {what.removesuffix('.json')} JSON file ({exc}); give the {what} "
            f"that {writer} wrote (re-run it if the file was damaged)"
        ) from exc
    found = raw.get("schema_version") if isinstance(raw, dict) else None
    missing = [key for key in ("schema_version", *required) if not isinstance(raw, dict) or key not in raw]
    if missing or not isinstance(found, int):
        raise ResultsError(f"{path}: not a {what} written by {writer} (no {', '.join(missing) or 'schema_version'})")
    if found > version:
        raise ResultsError(
            f"{path}: schema version {found} of this {what} is newer than this headtohead understands "
            f"({version}); upgrade headtohead to read it"
        )
    try:
        return record_cls.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(map(str, first["loc"]))
        raise ResultsError(f"{path}: invalid {what} at {loc}: {first['msg']}") from exc


def load_result(path: str | Path) -> RunResult:
    """Read a ``results.json`` (or the one in the folder ``path``); refuse files of a newer schema version.

    Raises
    ------
    ResultsError
        The file is missing, not JSON, of an unknown schema version, or not a valid result.
    """
    from headtohead.results.files import results_file
    from headtohead.results.records import SCHEMA_VERSION, RunResult

    return read_versioned_json(
        results_file(path), RunResult, version=SCHEMA_VERSION, what="results.json", writer="h2h run"
    )
