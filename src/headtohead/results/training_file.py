"""``training.json``: the training summary of one ``h2h train`` with the machine it ran on.

Kept apart from :mod:`headtohead.results.training` because it needs the environment record
of :mod:`headtohead.results.records`, which in turn holds the training summary of a run;
this way neither module imports the other at load time.

Changelog of :data:`TRAINING_SCHEMA_VERSION`:

* 1 — first version: environment, settings, per model × seed runs with raw step timings.
* 2 — the environment's ``onnxruntime`` version (unknown in version 1, never "not installed").
"""

from __future__ import annotations

from pathlib import Path

from headtohead.results.base import Record
from headtohead.results.io import read_versioned_json
from headtohead.results.records import Environment
from headtohead.results.training import TrainingSummary
from headtohead.runtime.files import write_text_atomic

__all__ = ["TRAINING_SCHEMA_VERSION", "TrainingResult", "save_training_result", "load_training_result"]

TRAINING_SCHEMA_VERSION = 2


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
    """Read a ``training.json``; refuse newer schema versions (see :func:`read_versioned_json`)."""
    return read_versioned_json(
        path, TrainingResult, version=TRAINING_SCHEMA_VERSION, what="training.json", writer="h2h train"
    )
