"""``headtohead.suite`` (``h2h suite``): the same models on several data sets, then the statistics across them.

See ``docs/statistics.md``, "Running a suite".
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, cast

from headtohead.config.margins import parse_alpha
from headtohead.config.suite import FigureConfig, SuiteConfig, load_suite, suite_from_dict
from headtohead.errors import ConfigError, ResultsError, did_you_mean, listing
from headtohead.pipeline.outputs import OutputLock, check_writable, folder_owner
from headtohead.pipeline.run import Run
from headtohead.pipeline.suite_inputs import (
    DatasetScores,
    dataset_from_result,
    metric_direction,
    read_score_table,
    results_paths,
    run_models,
    table_scale,
)
from headtohead.pipeline.suite_runs import Progress, run_datasets
from headtohead.report.words.score_settings import setting_warnings, unchecked_note
from headtohead.report.words.suite import suite_verdict, suite_warnings
from headtohead.report.write import write_suite_reports
from headtohead.results import load_result
from headtohead.results.files import RESULTS_FILE, SUITE_FILE
from headtohead.results.score_settings import score_settings, setting_differences
from headtohead.results.suite import AcrossStatistics, SuiteDataset, SuiteResult, load_suite_result, save_suite_result
from headtohead.runtime.offline import offline_mode
from headtohead.stats.across_datasets import compare_across_datasets
from headtohead.stats.across_seeds import seed_analysis
from headtohead.version import __version__

__all__ = ["suite", "SuiteOutcome"]


@dataclass
class SuiteOutcome:
    """What :func:`suite` returns: the record, where it was saved, and the runs made by this call.

    In a notebook a ``SuiteOutcome`` shows the verdict and the rank table (``_repr_html_``).
    """

    result: SuiteResult
    out_dir: Path | None
    runs: dict[str, Run] = field(default_factory=dict)

    @property
    def failed(self) -> list[SuiteDataset]:
        """The data sets that failed (each with its one-line error)."""
        return self.result.failed

    def __repr__(self) -> str:
        from headtohead.report.notebook import suite_text

        return suite_text(self.result, out_dir=self.out_dir)

    def _repr_html_(self) -> str:
        from headtohead.report.notebook import suite_html

        return suite_html(self.result, out_dir=self.out_dir)


def suite(
    source: SuiteConfig | str | Path | Mapping[str, Any] | Sequence[str | Path] | None = None,
    *,
    scores: str | Path | Any | None = None,
    out_dir: str | Path | None = None,
    overrides: Sequence[str] = (),
    metric: str | None = None,
    lower_is_better: bool | None = None,
    rope: float | None = None,
    alpha: float | None = None,
    name: str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    offline: bool = False,
    deterministic: bool = False,
    base_dir: str | Path | None = None,
    progress: Progress | None = None,
    on_event: Callable[[str], None] | None = None,
    seed: int = 0,
    baseline: str | None = None,
    figure_size: str | tuple[float | None, float | None] | None = None,
) -> SuiteOutcome:
    """Compare the same models across several data sets.

    Parameters
    ----------
    source : suite file, SuiteConfig, mapping, or results.json paths
        A suite YAML file (or its dict / record): every data set is run. Or finished runs: a
        ``results.json`` (or its folder) per data set.
    scores : path or DataFrame, optional
        Instead of ``source``: a table with a ``dataset`` column and one column per model
        (``.csv`` or ``.tsv``; an optional ``seed`` column).
    out_dir : str or Path, optional
        Folder of ``suite.json`` and its reports, and of each data set's run (``<out>/<name>/``);
        nothing is written when ``None``.
    overrides : sequence of str
        ``--set`` strings for a suite file (``across.metric=f1_macro``, ``eval.batch_size=16``).
    metric : str, optional
        The per-data-set figure compared (default: the suite's ``across.metric``, else
        ``accuracy``; for a table, the name of what it holds, ``score`` by default).
    lower_is_better : bool, optional
        For a table: its scores are better when lower (losses, error rates).
    rope : float, optional
        Region of practical equivalence of the Bayesian signed-rank test, in the metric's units
        (default: the suite's ``across.rope``, else 0.01).
    alpha : float, optional
        Level across data sets (default: the suite's ``stats.alpha``, else 0.05).
    name : str, optional
        The suite's name for finished runs or a table (default ``suite`` / the table's file name).
    resume : bool
        Skip the data sets that finished in an earlier run into ``out_dir`` (same experiment,
        same data) and resume the others model by model.
    overwrite : bool
        Replace another suite's results in ``out_dir`` (and other experiments' runs in its
        data set folders).
    offline : bool
        No network attempt while the suite runs.
    deterministic : bool
        Torch's deterministic algorithms in every data set's run (``--deterministic``).
    base_dir : str or Path, optional
        Folder of relative paths of a dict or record suite (default: the current directory).
    progress : callable, optional
        ``progress(task, done, total)``; tasks are prefixed with the data set's name.
    on_event : callable, optional
        Receives one line per data set as it starts, finishes, fails or is skipped.
    seed : int
        Seed of the Monte-Carlo and bootstrap draws of the statistics.
    baseline : str, optional
        A model to compare every other with (Demšar's comparisons with a control): Holm over
        these k − 1 comparisons, beside every pair.
    figure_size : (width, height) in inches, or ``"WxH"``, optional
        The size of the CD diagram written for a paper (``cd.svg``, ``cd.pdf``; either side
        ``None``: the default; ``"3.5x1.6"`` as ``--figure-size`` takes it); it replaces a suite
        file's ``across.figure``. The report's own diagram keeps the screen size.

    Returns
    -------
    SuiteOutcome
        ``outcome.failed`` lists the data sets that failed (the statistics use the others).

    Raises
    ------
    H2HError
        An invalid suite, run, table or option (a baseline that is not one of the models); the
        same data given as two data sets; an output folder that holds another suite's results or
        is in use. A data set that fails while running does not raise: it is recorded.
    RunInterrupted
        SIGINT/SIGTERM arrived; the finished data sets are kept (``resume=True`` skips them).

    Examples
    --------
    >>> outcome = headtohead.suite("suite.yaml", out_dir="runs/suite")          # doctest: +SKIP
    >>> outcome.result.average_ranks                                            # doctest: +SKIP
    {'lr': 1.2, 'nb': 1.8}
    >>> headtohead.suite(scores="demsar.csv", metric="auc").result.nemenyi_cd   # doctest: +SKIP
    """
    say = on_event or (lambda line: None)
    kind = _input_kind(source, scores)
    figure = _figure_config(figure_size)
    alpha = None if alpha is None else parse_alpha(alpha)  # the one rule of every --alpha, before anything is read
    given = [
        flag for flag, on in (("--set", overrides), ("--resume", resume), ("--deterministic", deterministic)) if on
    ]
    if kind != "suite" and given:
        raise ConfigError(f"{given[0]} applies to a suite file; finished runs and --scores are only read")
    if kind == "scores":
        table_name = name or (Path(scores).stem if isinstance(scores, (str, Path)) else "scores")
        models, datasets = read_score_table(scores)
        settings = _Settings(
            name=table_name,
            metric=metric or "score",
            higher=metric_direction(metric or "score", lower_is_better, table=True),
            alpha=alpha if alpha is not None else 0.05,
            rope=rope if rope is not None else 0.01,
            baseline=_baseline(baseline, models),
            figure=figure.size,
        )
        source = f"--scores {scores}" if isinstance(scores, (str, Path)) else "the scores table"
        datasets, scale = table_scale(datasets, settings.metric, rope_given=rope is not None, source=source)
        settings = replace(settings, scale=scale)  # read before any verdict: shares, percent, or refused
        return _finish(kind, settings, models, datasets, out_dir, overwrite=overwrite, seed=seed)
    if kind == "results":
        paths: list[str | Path] = (
            [source] if isinstance(source, (str, Path)) else list(cast(Sequence["str | Path"], source))
        )
        chosen = metric or "accuracy"
        settings = _Settings(
            name=name or "suite",
            metric=chosen,
            higher=metric_direction(chosen, lower_is_better, table=False),
            alpha=alpha if alpha is not None else 0.05,
            rope=rope if rope is not None else 0.01,
            figure=figure.size,
        )
        models, datasets, differ = _read_runs(paths, chosen, out_dir)
        settings = replace(settings, baseline=_baseline(baseline, models))
        return _finish(kind, settings, models, datasets, out_dir, overwrite=overwrite, seed=seed, differ=differ)
    config, base = _suite_config(source, overrides, base_dir, metric=metric, rope=rope)  # type: ignore[arg-type]
    if lower_is_better is not None:
        metric_direction(config.across.metric, lower_is_better, table=False)  # refuses a contradiction
    settings = _Settings(
        name=config.name,
        metric=config.across.metric,
        higher=config.across.higher_is_better,
        alpha=alpha if alpha is not None else config.stats.alpha,
        rope=config.across.rope,
        bayes_samples=config.across.bayes_samples,
        baseline=_baseline(baseline, [m.name for m in config.models]) or config.across.baseline,  # before any run
        figure=figure.size if figure_size is not None else config.across.figure.size,
    )
    out = Path(out_dir) if out_dir is not None else None
    with contextlib.ExitStack() as stack:
        if out is not None:
            stack.enter_context(_claim(out, config.name, "suite", overwrite=overwrite))
        if offline:
            stack.enter_context(offline_mode())
        datasets, runs = run_datasets(
            config,
            base,
            out,
            resume=resume,
            overwrite=overwrite,
            offline=offline,
            deterministic=deterministic,
            progress=progress,
            say=say,
        )
        outcome = _finish(
            "suite",
            settings,
            [m.name for m in config.models],
            datasets,
            out,
            overwrite=overwrite,
            seed=seed,
            claimed=True,
            suite_record=config.model_dump(mode="json"),
        )
    outcome.runs = runs
    return outcome


@dataclass(frozen=True)
class _Settings:
    name: str
    metric: str
    higher: bool
    alpha: float
    rope: float
    bayes_samples: int = 50_000
    baseline: str | None = None
    figure: tuple[float | None, float | None] | None = None
    scale: Literal["percent"] | None = None  # a table of a share metric written in percent (read as shares)


def _figure_config(size: str | tuple[float | None, float | None] | None) -> FigureConfig:
    """The CD diagram's size as given to :func:`suite` (``--figure-size``), checked as ``across.figure`` is."""
    if size is None:
        return FigureConfig()
    if isinstance(size, str):
        return FigureConfig.read(size)  # one line naming --figure-size, before anything runs
    try:
        width, height = size
        return FigureConfig(width=width, height=height)
    except (TypeError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        raise ConfigError(
            f"figure_size={size!r}: give (width, height) in inches, each more than 0 (None: the default), "
            f"e.g. (3.5, 1.6)"
        ) from exc


def _baseline(name: str | None, models: Sequence[str]) -> str | None:
    """``name`` when it is one of the models; refused otherwise."""
    if name is not None and name not in models:
        raise ConfigError(
            f"--baseline {name}: not one of the models{did_you_mean(name, models)} (they are: "
            f"{listing(list(models))}); name the model the others are compared with"
        )
    return name


def _each_data_once(datasets: Sequence[DatasetScores], kind: str) -> None:
    """Refuse the same data given as two data sets: it would count twice, and N is what every p across data sets reads."""
    seen: dict[str, str] = {}
    for data in datasets:
        fingerprint = data.entry.fingerprint
        if data.entry.status != "finished" or fingerprint is None:
            continue
        if fingerprint in seen:
            kept = " (their runs are kept: remove one from the suite file, then --resume)" if kind == "suite" else ""
            raise ResultsError(
                f"data sets '{seen[fingerprint]}' and '{data.name}' hold the same data (fingerprint "
                f"{fingerprint[:12]}); a data set counted twice makes N too large and every p across data sets "
                f"too small: give each data set once{kept}"
            )
        seen[fingerprint] = data.name


def _input_kind(source: object, scores: object) -> str:
    if scores is not None:
        if source is not None:
            raise ConfigError("give a suite file, finished runs (results.json), or --scores, not two of them")
        return "scores"
    if source is None:
        raise ConfigError(
            "nothing to compare: give a suite file (SUITE.yaml), the results.json of finished runs, "
            "or --scores table.csv"
        )
    if isinstance(source, (SuiteConfig, Mapping)):
        return "suite"
    paths = [source] if isinstance(source, (str, Path)) else list(source)  # type: ignore[call-overload]
    suffixes = {Path(p).suffix.lower() for p in paths}
    if suffixes & {".yaml", ".yml"}:
        if len(paths) > 1:
            raise ConfigError(
                f"give one suite file, not {len(paths)} files ({listing([str(p) for p in paths])}); "
                f"finished runs are given as their results.json files"
            )
        return "suite"
    return "results"


def _suite_config(
    source: SuiteConfig | str | Path | Mapping[str, Any] | Sequence[str | Path],
    overrides: Sequence[str],
    base_dir: str | Path | None,
    *,
    metric: str | None,
    rope: float | None,
) -> tuple[SuiteConfig, Path]:
    everything = list(overrides)
    if metric is not None:
        everything.append(f"across.metric={metric}")
    if rope is not None:
        everything.append(f"across.rope={rope}")
    if isinstance(source, SuiteConfig):
        if everything:
            return suite_from_dict(source.model_dump(mode="json"), overrides=everything), Path(base_dir or Path.cwd())
        return source, Path(base_dir or Path.cwd())
    if isinstance(source, Mapping):
        return suite_from_dict(dict(source), overrides=everything), Path(base_dir or Path.cwd())
    path = Path(source if isinstance(source, (str, Path)) else next(iter(source)))
    return load_suite(path, everything), path.resolve().parent


def _read_runs(
    paths: Sequence[str | Path],
    metric: str,
    out_dir: str | Path | None,
) -> tuple[list[str], list[DatasetScores], list[str]]:
    """The models, each run's scores, and the settings known to move scores in which the runs differ (in words)."""
    named = results_paths(paths)
    if len(named) < 2:
        raise ConfigError(f"one run given ({named[0][1]}); a suite compares models across at least two data sets")
    loaded = [(n, load_result(p), p) for n, p in named]
    models = list(run_models(loaded[0][1]))  # a model asked with several prompts: once, not its passes
    for _, result, path in loaded[1:]:
        if set(run_models(result)) != set(models):
            raise ResultsError(
                f"{path}: models {listing(list(run_models(result)))}, but {loaded[0][2]} has "
                f"{listing(models)}; a suite compares the same models on every data set"
            )
    relative = Path(out_dir) if out_dir is not None else None
    # each run is another data set: the data differ by design, any other setting should not
    differences = setting_differences([score_settings(r, n) for n, r, _ in loaded], ignore=("data",))
    note = unchecked_note(differences)
    scores = [
        dataset_from_result(n, r, models=models, metric=metric, results_path=p, relative_to=relative)
        for n, r, p in loaded
    ]
    return models, scores, setting_warnings(differences) + ([note] if note is not None else [])


@contextlib.contextmanager
def _claim(out: Path, name: str, kind: str, *, overwrite: bool) -> Iterator[None]:
    """Lock ``out`` for this suite and refuse another suite's (or a run's) results there."""
    check_writable(out)
    with OutputLock(out, f"h2h suite '{name}'"):
        if folder_owner(out) is not None:
            raise ResultsError(
                f"--out {out}: holds the results of a run ({out / RESULTS_FILE}); a suite writes "
                f"suite.json and one folder per data set: choose another --out"
            )
        existing = out / SUITE_FILE
        if existing.is_file() and not overwrite:
            try:
                found = load_suite_result(existing)
            except ResultsError:
                found = None
            if found is None or found.name != name:
                what = f"suite '{found.name}'" if found is not None else "a suite.json that cannot be read"
                raise ResultsError(
                    f"--out {out}: holds the results of {what}; refusing to replace them with suite "
                    f"'{name}'; pass --overwrite to replace them, or choose another --out"
                )
        yield


def _finish(
    kind: str,
    settings: _Settings,
    models: list[str],
    datasets: list[DatasetScores],
    out_dir: str | Path | None,
    *,
    overwrite: bool,
    seed: int,
    claimed: bool = False,
    suite_record: dict[str, Any] | None = None,
    differ: Sequence[str] = (),
) -> SuiteOutcome:
    """The statistics across the finished data sets, the words, and the files.

    ``differ``: the warnings of the settings known to move scores in which finished runs differ.
    """
    _each_data_once(datasets, kind)
    result = _result(kind, settings, models, datasets, seed=seed, suite_record=suite_record)
    if differ:
        result = result.model_copy(update={"warnings": [*differ, *result.warnings]})
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        with contextlib.nullcontext() if claimed else _claim(out, settings.name, kind, overwrite=overwrite):
            save_suite_result(result, out / SUITE_FILE)
            write_suite_reports(result, out, figure_size=settings.figure)
    return SuiteOutcome(result=result, out_dir=out)


def _result(
    kind: str,
    settings: _Settings,
    models: list[str],
    datasets: list[DatasetScores],
    *,
    seed: int,
    suite_record: dict[str, Any] | None,
) -> SuiteResult:
    finished = [d for d in datasets if d.entry.status == "finished"]
    meta: dict[str, Any] = dict(
        headtohead_version=__version__,
        name=settings.name,
        input=kind,
        suite=suite_record,
        scale=settings.scale,
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    base: dict[str, Any] = dict(
        metric=settings.metric,
        higher_is_better=settings.higher,
        alpha=settings.alpha,
        rope=settings.rope,
        models=models,
        baseline=settings.baseline,
    )
    if len(finished) < 2:
        note = (
            f"{len(finished)} data set{'s' if len(finished) != 1 else ''} finished; comparing across data sets "
            f"needs at least two"
        )
        result = SuiteResult(
            **meta, **base, n_datasets=len(finished), datasets=[d.entry for d in datasets], statistics_note=note
        )
    else:
        across = compare_across_datasets(
            [[d.entry.scores[m] for m in models] for d in finished],
            models=models,
            datasets=[d.name for d in finished],
            metric=settings.metric,
            higher_is_better=settings.higher,
            alpha=settings.alpha,
            rope=settings.rope,
            n_samples=settings.bayes_samples,
            seed=seed,
            baseline=settings.baseline,
        )
        ranks = {d.name: dict(zip(models, row, strict=True)) for d, row in zip(finished, across.ranks, strict=True)}
        entries = _with_seeds(datasets, models, settings, seed=seed)
        entries = [e.model_copy(update={"ranks": ranks[e.name]}) if e.name in ranks else e for e in entries]
        shared = across.model_dump(include=set(AcrossStatistics.model_fields))
        result = SuiteResult(**meta, **shared, datasets=entries)
    return result.model_copy(update={"verdict": suite_verdict(result), "warnings": suite_warnings(result)})


def _with_seeds(
    datasets: list[DatasetScores],
    models: list[str],
    settings: _Settings,
    *,
    seed: int,
) -> list[SuiteDataset]:
    """Each data set's entry, with its seed analysis where its models were trained with several seeds."""
    seeded = [d for d in datasets if d.seed_values and d.entry.status == "finished"]
    comparisons = max(1, len(seeded) * len(list(itertools.combinations(models, 2))))
    entries = []
    for index, data in enumerate(datasets):
        if data in seeded:
            analysis = seed_analysis(
                data.seed_values or {},
                metric=settings.metric,
                higher_is_better=settings.higher,
                test_se=data.test_se,
                test_se_difference=data.test_se_difference,
                aso_alpha=settings.alpha / comparisons,
                seed=seed + 1000 * index,
            )
            entries.append(data.entry.model_copy(update={"seeds": analysis}))
        else:
            entries.append(data.entry)
    return entries
