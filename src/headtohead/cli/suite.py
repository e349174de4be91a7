"""``h2h suite``: the same models on several data sets, compared across them (Demšar's ranks, the CD diagram, Wilcoxon, Bayes).

Three ways in, one library call (:func:`headtohead.suite`)::

    h2h suite SUITE.yaml --out runs/suite            # run every data set, then compare (--resume after a kill)
    h2h suite runs/*/results.json --out runs/across  # finished runs, one per data set
    h2h suite --scores table.csv --metric auc        # a table: a dataset column, one column per model
    h2h suite --model a=lm-eval:runs/a --model b=lm-eval:runs/b   # each task of lm-eval logs a data set
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from headtohead.cli import options as shared
from headtohead.cli.console import console
from headtohead.cli.reliability import offline_wanted, run_context

if TYPE_CHECKING:
    from headtohead.results.suite import SuiteResult

__all__ = ["suite"]


def suite(
    sources: Optional[list[str]] = typer.Argument(
        None, help="SUITE.yaml, or the results.json (or folder) of each finished run, one per data set."
    ),
    scores: Optional[Path] = typer.Option(
        None, "--scores", help="A table of scores (.csv/.tsv): a 'dataset' column, one column per model (and 'seed')."
    ),
    model: Optional[list[str]] = typer.Option(None, "--model", "-m", help="lm-eval logs: each task a data set."),
    out: Optional[Path] = shared.OutOption,
    metric: Optional[str] = typer.Option(
        None, "--metric", help="The figure compared (runs: accuracy, f1_macro, brier …; a table: what it holds)."
    ),
    lower_is_better: bool = typer.Option(False, "--lower-is-better", help="A table's scores are better when lower."),
    rope: Optional[float] = typer.Option(
        None,
        "--rope",
        help="Region of practical equivalence of the Bayesian signed-rank test, in the metric's units (default 0.01).",
    ),
    alpha: Optional[float] = typer.Option(
        None,
        "--alpha",
        parser=shared.level(),
        metavar="ALPHA",
        help="Significance level across data sets, 0–0.5 (default: the suite's stats.alpha, else 0.05).",
    ),
    name: Optional[str] = typer.Option(None, "--name", help="Name of a suite of finished runs or of a table."),
    baseline: Optional[str] = typer.Option(
        None,
        "--baseline",
        help="Compare every other model with this one (Demšar's control): Holm over those k − 1 comparisons.",
    ),
    figure_size: Optional[str] = typer.Option(
        None, "--figure-size", help="WxH inches of the CD diagram in cd.svg/cd.pdf (3.5x1.6: an IEEE column)."
    ),
    set_: Optional[list[str]] = shared.SetOption,
    resume: Optional[bool] = shared.ResumeOption,
    overwrite: bool = shared.OverwriteOption,
    offline: bool = shared.OfflineOption,
    deterministic: bool = shared.DeterministicOption,
) -> None:
    """Compare the same models across several data sets: ranks, Friedman, CD diagram, Wilcoxon + Holm, Bayes."""
    from headtohead.errors import ResultsError
    from headtohead.pipeline.suite import suite as run_suite
    from headtohead.results.files import SUITE_CD_PDF, SUITE_CD_SVG, SUITE_FILE, SUITE_LATEX, SUITE_REPORT

    source, out_dir = _source_and_out(sources or [], scores, out, name, set_ or [], metric, model or [])
    offline = offline_wanted(offline)
    with run_context() as progress:
        outcome = run_suite(
            source,
            scores=scores,
            out_dir=out_dir,
            overrides=set_ or [],
            metric=metric,
            lower_is_better=True if lower_is_better else None,
            rope=rope,
            alpha=alpha,
            name=name,
            baseline=baseline,
            figure_size=figure_size,
            resume=bool(resume),
            overwrite=overwrite,
            offline=offline,
            deterministic=deterministic,
            progress=progress,
            on_event=lambda line: console.print(line, highlight=False, markup=False),
        )
    _print(outcome.result)
    console.print(f"Suite: {out_dir / SUITE_FILE}; report: {out_dir / SUITE_REPORT}", highlight=False)
    if outcome.result.average_ranks:
        console.print(
            f"For a paper: {out_dir / SUITE_LATEX} (tables, booktabs); the CD diagram {out_dir / SUITE_CD_SVG}, "
            f"{out_dir / SUITE_CD_PDF}",
            highlight=False,
        )
    if outcome.failed:
        names = ", ".join(d.name for d in outcome.failed)
        raise ResultsError(
            f"{len(outcome.failed)} data set(s) failed ({names}); the others are compared above; fix "
            f"them and run again with --resume (finished data sets are skipped)"
        )


def _source_and_out(
    sources: list[str],
    scores: Path | None,
    out: Path | None,
    name: str | None,
    overrides: list[str],
    metric: str | None,
    models: list[str],
) -> tuple[Any, Path]:
    """What to hand to :func:`headtohead.suite`, and the output folder (``runs/<name>`` by default)."""
    from headtohead.pipeline.logged_suite import tasks_suite
    from headtohead.pipeline.outputs import default_out_dir

    if models:  # logs of several tasks (a=lm-eval:folder): each task a data set
        return tasks_suite(models, name=name or "tasks", also=sources), out or default_out_dir(name or "tasks")
    if len(sources) == 1 and Path(sources[0]).suffix.lower() in (".yaml", ".yml") and scores is None:
        from headtohead.config.suite import load_suite

        extra = [f"across.metric={metric}"] if metric is not None else []
        config = load_suite(sources[0], [*overrides, *extra])
        return sources[0], out or default_out_dir(config.name)
    return (sources or None), out or default_out_dir(name or (scores.stem if scores is not None else "suite"))


def _print(result: SuiteResult) -> None:
    """The verdict, what to read with care, the ranks, the baseline, each data set, the seeds."""
    from headtohead.cli.console import print_document
    from headtohead.report.sections.suite import suite_terminal

    print_document(suite_terminal(result))
