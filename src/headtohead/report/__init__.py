"""Reports: renderings of result records (terminal tables now; Markdown/HTML with the reports issue)."""

from headtohead.report.table import quality_table

__all__ = ["quality_table"]
