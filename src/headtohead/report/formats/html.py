"""A report document as one self-contained HTML page (or, for a notebook, a fragment of it).

Charts are SVG embedded as ``data:`` images (an SVG shown through ``<img>`` cannot run
scripts); the page carries no script at all and a Content-Security-Policy that forbids
scripts and every network request, so even a mistake in escaping could not run code.
Every user string goes through Jinja2's autoescaping.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from headtohead.report.document import (
    Block,
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
from headtohead.report.plots import to_svg
from headtohead.report.words.numbers import CellText
from headtohead.version import __version__

if TYPE_CHECKING:
    import jinja2

__all__ = ["render_html", "template_environment", "views", "now_text"]


def template_environment() -> jinja2.Environment:
    """The report's templates, autoescaped: every user string is shown as text, never as markup."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("headtohead.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def now_text() -> str:
    """``2026-11-28 21:03 UTC``: when a page was written."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _data_uri(svg: bytes) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def _cell_view(text: CellText, *, classes: list[str], cell: Any, th: bool = False) -> dict[str, Any]:
    if cell.tone is not None:
        classes.append(cell.tone)
    if cell.best:
        classes.append("best")
    main = CellText(text.text, text.interval, text.extra, text.mark).plain() if not text.absent else text.text
    after = text.aside
    return {
        "th": th,
        "text": main if not (cell.image and text.absent) else "",
        "after": after,
        "classes": " ".join(classes),
        "image": cell.image,
        "alt": text.text,
        "link": cell.link,
        "code": cell.code,
        "swatch": None,
        "arrow": None,
    }


def _column_classes(column: Column, first: bool) -> list[str]:
    if column.wrap:
        return ["text", "wrap"]
    return ["text"] if first or not column.numeric else []


def _table_view(table: Table, colours: Mapping[str, str]) -> dict[str, Any]:
    texts = table.texts()
    classes = " ".join(c for c, on in (("compact", table.compact), ("fit", table.fit)) if on)
    if table.transposed:
        return _transposed_view(table, texts, colours, classes)
    head = [
        {
            "text": c.label,
            "classes": " ".join(_column_classes(c, i == 0)),
            "swatch": c.swatch,
            "arrow": c.arrow or None,
        }
        for i, c in enumerate(table.columns)
    ]
    rows = []
    for row, row_texts in zip(table.rows, texts, strict=True):
        cells = []
        for i, (column, text) in enumerate(zip(table.columns, row_texts, strict=True)):
            view = _cell_view(text, classes=_column_classes(column, i == 0), cell=row.get(column.key))
            if i == 0 and row.subject is not None and row.subject in colours:
                view["swatch"] = colours[row.subject]
            cells.append(view)
        rows.append(cells)
    return {"type": "table", "caption": table.caption, "classes": classes, "head": head, "rows": rows}


def _transposed_view(
    table: Table, texts: list[list[CellText]], colours: Mapping[str, str], classes: str
) -> dict[str, Any]:
    """Columns drawn as rows: the first column's cells head the page's columns (the summary: one per model)."""
    first = table.columns[0]
    head = [{"text": first.label, "classes": "text", "swatch": None, "arrow": None}]
    for row, row_texts in zip(table.rows, texts, strict=True):
        head.append(
            {"text": row_texts[0].plain(), "classes": "", "swatch": colours.get(row.subject or ""), "arrow": None}
        )
    rows = []
    for j, column in enumerate(table.columns[1:], start=1):
        label = {"th": True, "text": column.label, "after": None, "classes": "", "image": None, "alt": "",
                 "link": None, "code": False, "swatch": None, "arrow": column.arrow or None}  # fmt: skip
        cells = [label]
        for row, row_texts in zip(table.rows, texts, strict=True):
            cells.append(_cell_view(row_texts[j], classes=[], cell=row.get(column.key)))
        rows.append(cells)
    return {"type": "table", "caption": table.caption, "classes": classes or "summary", "head": head, "rows": rows}


def views(blocks: Sequence[Block], colours: Mapping[str, str], level: int = 2) -> list[dict[str, Any]]:
    """The blocks as the templates draw them (``blocks.html.j2``): dicts with a ``type``, figures rendered to SVG."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, Section):
            out.append(
                {
                    "type": "section",
                    "key": block.key,
                    "title": block.title,
                    "subtitle": block.subtitle,
                    "tone": block.tone,
                    "level": level,
                    "blocks": views(block.blocks, colours, min(level + 1, 4)),
                }
            )
        elif isinstance(block, Lines):
            items = [
                {
                    "subject": i.subject,
                    "text": i.text,
                    "kind": i.kind,
                    "colour": colours.get(i.subject or "", "inherit"),
                }
                for i in block.items
            ]
            style = {"warnings": "small-warnings"}.get(block.style, block.style)
            out.append({"type": "lines", "style": style, "entries": items})
        elif isinstance(block, Paragraph):
            out.append({"type": "paragraph", "style": block.style, "text": block.text})
        elif isinstance(block, Table):
            out.append(_table_view(block, colours))
        elif isinstance(block, Figure):
            svg = block.render(to_svg)
            if svg is not None:
                out.append(
                    {
                        "type": "figure",
                        "key": block.key,
                        "title": block.title,
                        "caption": block.caption,
                        "src": _data_uri(svg),
                    }  # fmt: skip
                )
        elif isinstance(block, Fold):
            out.append({"type": "fold", "title": block.title, "open": block.open,
                        "blocks": views(block.blocks, colours, level)})  # fmt: skip
        elif isinstance(block, Facts):
            out.append({"type": "facts", "entries": list(block.items)})
        elif isinstance(block, Code):
            out.append({"type": "code", "text": block.text})
        elif isinstance(block, Side):
            out.append({"type": "side", "main": views(block.main, colours, level),
                        "aside": views(block.aside, colours, level)})  # fmt: skip
    return out


def render_html(document: Document, *, generated_at: str | None = None) -> str:
    """The whole document as one HTML page.

    Parameters
    ----------
    document : Document
    generated_at : str, optional
        When the page was written (default: now, in UTC).

    Returns
    -------
    str
        A complete, self-contained HTML document.
    """
    sections = views(document.sections, document.colours)
    nav = [{"key": s.key, "title": s.title} for s in document.sections if s.nav]
    return (
        template_environment()
        .get_template("document.html.j2")
        .render(
            title=document.title,
            subtitle=document.subtitle,
            nav=nav,
            sections=sections,
            version=__version__,
            generated_at=generated_at or now_text(),
        )
    )
