"""The one way headtohead writes a number, in every sentence, table and format (a leaf of ``report/``).

A number is written by its *kind* — what it measures — as pyperf's formatter writes a value by
its unit: a share as a percentage, a difference of shares in percentage points, a p-value by the
one p-value rule, a duration in three significant digits, money without an exponent. Tables go
through :func:`column_texts`, which writes a column with the same decimals throughout and adds a
decimal where two different values would otherwise read the same. Negative numbers carry a true
minus sign (U+2212); a value that rounds to zero is written without a sign (never ``−0.0``, never
``−2.78e-17``); no number is ever written in exponent notation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from headtohead.results.memory import MemoryStats

__all__ = [
    "Kind",
    "CellText",
    "MINUS",
    "UNKNOWN",
    "format_number",
    "format_interval",
    "at_most",
    "column_texts",
    "distinct_decimals",
    "format_p",
    "p_text",
    "format_pp",
    "interval_pp",
    "format_duration",
    "format_rate",
    "format_ratios",
    "format_percent",
    "format_level",
    "percent_number",
    "format_range",
    "format_share",
    "format_count",
    "format_money",
    "format_mib",
    "format_ms",
    "format_probability",
    "format_signed",
    "format_score",
    "weights_text",
    "holm_clause",
    "speed_tests_phrase",
]

#: What a number measures, which decides how it is written.
Kind = Literal[
    "text",  # words, shown as they are
    "percent",  # a share (0.912) written as a percentage: 91.2 %
    "pp",  # a difference of shares (0.012) in percentage points, signed: +1.2
    "points",  # a distance in percentage points, unsigned (a detectable gap): 2.4
    "score",  # a score in [0, 1] or near it (calibration error, F1 as a score): 0.041
    "signed",  # a signed difference of scores: +0.012
    "number",  # a figure of any scale (a --scores table's own metric): four significant digits of the largest
    "signed_number",  # a signed difference of such figures
    "ms",  # a value in milliseconds: three significant digits
    "seconds",  # a value in seconds: three significant digits
    "rate",  # per second: whole numbers from 100, else three significant digits
    "count",  # a large count in short form: 22.7M (parameters)
    "integer",  # a count written whole: 1,234
    "mib",  # mebibytes: one decimal below 10
    "money",  # a cost: three significant digits, never an exponent
    "ratio",  # a speed or capacity ratio: 1.43 (three decimals where two would read 1.00)
    "p",  # a p-value: the one rule of :func:`p_text`
    "probability",  # a posterior probability: 0.963
    "rank",  # an average rank: 2.25
    "statistic",  # a test statistic (χ², F, Kendall's W, ε_min, z): two decimals
    "signed_rank",  # a difference of ranks: +0.38
]

#: The true minus sign every negative number carries.
MINUS = "\u2212"
#: A figure headtohead cannot know (a plain callable's size): never shown as 0.
UNKNOWN = "unknown"
#: An absent value with no reason given.
ABSENT = "—"
# p-values are never rounded onto these thresholds (0.0496 is not written "0.050")
_P_THRESHOLDS = (0.01, 0.05, 0.1)
# kinds written with a fixed number of decimals for the whole column (more where values would tie)
_FIXED = {"percent": 1, "pp": 1, "points": 1, "score": 3, "signed": 3, "probability": 3, "rank": 2, "signed_rank": 2,
          "statistic": 2}  # fmt: skip
_SIGNED = {"pp", "signed", "signed_number", "signed_rank"}
# most decimals added to a column to tell different values apart
_MORE_DECIMALS = 3


def _signed_text(text: str, negative: bool, *, sign: bool) -> str:
    """``text`` (an absolute value) with its sign: ``−`` when negative, ``+`` when ``sign``; none when it reads 0."""
    if float(text.replace(",", "")) == 0.0:
        return text
    if negative:
        return MINUS + text
    return "+" + text if sign else text


def _fixed(value: float, decimals: int, *, sign: bool = False) -> str:
    """``value`` with ``decimals`` decimals and thousands separators, a true minus, no sign on a rounded zero."""
    return _signed_text(f"{abs(value):,.{decimals}f}", value < 0, sign=sign)


def _significant(value: float, digits: int = 3, *, zeros: bool = False) -> str:
    """``digits`` significant digits in fixed notation (``12.5``, ``2.1``, ``0.000123``); trailing zeros dropped
    unless ``zeros`` (a table's column: ``0.0860`` beside ``0.0877``)."""
    magnitude = abs(value)
    if magnitude >= 10 ** (digits - 1):
        return _fixed(value, 0)
    if magnitude == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(magnitude)))
    text = f"{magnitude:.{decimals}f}"
    if float(text) >= 10 ** (digits - 1):  # 99.96 rounds up to 100.0: whole from there
        return _fixed(value, 0)
    if not zeros:
        text = text.rstrip("0").rstrip(".") if "." in text else text
    return _signed_text(text, value < 0, sign=False)


