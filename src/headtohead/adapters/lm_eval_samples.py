"""lm-evaluation-harness's per-document samples as a model (``kind: lm-eval``).

``lm_eval … --log_samples --output_path out`` writes one ``samples_<task>_<date>.jsonl`` per task:
one line per document and filter, with the document, its target, the per-choice log-likelihoods
(multiple choice) or the generated answer, and each per-document metric. lm-eval ships no reader
of these lines (only of their file names), so they are read here as JSON. See ``docs/harnesses.md``.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from headtohead.adapters.logged import LoggedAdapter
from headtohead.config.models.lm_eval_samples import LmEvalSettings
from headtohead.config.schema import ModelConfig
from headtohead.data.logged import TASK_COLUMN, LoggedRun
from headtohead.errors import ModelError, default_choice, did_you_mean, listing

__all__ = ["LmEvalAdapter", "sample_files"]

#: The metrics whose per-document value is "the choice taken is the right one", and how that choice is taken.
_CHOICE_RULES = ("acc", "acc_norm", "acc_bytes")
_DEFAULT_METRICS = ("acc", "exact_match")


class LmEvalAdapter(LoggedAdapter):
    """An lm-eval run's ``--log_samples`` files: each document right or wrong by the chosen metric and filter."""

    kind: ClassVar[str] = "lm-eval"

    @classmethod
    def read_log(cls, config: ModelConfig, path: Path) -> LoggedRun:
        assert isinstance(config, LmEvalSettings)
        files, warnings = sample_files(path, config.tasks, where=_where(config))
        parts = [_read_task(task, file, config) for task, file in files.items()]
        return LoggedRun(
            source=str(path),
            ids=tuple(i for p in parts for i in p["ids"]),
            texts=tuple(t for p in parts for t in p["texts"]),
            keys=tuple(k for p in parts for k in p["keys"]),
            n_choices=np.concatenate([p["n_choices"] for p in parts]),
            gold=np.concatenate([p["gold"] for p in parts]),
            correct=np.concatenate([p["correct"] for p in parts]),
            failed=np.zeros(sum(len(p["ids"]) for p in parts), dtype=bool),
            chosen=np.concatenate([p["chosen"] for p in parts]),
            choices=tuple(c for p in parts for c in p["choices"]),
            loglik=_stacked([p["loglik"] for p in parts]),
            columns={TASK_COLUMN: tuple(t for p in parts for t in p["task"])},
            warnings=(*warnings, *(w for p in parts for w in p["warnings"])),
            files=tuple(str(file.resolve()) for file in files.values()),
        )

    @classmethod
    def parts(cls, config: ModelConfig, path: Path) -> tuple[str, ...]:
        assert isinstance(config, LmEvalSettings)
        return tuple(sample_files(path, config.tasks, where=_where(config))[0])

    @classmethod
    def part_settings(cls, part: str) -> dict[str, object]:
        return {"tasks": [part]}


def _where(config: ModelConfig) -> str:
    return f"model '{config.name}' (kind lm-eval)"


def sample_files(path: Path, tasks: Sequence[str] | None, *, where: str) -> tuple[dict[str, Path], list[str]]:
    """Task → its samples file: ``path`` itself, or the newest ``samples_<task>_<date>.jsonl`` per task in a folder.

    Raises
    ------
    ModelError
        No samples file; a task asked for that the folder lacks; one task's files in two folders
        (two models' runs: give one model's folder).
    """
    found = [path] if path.is_file() else sorted(path.rglob("samples_*.jsonl"))
    if not found:
        raise ModelError(
            f"{where}: {path} holds no samples_<task>_<date>.jsonl file; run lm_eval with --log_samples "
            f"--output_path, and give one of its files or its folder"
        )
    by_task: dict[str, list[Path]] = defaultdict(list)
    for file in found:
        by_task[_task_of(file)].append(file)
    warnings = []
    chosen: dict[str, Path] = {}
    for task, files in by_task.items():
        if len({f.parent for f in files}) > 1:
            raise ModelError(
                f"{where}: task '{task}' has samples files in {len({f.parent for f in files})} folders under "
                f"{path} ({listing(str(f.parent) for f in files)}); give one model's folder"
            )
        chosen[task] = max(files, key=lambda f: f.stem.rsplit("_", 1)[-1])  # the date lm-eval writes in the name
        if len(files) > 1:
            warnings.append(f"{where}: task '{task}' was run {len(files)} times; read the newest, {chosen[task].name}")
    if tasks:
        unknown = [t for t in tasks if t not in chosen]
        if unknown:
            raise ModelError(
                f"{where}: no samples of task {listing(unknown)} in {path}"
                f"{did_you_mean(unknown[0], list(chosen))} (its tasks: {listing(sorted(chosen))})"
            )
        chosen = {t: chosen[t] for t in tasks}
    return dict(sorted(chosen.items())), warnings


