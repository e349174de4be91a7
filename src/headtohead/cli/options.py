"""The options every command that runs models shares, declared once, and the old spellings of renamed ones.

``--out``, ``--set``, ``--resume``, ``--overwrite``, ``--offline`` and ``--deterministic``
mean the same on ``h2h run``, ``bench``, ``sweep``, ``train`` and ``suite``; ``--debug``
(anywhere on the line) is read by :mod:`headtohead.cli.main`. A renamed option keeps its old
spelling as a hidden alias that still works and says once, on stderr, what it is now
(:func:`renamed`, :func:`say_renamed`). The vocabulary (``--alpha`` the level, ``--model`` a
model to compare, ``--baseline`` the reference) is listed in ``docs/cli.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Optional, TypeVar

import typer

__all__ = ["OutOption", "SetOption", "ResumeOption", "OverwriteOption", "OfflineOption", "DeterministicOption"]
__all__ += ["renamed", "say_renamed", "margin", "level", "AllowMissingOption", "UntilDecidedOption", "NoiseFloorOption"]

T = TypeVar("T")

OutOption = typer.Option(
    None, "--out", "-o", help="Output folder (default: runs/<name>; h2h bench and h2h sweep add -bench, -sweep)."
)
SetOption = typer.Option(None, "--set", "-s", help="Override a key: --set eval.batch_size=16 (repeatable).")
ResumeOption = typer.Option(
    None,
    "--resume/--no-resume",
    help="Go on from an earlier, interrupted run into the same --out: re-use what finished there (models, "
    "data sets, swept models; h2h train resumes by default, --no-resume trains again) and do only the rest.",
)
AllowMissingOption = typer.Option(
    False,
    "--allow-missing",
    help="An endpoint model never answered some examples (server down, 5xx after every retry): judge every "
    "model on the examples all answered, labelled so. Without it no verdict involves that model and the "
    "run exits with code 4 (--resume asks exactly the missing examples again).",
)
OfflineOption = typer.Option(
    False,
    "--offline",
    help="No network at all (also on with HF_HUB_OFFLINE=1): models and data must be local or cached.",
)
OverwriteOption = typer.Option(
    False,
    "--overwrite",
    help="Replace the results of another experiment found in the --out folder (without it they are refused).",
)
DeterministicOption = typer.Option(
    False, "--deterministic", help="Use torch's deterministic algorithms; ops without one are reported."
)
UntilDecidedOption = typer.Option(
    False,
    "--until-decided",
    help="Evaluate in a seeded random order, chunk by chunk (eval.chunk_size), and stop once every pair "
    "of models is decided by an anytime-valid test (same as eval.until_decided: true).",
)
NoiseFloorOption = typer.Option(
    False,
    "--noise-floor",
    help="Measure how far two runs of each model differ: every model that runs is run eval.repeats times "
    "(5 when not given); a gap within a pair's noise floor is never called better (same as eval.noise_floor: "
    "true).",
)


_RENAMED: list[str] = []


def margin(kind: Literal["accuracy", "slowdown"], option: str) -> Callable[[str], float]:
    """A typer ``parser`` reading ``option`` as a margin, a share once read (:mod:`headtohead.config.margins`)."""

    def parse(text: str) -> float:
        from headtohead.config import margins  # on first use: h2h --help stays light

        read = margins.parse_accuracy_margin if kind == "accuracy" else margins.parse_slowdown_margin
        return read(text, option=option)

    return parse


def level(option: str = "--alpha") -> Callable[[str], float]:
    """A typer ``parser`` reading ``option`` as a significance level: one rule, 0 < alpha < 0.5, on every command."""

    def parse(text: str) -> float:
        from headtohead.config.margins import parse_alpha  # on first use: h2h --help stays light

        return parse_alpha(text, option=option)

    return parse


def renamed(new: Optional[T], old: Optional[T], *, was: str, now: str) -> Optional[T]:
    """The value of an option given by its new or its old spelling; the old one is noted for :func:`say_renamed`.

    Raises
    ------
    ConfigError
        Both spellings were given.
    """
    if old is None or old == []:
        return new
    if new is not None and new != []:
        from headtohead.errors import ConfigError

        raise ConfigError(f"{was} and {now} are the same option; give only {now}")
    _RENAMED.append(f"warning: {was} is deprecated and will be removed: it is now {now}")
    return old


def say_renamed(*, quiet: bool = False) -> None:
    """Say once, on stderr, which old spellings the command used (after its output, so an error stays
    one line); ``quiet`` forgets them unsaid (a new command line begins)."""
    from headtohead.cli.console import err_console

    for line in [] if quiet else dict.fromkeys(_RENAMED):
        err_console.print(line, style="yellow", highlight=False, markup=False, soft_wrap=True)
    _RENAMED.clear()
