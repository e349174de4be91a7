"""``h2h``: the command-line entry point — the list of commands and the one place errors become exit codes.

Each command lives in its own module, parses its arguments, calls one library function and
prints what it returns. User mistakes (:class:`~headtohead.errors.H2HError`) become one line
on stderr and exit code 2 (answers missing from an endpoint, :class:`~headtohead.errors.AnswersMissing`:
the results of what was answered, then one line, exit code 4); command-line mistakes (an unknown option or command, a missing
argument) the usage message and exit code 2; ``--debug`` anywhere on the line shows the
traceback of an error.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from headtohead.cli.console import err_console, print_result, setup_logging
from headtohead.cli.demo import demo
from headtohead.cli.gate import gate
from headtohead.cli.machines import compare_deprecated, machines
from headtohead.cli.options import say_renamed
from headtohead.cli.plan import plan
from headtohead.cli.report import report
from headtohead.cli.run import bench, run
from headtohead.cli.show import show, validate
from headtohead.cli.suite import suite
from headtohead.cli.sweep import sweep
from headtohead.cli.train import train
from headtohead.errors import AnswersMissing, H2HError
from headtohead.runtime.extras import extra_for
from headtohead.runtime.faults import RunInterrupted, Terminated, interrupt_exit_code
from headtohead.version import __version__

__all__ = ["app", "main"]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help=f"headtohead {__version__} — compare classification models fairly, with statistics.",
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"headtohead {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_print_version, help="Print the version of headtohead and exit."
    ),
) -> None:
    """Options before the command (``h2h --version``); ``--debug`` anywhere shows tracebacks."""


app.command("run")(run)
app.command("bench")(bench)
app.command("validate")(validate)
app.command("show")(show)
app.command("demo")(demo)
app.command("plan")(plan)
app.command("sweep")(sweep)
app.command("gate")(gate)
app.command("report")(report)
app.command("train")(train)
app.command("machines")(machines)
app.command("suite")(suite)
app.command("compare", hidden=True)(compare_deprecated)  # the old name of `machines`

# typer >= 0.20 vendors click (typer._click); older typer uses click itself: find the class by name.
_CLICK_ERROR: Any = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def _one_line(message: str, code: int) -> SystemExit:
    err_console.print(message, style="bold red", highlight=False, markup=False, soft_wrap=True)
    return SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; user errors print one line and exit 2, usage errors the usage and exit 2."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    setup_logging(debug)
    say_renamed(quiet=True)
    try:
        code = app(args=args, prog_name="h2h", standalone_mode=False)
        say_renamed()
    except H2HError as exc:
        if debug:
            raise
        if isinstance(exc, AnswersMissing) and exc.run is not None:  # what was answered first, then the one line
            print_result(exc.run.result)  # type: ignore[attr-defined]
        raise _one_line(f"error: {exc}", exc.exit_code) from None
    except RunInterrupted as exc:
        raise _one_line(f"interrupted by {exc}", exc.exit_code) from None
    except Terminated as exc:
        raise _one_line(
            f"interrupted by {exc}: no model had finished, so nothing was written", interrupt_exit_code(exc)
        ) from None
    except typer.Abort:
        raise _one_line("interrupted; results of models that finished are kept", 130) from None
    except _CLICK_ERROR as exc:  # a command-line mistake: click's usage message ("did you mean …"), exit 2
        exc.show()
        raise SystemExit(2) from None
    except typer.Exit as exc:
        say_renamed()
        raise SystemExit(exc.exit_code) from None
    except ModuleNotFoundError as exc:  # an optional dependency (torch, timm …) not installed: name the extra
        extra = extra_for(exc.name)
        if debug or extra is None:
            raise
        raise _one_line(
            f'error: {exc.name} is not installed; install it with: pip install "headtohead[{extra}]"', 2
        ) from None
    except Exception as exc:  # a bug, not a user mistake: still one line unless --debug
        if debug:
            raise
        raise _one_line(
            f"internal error: {type(exc).__name__}: {exc} (re-run with --debug for the traceback and report it)", 1
        ) from None
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        raise SystemExit(code)  # typer.Exit(n) in a command: click returns n when not standalone (h2h gate)


if __name__ == "__main__":
    main()