def _task_of(file: Path) -> str:
    """The task of ``samples_<task>_<date>.jsonl`` (lm_eval.utils.get_file_task_name's rule)."""
    name = file.name
    return name[name.find("_") + 1 : name.rfind("_")] or file.stem


def _read_lines(file: Path, where: str) -> list[dict[str, Any]]:
    lines = []
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    lines.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ModelError(
                        f"{where}: {file}:{number} is not JSON ({exc.msg}); is it an lm-eval samples file?"
                    ) from None
    if not lines or "doc_id" not in lines[0]:
        raise ModelError(f"{where}: {file} holds no lm-eval sample (a line with doc_id, metrics, filter …)")
    return lines


def _pick(asked: str | None, offered: Sequence[str], defaults: Sequence[str], what: str, where: str) -> str:
    """The metric or filter used: the one asked for, else the first default logged, else the only one."""
    if asked is not None:
        if asked not in offered:
            raise ModelError(
                f"{where}: no {what} '{asked}' in the log{did_you_mean(asked, offered)} (logged: {listing(offered)})"
            )
        return asked
    chosen = default_choice(offered, defaults)
    if chosen is not None:
        return chosen
    raise ModelError(f"{where}: the log holds the {what}s {listing(offered)}; choose one with {what}: <name>")


def _read_task(task: str, file: Path, config: LmEvalSettings) -> dict[str, Any]:
    """One task's documents: ids, inputs, gold, right or wrong, the choice taken and the choices' log-likelihoods."""
    where = f"{_where(config)} {file.name}"
    lines = _read_lines(file, where)
    filters = sorted({str(line.get("filter", "none")) for line in lines})
    chosen_filter = _pick(config.filter, filters, ("none",), "filter", where)
    lines = [line for line in lines if str(line.get("filter", "none")) == chosen_filter]
    metric = _pick(config.metric, list(lines[0].get("metrics", [])), _DEFAULT_METRICS, "metric", where)
    delimiter = _target_delimiter(file, task)
    rows = [_document(line, metric, delimiter, where) for line in lines]
    loglik = np.full((len(rows), max(len(r["loglik"]) for r in rows)), np.nan)
    for i, r in enumerate(rows):
        loglik[i, : len(r["loglik"])] = r["loglik"]
    disagree = sum(r["disagrees"] for r in rows)
    warnings = []
    if disagree:
        warnings.append(
            f"{where}: {disagree} of {len(rows)} documents were scored {metric} against the choice their own "
            f"scores favour (a tie, or another rule): no class probabilities for them; calibration reads the others"
        )
    return {
        "warnings": warnings,
        "ids": [f"{task}/{line['doc_id']}" for line in lines],
        "texts": [r["text"] for r in rows],
        "keys": [r["key"] for r in rows],
        "n_choices": np.array([r["n_choices"] for r in rows], dtype=np.int64),
        "gold": np.array([r["gold"] for r in rows], dtype=np.int64),
        "correct": np.array([r["correct"] for r in rows], dtype=bool),
        "chosen": np.array([r["chosen"] for r in rows], dtype=np.int64),
        "choices": [r["choices"] for r in rows],
        "loglik": loglik,
        "task": [task] * len(rows),
    }


