"""What a suite compares, from whichever input: a finished run per data set, or a table of scores made elsewhere.

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

import csv
import itertools
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from headtohead.config.suite import RUN_METRICS
from headtohead.errors import ConfigError, DataError, ResultsError, did_you_mean, listing
from headtohead.metrics import CATALOGUE, misspelling_of
from headtohead.results import RunResult
from headtohead.results.files import REPORT_FILE, RESULTS_FILE
from headtohead.results.records import QualityMetrics
from headtohead.results.suite import DatasetPairVerdict, SuiteDataset
from headtohead.stats.across_seeds import standard_error

#: The test of a data set's verdict on a model asked with several prompts (``stats.prompts.pools``).
POOLED_TEST = "pooled-over-prompts"
#: … and on a model run several times (``stats.repeats.pools``).
REPEATS_TEST = "over-every-run"

__all__ = [
    "run_models",
    "POOLED_TEST",
    "DatasetScores",
    "metric_direction",
    "dataset_from_result",
    "results_paths",
    "read_score_table",
    "table_scale",
    "DATASET_COLUMN",
    "SEED_COLUMN",
]

#: The columns of a table of scores that are not models.
DATASET_COLUMN, SEED_COLUMN = "dataset", "seed"


@dataclass
class DatasetScores:
    """One data set's scores and what else the suite reads from it."""

    entry: SuiteDataset
    seed_values: dict[str, dict[int, float]] | None = None
    test_se: dict[str, float | None] = field(default_factory=dict)
    test_se_difference: dict[tuple[str, str], float | None] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.entry.name


def metric_direction(metric: str, lower_is_better: bool | None, *, table: bool) -> bool:
    """Whether higher is better for ``metric``: the catalogue's for its metrics (a run's, or a table's of that
    name), given (``--lower-is-better``) for a table's own.

    Raises
    ------
    ConfigError
        A run's metric that does not exist, a table's metric that misspells a catalogue one
        (:func:`headtohead.metrics.misspelling_of`), or ``--lower-is-better`` that contradicts a catalogue metric.
    """
    if table and metric not in RUN_METRICS:  # a table's own figure: free text, unless a catalogue name misspelt
        meant = misspelling_of(metric)
        if meant is not None:
            raise ConfigError(
                f"--metric {metric}: not a catalogue metric but a misspelling of one — did you mean {meant}? "
                f"(a table's own metric may have any other name; docs/cli.md, 'Metric names, and a table's metric')"
            )
        return not lower_is_better
    if metric not in RUN_METRICS:
        raise ConfigError(
            f"--metric {metric}: not a metric of a run{did_you_mean(metric, RUN_METRICS)} (choose one "
            f"of: {', '.join(RUN_METRICS)}; any name goes with --scores)"
        )
    if lower_is_better is not None and lower_is_better == RUN_METRICS[metric]:
        direction = "higher" if RUN_METRICS[metric] else "lower"
        raise ConfigError(
            f"--lower-is-better: {direction} is better for {metric}, and the catalogue's metrics carry their "
            f"direction; drop the flag (it is for a table's own metrics)"
        )
    return RUN_METRICS[metric]


def _score(result: RunResult, model: str, metric: str, where: str) -> float:
    """A model's score on the data set: a model asked with several prompts, its mean over its passes (never its best)."""
    if metric in QualityMetrics.model_fields:  # a default metric of the quality pass
        record = result.model(model)
        qualities = [p.quality for p in record.passes] if record.passes else [record.quality]
        if any(quality is None for quality in qualities):
            raise ResultsError(
                f"{where}: model '{model}' has no quality figures (speed only, h2h bench); give runs of h2h run"
            )
        return float(np.mean([getattr(quality, metric) for quality in qualities]))
    stats = result.stats
    if stats is None:
        raise ResultsError(f"{where}: no statistics, so no {metric}; give runs of h2h run")
    # a model with passes: its statistics are the means over them (stats.passes)
    if metric in stats.model(model).metrics:  # picked (stats.metrics)
        return float(stats.model(model).metrics[metric].value)
    if not CATALOGUE[metric].default and metric not in stats.settings.metrics:
        raise ResultsError(
            f"{where}: the run did not pick {metric}; add 'stats: {{metrics: [{metric}]}}' to its experiment "
            f"(a suite adds its own metric to every data set's run)"
        )
    estimate = getattr(stats.model(model), metric, None)
    if estimate is None:
        raise ResultsError(
            f"{where}: model '{model}' has no {metric} (it needs probabilities); choose another --metric"
        )
    return float(estimate.value)


def _test_se(result: RunResult, model: str, metric: str) -> float | None:
    if result.stats is None:
        return None
    try:
        estimate = result.stats.model(model).estimate(metric)
    except KeyError:
        return None
    return standard_error(estimate.low, estimate.high, estimate.confidence)