def p_text(p: float | None) -> str:
    """A p-value as every table and sentence writes it: ``< 0.001``; three decimals below 0.1, two from there.

    A p-value is never rounded onto 0.01, 0.05 or 0.1 (a digit is added instead), nor onto 1.

    Examples
    --------
    >>> [p_text(p) for p in (0.0004, 0.0031, 0.046875, 0.0496, 0.0996, 0.512, 0.999, 1.0)]
    ['< 0.001', '0.003', '0.047', '0.0496', '0.0996', '0.51', '0.999', '1.00']
    """
    if p is None or not math.isfinite(p):
        return ABSENT
    if p < 0.001:
        return "< 0.001"
    decimals = 3 if p < 0.1 else 2
    text = f"{p:.{decimals}f}"
    while decimals < 6 and float(text) != p and (float(text) in _P_THRESHOLDS or (float(text) == 1.0 and p < 1.0)):
        decimals += 1
        text = f"{p:.{decimals}f}"
    return text


def format_p(p: float) -> str:
    """A p-value after ``p``: ``< 0.001`` or ``= 0.003`` (the rule of :func:`p_text`).

    Examples
    --------
    >>> format_p(0.0004), format_p(0.0031), format_p(0.512)
    ('< 0.001', '= 0.003', '= 0.51')
    """
    text = p_text(p)
    return text if text.startswith("<") else f"= {text}"


def format_pp(fraction: float, *, signed: bool = True, decimals: int | None = None) -> str:
    """A fraction as percentage points, one decimal (two below 0.1 pp): ``+1.2``, ``−0.3``, ``0.0``.

    Examples
    --------
    >>> format_pp(0.012), format_pp(-0.003), format_pp(0.0), format_pp(0.024, signed=False), format_pp(-2.78e-19)
    ('+1.2', '−0.3', '0.0', '2.4', '0.0')
    """
    pp = 100.0 * fraction
    if decimals is None:
        decimals = 2 if 0.005 <= abs(pp) < 0.1 else 1
    return _fixed(pp, decimals, sign=signed) if signed else f"{abs(pp):,.{decimals}f}"


def interval_pp(low: float | None, high: float | None) -> str:
    """``+0.4…+2.0``, or ``no interval``."""
    return f"{format_pp(low)}…{format_pp(high)}" if low is not None and high is not None else "no interval"


def format_level(confidence: float) -> str:
    """A confidence level: ``95 %``, ``97.5 %`` (a Bonferroni level is not rounded to 98 %).

    Examples
    --------
    >>> format_level(0.95), format_level(0.975), format_level(1 - 0.05 / 3)
    ('95 %', '97.5 %', '98.33 %')
    """
    return f"{round(100 * confidence, 2):g} %"


def format_range(low: float, high: float) -> str:
    """A bin of values: whole numbers as such, others in four significant digits; one value alone.

    Examples
    --------
    >>> format_range(3, 12), format_range(0.25, 0.3333333), format_range(7, 7)
    ('3–12', '0.25–0.3333', '7')
    """

    def one(value: float) -> str:
        return _fixed(value, 0) if float(value).is_integer() else _significant(value, 4)

    return one(low) if low == high else f"{one(low)}–{one(high)}"


