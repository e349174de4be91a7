"""Reports: renderings of result records (terminal tables and verdict; Markdown/HTML/CSV)."""

from headtohead.report.table import quality_table, speed_table, verdict_block

__all__ = ["quality_table", "speed_table", "verdict_block"]