def _test_se_difference(result: RunResult, a: str, b: str, metric: str) -> float | None:
    if result.stats is None:
        return None
    try:
        difference = result.stats.comparison(a, b).difference(metric)
    except KeyError:
        return None
    return standard_error(difference.ci_low, difference.ci_high, difference.confidence)


def _verdicts(result: RunResult) -> list[DatasetPairVerdict]:
    """The run's tests of its models: its pairs, the comparisons pooled over a prompted model's prompts, and those
    over every run of a repeated model."""
    comparisons = result.stats.comparisons if result.stats is not None else []
    prompts = result.stats.prompts if result.stats is not None else None
    repeats = result.stats.repeats if result.stats is not None else None
    verdicts = [
        DatasetPairVerdict(
            model_a=c.model_a,
            model_b=c.model_b,
            significant=c.significant,
            winner=c.winner,
            p_adjusted=c.p_adjusted,
            test=c.test,
        )
        for c in comparisons
    ]
    return (
        verdicts
        + [
            DatasetPairVerdict(
                model_a=p.model_a,
                model_b=p.model_b,
                significant=p.significant,
                winner=p.winner,
                p_adjusted=p.p_adjusted,
                test=POOLED_TEST,
            )
            for p in (prompts.pools if prompts is not None else [])
        ]
        + [
            DatasetPairVerdict(
                model_a=p.model_a,
                model_b=p.model_b,
                significant=p.significant,
                winner=p.winner,
                p_adjusted=p.p_adjusted,
                test=REPEATS_TEST,
            )
            for p in (repeats.pools if repeats is not None else [])
        ]
    )


def run_models(result: RunResult) -> dict[str, list[str]]:
    """Each model of a run → the keys of its passes (``p1`` …; empty for a model measured once).

    A suite compares models, not passes: a prompted model's score on a data set is its score
    averaged over its prompts (never its best prompt, chosen after seeing the data).
    """
    return {record.name: [p.key for p in record.passes] for record in result.models}


def _seed_values(result: RunResult, models: Sequence[str], metric: str) -> dict[str, dict[int, float]] | None:
    multi = result.training.multi_seed if result.training is not None else None
    if multi is None:
        return None
    values: dict[str, dict[int, float]] = {}
    for stats in multi.models:
        if stats.model in models:
            try:
                aggregate = stats.metric(metric)
            except KeyError:
                return None
            values[stats.model] = {int(s): float(v) for s, v in zip(aggregate.seeds, aggregate.values, strict=True)}
    return values if set(values) == set(models) and any(len(v) > 1 for v in values.values()) else None


def _shown(path: Path, relative_to: Path | None) -> str:
    """``path`` relative to the suite's folder (so the folder can move with its links), as given without one."""
    if relative_to is None:
        return str(path)
    return Path(os.path.relpath(path.resolve(), relative_to.resolve())).as_posix()


def dataset_from_result(
    name: str,
    result: RunResult,
    *,
    models: Sequence[str],
    metric: str,
    results_path: Path,
    relative_to: Path | None = None,
    reused: bool = False,
) -> DatasetScores:
    """One data set's scores from its run.

    Parameters
    ----------
    name : str
    result : RunResult
    models : sequence of str
        The suite's models (each must be in the run).
    metric : str
    results_path : Path
        Where the run's ``results.json`` is (its ``report.html`` is looked for beside it).
    relative_to : Path, optional
        The suite's folder: paths inside it are stored relative to it.
    reused : bool
        The run finished in an earlier, interrupted suite.

    Raises
    ------
    ResultsError
        A model missing from the run, or the metric unavailable.
    """
    where = str(results_path)
    passes = run_models(result)
    missing = [m for m in models if m not in passes]
    if missing:
        raise ResultsError(
            f"{where}: no model {listing(missing)} (it has {listing(list(passes))}); "
            f"a suite compares the same models on every data set"
        )
    seeds = _seed_values(result, models, metric)
    scores = {
        m: (float(np.mean(list(seeds[m].values()))) if seeds else _score(result, m, metric, where)) for m in models
    }
    report = results_path.parent / REPORT_FILE
    entry = SuiteDataset(
        name=name,
        status="finished",
        results=_shown(results_path, relative_to),
        report=_shown(report, relative_to) if report.is_file() else None,
        source=result.dataset.source,
        fingerprint=result.dataset.fingerprint,
        n_examples=result.dataset.n_examples,
        n_classes=len(result.dataset.label_names),
        scores=scores,
        verdicts=_verdicts(result),
        reused=reused,
    )
    pairs = list(itertools.combinations(models, 2))
    return DatasetScores(
        entry=entry,
        seed_values=seeds,
        test_se={m: _test_se(result, m, metric) for m in models} if seeds else {},
        test_se_difference={(a, b): _test_se_difference(result, a, b, metric) for a, b in pairs} if seeds else {},
    )


