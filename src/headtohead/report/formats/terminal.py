"""A report document for the terminal: rich renderables (only the CLI prints them).

Tables are drawn from the document's own tables, so a new column reaches the terminal with no
change here. A number is never cut: each column is at least as wide as its longest value and
interval; when the terminal is too narrow for every column, the least important columns
(:attr:`~headtohead.report.document.Column.priority`) are left out and a line names them. User
strings are rich ``Text``, never markup.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

from rich.console import Console, RenderableType
from rich.table import Table as RichTable
from rich.text import Text

from headtohead.report.document import (
    Block,
    Cell,
    Code,
    Column,
    Document,
    Facts,
    Figure,
    Fold,
    Lines,
    Paragraph,
    Section,
    Side,
    Table,
)
from headtohead.report.words.numbers import CellText

__all__ = ["renderables", "table_renderables", "render_text"]

# A rich table's own width per column (padding 1 + 1, a border) and for the table's left border.
_PER_COLUMN, _EDGE = 3, 1
# The narrowest a wrapping text column is drawn.
_TEXT_MIN = 12


def _cell(text: CellText, cell: Cell) -> Text:
    """One cell as styled text: the value (bold green when best), its interval and words dimmed."""
    if text.absent:
        return Text(text.text, style="yellow" if cell.tone == "warning" else "dim")
    style = "bold green" if cell.best else ("green" if cell.tone == "right" else "red" if cell.tone == "wrong" else "")
    out = Text(text.text, style=style)
    if text.interval is not None:
        out.append(f" ({text.interval})", style="dim")
    if text.extra:
        out.append(f" {text.extra}", style="dim")
    if text.mark:
        out.append(f" {text.mark}")
    if text.aside:
        out.append(f"\n{text.aside}", style="dim")
    return out


def _least_width(text: CellText) -> int:
    """The narrowest a cell can be drawn without cutting a number: its value, its interval, its longest word."""
    widths = [len(text.text) if not text.absent else max(map(len, text.text.split()), default=1)]
    if text.interval is not None:
        widths.append(len(text.interval) + 2)
    widths += [len(word) for word in f"{text.extra or ''} {text.aside or ''}".split()]
    return max(widths)


def _grid(table: Table) -> tuple[list[Column], list[list[tuple[CellText, Cell]]]]:
    """The table as drawn: columns and rows of (text, cell); a transposed table's columns become its rows."""
    texts = table.texts()
    if not table.transposed:
        rows = [[(t, row.get(c.key)) for t, c in zip(row_texts, table.columns, strict=True)]
                for row, row_texts in zip(table.rows, texts, strict=True)]  # fmt: skip
        return list(table.columns), rows
    first = table.columns[0]
    columns = [Column("metric", first.label, "text", wrap=True, priority=0)]
    columns += [Column(f"row{i}", row_texts[0].plain(), "score", priority=0) for i, row_texts in enumerate(texts)]
    rows = []
    for j, column in enumerate(table.columns[1:], start=1):
        label = CellText(f"{column.label} {column.arrow}".strip())
        rows.append(
            [(label, Cell(label.text))] + [(t[j], r.get(column.key)) for r, t in zip(table.rows, texts, strict=True)]
        )
    return columns, rows


def _fitting(columns: list[Column], rows: list[list[tuple[CellText, Cell]]], width: int) -> tuple[list[int], list[str]]:
    """The columns kept at this width (by position) and the labels of those left out, least important first."""
    least = []
    for j, column in enumerate(columns):
        cells = [_least_width(row[j][0]) for row in rows] or [1]
        header = max((len(w) for w in column.label.split()), default=1)
        need = max(header, *cells) if not column.wrap else min(max(header, *cells), _TEXT_MIN)
        least.append(need)
    kept = list(range(len(columns)))
    dropped: list[str] = []
    while sum(least[j] + _PER_COLUMN for j in kept) + _EDGE > width:
        candidates = [j for j in kept if columns[j].priority > 0]
        if not candidates:
            break
        gone = max(candidates, key=lambda j: (columns[j].priority, j))
        kept.remove(gone)
        dropped.append(columns[gone].label)
    return kept, dropped


