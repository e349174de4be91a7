"""Reports: renderings of result records (terminal table and verdict; Markdown/HTML/CSV)."""

from headtohead.report.table import quality_table, verdict_block

__all__ = ["quality_table", "verdict_block"]
