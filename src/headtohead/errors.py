"""The exceptions headtohead raises for bad input.

See ``docs/architecture.md``, "The exceptions headtohead raises for bad input".
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

__all__ = [
    "H2HError",
    "ConfigError",
    "DataError",
    "ModelError",
    "DeviceError",
    "ResultsError",
    "AnswersMissing",
    "did_you_mean",
    "listing",
]

#: How many names a one-line message shows before it counts the rest.
LISTING_LIMIT = 10


class H2HError(Exception):
    """Root of every error caused by the user's input, not by a bug in headtohead."""

    exit_code = 2


class ConfigError(H2HError):
    """The experiment file or a ``--set`` override is invalid."""


class DataError(H2HError):
    """The dataset cannot be read, or what was read cannot be used."""


class ModelError(H2HError):
    """A model cannot be loaded, or its outputs do not fit the dataset."""


class DeviceError(H2HError):
    """The requested device is unknown or not present on this machine."""


class ResultsError(H2HError):
    """A results file cannot be written, or a file read back is not a valid result."""


class AnswersMissing(H2HError):
    """A model never answered some examples (transport failures after every retry): no verdict involves it.

    Raised by :func:`headtohead.run` after everything answered was saved; ``run`` holds what it
    returns otherwise (the records, predictions and the statistics of the complete models).
    ``h2h run`` exits with code 4.
    """

    exit_code = 4

    def __init__(self, message: str, run: object = None) -> None:
        super().__init__(message)
        self.run = run


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return `` — did you mean X?`` for the closest choice, or ``""`` when none is close.

    Parameters
    ----------
    word : str
        What the user typed.
    choices : iterable of str
        The valid spellings.

    Returns
    -------
    str
        A suffix to append to an error message.

    Examples
    --------
    >>> did_you_mean("max_lenght", ["max_length", "name"])
    ' — did you mean max_length?'
    """
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return f" — did you mean {close[0]}?" if close else ""


def default_choice(offered: Sequence[str], defaults: Iterable[str]) -> str | None:
    """The first of ``defaults`` that is offered, else the only one offered, else ``None`` (the user must choose).

    Examples
    --------
    >>> default_choice(["train", "test"], ["validation", "test"]), default_choice(["x"], ["y"]), default_choice(["x", "z"], ["y"])
    ('test', 'x', None)
    """
    for name in defaults:
        if name in offered:
            return name
    return offered[0] if len(offered) == 1 else None


def listing(items: Iterable[object], limit: int = LISTING_LIMIT, *, quote: bool = False) -> str:
    """Names for a one-line message: the first ``limit`` of ``items``, the rest counted.

    Every message that names things (classes, columns, models, keys) lists them through
    this, so a model with 1,000 classes still gives a line a person can read.

    Parameters
    ----------
    items : iterable
        What to name, in the order to show it (each shown with ``str``).
    limit : int
        How many to show; the rest become `` … and N more``.
    quote : bool
        Show each in quotes (``'a', 'b'``), for names that may hold spaces or commas.

    Returns
    -------
    str
        ``"a, b, c … and 67 more"``; ``""`` when there is nothing to name.

    Examples
    --------
    >>> listing(["a", "b", "c", "d"], limit=3)
    'a, b, c … and 1 more'
    >>> listing(["x y", "z"], quote=True)
    "'x y', 'z'"
    """
    names = [repr(str(item)) if quote else str(item) for item in items]
    shown = ", ".join(names[:limit])
    return shown + (f" … and {len(names) - limit} more" if len(names) > limit else "")
