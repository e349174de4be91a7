"""Several runs in one report: loaded, labelled, grouped by the machine they ran on, checked for mismatches.

Typical use: the same models measured on two machines (``h2h report cpu/results.json
gpu/results.json``). Runs are grouped by environment (host, CPU, GPUs); a warning names
every setting known to move scores that differs between runs — a model's batch size, precision,
device, truncation length, decoding settings and prompt, a library's version, the data
(:func:`headtohead.results.score_settings.setting_differences`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from headtohead.errors import ResultsError
from headtohead.report.words.score_settings import setting_warnings, unchecked_note
from headtohead.results.files import TRAINING_FILE, results_file
from headtohead.results.predictions import Predictions
from headtohead.results.records import Environment, RunResult
from headtohead.results.score_settings import score_settings, setting_differences
from headtohead.results.training import TrainingSummary

__all__ = ["RunEntry", "EnvironmentGroup", "MergedRuns", "load_runs", "merge_runs", "as_merged"]


@dataclass(frozen=True)
class RunEntry:
    """One run in a report.

    Attributes
    ----------
    result : RunResult
    label : str
        How the report names this run (unique within the report).
    source : Path or None
        The ``results.json`` it was read from.
    predictions : Predictions or None
        Its per-example predictions, when available.
    training : TrainingSummary or None
        How the models were trained (``h2h train``), when they were.
    """

    result: RunResult
    label: str
    source: Path | None = None
    predictions: Predictions | None = None
    training: TrainingSummary | None = None


@dataclass(frozen=True)
class EnvironmentGroup:
    """Runs measured on one machine."""

    key: str
    title: str
    environment: Environment
    runs: list[RunEntry]


@dataclass(frozen=True)
class MergedRuns:
    """Everything a report shows: runs grouped by machine, and what the reader must be warned about.

    ``warnings``: one per setting known to move scores that differs between the runs
    (:mod:`headtohead.report.words.score_settings`); ``notes``: the settings some run did not
    record, so that they could not be checked.
    """

    groups: list[EnvironmentGroup]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def runs(self) -> list[RunEntry]:
        """All runs, group after group."""
        return [run for group in self.groups for run in group.runs]

    @property
    def model_names(self) -> list[str]:
        """Every model name, in order of first appearance (this order fixes each model's colour)."""
        names = [m.name for run in self.runs for m in run.result.models]
        names += [model for run in self.runs if run.training is not None for model in run.training.models]
        return list(dict.fromkeys(names))


def _machine_key(env: Environment) -> str:
    gpus = ",".join(g.name for g in env.gpus)
    return f"{env.hostname}|{env.cpu_model}|{gpus}"


def _machine_title(env: Environment) -> str:
    gpus = ", ".join(g.name for g in env.gpus)
    return f"{env.hostname} — {env.cpu_model}" + (f" · {gpus}" if gpus else " · no GPU")


def _training(result: RunResult, folder: Path | None) -> TrainingSummary | None:
    """The run's training record: a field of the result, or ``training.json`` beside it."""
    inline = getattr(result, "training", None)
    if isinstance(inline, TrainingSummary):
        return inline
    path = folder / TRAINING_FILE if folder is not None else None
    if path is None or not path.is_file():
        return None
    from headtohead.results.training_file import load_training_result

    return load_training_result(path).training


def load_runs(paths: Sequence[str | Path], *, with_predictions: bool = True) -> list[RunEntry]:
    """Read ``results.json`` files (or the folders holding them), with their predictions when present.

    Parameters
    ----------
    paths : sequence of str or Path
    with_predictions : bool
        Also read each run's ``predictions.npz`` (skipped silently when the file is absent).

    Returns
    -------
    list of RunEntry
        Labelled by run name, made unique with the host name or the file path when needed.

    Raises
    ------
    ResultsError
        A file is missing or is not a results file.
    """
    from headtohead.results.io import load_result

    if not paths:
        raise ResultsError("no results file given; pass one or more results.json files written by h2h run")
    loaded = []
    for raw in paths:
        path = results_file(Path(raw))
        if not path.is_file():
            raise ResultsError(
                f"{path}: no such results file; pass a results.json written by h2h run (or the folder that holds it)"
            )
        result = load_result(path)
        predictions = None
        npz = path.parent / result.predictions_file
        if with_predictions and npz.is_file():
            predictions = Predictions.load(npz)
        loaded.append((result, path, predictions))
    labels = _unique_labels([(r, p) for r, p, _ in loaded])
    return [
        RunEntry(result=r, label=label, source=p, predictions=pr, training=_training(r, p.parent))
        for (r, p, pr), label in zip(loaded, labels, strict=True)
    ]


def _unique_labels(runs: Sequence[tuple[RunResult, Path | None]]) -> list[str]:
    """Run names; where a name repeats, with the host, and where that repeats too, with the folder."""
    labels = [r.name for r, _ in runs]
    for attempt in ("host", "folder"):
        repeated = {label for label in labels if labels.count(label) > 1}
        if not repeated:
            return labels
        for i, (result, path) in enumerate(runs):
            if labels[i] in repeated:
                if attempt == "host":
                    labels[i] = f"{result.name} @ {result.environment.hostname}"
                else:
                    where = str(path.parent) if path is not None else f"#{i + 1}"
                    labels[i] = f"{labels[i]} ({where})"
    if len(set(labels)) != len(labels):  # the same file twice
        labels = [f"{label} #{i + 1}" for i, label in enumerate(labels)]
    return labels


def _setting_lines(runs: Sequence[RunEntry]) -> tuple[list[str], list[str]]:
    """A warning per setting known to move scores that differs between the runs, and the note of those unchecked."""
    differences = setting_differences([score_settings(run.result, run.label) for run in runs])
    note = unchecked_note(differences)
    return setting_warnings(differences), [note] if note is not None else []


def merge_runs(runs: Sequence[RunEntry]) -> MergedRuns:
    """Group runs by machine (in order of first appearance) and collect the mismatch warnings.

    Parameters
    ----------
    runs : sequence of RunEntry
        Unique labels.

    Returns
    -------
    MergedRuns

    Raises
    ------
    ResultsError
        No runs, or two runs with the same label.
    """
    if not runs:
        raise ResultsError("no runs to report; pass one or more results.json files written by h2h run")
    labels = [r.label for r in runs]
    if len(set(labels)) != len(labels):
        raise ResultsError(f"two runs are labelled alike ({', '.join(labels)}); give each run a unique label")
    groups: dict[str, EnvironmentGroup] = {}
    for run in runs:
        env = run.result.environment
        key = _machine_key(env)
        if key not in groups:
            groups[key] = EnvironmentGroup(key=key, title=_machine_title(env), environment=env, runs=[])
        groups[key].runs.append(run)
    warnings, notes = _setting_lines(runs) if len(runs) > 1 else ([], [])
    return MergedRuns(groups=list(groups.values()), warnings=warnings, notes=notes)


def as_merged(
    results: RunResult | Sequence[RunResult] | MergedRuns,
    *,
    predictions: Predictions | Sequence[Predictions | None] | None = None,
) -> MergedRuns:
    """Accept one result, several, or an already merged set, and return a :class:`MergedRuns`.

    ``predictions`` goes with ``results`` (one, or one per result).
    """
    if isinstance(results, MergedRuns):
        return results
    items = [results] if isinstance(results, RunResult) else list(results)
    if predictions is None or isinstance(predictions, Predictions):
        preds: list[Predictions | None] = [predictions] + [None] * (len(items) - 1)
    else:
        preds = list(predictions)
    labels = _unique_labels([(r, None) for r in items])
    return merge_runs(
        [
            RunEntry(result=r, label=label, predictions=p, training=_training(r, None))
            for r, label, p in zip(items, labels, preds, strict=True)
        ]
    )
