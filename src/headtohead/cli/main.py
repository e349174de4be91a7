"""``h2h``: the command-line entry point.

Every command turns its arguments into library calls (:func:`headtohead.run`, …) and
prints what they return. User mistakes (:class:`~headtohead.errors.H2HError`) become one
line on stderr and exit code 2; ``--debug`` anywhere on the line shows the traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import click
import typer

from headtohead.cli.console import console, err_console, progress_bars, setup_logging
from headtohead.cli.gate import gate
from headtohead.cli.plan import plan
from headtohead.cli.report import report
from headtohead.cli.compare import compare
from headtohead.cli.train import train
from headtohead.cli.sweep import sweep
from headtohead.cli.reliability import (
    DeterministicOption,
    OfflineOption,
    ResumeOption,
    determinism_line,
    offline_scope,
    offline_wanted,
    run_context,
)
from headtohead.errors import H2HError
from headtohead.runtime.faults import RunInterrupted, Terminated, interrupt_exit_code

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="headtohead — compare classification models fairly, with statistics.")

app.command("plan")(plan)
app.command("sweep")(sweep)
app.command("gate")(gate)
app.command("report")(report)
app.command("train")(train)
app.command("compare")(compare)

SetOption = typer.Option(None, "--set", "-s", help="Override a key: --set eval.batch_size=16 (repeatable).")


@app.command()
def run(
    experiment: Path = typer.Argument(..., help="The experiment YAML file."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default: runs/<name>)."),
    set_: Optional[list[str]] = SetOption,
    resume: bool = ResumeOption,
    deterministic: bool = DeterministicOption,
    offline: bool = OfflineOption,
) -> None:
    """Compare the experiment's models on identical data and save the results."""
    from headtohead.config import load_experiment
    from headtohead.runner import run as run_experiment

    offline = offline_wanted(offline)
    with offline_scope(offline):  # the whole command, reports included
        with run_context() as progress:
            exp = load_experiment(experiment, set_ or [])
            out_dir = out or Path("runs") / exp.name
            outcome = run_experiment(experiment, out_dir=out_dir, overrides=set_ or [], progress=progress,
                                     resume=resume, deterministic=deterministic, offline=offline)
        print_result(outcome.result)
        if outcome.resumed:
            console.print(f"Resumed: the finished results of {', '.join(outcome.resumed)} were re-used.",
                          highlight=False)
        if deterministic:
            console.print(determinism_line(outcome.result), highlight=False, markup=False)
        from headtohead.report.write import write_reports

        html = write_reports(outcome.result, out_dir, predictions=outcome.predictions)
    console.print(f"Results: {out_dir / 'results.json'} (per-example predictions: {out_dir / 'predictions.npz'}); "
                  f"report: {html}", highlight=False)


@app.command()
def bench(
    experiment: Path = typer.Argument(..., help="The experiment YAML file (its speed: section)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default: runs/<name>-bench)."),
    set_: Optional[list[str]] = SetOption,
    deterministic: bool = DeterministicOption,
    offline: bool = OfflineOption,
) -> None:
    """Measure speed and memory only: interleaved rounds, latency percentiles, speed-ratio CIs."""
    from headtohead.config import load_experiment
    from headtohead.runner import run as run_experiment

    offline = offline_wanted(offline)
    with offline_scope(offline), run_context() as progress:
        exp = load_experiment(experiment, set_ or [])
        out_dir = out or Path("runs") / f"{exp.name}-bench"
        outcome = run_experiment(experiment, out_dir=out_dir, overrides=set_ or [], progress=progress,
                                 quality=False, speed=True, deterministic=deterministic, offline=offline)
    print_result(outcome.result)
    console.print(f"Results: {out_dir / 'results.json'}", highlight=False)


@app.command()
def validate(
    experiment: Path = typer.Argument(..., help="The experiment YAML file."),
    set_: Optional[list[str]] = SetOption,
) -> None:
    """Check an experiment file without running it."""
    from headtohead.config import load_experiment

    exp = load_experiment(experiment, set_ or [])
    console.print(f"{experiment}: valid — {len(exp.models)} model(s): {', '.join(m.name for m in exp.models)}",
                  highlight=False)


@app.command()
def show(results: Path = typer.Argument(..., help="A results.json written by h2h run.")) -> None:
    """Print the table of a saved run."""
    from headtohead.results import load_result

    print_result(load_result(results))


@app.command()
def demo(
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Output folder."),
    epochs: int = typer.Option(3, min=1, help="Training epochs per model."),
) -> None:
    """Train two small image models on scikit-learn's digits (offline) and compare them."""
    from headtohead.demo import run_demo

    def on_event(message: str) -> None:
        err_console.print(message, highlight=False)

    with progress_bars() as progress:
        outcome = run_demo(out, epochs=epochs, on_event=on_event, progress=progress)
    print_result(outcome.result)
    from headtohead.report.write import write_reports

    html = write_reports(outcome.result, out, predictions=outcome.predictions)
    console.print(f"Results: {out / 'results.json'}; report: {html}; re-run with: h2h run {out / 'experiment.yaml'}",
                  highlight=False)


def print_result(result) -> None:  # noqa: ANN001 - RunResult
    """The table, then the verdict block."""
    from headtohead.report import quality_table, speed_table, verdict_block

    if any(m.quality is not None for m in result.models):
        console.print(quality_table(result))
    speed = speed_table(result)
    if speed is not None:
        console.print(speed)
    lines = verdict_block(result)
    if lines:
        console.print("[bold]Verdict[/]")
        for line in lines:
            console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; user errors print one line and exit 2."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    setup_logging(debug)
    try:
        code = app(args=args, prog_name="h2h", standalone_mode=False)
    except H2HError as exc:
        if debug:
            raise
        err_console.print(f"error: {exc}", style="bold red", highlight=False, markup=False, soft_wrap=True)
        raise SystemExit(exc.exit_code) from None
    except RunInterrupted as exc:
        err_console.print(f"interrupted by {exc}", style="bold red", highlight=False, markup=False, soft_wrap=True)
        raise SystemExit(exc.exit_code) from None
    except Terminated as exc:
        err_console.print(f"interrupted by {exc}: no model had finished, so nothing was written", style="bold red",
                          highlight=False, markup=False, soft_wrap=True)
        raise SystemExit(interrupt_exit_code(exc)) from None
    except click.exceptions.Abort:
        err_console.print("interrupted; results of models that finished are kept", markup=False)
        raise SystemExit(130) from None
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(2) from None
    except click.exceptions.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except Exception as exc:  # a bug, not a user mistake: still one line unless --debug
        if debug:
            raise
        err_console.print(f"internal error: {type(exc).__name__}: {exc} (re-run with --debug for the traceback "
                          f"and report it)", style="bold red", highlight=False, markup=False, soft_wrap=True)
        raise SystemExit(1) from None
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        raise SystemExit(code)  # typer.Exit(n) in a command: click returns n when not standalone (h2h gate)


if __name__ == "__main__":
    main()
