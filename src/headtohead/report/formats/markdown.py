"""A report document in Markdown, for a pull-request comment or a wiki page, with its charts as PNG files beside it.

User strings are escaped for Markdown and HTML (GitHub renders inline HTML), so a label
such as ``<script>`` or ``*bold*`` shows literally, in every document: a run's, a suite's, a sweep's.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence

from headtohead.report.document import (
    Block,
    Cell,
    Code,
    Document,
    Facts,
    Figure,
    Fold,
    Line,
    Lines,
    Paragraph,
    Section,
    Side,
    Table,
)
from headtohead.report.plots import to_png
from headtohead.report.words.numbers import CellText

__all__ = ["md_escape", "render_markdown"]

# Characters that start emphasis, code, links or table cells anywhere in a line.
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# What makes a line a heading, list, quote or rule when it comes first.
_LINE_START = re.compile(r"^(?:([#+\-=>])(?=\s|$|\1)|(\d+)(?=[.)](?:\s|$)))")
# What Markdown reads as inline HTML or an autolink (a tag, a comment): ``<`` right before a name, ``/``, ``!`` or ``?``,
# up to its ``>``.
_TAG = re.compile(r"<[A-Za-z/!?][^<>]*>?")
# What Markdown reads as a character reference (``&amp;``, ``&#60;``).
_ENTITY = re.compile(r"&(?=#?\w+;)")
_IMAGE_TYPES = {"image/jpeg": "jpg", "image/png": "png", "image/svg+xml": "svg"}


def md_escape(text: object) -> str:
    """Make ``text`` show literally in Markdown (CommonMark / GitHub), on one line.

    Only what Markdown would interpret is escaped, so the source stays readable: what would be
    read as an HTML tag (GitHub renders inline HTML) has its ``<`` and ``>`` written as
    entities, and ``&`` only where it would start a character reference; a comparison such as
    ``p < 0.001`` stays as written (an entity there shows as ``&lt;`` wherever Markdown is read
    as text).

    Examples
    --------
    >>> md_escape("<script>a|b</script>")
    '&lt;script&gt;a\\\\|b&lt;/script&gt;'
    >>> md_escape("- 1.5 pp (95 % CI)")
    '\\\\- 1.5 pp (95 % CI)'
    >>> md_escape("p < 0.001 & a -> b; &amp;")
    'p < 0.001 & a -> b; &amp;amp;'
    """
    value = _ENTITY.sub("&amp;", " ".join(str(text).split()))
    value = _TAG.sub(lambda tag: tag.group(0).replace("<", "&lt;").replace(">", "&gt;"), value)
    value = _SPECIAL.sub(r"\\\1", value)
    return _LINE_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\", value)


class _Writer:
    """Lines of Markdown and the files they link to (charts, thumbnails)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.files: dict[str, bytes] = {}
        self.lines: list[str] = []

    def blocks(self, blocks: Sequence[Block], level: int) -> None:
        for block in blocks:
            self.block(block, level)

    def block(self, block: Block, level: int) -> None:
        if isinstance(block, Section):
            subtitle = f" — {md_escape(block.subtitle)}" if block.subtitle else ""
            self.lines += [f"{'#' * level} {md_escape(block.title)}{subtitle}", ""]
            self.blocks(block.blocks, min(level + 1, 4))
        elif isinstance(block, Lines):
            for item in block.items:  # a warning a quote of its own; other lines one list
                self.lines += [_line(item, block.style)] + ([""] if block.style == "warnings" else [])
            self.lines += [] if block.style == "warnings" else [""]
        elif isinstance(block, Paragraph):
            self.lines += [md_escape(block.text), ""]
        elif isinstance(block, Table):
            self.table(block)
        elif isinstance(block, Figure):
            png = block.render(to_png)
            if png is not None:
                self.files[f"{block.key}.png"] = png
                shown = f"![{md_escape(block.title)}]({self.folder}/{block.key}.png)"
                self.lines += [shown, "", f"*{md_escape(block.caption)}*", ""]
        elif isinstance(block, Fold):
            self.lines += [f"<details{' open' if block.open else ''}><summary>{html.escape(block.title)}</summary>", ""]
            self.blocks(block.blocks, level)
            self.lines += ["</details>", ""]
        elif isinstance(block, Facts):
            self.lines += [f"- {md_escape(k)}: {md_escape(v)}" for k, v in block.items] + [""]
        elif isinstance(block, Code):
            fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", block.text)), default=0))
            self.lines += [fence + "text", block.text, fence, ""]
        elif isinstance(block, Side):
            self.blocks(block.blocks, level)

    def table(self, table: Table) -> None:
        if table.caption:
            self.lines += [f"**{md_escape(table.caption)}**", ""]
        texts = table.texts()
        if table.transposed:
            first = table.columns[0]
            header = [md_escape(first.label)] + [md_escape(row[0].plain()) for row in texts]
            body = [
                [md_escape(f"{column.label} {column.arrow}".strip())]
                + [
                    self.cell(row.get(column.key), row_texts[j], table.key, i)
                    for i, (row, row_texts) in enumerate(zip(table.rows, texts, strict=True))
                ]  # fmt: skip
                for j, column in enumerate(table.columns[1:], start=1)
            ]
            numeric = [False] + [True] * len(table.rows)
        else:
            header = [md_escape(f"{c.label} {c.arrow}".strip()) for c in table.columns]
            body = [
                [
                    self.cell(row.get(c.key), text, table.key, i)
                    for c, text in zip(table.columns, row_texts, strict=True)
                ]
                for i, (row, row_texts) in enumerate(zip(table.rows, texts, strict=True))
            ]
            numeric = [i > 0 and c.numeric for i, c in enumerate(table.columns)]
        self.lines.append("| " + " | ".join(header) + " |")
        self.lines.append("|" + "|".join("---:" if right else ":---" for right in numeric) + "|")
        self.lines += ["| " + " | ".join(cells) + " |" for cells in body]
        self.lines.append("")

    def cell(self, cell: Cell, text: CellText, table: str, row: int) -> str:
        shown = md_escape(text.plain())
        if cell.image is not None:
            kind, _, payload = cell.image.partition(";base64,")
            name = f"{table}-{row}.{_IMAGE_TYPES.get(kind.removeprefix('data:'), 'img')}"
            self.files[name] = base64.b64decode(payload)
            return f"![{shown}]({self.folder}/{name})"
        if cell.link is not None:
            return f"[{shown}]({cell.link})"
        return f"**{shown}**" if cell.best and shown else shown


def _line(item: Line, style: str) -> str:
    if style == "warnings":
        return f"> ⚠ {md_escape(item.plain())}"
    return f"- **{md_escape(item.subject)}**: {md_escape(item.text)}" if item.subject else f"- {md_escape(item.text)}"


def render_markdown(document: Document, *, image_folder: str = "report_files") -> tuple[str, dict[str, bytes]]:
    """The document as Markdown, and the files it links to.

    Parameters
    ----------
    document : Document
    image_folder : str
        Folder (relative to the Markdown file) the images are linked from.

    Returns
    -------
    text : str
    images : dict of str to bytes
        File name inside ``image_folder`` → its bytes (PNG charts, thumbnails).
    """
    writer = _Writer(image_folder)
    writer.lines += [f"# {md_escape(document.title)}", ""]
    if document.subtitle:
        writer.lines += [md_escape(document.subtitle), ""]
    writer.blocks(document.sections, 2)
    return "\n".join(writer.lines).rstrip() + "\n", writer.files
