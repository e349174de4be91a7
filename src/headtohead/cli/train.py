"""``h2h train``: fine-tune every model identically, then compare them (registered in :mod:`headtohead.cli.main`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from headtohead.results.training import TrainingSummary

__all__ = ["train", "training_table"]


def training_table(summary: TrainingSummary) -> Table:
    """One row per model and seed: throughput, data stalls, time, memory, final eval accuracy."""
    table = Table(title="Training (identical order and settings)", title_justify="left")
    for column in ("model", "seed", "samples/s", "tokens/s", "waits for data", "s/epoch", "end to end",
                   "to target", "peak memory", "eval accuracy"):
        table.add_column(column, justify="left" if column == "model" else "right")
    for run in summary.runs:
        memory = f"{run.peak_memory_mb:,.0f} MiB {'CUDA' if run.cuda_max_allocated_mb is not None else 'RSS'}"
        table.add_row(
            run.model, str(run.seed),
            _num(run.samples_per_s, "{:,.1f}"), _num(run.tokens_per_s, "{:,.0f}"),
            _num(run.data_wait_fraction, "{:.0%}"), _num(run.time_per_epoch_s, "{:.1f} s"),
            f"{run.end_to_end_s:.1f} s", _num(run.time_to_target_s, "{:.1f} s"), memory,
            _num(run.final_eval.get("accuracy"), "{:.3f}"))
    return table


def _num(value: float | None, fmt: str) -> str:
    return "–" if value is None else fmt.format(value)


def _seed_lines(summary: TrainingSummary) -> list[str]:
    if summary.multi_seed is None:
        return []
    lines = [f"Across seeds {summary.seeds}:"]
    for model in summary.multi_seed.models:
        acc = model.metric("accuracy")
        spread = f" ± {acc.std:.3f}" if acc.std is not None else ""
        lines.append(f"  {model.model}: accuracy {acc.mean:.3f}{spread} (n = {acc.n_seeds})")
    for comp in summary.multi_seed.comparisons:
        p = f"p = {comp.p_value:.3g}" if comp.p_value is not None else (comp.note or "no test")
        lines.append(f"  {comp.model_a} − {comp.model_b}: {comp.mean_difference:+.3f} accuracy ({comp.test}, {p})")
    return lines


def train(
    experiment: Path = typer.Argument(..., help="The experiment YAML file, with a train: section."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default: runs/<name>)."),
    set_: Optional[list[str]] = typer.Option(None, "--set", "-s",
                                             help="Override a key: --set train.epochs=1 (repeatable)."),
    nproc: Optional[int] = typer.Option(None, "--nproc", min=1,
                                        help="Data-parallel processes per model (sets train.nproc)."),
) -> None:
    """Fine-tune every model identically (same order, recipe, seeds), save them, then compare them."""
    from headtohead.cli.console import console, err_console
    from headtohead.cli.reliability import run_context
    from headtohead.report import quality_table
    from headtohead.training_run import TRAINING_FILE, load_train_experiment, train_experiment

    overrides = list(set_ or []) + ([f"train.nproc={nproc}"] if nproc else [])
    exp, _, _ = load_train_experiment(experiment, overrides)
    out_dir = out or Path("runs") / exp.name

    def on_event(message: str) -> None:
        err_console.print(message, highlight=False, markup=False, soft_wrap=True)

    # SIGTERM/SIGHUP become exceptions: the last epoch checkpoint stays, and the next h2h train resumes.
    with run_context() as progress:
        outcome = train_experiment(experiment, out_dir=out_dir, overrides=overrides, on_event=on_event,
                                   progress=progress)
    if outcome.run is None:  # a non-main process of a torchrun launch: rank 0 reports
        return
    console.print(training_table(outcome.training))
    for line in _seed_lines(outcome.training):
        console.print(line, highlight=False)
    console.print(quality_table(outcome.run.result))
    console.print(f"Trained models: {out_dir / 'models'}; training record: {out_dir / TRAINING_FILE}; "
                  f"comparison: {out_dir / 'results.json'} (re-run with h2h run {out_dir / 'experiment.yaml'})",
                  highlight=False, soft_wrap=True)