def percent_number(fraction: float) -> str:
    """A share as a number of percent with as many decimals as it needs, up to three (a setting echoed back).

    Examples
    --------
    >>> percent_number(0.9), percent_number(0.905), percent_number(0.12345)
    ('90', '90.5', '12.345')
    """
    return f"{100 * fraction:.3f}".rstrip("0").rstrip(".")


def format_percent(fraction: float) -> str:
    """A share as a percentage, one decimal where it matters: ``10 %``, ``2.5 %`` (in sentences).

    Examples
    --------
    >>> format_percent(0.1), format_percent(0.025), format_percent(0.0314)
    ('10 %', '2.5 %', '3.1 %')
    """
    return f"{round(100 * fraction, 1):g} %"


def format_share(fraction: float, decimals: int = 1) -> str:
    """A share with its decimals fixed (in tables): ``91.2 %``.

    Examples
    --------
    >>> format_share(0.9125), format_share(0.5, 0)
    ('91.2 %', '50 %')
    """
    return _fixed(100 * fraction, decimals) + " %"


def format_duration(seconds: float) -> str:
    """A duration as people write it: three significant digits, thousands separated, no exponent.

    Examples
    --------
    >>> [format_duration(s) for s in (2.1, 2.1049, 0.0125, 0.000431, 0.4312, 125.0, 4321.0, 4.2e-7)]
    ['2.1 s', '2.1 s', '12.5 ms', '0.431 ms', '431 ms', '125 s', '4,321 s', '0.42 µs']
    """
    if seconds != seconds or seconds < 0:  # NaN or negative: not a duration
        return ABSENT
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if seconds >= scale or unit == "ms" and seconds >= 1e-6:
            return f"{_significant(seconds / scale)} {unit}"
    return f"{_significant(seconds / 1e-6)} µs"


def format_ms(seconds: float) -> str:
    """Seconds as milliseconds, three significant digits (``12.5``, ``1,234``): a table's latency column.

    Examples
    --------
    >>> format_ms(0.0125), format_ms(1.2345), format_ms(0.000431)
    ('12.5', '1,234', '0.431')
    """
    return _significant(seconds * 1e3)


def format_rate(per_s: float) -> str:
    """A rate (samples per second): whole numbers with separators from 100, else three significant digits.

    Examples
    --------
    >>> format_rate(12345.6), format_rate(42.123), format_rate(0.000123)
    ('12,346', '42.1', '0.000123')
    """
    return _fixed(per_s, 0) if per_s >= 100 else _significant(per_s)


def format_ratios(*ratios: float) -> list[str]:
    """Ratios with two decimals, or three when two would show a bound that is not 1 as ``1.00``.

    Examples
    --------
    >>> format_ratios(1.43, 1.39, 1.47), format_ratios(1.011, 1.003, 1.018)
    (['1.43', '1.39', '1.47'], ['1.011', '1.003', '1.018'])
    """
    digits = 3 if any(r != 1.0 and f"{r:.2f}" == "1.00" for r in ratios) else 2
    return [_fixed(r, digits) for r in ratios]


def format_count(n: int | float | None) -> str:
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
    return f"{int(n)}"


def format_money(amount: float) -> str:
    """A cost with three significant digits, never in exponent notation: ``0.0000567``, ``0.0123``, ``1,234``.

    Examples
    --------
    >>> [format_money(x) for x in (5.67e-05, 0.0123, 1.234, 12.34, 3.6, 1.0, 1234.5, 0.0)]
    ['0.0000567', '0.0123', '1.23', '12.3', '3.6', '1', '1,234', '0']
    """
    if not math.isfinite(amount):
        return ABSENT
    return _fixed(amount, 0) if abs(amount) >= 1000 else _significant(amount)


def format_mib(value: float) -> str:
    """Mebibytes: one decimal below 10, whole from there (``4.2``, ``189``, ``1,024``).

    Examples
    --------
    >>> format_mib(4.23), format_mib(189.4), format_mib(1024.0)
    ('4.2', '189', '1,024')
    """
    return _fixed(value, 1 if abs(value) < 10 else 0)


