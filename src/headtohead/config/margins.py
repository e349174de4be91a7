"""Margins as people write them (``0.5pp``, ``5%``, ``1.05x``), read once where they enter.

A margin enters at an edge (an option of ``h2h gate``/``sweep``/``plan``, the key
``sweep.max_accuracy_drop``, an argument of the Python API) and is a plain share after it: text
is read here and nowhere else, and a float is checked by the same rules, never turned back into
text. An **accuracy** margin is a difference of two shares: ``0.5pp`` or ``0.005`` (``%`` is
refused: points or relative?). A **slowdown** margin is a relative increase of time: ``5%``,
``0.05`` or the time ratio ``1.05x``. Bad input is one :class:`~headtohead.errors.ConfigError`
line naming the option (or key), the value, and how to write it.

A significance level (``--alpha`` of every command, ``stats.alpha``) is read here too, by one rule:
``0 < alpha < 0.5`` (:func:`parse_alpha`; ``docs/cli.md``, "Words", says why).
"""

from __future__ import annotations

import math
import re
from typing import Annotated

from pydantic import BeforeValidator

from headtohead.errors import ConfigError

__all__ = ["parse_accuracy_margin", "parse_slowdown_margin", "parse_alpha", "AccuracyMargin", "ALPHA_BELOW"]

#: Every significance level lies in (0, ALPHA_BELOW): at 0.5 a two-sided interval at 1 − alpha is a coin toss.
ALPHA_BELOW = 0.5

_NUMBER = re.compile(r"^\s*(?P<value>[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)\s*(?P<unit>pp|%|x|×)?\s*$")


def _read(value: str | float, option: str | None, example: str) -> tuple[float, str | None, str]:
    """``(number, unit, how the message names it)``; a float is a number without a unit."""
    said = f"{option} {value}" if option else f"{value!r}"
    write = f"{option} {example}" if option else example
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number, unit = float(value), None
    else:
        match = _NUMBER.match(str(value))
        if not match:
            raise ConfigError(f"{said}: not a number with an optional unit; write e.g. {write}")
        number, unit = float(match.group("value")), match.group("unit")
    if not math.isfinite(number):
        raise ConfigError(f"{said}: not a finite number; write e.g. {write}")
    if number < 0:
        raise ConfigError(f"{said}: a margin cannot be negative; write e.g. {write}")
    return number, unit, said


def parse_accuracy_margin(value: str | float, *, option: str | None = "--max-accuracy-drop") -> float:
    """``"0.5pp"`` → 0.005 (percentage points); ``"0.005"`` or ``0.005`` → 0.005 (a share).

    ``option`` names where the value came from in the message (``None``: the value only).

    Raises
    ------
    ConfigError
        Not a number, negative, a share of 1 or more, or an ambiguous unit.

    Examples
    --------
    >>> parse_accuracy_margin("0.5pp"), parse_accuracy_margin("0.005"), parse_accuracy_margin(0.005)
    (0.005, 0.005, 0.005)
    """
    number, unit, said = _read(value, option, "0.5pp")
    if unit == "%":
        raise ConfigError(
            f"{said}: '%' is ambiguous for accuracy (points or relative?); write "
            f"{number:g}pp for percentage points, or the fraction {number / 100:g}"
        )
    if unit not in (None, "pp"):
        raise ConfigError(f"{said}: '{unit}' is not an accuracy unit; write e.g. {option or ''} 0.5pp".strip())
    share = number / 100.0 if unit == "pp" else number
    if share >= 1.0:
        raise ConfigError(f"{said}: a drop of {share:g} (as a fraction) is the whole scale; did you mean {number:g}pp?")
    return round(share, 12)


def parse_slowdown_margin(value: str | float, *, option: str | None = "--max-slowdown") -> float:
    """``"5%"`` → 0.05; ``"0.05"`` or ``0.05`` → 0.05; ``"1.05x"`` → 0.05 (a time ratio).

    Raises
    ------
    ConfigError
        Not a number, negative, percentage points, or a ratio below 1.

    Examples
    --------
    >>> parse_slowdown_margin("5%"), parse_slowdown_margin("0.05"), parse_slowdown_margin("1.05x")
    (0.05, 0.05, 0.05)
    """
    number, unit, said = _read(value, option, "5%")
    if unit == "pp":
        raise ConfigError(f"{said}: 'pp' is for accuracy; write a slowdown as e.g. {option or ''} 5%".strip())
    if unit in ("x", "×") and number < 1.0:
        raise ConfigError(f"{said}: a time ratio below 1 would demand a speed-up; write e.g. 1.05x")
    share = number - 1.0 if unit in ("x", "×") else number / 100.0 if unit == "%" else number
    if share >= 1.0:
        raise ConfigError(  # 2x the time or more is no margin of a gate: the candidate is another class of model
            f"{said}: a slowdown of {share:g} (as a fraction) means {1 + share:g}× the "
            f"time; a margin is below 100% (2x), e.g. 5% or 1.05x"
        )
    return round(share, 12)


def parse_alpha(value: str | float, *, option: str | None = "--alpha") -> float:
    """A significance level: ``"0.05"`` or ``0.05`` → 0.05, one rule for every ``--alpha``: ``0 < alpha < 0.5``.

    A level of 0.5 or more is a mistake, not a choice: a two-sided interval at 1 − alpha would
    cover the truth at most half of the time (``stats.alpha`` and the anytime-valid test of
    ``--until-decided`` refuse it too); a value of 0.9 or more is most often a confidence typed
    for its alpha, and the line says which alpha that is.

    Raises
    ------
    ConfigError
        Not a number, not finite, or outside (0, 0.5).

    Examples
    --------
    >>> parse_alpha("0.05"), parse_alpha(0.01)
    (0.05, 0.01)
    """
    said = f"{option} {value}" if option else f"alpha {value!r}"
    try:
        number = math.nan if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{said}: not a number; write e.g. {option or 'alpha'} 0.05") from None
    if not 0.0 < number < ALPHA_BELOW:  # NaN fails the comparison too
        confidence = f" ({number:g} reads as a confidence: its alpha is {1 - number:.3g})" if 0.9 <= number < 1 else ""
        raise ConfigError(
            f"{said}: a significance level lies between 0 and {ALPHA_BELOW:g}, both excluded{confidence}; "
            f"write e.g. {option or 'alpha'} 0.05".strip()
        )
    return number


def _accuracy_margin_key(value: object) -> float:
    try:  # a key of the experiment file: pydantic's error names the file, line and key
        return parse_accuracy_margin(value, option=None)  # type: ignore[arg-type]
    except ConfigError as exc:
        raise ValueError(str(exc)) from None


#: An accuracy margin as a key of the experiment file (``1pp`` or ``0.01``), a share once read.
AccuracyMargin = Annotated[float, BeforeValidator(_accuracy_margin_key)]