def results_paths(sources: Sequence[str | Path]) -> list[tuple[str, Path]]:
    """``(data set name, results.json path)`` of each source: a ``results.json`` or the folder holding one.

    The name is the folder's; when two folders share a name, their parents' names are added.

    Raises
    ------
    ResultsError
        A source that is neither, or the same run given twice.
    """
    paths = []
    for source in sources:
        path = Path(source)
        path = path / RESULTS_FILE if path.is_dir() else path
        if not path.is_file():
            raise ResultsError(
                f"{source}: no such results.json (give the results.json of each finished run, or its "
                f"folder, e.g. h2h suite runs/*/results.json)"
            )
        paths.append(path)
    resolved = [p.resolve() for p in paths]
    if len(set(resolved)) != len(resolved):
        twice = next(p for p in paths if resolved.count(p.resolve()) > 1)
        raise ResultsError(f"{twice}: given twice; give each run once")
    depth = 1
    while True:
        names = ["/".join(p.resolve().parent.parts[-depth:]) for p in paths]
        if len(set(names)) == len(names) or depth > 8:
            return list(zip(names, paths, strict=True))
        depth += 1


def _read_table(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DataError(f"--scores {path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"--scores {path}: cannot read it as UTF-8 text ({exc})") from exc
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    lines = text.splitlines()
    header = next(csv.reader(lines[:1], delimiter=delimiter), [])
    rows = list(csv.DictReader(lines, delimiter=delimiter))
    if not rows:
        raise DataError(
            f"--scores {path}: no rows; give a header line (dataset, then one column per model) and one "
            f"row per data set"
        )
    return header, rows


def _once_each(columns: Sequence[str], source: str) -> None:
    """Refuse a column named twice: a table read by name would keep only its last column of that name."""
    twice = [c for c, n in Counter(columns).items() if n > 1]
    if twice:
        raise DataError(
            f"{source}: column '{twice[0]}' appears {list(columns).count(twice[0])} times in the header; give each "
            f"model one column with a name of its own (rename or drop the copies)"
        )


def _stripped(columns: Sequence[str], source: str) -> list[str]:
    """The column names without surrounding whitespace; two that differ only by it are refused.

    ``a `` beside ``a`` is one name to a reader (no report shows the trailing space), so it would
    read as one model listed twice. Case is kept: ``BERT`` and ``bert`` look different everywhere
    they are shown, and model names are case-sensitive everywhere else (an experiment's models,
    a suite file's, a run's ``results.json``).
    """
    stripped = [c.strip() for c in columns]
    for name in dict.fromkeys(stripped):
        spelled = list(dict.fromkeys(c for c, s in zip(columns, stripped, strict=True) if s == name))
        if len(spelled) > 1:
            shown = " and ".join(repr(c) for c in spelled)
            raise DataError(
                f"{source}: columns {shown} differ only in spaces around the name, so they would read as one "
                f"model listed twice; rename one of them or drop the copy"
            )
    return stripped


def _number(text: Any, where: str) -> float:
    try:
        value = float(str(text).strip())
    except ValueError:
        raise DataError(f"{where}: '{text}' is not a number; every model column holds one score per row") from None
    if not np.isfinite(value):
        raise DataError(f"{where}: '{text}' is not a finite number; leave no data set without a score")
    return value


def table_scale(
    datasets: Sequence[DatasetScores], metric: str, *, rope_given: bool, source: str
) -> tuple[list[DatasetScores], Literal["percent"] | None]:
    """The scale of a table's scores, read before any verdict: shares, percent (converted), or refused.

    A share metric of the catalogue (``accuracy``, ``f1_macro`` …) in [0, 1] is read as written; with
    values above 1 and none above 100 it is percent, divided by 100 (``"percent"``: the report says
    so once). Any other metric has no scale headtohead knows: its values are read as written, but
    beyond [−1, 1] the default ROPE (0.01 of the metric's units) would call a 0.3-point gap on a
    0–100 scale practically different, so such a table needs ``--rope`` in its own units.

    Raises
    ------
    DataError
        A share metric whose values are neither in [0, 1] nor in [0, 100]; a metric of unknown scale whose
        values leave [−1, 1] without ``--rope``.
    """
    values = [
        v
        for d in datasets
        for v in [*d.entry.scores.values(), *(x for s in (d.seed_values or {}).values() for x in s.values())]
    ]
    low, high = min(values), max(values)
    share = metric in CATALOGUE and CATALOGUE[metric].scale == "share"
    span = f"{low:g} to {high:g}"
    if share and 0.0 <= low and high <= 1.0:
        return list(datasets), None
    if share and 0.0 <= low and high <= 100.0:
        return [_divided(d, 100.0) for d in datasets], "percent"
    if share:
        raise DataError(
            f"{source}: {metric} is a share, but the values run from {span}: neither shares (0–1) nor percent "
            f"(0–100); fix the table, or name its own metric with --metric and give --rope in its units"
        )
    if rope_given or (-1.0 <= low and high <= 1.0):
        return list(datasets), None
    raise DataError(
        f"{source}: the values run from {span} and '{metric}' has no scale headtohead knows, so the default "
        f"ROPE of 0.01 would be 0.01 of its units; give --rope in the table's units (e.g. --rope 1 for one point "
        f"on a 0–100 scale), or --metric accuracy (any share metric) to read percent as shares"
    )


def _divided(dataset: DatasetScores, by: float) -> DatasetScores:
    """``dataset`` with every score (and every seed's) divided by ``by``."""
    entry = dataset.entry.model_copy(update={"scores": {m: v / by for m, v in dataset.entry.scores.items()}})
    seeds = (
        None
        if dataset.seed_values is None
        else {m: {s: v / by for s, v in by_seed.items()} for m, by_seed in dataset.seed_values.items()}
    )
    return replace(dataset, entry=entry, seed_values=seeds)


def read_score_table(table: str | Path | Any) -> tuple[list[str], list[DatasetScores]]:
    """The models and one :class:`DatasetScores` per data set of a table of scores.

    Parameters
    ----------
    table : path or DataFrame
        A ``.csv``/``.tsv`` file, or a pandas DataFrame: a ``dataset`` column, an optional
        ``seed`` column, one numeric column per model.

    Raises
    ------
    DataError
        No ``dataset`` column, a column named twice (or two names that differ only in the spaces
        around them: a name's surrounding spaces are dropped), fewer than two model columns, a
        cell that is not a finite number, a data set listed twice without a ``seed`` column (or
        twice with one seed).
    """
    if isinstance(table, (str, Path)):
        path = Path(table)
        source = f"--scores {path}"
        columns, rows = _read_table(path)
    else:
        source = "the scores table"
        columns = [str(c) for c in table.columns]
        _once_each(columns, source)  # before to_dict, which keeps the last column of each name
        rows = [{str(k): v for k, v in row.items()} for row in table.to_dict("records")]
    _once_each(columns, source)
    named = dict(zip(columns, _stripped(columns, source), strict=True))  # ' a ' is read as 'a'
    columns = list(named.values())
    rows = [{named.get(k, k): v for k, v in row.items()} for row in rows]
    if DATASET_COLUMN not in columns:
        raise DataError(
            f"{source}: no '{DATASET_COLUMN}' column (columns: {listing(columns)}); name the column of "
            f"data set names '{DATASET_COLUMN}'"
        )
    models = [c for c in columns if c not in (DATASET_COLUMN, SEED_COLUMN)]
    if len(models) < 2:
        raise DataError(
            f"{source}: {len(models)} model column(s) ({listing(models)}); a suite compares at least two "
            f"models, one column each"
        )
    seeded = SEED_COLUMN in columns
    values: dict[str, dict[str, dict[int, float]]] = {}
    for line, row in enumerate(rows, start=2):
        name = str(row[DATASET_COLUMN] or "").strip()
        if not name:
            raise DataError(f"{source}, line {line}: empty data set name")
        seed = int(_number(row[SEED_COLUMN], f"{source}, line {line}, column seed")) if seeded else 0
        by_model = values.setdefault(name, {m: {} for m in models})
        if seed in by_model[models[0]]:
            again = f"seed {seed} of data set '{name}'" if seeded else f"data set '{name}'"
            raise DataError(
                f"{source}, line {line}: {again} appears twice; give one row per data set"
                f"{' and seed' if seeded else ' (or add a seed column for several seeds)'}"
            )
        for model in models:
            by_model[model][seed] = _number(row[model], f"{source}, line {line}, column {model}")
    if len(values) < 2:  # nothing to compare across: refused, as one finished run or one data set of a suite file
        raise DataError(
            f"{source}: one data set ({listing(values)}); a suite compares models across at least two data "
            f"sets: give one row per data set"
        )
    datasets = []
    for name, by_model in values.items():
        seeds = by_model if seeded and any(len(v) > 1 for v in by_model.values()) else None
        scores = {m: float(np.mean(list(v.values()))) for m, v in by_model.items()}
        datasets.append(
            DatasetScores(entry=SuiteDataset(name=name, status="finished", scores=scores), seed_values=seeds)
        )
    return models, datasets
