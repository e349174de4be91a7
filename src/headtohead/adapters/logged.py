"""What every family reading another harness's log shares: the log read once, its items looked up by id.

A family of this kind (``kind: lm-eval``, ``kind: inspect``) implements :meth:`LoggedAdapter.read_log`,
which turns its log into a :class:`~headtohead.data.logged.LoggedRun`; the run's data set is built
from every model's log (:func:`headtohead.data.logged.dataset_from_logs`), and each model's outputs
are its own log's verdicts on those items, here. See ``docs/harnesses.md``.
"""

from __future__ import annotations

import functools
import json
from abc import abstractmethod
from pathlib import Path
from typing import ClassVar

import numpy as np

from headtohead.adapters.base import LoadContext, LookedUpAdapter, StoredOutputs
from headtohead.adapters.prompting import Answer, AnswerLog, Reading
from headtohead.config.models import family, model_settings
from headtohead.config.schema import ModelConfig
from headtohead.data.base import Dataset
from headtohead.data.logged import CORRECT, INCORRECT, NO_CHOICE, UNPARSEABLE, LoggedRun, choice_name
from headtohead.errors import ModelError, listing
from headtohead.runtime.extras import missing_dependency

__all__ = ["LoggedAdapter", "logged_outputs"]

NO_PREDICTION = -1  # results.predictions.NO_PREDICTION (adapters come before results)


class LoggedAdapter(LookedUpAdapter):
    """Base of the families whose outputs are another harness's log, scored there, looked up here by item id."""

    no_forward_reason: ClassVar[str] = "reads a harness's log, not a forward pass; its items are looked up by id"

    def __init__(self, config: ModelConfig, context: LoadContext) -> None:
        super().__init__(config, context)
        self.run: LoggedRun | None = None
        self.readings: dict[int, Reading] = {}

    @classmethod
    @abstractmethod
    def read_log(cls, config: ModelConfig, path: Path) -> LoggedRun:
        """The log at ``path`` read with ``config``'s settings (metric, filter, scorer …).

        Raises
        ------
        ModelError
            The log cannot be read, or holds no score the settings can use.
        """

    @classmethod
    def parts(cls, config: ModelConfig, path: Path) -> tuple[str, ...]:
        """The parts of the log that are data sets of their own (lm-eval's tasks); empty: one data set."""
        return ()

    @classmethod
    def part_settings(cls, part: str) -> dict[str, object]:
        """The settings that read only ``part`` of the log (an entry's keys)."""
        raise ModelError(f"a log of kind {cls.kind} holds one data set")

    @classmethod
    def logged(cls, config: ModelConfig, base_dir: Path) -> LoggedRun:
        """:meth:`read_log` of the entry's source, read once per file version and settings."""
        path = Path(config.source).expanduser()
        path = path if path.is_absolute() else base_dir / path
        if not path.exists():
            raise ModelError(
                f"model '{config.name}' (kind {config.kind}): {path} not found (a log file or folder; relative "
                f"paths are read from the experiment's folder)"
            )
        stamp = path.stat().st_mtime_ns
        try:
            return _read_once(cls, config.model_dump_json(), str(path), stamp)
        except ModuleNotFoundError as exc:  # its reader (inspect_ai) not installed; read before any model loads
            where = f"model '{config.name}' (kind {config.kind})"
            raise missing_dependency(exc, where, family(config.kind).extra) or exc from None

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> LoggedAdapter:
        adapter = cls(config, context)
        adapter.label_names = context.label_names
        adapter.run = cls.logged(config, context.base_dir)
        for note in adapter.run.warnings:
            adapter.warn(note)
        return adapter

    def stored_outputs(self, dataset: Dataset, indices: np.ndarray) -> StoredOutputs:
        """The log's verdicts on the examples at ``indices`` (by id), as predictions in the data's classes."""
        assert self.run is not None
        if dataset.ids is None:
            raise ModelError(
                f"model '{self.name}' (kind {self.kind}) is matched to the data by the log's item ids; the data "
                f"has none (use data.path: logs: to read the examples from the logs)"
            )
        at = self.run.position()
        wanted = [dataset.ids[i] for i in np.asarray(indices, dtype=np.int64)]
        missing = [item for item in wanted if item not in at]
        if missing:
            raise ModelError(
                f"model '{self.name}' (kind {self.kind}): its log {self.run.source} has no item "
                f"{listing(missing)}; read the data from the logs (data.path: logs:), which leaves such items out"
            )
        rows = np.array([at[item] for item in wanted], dtype=np.int64)
        out = logged_outputs(self.run, rows, dataset.labels[np.asarray(indices, dtype=np.int64)], dataset.label_names)
        if self.run.answers:  # the log keeps the model's answers: each read as the log's scorer read it
            for index, row, pred in zip(np.asarray(indices).tolist(), rows.tolist(), out.pred.tolist(), strict=True):
                self.readings[int(index)] = _reading(self.run, row, pred)
        return out

    def answer_record(self) -> AnswerLog | None:
        """The answers the log keeps (Inspect's), as the run's records keep an LLM's; ``None`` when it keeps none."""
        if self.run is None or not self.run.answers:
            return None
        return AnswerLog(model=self.run.model or self.run.source, readings=dict(self.readings), probabilities=False)


