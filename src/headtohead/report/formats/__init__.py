"""The formats a report document is drawn in: one module each, none deciding which sections exist.

:mod:`~headtohead.report.formats.terminal` (rich), :mod:`~headtohead.report.formats.html` (one
self-contained page), :mod:`~headtohead.report.formats.markdown` (PNG charts beside it),
:mod:`~headtohead.report.formats.csv` (numbers unrounded), :mod:`~headtohead.report.formats.latex`
(booktabs tables for a paper), :mod:`~headtohead.report.formats.notebook` (an HTML fragment) and
:mod:`~headtohead.report.formats.mlflow` (metrics and files). Each reads a
:class:`~headtohead.report.document.Document` (or its tables) and nothing else of ``report/``
but :mod:`~headtohead.report.document`, the formatter and the charts' encoders.
"""
