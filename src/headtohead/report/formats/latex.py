"""A document's tables as LaTeX, ready to paste into a paper: booktabs rules, every user string escaped.

Only the tables that carry a caption for a paper (:attr:`~headtohead.report.document.Table.latex`)
are written, labelled ``tab:<name>-<table key>``. Numbers are written by the one formatter, a
true minus as ``$-$``; the best value of a column in bold; ``✓`` (significant) as ``$^{*}$``.
The preamble needs ``\\usepackage{booktabs}`` only.
"""

from __future__ import annotations

import re

from headtohead.report.document import Document, Table
from headtohead.report.words.numbers import CellText

__all__ = ["latex_escape", "render_latex", "latex_label"]

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "\u2212": "$-$",
    "Δ": r"$\Delta$",
    "±": r"$\pm$",
    "×": r"$\times$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "…": r"\ldots{}",
    "–": "--",
    "✓": r"$^{*}$",
    "▲": r"$\blacktriangle$",
    "▼": r"$\blacktriangledown$",
    "α": r"$\alpha$",
    "ε": r"$\varepsilon$",
}
_PATTERN = re.compile("|".join(re.escape(c) for c in _SPECIAL))


def latex_escape(text: str) -> str:
    r"""``text`` as LaTeX shows it literally (and the few symbols headtohead writes, as math).

    Examples
    --------
    >>> latex_escape("C4.5+m & 50% of {x}_1")
    'C4.5+m \\& 50\\% of \\{x\\}\\_1'
    >>> latex_escape("−0.3 pp, Δ rank")
    '$-$0.3 pp, $\\Delta$ rank'
    """
    return _PATTERN.sub(lambda m: _SPECIAL[m.group()], text)


def latex_label(name: str) -> str:
    """``tab:<name>`` with only letters, digits and dashes.

    Examples
    --------
    >>> latex_label("My suite (v2)")
    'tab:my-suite-v2'
    """
    return "tab:" + re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()


def _table(table: Table, label: str) -> list[str]:
    texts = table.texts()
    columns = [c for c in table.columns if c.paper]
    spec = "l" + "r" * (len(columns) - 1)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{latex_escape(table.latex or '')}}}",
        rf"\label{{{label}-{table.key}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(c.label) for c in columns) + r" \\",
        r"\midrule",
    ]
    for row, row_texts in zip(table.rows, texts, strict=True):
        if row.separated:
            lines.append(r"\midrule")
        cells = []
        for column, text in zip(table.columns, row_texts, strict=True):
            if not column.paper:
                continue
            number = text.text.removesuffix(" %") if column.kind == "percent" else text.text  # the caption says %
            plain = CellText(number, text.interval, text.extra, text.mark).plain()  # the aside is for the page
            shown = latex_escape(plain if not text.absent else "--")
            cells.append(rf"\textbf{{{shown}}}" if row.get(column.key).best else shown)
        lines.append(" & ".join(cells) + r" \\")
    return lines + [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]


def render_latex(document: Document, *, name: str, empty: str | None = None) -> str:
    """The document's tables for a paper, as one ``.tex`` file.

    Parameters
    ----------
    document : Document
    name : str
        Names the labels (``tab:<name>-<table key>``) and the file's first comment.
    empty : str, optional
        The comment written when no table is for a paper (why there is none).
    """
    head = [f"% {latex_escape(' '.join(name.split()))}: written by headtohead; needs \\usepackage{{booktabs}}", ""]
    tables = [t for t in document.tables() if t.latex]
    if not tables:
        return "\n".join(head + [f"% {latex_escape(empty or 'no table')}", ""])
    label = latex_label(name)
    lines = head
    for table in tables:
        lines += _table(table, label)
    return "\n".join(lines)
