"""``training.json``: the training summary of one ``h2h train`` with the machine it ran on.

Kept apart from :mod:`headtohead.results.training` because it needs the environment record
of :mod:`headtohead.results.records`, which in turn holds the training summary of a run;
this way neither module imports the other at load time.

Changelog of :data:`TRAINING_SCHEMA_VERSION`:

* 1 — first version: environment, settings, per model × seed runs with raw step timings.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from headtohead.errors import ResultsError
from headtohead.results.base import Record
from headtohead.results.io import write_text_atomic
from headtohead.results.records import Environment
from headtohead.results.training import TrainingSummary

__all__ = ["TRAINING_SCHEMA_VERSION", "TrainingResult", "save_training_result", "load_training_result"]

TRAINING_SCHEMA_VERSION = 1


class TrainingResult(Record):
    """What ``training.json`` holds."""

    schema_version: int = TRAINING_SCHEMA_VERSION
    headtohead_version: str
    name: str
    created_at: str
    environment: Environment
    training: TrainingSummary


def save_training_result(record: TrainingResult, path: str | Path) -> None:
    """Write ``record`` as indented JSON, atomically."""
    write_text_atomic(Path(path), record.model_dump_json(indent=2) + "\n")


def load_training_result(path: str | Path) -> TrainingResult:
    """Read a ``training.json``; refuse unknown (newer) schema versions.

    Raises
    ------
    ResultsError
        Missing, unreadable or invalid file, or a schema version this headtohead does not know.
    """
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: file not found; give results.json or training.json files written by "
                           f"h2h train") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: not a readable JSON file ({exc}); give a training.json written by "
                           f"h2h train") from exc
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if not isinstance(version, int) or version > TRAINING_SCHEMA_VERSION:
        raise ResultsError(f"{path}: training schema version {version!r} is not one this headtohead reads "
                           f"(≤ {TRAINING_SCHEMA_VERSION}); upgrade headtohead or re-run h2h train")
    try:
        return TrainingResult.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ResultsError(f"{path}: invalid training record at {'.'.join(map(str, first['loc']))}: "
                           f"{first['msg']}") from exc
