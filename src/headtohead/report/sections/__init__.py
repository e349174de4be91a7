"""Section builders: each outcome's report document, built once from its records.

A builder reads records through :mod:`headtohead.report.rows` (numbers as typed cells) and
:mod:`headtohead.report.words` (sentences) and returns :class:`~headtohead.report.document.Section`
objects; a document builder orders them. No builder writes a format: the formats
(:mod:`headtohead.report.formats`) draw whatever they are given.

* :mod:`~headtohead.report.sections.run` — a run (and several merged): verdict, summary,
  trade-off, details per run (one module per detail section, found by the package), environment;
* :mod:`~headtohead.report.sections.suite` — a suite across data sets;
* :mod:`~headtohead.report.sections.sweep` — a sweep of variants and batch sizes;
* :mod:`~headtohead.report.sections.training` — identical fine-tuning;
* :mod:`~headtohead.report.sections.gate` — the gate's decision;
* :mod:`~headtohead.report.sections.machines` — training across machines.
"""
