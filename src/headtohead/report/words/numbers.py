"""Numbers for reading, shared by every sentence and table (a leaf: it imports no other report module).

p-values and the Holm clause of a claim, percentage points and their intervals, durations, rates,
ratios, shares and counts: each written one way everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from headtohead.results.memory import MemoryStats

__all__ = [
    "format_p",
    "format_pp",
    "interval_pp",
    "format_duration",
    "format_rate",
    "format_ratios",
    "format_percent",
    "format_count",
    "UNKNOWN",
    "weights_text",
    "holm_clause",
    "speed_tests_phrase",
]

_MINUS = "\u2212"


def format_p(p: float) -> str:
    """A p-value for reading: ``< 0.001``, three decimals below 0.01, two otherwise.

    Examples
    --------
    >>> format_p(0.0004), format_p(0.0031), format_p(0.512)
    ('< 0.001', '= 0.003', '= 0.51')
    """
    if p < 0.001:
        return "< 0.001"
    return f"= {p:.3f}" if p < 0.01 else f"= {p:.2f}"


def format_pp(fraction: float, *, signed: bool = True) -> str:
    """A fraction as percentage points with one decimal (two below 0.1 pp): ``+1.2``, ``−0.3``.

    Examples
    --------
    >>> format_pp(0.012), format_pp(-0.003), format_pp(0.0), format_pp(0.024, signed=False)
    ('+1.2', '−0.3', '0.0', '2.4')
    """
    pp = 100.0 * fraction
    digits = 2 if 0 < abs(pp) < 0.1 else 1
    text = f"{abs(pp):.{digits}f}"
    if not signed or float(text) == 0.0:
        return text
    return ("+" if pp > 0 else _MINUS) + text


def interval_pp(low: float | None, high: float | None) -> str:
    """``+0.4…+2.0``, or ``no interval``."""
    return f"{format_pp(low)}…{format_pp(high)}" if low is not None and high is not None else "no interval"


def format_duration(seconds: float) -> str:
    """A duration as people write it: three significant digits, thousands separated, no exponent.

    Examples
    --------
    >>> [format_duration(s) for s in (2.1, 2.1049, 0.0125, 0.000431, 0.4312, 125.0, 4321.0, 4.2e-7)]
    ['2.1 s', '2.1 s', '12.5 ms', '0.431 ms', '431 ms', '125 s', '4,321 s', '0.42 µs']
    """
    if seconds != seconds or seconds < 0:  # NaN or negative: not a duration
        return "–"
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if seconds >= scale or unit == "ms" and seconds >= 1e-6:
            return f"{_three_digits(seconds / scale)} {unit}"
    return f"{_three_digits(seconds / 1e-6)} µs"


def format_rate(per_s: float) -> str:
    """A rate (samples per second): whole numbers with separators from 100, else three significant digits.

    Examples
    --------
    >>> format_rate(12345.6), format_rate(42.123), format_rate(0.000123)
    ('12,346', '42.1', '0.000123')
    """
    return f"{per_s:,.0f}" if per_s >= 100 else _three_digits(per_s)


def format_ratios(*ratios: float) -> list[str]:
    """Ratios with two decimals, or three when two would show a bound that is not 1 as ``1.00``.

    A significant ratio whose interval reads ``1.00–1.02`` looks as if it touched 1; with three
    decimals it reads ``1.003–1.018``.

    Examples
    --------
    >>> format_ratios(1.43, 1.39, 1.47), format_ratios(1.011, 1.003, 1.018)
    (['1.43', '1.39', '1.47'], ['1.011', '1.003', '1.018'])
    """
    digits = 3 if any(r != 1.0 and f"{r:.2f}" == "1.00" for r in ratios) else 2
    return [f"{r:.{digits}f}" for r in ratios]


def format_percent(fraction: float) -> str:
    """A share as a percentage with a space, one decimal where it matters: ``10 %``, ``2.5 %``.

    Examples
    --------
    >>> format_percent(0.1), format_percent(0.025), format_percent(0.0314)
    ('10 %', '2.5 %', '3.1 %')
    """
    return f"{round(100 * fraction, 1):g} %"


def _three_digits(value: float) -> str:
    """Three significant digits in fixed notation, trailing zeros dropped (``12.5``, ``2.1``, ``0.000123``)."""
    if value >= 100:
        return f"{value:,.0f}"
    if value == 0:
        return "0"
    decimals = max(0, 2 - math.floor(math.log10(value)))
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def speed_tests_phrase(n_speed_tests: int) -> str:
    """``Holm over 6 speed comparisons``.

    Examples
    --------
    >>> speed_tests_phrase(6)
    'Holm over 6 speed comparisons'
    """
    return f"Holm over {n_speed_tests} speed comparison{'s' if n_speed_tests != 1 else ''}"


def holm_clause(p_value: float | None, p_adjusted: float | None, n_speed_tests: int | None) -> str:
    """The test behind a speed claim: ``p = 0.004, Holm p = 0.02 over 6 speed comparisons`` (``p …`` alone for one).

    Empty for records written before speed comparisons had p-values.

    Examples
    --------
    >>> holm_clause(0.004, 0.02, 6), holm_clause(0.0004, 0.0004, 1), holm_clause(None, None, None)
    ('p = 0.004, Holm p = 0.02 over 6 speed comparisons', 'p < 0.001', '')
    """
    if p_value is None:
        return ""
    text = f"p {format_p(p_value)}"
    if p_adjusted is not None and n_speed_tests is not None and n_speed_tests > 1:
        text += f", Holm p {format_p(p_adjusted)} over {n_speed_tests} speed comparisons"
    return text


#: A size headtohead cannot read (a plain callable, an estimator without coefficients): never shown as 0.
UNKNOWN = "unknown"


def format_count(n: int | None) -> str:
    """``22713856`` → ``22.7M``; ``None`` (not known) → ``unknown``.

    Examples
    --------
    >>> format_count(22713856), format_count(950), format_count(None)
    ('22.7M', '950', 'unknown')
    """
    if n is None:
        return UNKNOWN
    for unit, size in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def weights_text(memory: MemoryStats | None, mib: Callable[[float], str], *, missing: str = "–") -> str:
    """The weights cell: ``mib(value)``; "unknown" when memory was measured but the size cannot be read;
    ``missing`` when memory was not measured."""
    if memory is None:
        return missing
    return UNKNOWN if memory.weights_mb is None else mib(memory.weights_mb)