def _drawn(table: Table, columns: list[Column], rows: list[list[tuple[CellText, Cell]]], kept: list[int]) -> RichTable:
    drawn = RichTable(title=Text(table.caption) if table.caption else None, title_justify="left")
    for j in kept:
        column = columns[j]
        header = Text(column.label + (f" {column.arrow}" if column.arrow and not table.transposed else ""))
        drawn.add_column(
            header,
            justify="right" if column.numeric and j > 0 else "left",
            overflow="fold",
            min_width=None if column.wrap else _least_column(rows, j, column),
            style="bold" if j == 0 else None,
        )
    for row in rows:
        drawn.add_row(*(_cell(row[j][0], row[j][1]) for j in kept))
    return drawn


def _fits(drawn: RichTable, width: int) -> bool:
    """Whether rich draws the table within ``width`` whole (its border's right corner is there, nothing cut)."""
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    console.print(drawn)
    lines = [line.rstrip() for line in console.file.getvalue().splitlines()]  # type: ignore[attr-defined]
    border = next((line for line in lines if line.startswith(("┏", "┌", "╭"))), None)
    return border is None or border.endswith(("┓", "┐", "╮"))


def table_renderables(table: Table, width: int, colours: Mapping[str, str] | None = None) -> list[RenderableType]:
    """A document table as a rich table (and a line naming the columns left out at this width)."""
    columns, rows = _grid(table)
    kept, dropped = _fitting(columns, rows, width)
    drawn = _drawn(table, columns, rows, kept)
    while not _fits(drawn, width) and (candidates := [j for j in kept if columns[j].priority > 0]):
        gone = max(candidates, key=lambda j: (columns[j].priority, j))  # rich's own padding: one more must go
        kept.remove(gone)
        dropped.append(columns[gone].label)
        drawn = _drawn(table, columns, rows, kept)
    out: list[RenderableType] = [drawn]
    if dropped:
        out.append(Text(f"Not shown at this width: {', '.join(dropped)} (widen the terminal, or read the report file).",
                        style="dim"))  # fmt: skip
    return out


def _least_column(rows: list[list[tuple[CellText, Cell]]], j: int, column: Column) -> int:
    header = max((len(w) for w in column.label.split()), default=1)
    return max([header] + [_least_width(row[j][0]) for row in rows])


def _lines(block: Lines) -> list[RenderableType]:
    if block.style == "warnings":
        return [Text(f"! {line.plain()}", style="yellow") for line in block.items]
    if block.style == "headline":
        return [Text(f"  {line.plain()}") for line in block.items]
    return [Text(f"• {line.plain()}") for line in block.items]


def renderables(
    blocks: Sequence[Block] | Document, width: int, colours: Mapping[str, str] | None = None
) -> list[RenderableType]:
    """Everything the terminal shows of a document (or of some blocks), in order.

    Parameters
    ----------
    blocks : Document or sequence of Block
    width : int
        The terminal's width in characters.

    Returns
    -------
    list of rich renderables
    """
    if isinstance(blocks, Document):
        colours, blocks = blocks.colours, blocks.sections
    out: list[RenderableType] = []
    for block in blocks:
        if isinstance(block, Section):
            if block.title:  # a document of one part may leave it untitled
                out.append(Text(block.title + (f" — {block.subtitle}" if block.subtitle else ""), style="bold"))
            out += renderables(block.blocks, width, colours)
        elif isinstance(block, Lines):
            out += _lines(block)
        elif isinstance(block, Paragraph):
            out.append(Text(block.text, style="dim" if block.style != "text" else ""))
        elif isinstance(block, Table):
            out += table_renderables(block, width, colours)
        elif isinstance(block, Fold | Side):
            out += renderables(block.blocks, width, colours)
        elif isinstance(block, Facts):
            out += [Text(f"{k}: {v}") for k, v in block.items]
        elif isinstance(block, Code):
            out.append(Text(block.text))
        elif isinstance(block, Figure):
            continue  # charts are for the files
    return out


def render_text(document: Document, width: int = 100) -> str:
    """The document as the terminal prints it, as plain text ``width`` columns wide (tests, logs, notebooks).

    Examples
    --------
    >>> print(render_text(terminal_document(result), width=80))   # doctest: +SKIP
    """
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    for shown in renderables(document, width):
        console.print(shown, soft_wrap=not isinstance(shown, RichTable))
    return console.file.getvalue()  # type: ignore[attr-defined,no-any-return]