@functools.lru_cache(maxsize=16)
def _read_once(cls: type[LoggedAdapter], settings: str, path: str, stamp: int) -> LoggedRun:
    config = model_settings(json.loads(settings))
    return cls.read_log(config, Path(path))


def _reading(run: LoggedRun, row: int, pred: int) -> Reading:
    """One item's answer as the log has it: read by its scorer, unparseable, or none (why, from the log)."""
    failure = run.failures[row]
    if failure is None:
        return Reading(Answer(text=run.answers[row]), None if pred < 0 else pred, None, "read by the log's scorer")
    if failure == UNPARSEABLE and run.answers[row] is not None:
        return Reading(Answer(text=run.answers[row]), None, None)  # unparseable: an answer, no label
    return Reading(Answer(error=failure), None, None, "no answer")


def logged_outputs(run: LoggedRun, rows: np.ndarray, labels: np.ndarray, label_names: tuple[str, ...]) -> StoredOutputs:
    """Predictions that are right exactly where the log scored its items right.

    A right item predicts its label; a wrong one the choice the model took, when it names another
    class of the data, else :data:`~headtohead.data.logged.NO_CHOICE` (multiple choice) or
    ``incorrect``; a failed one nothing (a failure, counted wrong). Probabilities come from the
    choices' scores (a softmax over the item's choices, in its own task's classes) when the log
    holds them and the classes are the choices.
    """
    index = {name: k for k, name in enumerate(label_names)}
    multiple = CORRECT not in index
    other = index.get(NO_CHOICE if multiple else INCORRECT)
    pred = np.empty(len(rows), dtype=np.int64)
    for i, (row, label) in enumerate(zip(rows.tolist(), np.asarray(labels).tolist(), strict=True)):
        named = _class_of(run, row, label, label_names, int(run.chosen[row])) if multiple else None
        if run.failed[row]:
            pred[i] = NO_PREDICTION
        elif run.correct[row]:
            pred[i] = label
        elif named is not None and named != label:
            pred[i] = named
        elif other is not None:
            pred[i] = other
        else:
            raise ModelError(
                f"{run.source}: item {run.ids[row]} is scored wrong but names no class of the data "
                f"({listing(label_names)}); read the data from the logs (data.path: logs:)"
            )
    if not multiple:
        return StoredOutputs(pred, None)
    fits = [
        _class_of(run, r, c, label_names, int(run.gold[r])) == c
        for r, c in zip(rows.tolist(), np.asarray(labels).tolist(), strict=True)
    ]
    start = np.where(fits, np.asarray(labels, dtype=np.int64) - run.gold[rows], -1)  # -1: its choices are no classes
    return StoredOutputs(pred, _choice_probabilities(run, rows, start, len(label_names)))


def _class_of(run: LoggedRun, row: int, label: int, label_names: tuple[str, ...], choice: int) -> int | None:
    """The class of the item's choice ``choice``, ``None`` when the data has none for it.

    The data read from the logs gives an item's choices consecutive classes of its own task, its
    gold among them (:func:`headtohead.data.logged.dataset_from_logs`), each named by its text or
    position (``task:`` before it with several tasks); other data's classes must be named so too.
    """
    gold = int(run.gold[row])
    at = label - gold + choice
    if choice < 0 or gold < 0 or not 0 <= at < len(label_names):
        return None
    texts = run.choices[row]
    names = {choice_name(choice), *([texts[choice].strip()] if choice < len(texts) else [])}
    named = label_names[at]
    return at if any(named == name or named.endswith(f":{name}") for name in names) else None


def _choice_probabilities(run: LoggedRun, rows: np.ndarray, start: np.ndarray, k: int) -> np.ndarray | None:
    """A softmax of each item's choice scores, in its choices' classes (from ``start``; 0 in every other class).

    NaN rows: a failed item, and one with no finite score (its verdict contradicted its scores).
    """
    if run.loglik is None:
        return None
    loglik = run.loglik[rows]
    width = loglik.shape[1]
    finite = np.where(np.isfinite(loglik), loglik, -np.inf)
    none = ~np.isfinite(finite).any(axis=1) | (start < 0)
    start = np.maximum(start, 0)
    finite[none] = 0.0  # NaN below, without a warning of exp(-inf + inf)
    weights = np.exp(finite - finite.max(axis=1, keepdims=True))
    proba = np.zeros((len(rows), k + width), dtype=np.float64)  # room past the last class: zeros, cut below
    columns = start[:, None] + np.arange(width)[None, :]
    np.put_along_axis(proba, columns, weights / weights.sum(axis=1, keepdims=True), axis=1)
    proba = proba[:, :k]
    proba[run.failed[rows] | none] = np.nan
    return proba.astype(np.float32)