def format_probability(value: float) -> str:
    """A probability with three decimals (``0.963``); one that is not 0 or 1 never reads as either.

    Examples
    --------
    >>> format_probability(0.96312), format_probability(1.0), format_probability(4e-5), format_probability(0.99996)
    ('0.963', '1.000', '< 0.001', '> 0.999')
    """
    if 0 < value < 0.0005:
        return "< 0.001"
    if 0.9995 <= value < 1:
        return "> 0.999"
    return _fixed(value, 3)


def format_score(value: float, decimals: int = 3) -> str:
    """A score near [0, 1]: ``0.041``."""
    return _fixed(value, decimals)


def format_signed(value: float, decimals: int = 3) -> str:
    """A signed difference: ``+0.012``, ``−0.300``, ``0.000`` for a rounded zero.

    Examples
    --------
    >>> format_signed(0.0123), format_signed(-0.3), format_signed(-2.78e-17)
    ('+0.012', '−0.300', '0.000')
    """
    return _fixed(value, decimals, sign=True)


def _number_decimals(values: Sequence[float]) -> int:
    """Decimals that give the largest value four significant digits (at least none, at most six)."""
    largest = max((abs(v) for v in values), default=0.0)
    if largest == 0:
        return 0
    return max(0, min(6, 3 - math.floor(math.log10(largest))))


def format_number(value: float, kind: Kind, decimals: int | None = None, *, table: bool = False) -> str:
    """``value`` written as its kind; ``decimals`` fixes them for the kinds written with fixed decimals.

    Examples
    --------
    >>> [format_number(v, k) for v, k in ((0.9123, "percent"), (-0.003, "pp"), (0.0412, "score"),
    ...  (2.5, "ms"), (21400.0, "rate"), (22713856, "count"), (5.67e-5, "money"), (0.0031, "p"))]
    ['91.2 %', '−0.3', '0.041', '2.5', '21,400', '22.7M', '0.0000567', '0.003']
    """
    if kind == "percent":
        return format_share(value, 1 if decimals is None else decimals)
    if kind == "probability" and decimals in (None, 3):
        return format_probability(value)
    if kind in _FIXED:
        return _fixed(100 * value if kind in ("pp", "points") else value, _FIXED[kind] if decimals is None else decimals,
                      sign=kind in _SIGNED)  # fmt: skip
    if kind in ("number", "signed_number"):
        return _fixed(value, _number_decimals([value]) if decimals is None else decimals, sign=kind == "signed_number")
    if kind == "mib" and decimals is not None:
        return _fixed(value, decimals)
    if table and kind in ("ms", "seconds", "money") and abs(value) < 100:
        return _significant(value, 3, zeros=True)
    if table and kind == "rate" and abs(value) < 100:
        return _significant(value, 3, zeros=True)
    writers: dict[str, Callable[[float], str]] = {
        "ms": _significant,
        "seconds": _significant,
        "rate": format_rate,
        "count": format_count,
        "integer": lambda v: _fixed(v, 0),
        "mib": format_mib,
        "money": format_money,
        "ratio": lambda v: format_ratios(v)[0],
        "p": p_text,
    }
    return writers.get(kind, str)(value)


def at_most(high: float, kind: Kind, decimals: int | None = None) -> str:
    """A value known only up to its upper bound (an estimate clipped at 0): ``≤ 0.060``, never ``0.000``.

    Examples
    --------
    >>> at_most(0.0603, "score"), at_most(0.0603, "score", 4)
    ('≤ 0.060', '≤ 0.0603')
    """
    return f"≤ {format_number(high, kind, decimals, table=True)}"


