"""Finished work of a run, kept per model so that ``h2h run --resume`` (and ``h2h sweep --resume``) does not redo it.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel

from headtohead.config.schema import ModelConfig
from headtohead.errors import DataError
from headtohead.results import ModelPredictions, ModelRecord
from headtohead.results.files import RESUME_DIR
from headtohead.runtime.files import write_bytes_atomic, write_text_atomic

__all__ = ["RESUME_DIR", "ResumeStore", "model_key", "unit_key", "file_stamp"]

log = logging.getLogger("headtohead")
_FORMAT = 1
_MANIFEST = "run.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
R = TypeVar("R", bound=BaseModel)


def file_stamp(path: Path) -> list[Any] | None:
    """Size and modification time of a local file, or of the files directly in a folder.

    A checkpoint retrained in place gets a new stamp (and so a new key) without hashing
    gigabytes of weights. ``None`` when ``path`` does not exist (a hub id, a module path).
    """
    try:
        if path.is_file():
            info = path.stat()
            return [info.st_size, info.st_mtime_ns]
        if path.is_dir():
            return [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in sorted(path.iterdir()) if p.is_file()]
    except OSError:
        return None
    return None


def model_key(model: ModelConfig, run_facts: Mapping[str, Any], base_dir: Path) -> str:
    """The key of one model's finished quality pass (see the module docstring).

    Parameters
    ----------
    model : ModelConfig
        The model's section of the experiment.
    run_facts : mapping
        What the run contributes (resolved data section, dataset fingerprint, seed, eval
        section, resolved device, plan hash, deterministic flag, version); JSON-serialisable.
    base_dir : Path
        The folder relative model paths are read from.

    Returns
    -------
    str
        A SHA-256 hex digest.
    """
    files: dict[str, Any] = {}
    for field in ("source", "checkpoint"):
        value = getattr(model, field, None)  # checkpoint: a key of the architecture families only
        if value:
            path = Path(value).expanduser()
            files[field] = file_stamp(path if path.is_absolute() else base_dir / path)
    for i, value in enumerate(getattr(model, "sources", None) or []):  # prediction files given as passes
        path = Path(value).expanduser()
        files[f"sources.{i}"] = file_stamp(path if path.is_absolute() else base_dir / path)
    payload = {
        "format": _FORMAT,
        "run": dict(run_facts),
        "base_dir": str(base_dir),
        "model": model.model_dump(mode="json"),
        "files": files,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def unit_key(model: ModelConfig, pass_key: str | None, run_facts: Mapping[str, Any], base_dir: Path) -> str:
    """The key of one unit's finished work: the model's (:func:`model_key`), or one pass of it (``pass_key``)."""
    key = model_key(model, run_facts, base_dir)
    return key if pass_key is None else hashlib.sha256(f"{key}#{pass_key}".encode()).hexdigest()


class ResumeStore:
    """The finished models of a run, one ``.npz`` + ``.json`` pair per model, under ``folder``.

    Parameters
    ----------
    folder : Path
        Usually ``<out>/.h2h-resume``; created on the first save.
    """

    def __init__(self, folder: str | Path, *, fingerprint: str | None = None, source: str | None = None) -> None:
        self.folder = Path(folder)
        self.fingerprint, self.source = fingerprint, source

    def check_data(self) -> None:
        """Refuse to resume work that was evaluated on other data than this run's.

        Raises
        ------
        DataError
            The entries here were evaluated on data with another fingerprint (both named).
        """
        found = self._manifest()
        if found is None or self.fingerprint is None or found.get("fingerprint") == self.fingerprint:
            return
        if not any(path.name != _MANIFEST for path in self.folder.glob("*.json")):
            return  # nothing finished there: nothing to resume, nothing to refuse
        old, new = str(found.get("fingerprint"))[:12], self.fingerprint[:12]
        where = f"{found.get('source')}: " if found.get("source") else ""
        raise DataError(
            f"{where}the data changed since the run being resumed in {self.folder.parent} (fingerprint "
            f"{old} then, {new} now), so its finished models do not fit; run without --resume to "
            f"evaluate every model on the data as it is now, or restore the data"
        )

    def _manifest(self) -> dict[str, Any] | None:
        try:
            found = json.loads((self.folder / _MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    def _write_manifest(self) -> None:
        if self.fingerprint is None:
            return
        wanted = {"format": _FORMAT, "fingerprint": self.fingerprint, "source": self.source}
        if self._manifest() != wanted:
            write_text_atomic(self.folder / _MANIFEST, json.dumps(wanted) + "\n")

    def _stem(self, name: str, key: str) -> Path:
        safe = _UNSAFE.sub("_", name).strip("._")[:48] or "model"
        return self.folder / f"{safe}-{key[:16]}"

    def save(self, key: str, record: ModelRecord, predictions: ModelPredictions) -> None:
        """Keep one finished model: predictions first, then the record that marks it finished."""
        stem = self._stem(record.name, key)
        self._write_manifest()  # first: an entry is never there without the data it belongs to
        buffer = io.BytesIO()
        arrays: dict[str, Any] = {"pred": predictions.pred}  # Any: numpy's stubs read **arrays as its keywords
        if predictions.proba is not None:
            arrays["proba"] = predictions.proba
        np.savez_compressed(buffer, **arrays)
        write_bytes_atomic(stem.with_suffix(".npz"), buffer.getvalue())
        self.save_record(key, record.name, record)

    def save_record(self, key: str, name: str, record: BaseModel) -> None:
        """Keep a finished record (the marker of a model's pass, or a swept model of ``h2h sweep``)."""
        self._write_manifest()
        entry = {"format": _FORMAT, "key": key, "record": record.model_dump(mode="json")}
        write_text_atomic(self._stem(name, key).with_suffix(".json"), json.dumps(entry) + "\n")

    def load_record(self, key: str, name: str, schema: type[R]) -> R | None:
        """The record kept by :meth:`save_record` under ``key``, or ``None`` (none, or damaged: said once)."""
        marker = self._stem(name, key).with_suffix(".json")
        if not marker.is_file():
            return None
        try:
            entry = json.loads(marker.read_text(encoding="utf-8"))
            if entry.get("format") != _FORMAT or entry.get("key") != key:
                return None
            return schema.model_validate(entry["record"])
        except Exception as exc:  # any damage means "not finished": do it again
            self._damaged(name, exc)
            return None

    def _damaged(self, name: str, exc: Exception) -> None:
        log.warning(
            "resume: the saved work of model '%s' in %s is damaged (%s: %s); doing it again",
            name,
            self.folder,
            type(exc).__name__,
            exc,
        )

    def load(
        self, key: str, name: str, *, n_examples: int, n_classes: int
    ) -> tuple[ModelRecord, ModelPredictions] | None:
        """The finished work of model ``name`` under ``key``, or ``None`` when there is none.

        A damaged or mismatching entry is reported as a warning and ignored: the model is
        then simply evaluated again.
        """
        record = self.load_record(key, name, ModelRecord)
        if record is None:
            return None
        try:
            with np.load(self._stem(name, key).with_suffix(".npz"), allow_pickle=False) as data:
                pred = data["pred"].astype(np.int64)
                proba = data["proba"].astype(np.float32) if "proba" in data.files else None
        except Exception as exc:
            self._damaged(name, exc)
            return None
        width = n_classes + len(record.labels_outside_data)  # the dataset's classes, then the model's others
        if (
            record.name != name
            or pred.shape != (n_examples,)
            or (proba is not None and proba.shape != (n_examples, width))
        ):
            log.warning(
                "resume: the saved work of model '%s' in %s does not fit this run; evaluating it again",
                name,
                self.folder,
            )
            return None
        return record, ModelPredictions(pred, proba)

    def prune(self, keep: Iterable[str]) -> None:
        """Delete entries whose key is not in ``keep`` (work of an earlier version of the experiment)."""
        if not self.folder.is_dir():
            return
        wanted = {key[:16] for key in keep}
        for path in self.folder.iterdir():
            if path.name == _MANIFEST:
                continue
            stem = path.name.rsplit(".", 1)[0]
            if path.suffix in (".json", ".npz") and stem.rsplit("-", 1)[-1] not in wanted:
                try:
                    path.unlink()
                except OSError:  # cleaning up is a courtesy, never a reason to fail a finished run
                    pass
