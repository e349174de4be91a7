"""``h2h run`` and ``h2h bench``: compare the experiment's models; measure speed and memory only.

Both validate the experiment once, call :func:`headtohead.run` and print the table and the
verdict; ``h2h run`` also writes ``report.html`` beside the results. Without a file,
``h2h run --data dev.tsv --model a=preds.csv --model b=path/to/model`` builds the experiment
(:mod:`headtohead.pipeline.quick`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from headtohead.cli import options as shared
from headtohead.cli.console import console, print_result
from headtohead.cli.reliability import determinism_line, offline_scope, offline_wanted, run_context
from headtohead.errors import listing

__all__ = ["run", "bench"]

# typer >= 0.20 vendors click: its UsageError is found by name, as cli/main.py finds ClickException
_USAGE_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def run(
    ctx: typer.Context,
    experiment: Optional[Path] = typer.Argument(None, help="The experiment YAML file (or --data and --model)."),
    data: Optional[str] = typer.Option(None, "--data", help="Without a file: the evaluation data (data.path)."),
    model: Optional[list[str]] = typer.Option(
        None,
        "--model",
        "-m",
        help="Without a file, a model to compare: name=source or name=kind:source, e.g. a=preds.csv, "
        "b=transformers:org/model (repeatable; the kind is inferred from the source).",
    ),
    text_column: Optional[str] = typer.Option(None, "--text-column", help="With --data: data.text_column."),
    label_column: Optional[str] = typer.Option(None, "--label-column", help="With --data: data.label_column."),
    id_column: Optional[str] = typer.Option(None, "--id-column", help="With --data: data.id_column."),
    slice_column: Optional[list[str]] = typer.Option(
        None, "--slice-column", help="With --data: a column to slice by (repeatable)."
    ),
    group_column: Optional[str] = typer.Option(
        None,
        "--group-column",
        help="With --data: data.group_column, the column of users/documents/conversations (related examples).",
    ),
    out: Optional[Path] = shared.OutOption,
    set_: Optional[list[str]] = shared.SetOption,
    resume: Optional[bool] = shared.ResumeOption,
    overwrite: bool = shared.OverwriteOption,
    deterministic: bool = shared.DeterministicOption,
    offline: bool = shared.OfflineOption,
    until_decided: bool = shared.UntilDecidedOption,
    noise_floor: bool = shared.NoiseFloorOption,
    no_cache: bool = typer.Option(
        False,
        "--no-cache",
        help="Ask endpoint models (kind: openai) every example again, not the on-disk response cache.",
    ),
    allow_missing: bool = shared.AllowMissingOption,
) -> None:
    """Compare the experiment's models on identical data and save the results."""
    if experiment is None and data is None and not model:  # neither way of naming the models: a usage error
        raise _USAGE_ERROR("Missing argument 'EXPERIMENT' (or --data with --model name=source).", ctx=ctx)
    from headtohead.pipeline.outputs import default_out_dir
    from headtohead.pipeline.quick import command_experiment
    from headtohead.pipeline.run import run as run_experiment
    from headtohead.report.words.timings import timings_line
    from headtohead.results.files import PREDICTIONS_FILE, REPORT_FILE, RESULTS_FILE

    offline = offline_wanted(offline)
    with offline_scope(offline), run_context() as progress:  # the whole command, reports included
        flags = {"eval.until_decided": until_decided, "eval.noise_floor": noise_floor}
        overrides = [*(set_ or []), *(f"{key}=true" for key, on in flags.items() if on)]
        exp, base_dir = command_experiment(
            experiment,
            data=data,
            models=model or [],
            overrides=overrides,
            text_column=text_column,
            label_column=label_column,
            id_column=id_column,
            slice_columns=slice_column or None,
            group_column=group_column,
        )
        out_dir = out or default_out_dir(exp.name)
        outcome = run_experiment(
            exp,
            base_dir=base_dir,
            out_dir=out_dir,
            progress=progress,
            resume=bool(resume),
            deterministic=deterministic,
            offline=offline,
            report=True,
            overwrite=overwrite,
            response_cache=not no_cache,
            allow_missing=allow_missing,
        )
    print_result(outcome.result)
    if outcome.resumed:
        console.print(f"Resumed: the finished results of {listing(outcome.resumed)} were re-used.", highlight=False)
    if deterministic:
        console.print(determinism_line(outcome.result), highlight=False, markup=False)
    console.print(
        f"Results: {out_dir / RESULTS_FILE} (per-example predictions: {out_dir / PREDICTIONS_FILE}); "
        f"report: {out_dir / REPORT_FILE}",
        highlight=False,
    )
    console.print(timings_line(outcome.result, reused=outcome.resumed), highlight=False, markup=False, soft_wrap=True)


def bench(
    experiment: Path = typer.Argument(..., help="The experiment YAML file (its speed: section)."),
    out: Optional[Path] = shared.OutOption,
    set_: Optional[list[str]] = shared.SetOption,
    overwrite: bool = shared.OverwriteOption,
    deterministic: bool = shared.DeterministicOption,
    offline: bool = shared.OfflineOption,
) -> None:
    """Measure speed and memory only: interleaved rounds, latency percentiles, speed-ratio CIs."""
    from headtohead.pipeline.outputs import default_out_dir
    from headtohead.pipeline.run import run as run_experiment
    from headtohead.pipeline.setup import resolve_experiment
    from headtohead.report.words.timings import timings_line
    from headtohead.results.files import RESULTS_FILE

    offline = offline_wanted(offline)
    with offline_scope(offline), run_context() as progress:
        exp, base_dir = resolve_experiment(experiment, set_ or [])
        out_dir = out or default_out_dir(exp.name, "bench")
        outcome = run_experiment(
            exp,
            base_dir=base_dir,
            out_dir=out_dir,
            progress=progress,
            quality=False,
            speed=True,
            deterministic=deterministic,
            offline=offline,
            overwrite=overwrite,
        )
    print_result(outcome.result)
    console.print(f"Results: {out_dir / RESULTS_FILE}", highlight=False)
    console.print(timings_line(outcome.result, reused=outcome.resumed), highlight=False, markup=False, soft_wrap=True)
