"""The run's charts: latency, confusion matrices, F1 per class, reliability, slices, training curves."""

from __future__ import annotations

from headtohead.report.document import Block
from headtohead.report.figures import run_figures
from headtohead.report.sections.run.view import RunView, as_figures

ORDER = 80


def build(view: RunView) -> list[Block]:
    """Every chart of the run but the summary's."""
    specs = [f for f in run_figures(view.run, view.index, view.styles) if f.section != "summary"]
    return list(as_figures(specs))
