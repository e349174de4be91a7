"""Reports: renderings of result records — terminal tables and verdict, HTML, Markdown, CSV.

The terminal pieces are imported eagerly; the file renderers (matplotlib, jinja2) on first use.
"""

from __future__ import annotations

from typing import Any

from headtohead.report.table import quality_table, speed_table, verdict_block

__all__ = [
    "quality_table",
    "speed_table",
    "verdict_block",
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
]

_LAZY = {
    "render_html": "html",
    "write_html": "html",
    "render_markdown": "markdown",
    "write_markdown": "markdown",
    "render_csv": "csv_export",
    "write_csv": "csv_export",
    "write_reports": "write",
    "write_outputs": "write",
    "load_runs": "merge",
    "merge_runs": "merge",
    "build_verdict": "words.verdict",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"headtohead.report.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'headtohead.report' has no attribute {name!r}")
