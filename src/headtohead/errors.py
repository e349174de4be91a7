"""The exceptions headtohead raises for bad input.

See ``docs/architecture.md``, "The exceptions headtohead raises for bad input".
"""

from __future__ import annotations

import difflib
import re
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
    "closest",
    "edit_distance",
    "spelling",
    "listing",
]

#: How many names a one-line message shows before it counts the rest.
LISTING_LIMIT = 10
#: What separates the words of a name without changing its meaning (``f1_macro``, ``f1-macro``, ``F1 macro``).
_SEPARATORS = re.compile(r"[\s_.\-]+")


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
    """Return `` — did you mean X?`` for the closest choice (:func:`closest`), or ``""`` when none is close.

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
    >>> did_you_mean("mmc", ["mce", "mcc"])
    ' — did you mean mcc?'
    """
    close = closest(str(word), choices)
    return f" — did you mean {close}?" if close is not None else ""


def spelling(word: str) -> str:
    """``word`` as far as its meaning goes: lower case, without separators (``F1-Macro`` → ``f1macro``)."""
    return _SEPARATORS.sub("", word.lower())


def edit_distance(a: str, b: str) -> int:
    """Edits from ``a`` to ``b``: letters inserted, deleted, replaced, or two neighbours swapped (each one edit).

    The optimal-string-alignment distance (Damerau–Levenshtein without edits of an edited span).

    Examples
    --------
    >>> edit_distance("mmc", "mcc"), edit_distance("mmc", "mce"), edit_distance("roc_uac", "roc_auc")
    (1, 2, 1)
    """
    before: list[int] = []  # the row two letters of ``a`` back, for a swap
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, y in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                current[j] = min(current[j], before[j - 2] + 1)
        before, previous = previous, current
    return previous[-1]


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice ``word`` most likely means, or ``None`` when none is close.

    Edits of spelling, not of meaning, decide, in this order: the same name but for case and
    separators (``batchsize``, ``F1-macro``); a name ``word`` begins (an abbreviation: ``acc`` →
    ``accuracy``, ``dat`` → ``data``); the fewest edits (:func:`edit_distance`: ``mmc`` is one from
    ``mcc``, two from ``mce``), at most one in a word of 5 letters, two in one of 10, three beyond;
    else difflib's closest match. Ties go to difflib's closest.

    Examples
    --------
    >>> closest("acc", ["mcc", "accuracy"]), closest("Tesla V100", ["Tesla V100-SXM2-16GB"]), closest("xyz", ["abc"])
    ('accuracy', 'Tesla V100-SXM2-16GB', None)
    """
    options = [str(c) for c in choices]
    key = spelling(word)
    spelt = {c: spelling(c) for c in options}
    limit = 1 if len(key) <= 5 else 2 if len(key) <= 10 else 3
    same = [c for c in options if spelt[c] == key]
    begun = [c for c in options if len(key) >= 2 and spelt[c].startswith(key)]
    for found in (same, begun):
        if found:
            return _likeliest(word, found)
    distance = {c: edit_distance(key, spelt[c]) for c in options}
    nearest = min(distance.values(), default=limit + 1)
    if nearest <= limit:
        return _likeliest(word, [c for c in options if distance[c] == nearest])
    close = difflib.get_close_matches(str(word), options, n=1, cutoff=0.6)
    return close[0] if close else None


def _likeliest(word: str, found: list[str]) -> str:
    """Of equally close ``found``, difflib's closest (its tie-break: the greater string)."""
    return max(found, key=lambda c: (difflib.SequenceMatcher(None, word, c).ratio(), c))


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
