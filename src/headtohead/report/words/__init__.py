"""The words of a run: numbers for reading, each pair's sentences, the headline, warnings, the gate's words.

Every sentence is worded from the numbers of a record; the pipeline stores the sentences beside
the numbers (``Comparison.verdict``, ``SpeedComparison.verdict``), so ``results.json`` carries
them, and every format (terminal, HTML, Markdown, notebook) takes its words from here.
"""
