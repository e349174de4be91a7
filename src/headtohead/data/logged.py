"""The examples of other harnesses' logs (lm-evaluation-harness, Inspect) as one data set the models share.

A harness's log holds its data and its model's answers together. Each model family that reads
such a log (``kind: lm-eval``, ``kind: inspect``) gives one :class:`LoggedRun` per model; with
``data.path: logs:`` the run's :class:`~headtohead.data.base.Dataset` is built from them here:
the items every log holds, matched by the log's own id, in the first log's order. An item
missing from some log is left out of the paired set and named (``Dataset.skipped``); two logs
holding different documents under one id are refused.

See ``docs/harnesses.md``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from headtohead.data.base import Dataset
from headtohead.data.columns import name_some
from headtohead.errors import DataError, listing

__all__ = [
    "LOGS",
    "TASK_COLUMN",
    "LoggedRun",
    "CORRECT",
    "INCORRECT",
    "NO_CHOICE",
    "UNPARSEABLE",
    "choice_name",
    "dataset_from_logs",
    "is_logs",
]

#: ``data.path`` of a run whose examples are read from its models' own logs.
LOGS = "logs:"
#: The classes of a run whose items have no choices (generated answers): the gold is "correct".
CORRECT, INCORRECT = "correct", "incorrect"
#: The class of a wrong answer naming none of a multiple-choice item's choices.
NO_CHOICE = "none of the choices"
#: Why a failed item failed when its model answered but the log's scorer could read no answer from it.
UNPARSEABLE = "unparseable"
#: The column of an item's task (lm-eval): sliced whenever the logs hold two tasks or more.
TASK_COLUMN = "task"
#: A value a column slices by when it has at most this many distinct values (metadata fields).
_SLICE_VALUES = 12
#: One-sided items named in the skip reason (the rest counted).
_NAMED = 10


def is_logs(path: str | None) -> bool:
    """Whether ``data.path`` means the examples of the models' own logs."""
    return path is not None and path.strip() == LOGS


def choice_name(index: int) -> str:
    """The class of a multiple-choice item's choice at ``index``: ``A``, ``B`` … (``choice 27`` past ``Z``).

    Examples
    --------
    >>> choice_name(0), choice_name(3), choice_name(26)
    ('A', 'D', 'choice 27')
    """
    return chr(ord("A") + index) if index < 26 else f"choice {index + 1}"


@dataclass(frozen=True)
class LoggedRun:
    """One model's log, read: per item its id, input, gold, whether the log scored it right, and what it chose.

    Attributes
    ----------
    source : str
        The log (a path), for messages.
    ids : tuple of str
        The log's own id of each item (lm-eval: ``task/doc_id``; Inspect: the sample id, with
        ``#epoch`` when the log holds several epochs).
    texts : tuple of str
        The input of each item, as reports show it.
    keys : tuple of str
        What identifies the item's content (lm-eval's ``doc_hash``; a hash of input and target):
        two logs with the same id and different keys ran different data.
    n_choices : ndarray of int64
        Choices of each multiple-choice item (0: an item without choices, a generated answer).
    gold : ndarray of int64
        The index of the right choice (-1 where there are no choices).
    correct : ndarray of bool
        The log's own score of the item, right or wrong, by the metric or scorer chosen.
    failed : ndarray of bool
        The model gave no answer (an error, a refusal): a wrong answer, counted as a failure.
    chosen : ndarray of int64
        The choice the model took (-1: unknown, or no choices).
    choices : tuple of tuple of str
        Each item's choices, as text, in order (empty: not known, or no choices): the classes are
        named by them where every item of a task offers the same ones.
    loglik : ndarray of shape (n, K), optional
        Each choice's score by the rule that took the choice (lm-eval: its log-likelihood under
        ``acc``, per character under ``acc_norm``, per byte under ``acc_bytes``; NaN past an item's
        choices, and across an item whose verdict its scores contradict): class probabilities are
        their softmax, so their argmax is the choice taken.
    columns : mapping of str to tuple
        Values to slice by, per item (lm-eval: ``task``; Inspect: metadata fields).
    groups : tuple of str, optional
        Each item's group when items repeat one unit (Inspect's epochs of a sample), else ``None``.
    group_column : str, optional
        The column name of ``groups`` (``sample``).
    warnings : tuple of str
        What the reader noticed (a log that did not finish …).
    model : str, optional
        The model the harness ran, as its log names it (``mockllm/model``).
    answers : tuple of str or None
        Each item's answer as the model gave it (empty: the log keeps none; ``None`` for an item
        without one): the answers file keeps them, and an unparseable one is listed in the report.
    failures : tuple of str or None
        Why each failed item failed (``None`` where it did not): :data:`UNPARSEABLE` for an answer
        the log's scorer could not read, else what the log says (refused, an error …).
    files : tuple of str
        The files read, as absolute paths: two models reading one file the same way are one run
        compared with itself.
    """

    source: str
    ids: tuple[str, ...]
    texts: tuple[str, ...]
    keys: tuple[str, ...]
    n_choices: np.ndarray
    gold: np.ndarray
    correct: np.ndarray
    failed: np.ndarray
    chosen: np.ndarray
    choices: tuple[tuple[str, ...], ...] = ()
    loglik: np.ndarray | None = None
    columns: Mapping[str, tuple[object, ...]] = field(default_factory=dict)
    groups: tuple[str, ...] | None = None
    group_column: str | None = None
    warnings: tuple[str, ...] = ()
    model: str | None = None
    answers: tuple[str | None, ...] = ()
    failures: tuple[str | None, ...] = ()
    files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.ids)
        if len(set(self.ids)) != n:
            twice = [item for item, count in Counter(self.ids).items() if count > 1]
            raise DataError(f"{self.source}: the id(s) {name_some(twice)} appear twice; each item must appear once")
        for name in ("n_choices", "gold", "chosen"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int64))
        for name in ("correct", "failed"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=bool))
        if n == 0:
            raise DataError(f"{self.source}: the log holds no scored item")
        if not self.choices:
            object.__setattr__(self, "choices", ((),) * n)
        if not self.failures:
            object.__setattr__(self, "failures", tuple("failed" if f else None for f in self.failed))

    def position(self) -> dict[str, int]:
        """Item id → its row in this log."""
        return {item: row for row, item in enumerate(self.ids)}

    @property
    def multiple_choice(self) -> np.ndarray:
        """Items with choices and a known right one."""
        known: np.ndarray = (self.n_choices >= 2) & (self.gold >= 0) & (self.gold < np.maximum(self.n_choices, 1))
        return known


