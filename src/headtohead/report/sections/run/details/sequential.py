"""Sequential evaluation (``--until-decided``): how the examples came in and when each pair was decided."""

from __future__ import annotations

from headtohead.report.document import Block, Paragraph, Section
from headtohead.report.plots_sequential import sequential_figures
from headtohead.report.sections.run.view import RunView, as_figures
from headtohead.report.words.sequential import sequential_lines

ORDER = 40


def build(view: RunView) -> list[Block]:
    """The sequential paragraph and chart (nothing for an ordinary run)."""
    lines = sequential_lines(view.result)
    if not lines:
        return []
    figures = as_figures(sequential_figures(view.result, view.anchor, view.styles))
    return [Section(f"{view.anchor}-sequential", "Sequential evaluation",
                    (*(Paragraph(line, "note") for line in lines), *figures))]  # fmt: skip
