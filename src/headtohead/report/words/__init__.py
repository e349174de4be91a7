"""The words of a run's verdict: numbers for reading, sentences, the headline, warnings, the gate's words.

Every format (terminal, HTML, Markdown, notebook) and ``results.json`` take their sentences from here.
"""