def dataset_from_logs(
    runs: Mapping[str, LoggedRun],
    *,
    slice_columns: Sequence[str] = (),
    group_column: str | None = None,
) -> Dataset:
    """The items every model's log holds, as the run's data set (see the module docstring).

    Parameters
    ----------
    runs : mapping of str to LoggedRun
        Each model's log, by model name (the first one's order is the data's).
    slice_columns : sequence of str
        ``data.slice_columns``: the columns to keep for slices (default: ``task`` when the logs
        hold several tasks, and every other field with 2 to 12 distinct values, at most one per
        two samples).
    group_column : str, optional
        ``data.group_column``: a column grouping items (default: the logs' own, Inspect's sample).

    Returns
    -------
    Dataset
        Text items; the classes are the choices when every item is multiple choice (each task's
        own, named by their text, see :func:`_choice_classes`), else ``correct`` / ``incorrect``;
        the items of one log only are in ``skipped``.

    Raises
    ------
    DataError
        No item in common; two logs disagree on an item's content or gold; an unknown column.
    """
    names = list(runs)
    first = runs[names[0]]
    shared = set(first.ids)
    for run in runs.values():
        shared &= set(run.ids)
    skipped, skipped_ids = _one_sided(runs, shared)
    if not shared:
        raise DataError(
            f"the models' logs ({listing(r.source for r in runs.values())}) hold no item in common; "
            f"compare logs of the same task and data"
        )
    order = [row for row, item in enumerate(first.ids) if item in shared]
    ids = [first.ids[row] for row in order]
    rows = {name: _rows(run, ids) for name, run in runs.items()}
    _require_same_items(runs, rows, ids)
    multiple = all(bool(run.multiple_choice[rows[name]].all()) for name, run in runs.items())
    if multiple:
        width = np.max([run.n_choices[rows[name]] for name, run in runs.items()], axis=0)
        label_names, start = _choice_classes(first, order, width)
        if any(_names_no_choice(run, rows[name]) for name, run in runs.items()):
            label_names.append(NO_CHOICE)
        labels = start + first.gold[order]
    else:
        label_names, labels = [CORRECT, INCORRECT], np.zeros(len(ids), dtype=np.int64)
    columns, group = _columns(first, order, slice_columns, group_column)
    return Dataset(
        source=f"{LOGS} {listing(r.source for r in runs.values())}",
        modality="text",
        examples=[first.texts[row] for row in order],
        labels=labels,
        label_names=tuple(label_names),
        skipped=skipped,
        ids=tuple(ids),
        columns=columns,
        skipped_ids=tuple(skipped_ids),
        group_column=group,
    )


