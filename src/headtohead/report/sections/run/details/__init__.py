"""The detail sections of a run, one module each.

Each module has ``ORDER`` (its place: lower first) and ``build(view) -> list[Block]`` (nothing
when the run has nothing to show there); :func:`headtohead.report.sections.run.detail_sections`
finds them all, so adding a section is adding its module.
"""
