"""``h2h train``: fine-tune every model identically, then compare them (registered in :mod:`headtohead.cli.main`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

__all__ = ["train"]


def train(
    experiment: Path = typer.Argument(..., help="The experiment YAML file, with a train: section."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default: runs/<name>)."),
    set_: Optional[list[str]] = typer.Option(
        None, "--set", "-s", help="Override a key: --set train.epochs=1 (repeatable)."
    ),
    nproc: Optional[int] = typer.Option(
        None, "--nproc", min=1, help="Data-parallel processes per model (sets train.nproc)."
    ),
) -> None:
    """Fine-tune every model identically (same order, recipe, seeds), save them, then compare them."""
    from headtohead.cli.console import console, err_console
    from headtohead.cli.reliability import run_context
    from headtohead.config.loading import load_train_experiment
    from headtohead.pipeline.outputs import default_out_dir
    from headtohead.pipeline.training import train_experiment
    from headtohead.report import quality_table
    from headtohead.report.training import seed_lines, training_table
    from headtohead.results.files import EXPERIMENT_FILE, MODELS_DIR, RESULTS_FILE, TRAINING_FILE

    overrides = list(set_ or []) + ([f"train.nproc={nproc}"] if nproc else [])
    exp, config, base_dir = load_train_experiment(experiment, overrides)
    out_dir = out or default_out_dir(exp.name)

    def on_event(message: str) -> None:
        err_console.print(message, highlight=False, markup=False, soft_wrap=True)

    # SIGTERM/SIGHUP become exceptions: the last epoch checkpoint stays, and the next h2h train resumes.
    with run_context() as progress:
        outcome = train_experiment(
            exp, train=config, base_dir=base_dir, out_dir=out_dir, on_event=on_event, progress=progress
        )
    if outcome.run is None:  # a non-main process of a torchrun launch: rank 0 reports
        return
    console.print(training_table(outcome.training))
    for line in seed_lines(outcome.training):
        console.print(line, highlight=False)
    console.print(quality_table(outcome.run.result))
    console.print(
        f"Trained models: {out_dir / MODELS_DIR}; training record: {out_dir / TRAINING_FILE}; "
        f"comparison: {out_dir / RESULTS_FILE} (re-run with h2h run {out_dir / EXPERIMENT_FILE})",
        highlight=False,
        soft_wrap=True,
    )
