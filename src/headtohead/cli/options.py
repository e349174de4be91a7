"""The options every command that runs models shares, declared once, and the old spellings of renamed ones.

``--out``, ``--set``, ``--resume``, ``--overwrite``, ``--offline`` and ``--deterministic``
mean the same on ``h2h run``, ``bench``, ``sweep``, ``train`` and ``suite``; ``--debug``
(anywhere on the line) is read by :mod:`headtohead.cli.main`. A renamed option keeps its old
spelling as a hidden alias that still works and says once, on stderr, what it is now
(:func:`renamed`, :func:`say_renamed`). The words of the vocabulary (``--alpha`` for the level, ``--model`` for a
model to compare, ``--baseline`` for the reference the others are measured against) are
listed in ``docs/cli.md``.
"""

from __future__ import annotations

from typing import Optional, TypeVar

import typer

__all__ = [
    "OutOption",
    "SetOption",
    "ResumeOption",
    "OverwriteOption",
    "OfflineOption",
    "DeterministicOption",
    "renamed",
    "say_renamed",
]

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


_RENAMED: list[str] = []


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
