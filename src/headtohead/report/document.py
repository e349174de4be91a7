"""The report as a document: typed sections of sentences, tables, figures and notes, drawn by each format.

Every outcome (a run, a suite, a sweep, a training, the gate, a comparison of machines) is built
once into a :class:`Document` by its section builders (:mod:`headtohead.report.sections`), which
read the records through :mod:`headtohead.report.rows` and :mod:`headtohead.report.words`. Each
format (:mod:`headtohead.report.formats`: the terminal, HTML, Markdown, CSV, LaTeX, a notebook,
MLflow) draws whatever sections it is given and never decides which exist.

A table holds numbers, not text: a :class:`Cell` carries its value and interval, and its
:class:`Column` says what kind of number it is, so every format writes it with the one formatter
(:func:`headtohead.report.words.numbers.column_texts`) — or, for CSV and MLflow, unrounded.
This module is a leaf of ``report/``: it imports no other report module but the formatter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Union

from headtohead.report.words.numbers import CellText, Kind, column_texts, distinct_decimals

__all__ = [
    "Cell",
    "Column",
    "Row",
    "Table",
    "Line",
    "Lines",
    "Paragraph",
    "Figure",
    "Fold",
    "Facts",
    "Code",
    "Side",
    "Block",
    "Section",
    "Document",
    "text_cell",
]

Tone = Literal["right", "wrong", "muted", "warning"]


@dataclass(frozen=True)
class Cell:
    """One value of a table: a number with its interval, or text.

    Attributes
    ----------
    value : float, int, str or None
        A number (written by its column's kind), text (shown as it is), or ``None`` (absent:
        ``note`` says why, else ``—``).
    low, high : float, optional
        Its confidence interval, in the value's units.
    note : str, optional
        Why the value is absent (``not measured``, ``unknown``); shown in its place.
    bare : str, optional
        Why a value has no interval where its column's others have one (shown as ``(no interval)``:
        a zero-width interval would read as perfect precision).
    suffix : str, optional
        Words after the number (``mean of 5 prompts``, ``on answered rows``), in brackets when
        there is no interval.
    mark : str, optional
        A sign after the whole cell: ``✓`` (significant; ``$^{*}$`` in a paper).
    aside : str, optional
        Small print under the value in HTML, after it elsewhere, left out of a paper (``▲bert, ▼nb``).
    best : bool
        The best value of its row or column (bold).
    tone : {"right", "wrong", "muted", "warning"}, optional
    link : str, optional
        A relative link the cell's text opens (HTML, Markdown).
    image : str, optional
        A ``data:`` image shown in the cell (HTML, Markdown as a file).
    code : bool
        Text to show verbatim (a raw answer).
    kind : str, optional
        Overrides the column's kind for this cell.
    raw : float, int, str or None
        What machine-readable formats write when it differs from ``value`` (a count behind "12 of 40").
    upper_only : bool
        Only the upper bound ``high`` is known (an estimate clipped at 0: the debiased calibration error that
        the data cannot tell from 0): ``value`` is ``None``, the cell reads ``≤ 0.060``, and its column marks
        no best (a clipped point is never ranked).
    """

    value: float | int | str | None = None
    low: float | None = None
    high: float | None = None
    note: str | None = None
    bare: str | None = None
    suffix: str | None = None
    mark: str | None = None
    aside: str | None = None
    best: bool = False
    tone: Tone | None = None
    link: str | None = None
    image: str | None = None
    code: bool = False
    kind: Kind | None = None
    raw: float | int | str | None = None
    upper_only: bool = False

    @property
    def number(self) -> float | None:
        """The value as a number (``None`` for text or absence)."""
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value)

    @property
    def data(self) -> float | int | str | None:
        """What CSV and MLflow write: :attr:`raw` when given, else :attr:`value` (``note`` when absent)."""
        if self.raw is not None:
            return self.raw
        return self.value


def text_cell(text: str | None, **kwargs: object) -> Cell:
    """A cell of text (``None`` shows as ``—``)."""
    return Cell(text, kind="text", **kwargs)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Column:
    """One column: its key (CSV header, MLflow metric), heading, kind of number, and which way is better.

    Attributes
    ----------
    key : str
    label : str
    kind : str
        How its numbers are written (:data:`headtohead.report.words.numbers.Kind`); ``"text"`` for words.
    higher_is_better : bool or None
        ``None``: no direction (no best marked, no arrow).
    priority : int
        Which columns a narrow terminal keeps: lower first (0: always).
    wrap : bool
        Long text that may wrap (an input, an answer); numbers never do.
    swatch : str, optional
        A model's colour shown beside the heading.
    paper : bool
        Written in a paper's table (LaTeX); ``False`` for columns that only help a reader of the page.
    """

    key: str
    label: str
    kind: Kind = "text"
    higher_is_better: bool | None = None
    priority: int = 1
    wrap: bool = False
    swatch: str | None = None
    paper: bool = True

    @property
    def numeric(self) -> bool:
        """Right-aligned numbers, not text."""
        return self.kind != "text"

    @property
    def arrow(self) -> str:
        """``↑`` / ``↓`` / ``""``: which way is better."""
        return {True: "↑", False: "↓", None: ""}[self.higher_is_better]


@dataclass(frozen=True)
class Row:
    """One row: its cells by column key, the model it is about (for its colour), and whether a rule sets it apart
    (a footer: the average ranks under the scores)."""

    cells: Mapping[str, Cell]
    subject: str | None = None
    separated: bool = False
    #: How machine formats (MLflow) name the row: a model, ``a_vs_b`` (default: its subject).
    name: str | None = None

    def get(self, key: str) -> Cell:
        """The cell of column ``key`` (an empty cell when the row has none)."""
        return self.cells.get(key, Cell())


@dataclass(frozen=True)
class Table:
    """A table of typed cells.

    Attributes
    ----------
    key : str
        Its identity in the document (an anchor, a CSV/LaTeX label).
    columns : tuple of Column
        The first column names the row (a model, a metric, a pair).
    rows : tuple of Row
    caption : str, optional
        A title above it.
    transposed : bool
        Drawn with its columns as rows (the summary: one row per metric, one column per model).
    latex : str, optional
        Its caption in a paper (LaTeX only writes tables that have one).
    compact, fit : bool
        Drawing hints: smaller type; fit the page's width instead of scrolling (HTML).
    shared : tuple of tuple of str
        Groups of columns written with one set of decimals, enough that two different values of one row never read
        the same (the suite's scores, ranked within each data set). A column outside a group whose best is marked
        (a direction) or that holds ranks is told apart down the column.
    """

    key: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    caption: str | None = None
    transposed: bool = False
    latex: str | None = None
    compact: bool = False
    fit: bool = False
    shared: tuple[tuple[str, ...], ...] = ()

    def column(self, key: str) -> Column:
        """The column of ``key``."""
        return next(c for c in self.columns if c.key == key)

    def _group_decimals(self) -> dict[str, int | None]:
        """The decimals of each shared group's columns (see :attr:`shared`)."""
        chosen: dict[str, int | None] = {}
        for group in self.shared:
            kind = self.column(group[0]).kind
            rows = [[n for key in group if (n := row.get(key).number) is not None and row.get(key).kind in (None, kind)]
                    for row in self.rows]  # fmt: skip
            decimals = distinct_decimals(kind, rows)
            chosen.update(dict.fromkeys(group, decimals))
        return chosen

    def texts(self) -> list[list[CellText]]:
        """Every cell as text, row by row, each column written with the same decimals (see :attr:`shared`)."""
        grouped = self._group_decimals()
        by_column = [
            column_texts(
                c.kind,
                [row.get(c.key) for row in self.rows],
                decimals=grouped.get(c.key),
                distinct=c.higher_is_better is not None or c.kind == "rank",
            )  # fmt: skip
            for c in self.columns
        ]
        return [[by_column[j][i] for j in range(len(self.columns))] for i in range(len(self.rows))]

    def best(self, key: str) -> set[int]:
        """The rows holding the best value of column ``key`` (ties included; none without a direction, and none
        where a cell holds only an upper bound: a clipped point is not ranked)."""
        column = self.column(key)
        if column.higher_is_better is None or len(self.rows) < 2:
            return set()
        if any(row.get(key).upper_only for row in self.rows):
            return set()
        values = {i: v for i, row in enumerate(self.rows) if (v := row.get(key).number) is not None}
        if not values:
            return set()
        top = max(values.values()) if column.higher_is_better else min(values.values())
        return {i for i, v in values.items() if v == top}

    def with_best(self) -> Table:
        """The same table with each directed column's best cells marked (:attr:`Cell.best`)."""
        marked = [dict(row.cells) for row in self.rows]
        for column in self.columns:
            for i in self.best(column.key):
                marked[i][column.key] = replace(marked[i][column.key], best=True)
        return replace(self, rows=tuple(replace(r, cells=m) for r, m in zip(self.rows, marked, strict=True)))

    def without_empty_columns(self) -> Table:
        """The same table without the columns (but the first) where no row has a value or a reason."""

        def empty(key: str) -> bool:
            return all(row.get(key).value is None and row.get(key).note is None for row in self.rows)

        return replace(self, columns=tuple(c for i, c in enumerate(self.columns) if i == 0 or not empty(c.key)))

    def without(self, keys: Sequence[str]) -> Table:
        """The same table without some columns."""
        gone = set(keys)
        return replace(self, columns=tuple(c for c in self.columns if c.key not in gone))


@dataclass(frozen=True)
class Line:
    """A sentence, about a model when ``subject`` is given (shown first, in its colour)."""

    text: str
    subject: str | None = None
    kind: Literal["quality", "speed", "info", "warning"] = "info"

    def plain(self) -> str:
        """``"roberta: +1.2 pp accuracy over bert (…)"``."""
        return f"{self.subject}: {self.text}" if self.subject else self.text


@dataclass(frozen=True)
class Lines:
    """A list of sentences.

    ``style``: ``headline`` (the verdict, large), ``bullets``, ``warnings`` (read with care).
    """

    items: tuple[Line, ...]
    style: Literal["headline", "bullets", "warnings"] = "bullets"


@dataclass(frozen=True)
class Paragraph:
    """A sentence or two; ``note`` under a table (small), ``muted``, or plain ``text``."""

    text: str
    style: Literal["text", "note", "muted"] = "text"


@dataclass(frozen=True)
class Figure:
    """A chart, drawn only when a format renders it.

    Attributes
    ----------
    key : str
        File-name-safe, unique in the document.
    title, caption : str
    make : callable
        Returns a matplotlib figure, or ``None`` when there is nothing to draw.
    """

    key: str
    title: str
    caption: str
    make: Callable[[], Any]

    def render(self, how: Callable[[Any], bytes]) -> bytes | None:
        """The chart through ``how`` (``to_svg``, ``to_png``, ``to_pdf``); ``None`` when there is none."""
        figure = self.make()
        return how(figure) if figure is not None else None


@dataclass(frozen=True)
class Fold:
    """Blocks a reader opens on demand (``<details>``); ``open`` when shown unfolded at first."""

    title: str
    blocks: tuple[Block, ...]
    open: bool = False


@dataclass(frozen=True)
class Facts:
    """``name: value`` pairs (the data, the machine)."""

    items: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Code:
    """Text shown verbatim (the experiment as run)."""

    text: str


@dataclass(frozen=True)
class Side:
    """A main part and charts beside it where the page is wide enough (the summary table and its chart); one after
    the other elsewhere."""

    main: tuple[Block, ...]
    aside: tuple[Block, ...] = ()

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The main part, then what stands beside it."""
        return self.main + self.aside


Block = Union[Table, Lines, Paragraph, Figure, Fold, Facts, Code, Side, "Section"]


@dataclass(frozen=True)
class Section:
    """A titled part of a document.

    Attributes
    ----------
    key : str
        Its identity: the HTML anchor, and how callers choose sections (``verdict``, ``summary``).
    title : str
    blocks : tuple of Block
        Its content, subsections included.
    subtitle : str, optional
        Muted words after the title (a run's machine).
    tone : {"verdict", "warnings"}, optional
    nav : bool
        Listed in the page's navigation (top-level sections).
    """

    key: str
    title: str
    blocks: tuple[Block, ...]
    subtitle: str | None = None
    tone: Literal["verdict", "warnings"] | None = None
    nav: bool = True

    def walk(self) -> Iterator[Block]:
        """Every block, subsections' and folds' included, in reading order."""
        for block in self.blocks:
            yield block
            if isinstance(block, Section):
                yield from block.walk()
            elif isinstance(block, Fold | Side):
                for inner in block.blocks:
                    yield inner
                    if isinstance(inner, Section):
                        yield from inner.walk()


@dataclass(frozen=True)
class Document:
    """A whole report.

    Attributes
    ----------
    title, subtitle : str
    sections : tuple of Section
    colours : mapping of str to str
        Each model's colour (swatches, a sentence's subject).
    footer : str, optional
    """

    title: str
    subtitle: str
    sections: tuple[Section, ...]
    colours: Mapping[str, str] = field(default_factory=dict)
    footer: str | None = None

    def section(self, key: str) -> Section:
        """The top-level section of ``key`` (``KeyError`` when the document has none)."""
        for section in self.sections:
            if section.key == key:
                return section
        raise KeyError(key)

    def only(self, keys: Sequence[str]) -> Document:
        """The same document with only the top-level sections named, in their order here."""
        wanted = set(keys)
        return replace(self, sections=tuple(s for s in self.sections if s.key in wanted))

    def tables(self) -> Iterator[Table]:
        """Every table, in reading order."""
        for section in self.sections:
            for block in section.walk():
                if isinstance(block, Table):
                    yield block

    def figures(self) -> Iterator[Figure]:
        """Every figure, in reading order."""
        for section in self.sections:
            for block in section.walk():
                if isinstance(block, Figure):
                    yield block
