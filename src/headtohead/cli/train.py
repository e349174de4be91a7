"""``h2h train``: fine-tune every model identically, then compare them (registered in :mod:`headtohead.cli.main`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from headtohead.cli import options as shared

__all__ = ["train"]


def train(
    experiment: Path = typer.Argument(..., help="The experiment YAML file, with a train: section."),
    out: Optional[Path] = shared.OutOption,
    set_: Optional[list[str]] = shared.SetOption,
    resume: Optional[bool] = shared.ResumeOption,
    overwrite: bool = shared.OverwriteOption,
    offline: bool = shared.OfflineOption,
    deterministic: bool = shared.DeterministicOption,
    nproc: Optional[int] = typer.Option(
        None, "--nproc", min=1, help="Data-parallel processes per model (sets train.nproc)."
    ),
) -> None:
    """Fine-tune every model identically (same order, recipe, seeds), save them, then compare them."""
    from headtohead.cli.console import console, err_console, print_document
    from headtohead.cli.reliability import determinism_line, offline_scope, offline_wanted, run_context
    from headtohead.config.loading import load_train_experiment
    from headtohead.pipeline.outputs import default_out_dir
    from headtohead.pipeline.training import train_experiment
    from headtohead.report.sections.training import training_terminal
    from headtohead.results.files import EXPERIMENT_FILE, MODELS_DIR, RESULTS_FILE, TRAINING_FILE

    def on_event(message: str) -> None:
        err_console.print(message, highlight=False, markup=False, soft_wrap=True)

    offline = offline_wanted(offline)
    # SIGTERM/SIGHUP become exceptions: the last epoch checkpoint stays, and the next h2h train resumes.
    with offline_scope(offline), run_context() as progress:
        overrides = list(set_ or []) + ([f"train.nproc={nproc}"] if nproc else [])
        exp, config, base_dir = load_train_experiment(experiment, overrides)
        out_dir = out or default_out_dir(exp.name)
        outcome = train_experiment(
            exp,
            train=config,
            base_dir=base_dir,
            out_dir=out_dir,
            on_event=on_event,
            progress=progress,
            resume=resume,
            overwrite=overwrite,
            offline=offline,
            deterministic=deterministic,
        )
    if outcome.run is None:  # a non-main process of a torchrun launch: rank 0 reports
        return
    print_document(training_terminal(outcome.training, outcome.run.result))
    if deterministic:
        console.print(determinism_line(outcome.run.result), highlight=False, markup=False)
    console.print(
        f"Trained models: {out_dir / MODELS_DIR}; training record: {out_dir / TRAINING_FILE}; "
        f"comparison: {out_dir / RESULTS_FILE} (re-run with h2h run {out_dir / EXPERIMENT_FILE})",
        highlight=False,
        soft_wrap=True,
    )
