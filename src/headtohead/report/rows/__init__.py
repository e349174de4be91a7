"""The numbers every report format shows, gathered once from a run's records: the tables' rows and cells.

HTML, Markdown, CSV and the notebook read these rows, so they never disagree.
"""
