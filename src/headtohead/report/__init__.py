"""Reports: each outcome as one typed document (:mod:`~headtohead.report.document`), drawn by each format.

Three layers: the formats (:mod:`~headtohead.report.formats`: terminal, HTML, Markdown, CSV, LaTeX,
notebook, MLflow) draw documents; the section builders (:mod:`~headtohead.report.sections`) build
them from the records; the rows (:mod:`~headtohead.report.rows`: numbers as typed cells) and the
words (:mod:`~headtohead.report.words`: sentences, and the one number formatter) read the records.
Everything is imported on first use (matplotlib and jinja2 only when a file is drawn).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "render_html",
    "write_html",
    "render_markdown",
    "write_markdown",
    "render_csv",
    "write_csv",
    "write_reports",
    "write_outputs",
    "load_runs",
    "merge_runs",
    "build_verdict",
    "run_document",
]

_WHERE = {
    "render_html": "write",
    "write_html": "write",
    "render_markdown": "write",
    "write_markdown": "write",
    "render_csv": "write",
    "write_csv": "write",
    "write_reports": "write",
    "write_outputs": "write",
    "load_runs": "merge",
    "merge_runs": "merge",
    "build_verdict": "words.verdict",
    "run_document": "sections.run",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f"headtohead.report.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'headtohead.report' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