def format_interval(low: float, high: float, kind: Kind, decimals: int | None = None) -> str:
    """An interval in its value's kind: ``90.1–92.3`` (a percent's without ``%``), ``+0.4…+2.0`` for signed kinds.

    Examples
    --------
    >>> format_interval(0.901, 0.923, "percent"), format_interval(0.004, 0.02, "pp"), format_interval(1.39, 1.47, "ratio")
    ('90.1–92.3', '+0.4…+2.0', '1.39–1.47')
    """
    if kind == "percent":
        places = 1 if decimals is None else decimals
        return f"{_fixed(100 * low, places)}–{_fixed(100 * high, places)}"
    if kind == "ratio":
        return "–".join(format_ratios(low, high))
    sep = "…" if kind in _SIGNED else "–"
    return f"{format_number(low, kind, decimals)}{sep}{format_number(high, kind, decimals)}"


@dataclass(frozen=True)
class CellText:
    """A table cell as text, in parts each format may style: the value, its interval, words, a mark.

    ``absent``: no value (``text`` is the reason, or ``—``).
    """

    text: str
    interval: str | None = None
    extra: str | None = None
    mark: str | None = None
    absent: bool = False
    aside: str | None = None

    def plain(self) -> str:
        """The whole cell as one line: ``91.2 % (90.1–92.3)``, ``70.0 % (mean of 5 prompts)``.

        Examples
        --------
        >>> CellText("91.2 %", "90.1–92.3").plain(), CellText("+0.012", extra="(no interval)", mark="✓").plain()
        ('91.2 % (90.1–92.3)', '+0.012 (no interval) ✓')
        """
        parts = [self.text]
        if self.interval is not None:
            parts.append(f"({self.interval})")
        if self.extra:
            parts.append(self.extra)
        if self.mark:
            parts.append(self.mark)
        if self.aside:
            parts.append(self.aside)
        return " ".join(parts)


class _CellLike(Protocol):
    """What the formatter reads of a :class:`~headtohead.report.document.Cell`."""

    @property
    def value(self) -> float | int | str | None: ...
    @property
    def low(self) -> float | None: ...
    @property
    def high(self) -> float | None: ...
    @property
    def note(self) -> str | None: ...
    @property
    def bare(self) -> str | None: ...
    @property
    def suffix(self) -> str | None: ...
    @property
    def mark(self) -> str | None: ...
    @property
    def aside(self) -> str | None: ...
    @property
    def kind(self) -> Kind | None: ...
    @property
    def number(self) -> float | None: ...
    @property
    def upper_only(self) -> bool: ...


def _base_decimals(kind: Kind, numbers: Sequence[float]) -> int | None:
    """The decimals a column of ``kind`` is written with, before telling values apart (``None``: value by value)."""
    if kind in _FIXED:
        if kind in ("pp", "points") and any(0.005 <= abs(100 * v) < 0.1 for v in numbers):
            return 2
        return _FIXED[kind]
    if kind in ("number", "signed_number"):
        return _number_decimals(numbers)
    if kind == "mib":
        return 1 if any(abs(v) < 10 for v in numbers) else 0
    return None  # written value by value (durations, rates, counts, money, p-values)


def distinct_decimals(kind: Kind, groups: Sequence[Sequence[float]]) -> int | None:
    """The decimals that write ``kind`` alike throughout, with more (at most three) where two different values of one
    group — a column whose best is marked, a row of ranked scores — would otherwise read the same.

    Examples
    --------
    >>> distinct_decimals("percent", [[0.97502, 0.97498]]), distinct_decimals("percent", [[0.975, 0.912]])
    (3, 1)
    """
    numbers = [v for group in groups for v in group]
    base = _base_decimals(kind, numbers)
    if base is None or kind == "mib":
        return base
    for decimals in range(base, base + _MORE_DECIMALS + 1):
        clash = False
        for group in groups:
            distinct = sorted({float(f"{v:.12g}") for v in group})  # values equal but for float noise are one
            texts = [format_number(v, kind, decimals) for v in distinct]
            clash |= len(set(texts)) != len(texts)
        if not clash:
            return decimals
    return base + _MORE_DECIMALS


def _numbers(cells: Sequence[_CellLike], kind: Kind) -> list[float]:
    return [float(n) for c in cells if (c.kind or kind) == kind and (n := c.number) is not None and math.isfinite(n)]