def _document(line: Mapping[str, Any], metric: str, delimiter: str, where: str) -> dict[str, Any]:
    """One document: right or wrong by ``metric``; for multiple choice its gold, choices and the choice taken."""
    value = line.get(metric)
    if isinstance(value, bool) or value in (0, 1, 0.0, 1.0):
        correct = bool(value)
    else:
        raise ModelError(
            f"{where}: document {line.get('doc_id')} has {metric} = {value!r}, not right (1) or wrong (0); "
            f"choose a per-document metric that is (acc, acc_norm, exact_match …)"
        )
    arguments = [a for _, a in sorted(line.get("arguments", {}).items(), key=lambda kv: _argument_number(kv[0]))]
    text = str(arguments[0].get("arg_0", "")) if arguments else json.dumps(line.get("doc"), sort_keys=True)
    key = line.get("doc_hash") or hashlib.sha256(json.dumps(line.get("doc"), sort_keys=True).encode()).hexdigest()
    choices = _choices(arguments, delimiter)
    loglik = _logliks(line.get("filtered_resps"), len(choices)) if metric in _CHOICE_RULES and choices else []
    if len(loglik) < 2:
        return {"text": text, "key": key, "n_choices": 0, "gold": -1, "correct": correct, "chosen": -1, "loglik": [],
                "disagrees": False, "choices": ()}  # fmt: skip
    gold = _gold(line.get("target"), choices)
    lengths = {"acc": None, "acc_norm": [len(c) for c in choices], "acc_bytes": [len(c.encode()) for c in choices]}
    scaled = np.asarray(loglik) / (np.asarray(lengths[metric], dtype=float) if lengths[metric] else 1.0)
    chosen = int(np.argmax(scaled))  # lm-eval's own rule for the metric (np.argmax of the scaled scores)
    agrees = (chosen == gold) == correct  # a verdict its own scores contradict (a tie, another rule) gets none
    return {
        "text": text,
        "key": key,
        "n_choices": len(choices),
        "gold": gold,
        "correct": correct,
        "chosen": chosen,
        "choices": tuple(choices),
        # the scores the metric ranks the choices by: their softmax is argmaxed by the choice taken, as it must be
        "loglik": scaled.tolist() if agrees else [float("nan")] * len(choices),
        "disagrees": not agrees,
    }


def _argument_number(name: str) -> int:
    digits = name.rsplit("_", 1)[-1]
    return int(digits) if digits.isdigit() else 0


def _choices(arguments: Sequence[Mapping[str, Any]], delimiter: str) -> list[str]:
    """The continuations of a multiple-choice document, without the target delimiter lm-eval put before them."""
    if len(arguments) < 2 or not all(isinstance(a.get("arg_1"), str) for a in arguments):
        return []
    return [a["arg_1"][len(delimiter) :] if a["arg_1"].startswith(delimiter) else a["arg_1"] for a in arguments]


def _logliks(responses: Any, n: int) -> list[float]:
    """Each choice's log-likelihood from ``filtered_resps`` (``[[ll, is_greedy], …]``); empty when not that shape."""
    if not isinstance(responses, list) or len(responses) != n:
        return []
    values = []
    for response in responses:
        first = response[0] if isinstance(response, list) and response else None
        try:
            values.append(float(first))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return []
    return values


def _gold(target: Any, choices: Sequence[str]) -> int:
    """The right choice's index: the target as an index, or as one of the choices' texts (-1: neither)."""
    target = target[0] if isinstance(target, list) and target else target
    text = str(target).strip()
    if text.lstrip("-").isdigit() and 0 <= int(text) < len(choices):
        return int(text)
    stripped = [c.strip() for c in choices]
    return stripped.index(text) if text in stripped else -1


def _target_delimiter(file: Path, task: str) -> str:
    """The task's ``target_delimiter`` from the ``results_*.json`` beside the samples (lm-eval's default ``" "``)."""
    for results in sorted(file.parent.glob("results_*.json"), reverse=True):
        try:
            config = json.loads(results.read_text(encoding="utf-8")).get("configs", {}).get(task)
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(config, dict) and isinstance(config.get("target_delimiter"), str):
            return str(config["target_delimiter"])
    return " "


def _stacked(blocks: Sequence[np.ndarray]) -> np.ndarray | None:
    """Tasks' log-likelihood blocks in one array (NaN where a task has fewer choices, or none); ``None`` if none has any."""
    width = max(b.shape[1] for b in blocks)
    if width == 0:
        return None
    return np.concatenate([np.pad(b, ((0, 0), (0, width - b.shape[1])), constant_values=np.nan) for b in blocks])
