"""A report document as a notebook shows it: an HTML fragment with inline styles, and a few lines of text.

The outcomes of :mod:`headtohead.pipeline` (``Run``, ``GateOutcome``, ``SweepRun``, ``TrainOutcome``,
``SuiteOutcome``) call these from ``_repr_html_`` and ``__repr__`` with the short document their
builder gives (:mod:`headtohead.report.sections`), so ``headtohead.compare(...)`` as the last line of a
cell shows the verdict at once. The fragment carries no script; figures are left to the files.
"""

from __future__ import annotations

from collections.abc import Sequence

from headtohead.report.document import Document, Figure, Lines, Section
from headtohead.report.formats.html import template_environment, views

__all__ = ["notebook_html", "notebook_text"]


def _without_figures(blocks: Sequence[object]) -> list[object]:
    return [b for b in blocks if not isinstance(b, Figure)]


def notebook_html(document: Document) -> str:
    """The document as an HTML fragment (a ``<div>``), every user string escaped, no figure."""
    blocks = []
    for section in document.sections:
        kept = Section(section.key, section.title, tuple(_without_figures(section.blocks)))  # type: ignore[arg-type]
        blocks += views([kept], document.colours)
    template = template_environment().get_template("notebook.html.j2")
    return str(template.render(title=document.title, subtitle=document.subtitle, blocks=blocks))


def notebook_text(head: str, document: Document | None = None, *, limit: int = 4) -> str:
    """``head``, then the first ``limit`` lines of the document's first list of sentences, indented.

    Examples
    --------
    ``Run 'sst2' — 2 models: bert, roberta · 872 examples · saved in runs/sst2`` then
    ``  roberta: +1.2 pp accuracy over bert (95 % CI +0.4…+2.0, McNemar score test p = 0.003)``
    """
    lines: list[str] = []
    if document is not None:
        for section in document.sections:
            found = next((b for b in section.walk() if isinstance(b, Lines)), None)
            if found is not None:
                lines = [line.plain() for line in found.items]
                break
    more = [f"… and {len(lines) - limit} more line(s)"] if len(lines) > limit else []
    return "\n".join([head, *(f"  {line}" for line in lines[:limit] + more)])