def column_texts(
    kind: Kind, cells: Sequence[_CellLike], *, distinct: bool = False, decimals: int | None = None
) -> list[CellText]:
    """Every cell of a column as text: one kind, the same decimals throughout.

    Parameters
    ----------
    kind : str
        The column's kind (a cell's own ``kind`` overrides it).
    cells : sequence of Cell
    distinct : bool
        Add decimals where two different values would read the same (a column whose best is marked).
    decimals : int, optional
        Decimals chosen for the column's whole group (see :func:`distinct_decimals`).

    Returns
    -------
    list of CellText

    Examples
    --------
    >>> from headtohead.report.document import Cell
    >>> cells = [Cell(0.97502, 0.96, 0.98), Cell(0.97498), Cell(None, note="not measured")]
    >>> [t.plain() for t in column_texts("percent", cells, distinct=True)]
    ['97.502 % (96.000–98.000)', '97.498 %', 'not measured']
    >>> [t.plain() for t in column_texts("number", [Cell(0.59), Cell(1.0), Cell(0.8481)])]
    ['0.590', '1.000', '0.848']
    """
    if decimals is None:
        numbers = _numbers(cells, kind)
        decimals = distinct_decimals(kind, [numbers] if distinct else [[]] + [[v] for v in numbers])
    return [_cell_text(c, c.kind or kind, decimals if (c.kind or kind) == kind else None) for c in cells]


def _cell_text(cell: _CellLike, kind: Kind, decimals: int | None) -> CellText:
    value = cell.value
    suffix = f"({cell.suffix})" if cell.suffix else None
    if isinstance(value, str):
        return CellText(value, extra=suffix, mark=cell.mark, aside=cell.aside)
    number = cell.number
    if cell.upper_only and cell.high is not None:  # a clipped estimate: what the data say is its upper bound
        return CellText(at_most(cell.high, kind, decimals), extra=suffix, mark=cell.mark, aside=cell.aside)
    if number is None or not math.isfinite(number):
        return CellText(cell.note or ABSENT, mark=cell.mark, absent=True, aside=cell.aside)
    text = format_number(number, kind, decimals, table=True)
    if cell.low is not None and cell.high is not None:
        interval = format_interval(cell.low, cell.high, kind, decimals)
        return CellText(text, interval, suffix, cell.mark, aside=cell.aside)
    extra = suffix or ("(no interval)" if cell.bare else None)
    return CellText(text, extra=extra, mark=cell.mark, aside=cell.aside)


def speed_tests_phrase(n_speed_tests: int) -> str:
    """``Holm over 6 speed comparisons``.

    Examples
    --------
    >>> speed_tests_phrase(6)
    'Holm over 6 speed comparisons'
    """
    return f"Holm over {n_speed_tests} speed comparison{'s' if n_speed_tests != 1 else ''}"


def holm_clause(p_value: float | None, p_adjusted: float | None, n_speed_tests: int | None) -> str:
    """The test behind a speed claim: ``p = 0.004, Holm p = 0.020 over 6 speed comparisons`` (``p …`` alone for one).

    Empty for records written before speed comparisons had p-values.

    Examples
    --------
    >>> holm_clause(0.004, 0.02, 6), holm_clause(0.0004, 0.0004, 1), holm_clause(None, None, None)
    ('p = 0.004, Holm p = 0.020 over 6 speed comparisons', 'p < 0.001', '')
    """
    if p_value is None:
        return ""
    text = f"p {format_p(p_value)}"
    if p_adjusted is not None and n_speed_tests is not None and n_speed_tests > 1:
        text += f", Holm p {format_p(p_adjusted)} over {n_speed_tests} speed comparisons"
    return text


def weights_text(memory: MemoryStats | None, *, missing: str = ABSENT) -> str:
    """The weights cell: its MiB; "unknown" when memory was measured but the size cannot be read;
    ``missing`` when memory was not measured."""
    if memory is None:
        return missing
    return UNKNOWN if memory.weights_mb is None else format_mib(memory.weights_mb)
