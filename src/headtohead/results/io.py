"""Reading and writing result files: atomic writes, schema-version checks."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from headtohead.errors import ResultsError

__all__ = ["write_bytes_atomic", "write_text_atomic", "save_result", "load_result"]


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and a rename.

    A crash, a full disk or a kill mid-write leaves the previous file intact.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ResultsError(f"{path.parent}: cannot write results there ({exc.strerror}); "
                           f"choose another --out folder") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ResultsError(f"{path}: writing failed ({exc.strerror}); the previous file, if any, is unchanged") from exc


def write_text_atomic(path: Path, text: str) -> None:
    """Write UTF-8 ``text`` atomically (see :func:`write_bytes_atomic`)."""
    write_bytes_atomic(path, text.encode("utf-8"))


def save_result(result, path: str | Path) -> None:  # noqa: ANN001 - RunResult, imported lazily below
    """Write a :class:`~headtohead.results.records.RunResult` as indented JSON, atomically."""
    write_text_atomic(Path(path), result.model_dump_json(indent=2) + "\n")


def load_result(path: str | Path):  # noqa: ANN201
    """Read a ``results.json``; refuse files of a newer schema version than this headtohead knows.

    Raises
    ------
    ResultsError
        The file is missing, not JSON, of an unknown schema version, or not a valid result.
    """
    from headtohead.results.records import SCHEMA_VERSION, RunResult

    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: results file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: not a readable results JSON file ({exc})") from exc
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if not isinstance(version, int):
        raise ResultsError(f"{path}: no schema_version; is this a headtohead results.json?")
    if version > SCHEMA_VERSION:
        raise ResultsError(f"{path}: schema version {version} is newer than this headtohead understands "
                           f"({SCHEMA_VERSION}); upgrade headtohead to read it")
    try:
        return RunResult.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(map(str, first["loc"]))
        raise ResultsError(f"{path}: invalid results file at {loc}: {first['msg']}") from exc