def _choice_classes(first: LoggedRun, order: Sequence[int], width: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The classes of multiple-choice items, each task's its own; and each item's first class (its choice 0's).

    A task whose items all offer the same choices (a classification task: ``negative``,
    ``positive``) has those choices as its classes, named by their text; a task whose choices
    change from item to item (a question's answers) has positions, ``A``, ``B`` …, as its classes,
    up to its most choices. With several tasks (lm-eval's ``task`` column) each class is named
    ``task:choice``: no class is shared by two tasks, so per-class figures, class-averaged metrics
    and class slices each read one task's outcome. Choice ``j`` of an item is class ``start + j``.
    """
    tasks = first.columns.get(TASK_COLUMN, ("",) * len(first.ids))
    of_item = [str(tasks[row]) for row in order]
    several = len(set(of_item)) > 1
    names: list[str] = []
    begins: dict[str, int] = {}
    for task in dict.fromkeys(of_item):
        rows = [row for row, t in zip(order, of_item, strict=True) if t == task]
        offered = {first.choices[row] for row in rows}
        (texts,) = offered if len(offered) == 1 else ((),)
        most = int(max(width[i] for i, t in enumerate(of_item) if t == task))
        plain = [t.strip() for t in texts]
        named = plain if len(plain) == most and all(plain) and len(set(plain)) == len(plain) else None
        begins[task] = len(names)
        prefix = f"{task}:" if several else ""
        names += [prefix + name for name in (named or [choice_name(j) for j in range(most)])]
    return names, np.array([begins[t] for t in of_item], dtype=np.int64)


def _one_sided(runs: Mapping[str, LoggedRun], shared: set[str]) -> tuple[dict[str, int], list[str]]:
    """Per model, the items only some logs hold: a skip reason naming them, and their ids."""
    skipped: dict[str, int] = {}
    ids: list[str] = []
    for name, run in runs.items():
        alone = [item for item in run.ids if item not in shared and item not in ids]
        if alone:
            others = [n for n in runs if n != name]
            reason = (
                f"in the log of '{name}' but not of {listing(others)}, left out of the paired set: "
                f"{name_some(alone, _NAMED, quote=False)}"
            )
            skipped[reason] = len(alone)
            ids += alone
    return skipped, ids


def _rows(run: LoggedRun, ids: Sequence[str]) -> np.ndarray:
    at = run.position()
    return np.array([at[item] for item in ids], dtype=np.int64)


def _require_same_items(runs: Mapping[str, LoggedRun], rows: Mapping[str, np.ndarray], ids: Sequence[str]) -> None:
    """Two logs holding different content or a different gold under one id ran different data: refused."""
    names = list(runs)
    first = runs[names[0]]
    for name in names[1:]:
        run = runs[name]
        keys_a = np.array(first.keys, dtype=object)[rows[names[0]]]
        keys_b = np.array(run.keys, dtype=object)[rows[name]]
        gold_a, gold_b = first.gold[rows[names[0]]], run.gold[rows[name]]
        differ = np.flatnonzero((keys_a != keys_b) | (gold_a != gold_b))
        if len(differ):
            raise DataError(
                f"the logs of '{names[0]}' ({first.source}) and '{name}' ({run.source}) hold different items "
                f"under the same id(s) {name_some([ids[int(i)] for i in differ], quote=False)}: they ran different "
                f"data; compare logs of the same task version and data"
            )


def _names_no_choice(run: LoggedRun, rows: np.ndarray) -> bool:
    """Whether some wrong answer of ``run`` names no other choice (a class of its own is then needed)."""
    wrong = ~run.correct[rows] & ~run.failed[rows]
    chosen, gold = run.chosen[rows], run.gold[rows]
    return bool((wrong & ((chosen < 0) | (chosen == gold))).any())


def _columns(
    first: LoggedRun, order: Sequence[int], slice_columns: Sequence[str], group_column: str | None
) -> tuple[dict[str, list[object]], str | None]:
    """The slice columns (named, or the default rule) and the group column, kept with the items."""
    available = dict(first.columns)
    if first.groups is not None and first.group_column is not None:
        available.setdefault(first.group_column, first.groups)
    distinct = {name: len({str(values[row]) for row in order}) for name, values in first.columns.items()}
    units = len({first.groups[row] for row in order}) if first.groups is not None else len(order)
    wanted = list(slice_columns) or [  # a field with a value per unit (an id) is no slice
        name
        for name, count in distinct.items()
        if 2 <= count and (name == TASK_COLUMN or (count <= _SLICE_VALUES and 2 * count <= units))
    ]
    group = group_column or (first.group_column if first.groups is not None else None)
    unknown = [c for c in [*wanted, *([group] if group else [])] if c not in available]
    if unknown:
        raise DataError(
            f"{first.source}: no field {name_some(unknown)} in the log (data.slice_columns / data.group_column); "
            f"its fields: {listing(available) if available else 'none'}"
        )
    kept = [*wanted, *([group] if group and group not in wanted else [])]
    return {name: [available[name][row] for row in order] for name in kept}, group
