"""A suite as LaTeX tables ready to paste into a paper (``suite.tex``): booktabs rules, every user string escaped.

The scores per data set with each model's rank (the best in bold) and the average ranks; the
pairs across data sets (Wilcoxon signed-rank with Holm, the Bayesian signed-rank
probabilities); with a baseline, each model against it. The preamble needs
``\\usepackage{booktabs}`` only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from headtohead.metrics import CATALOGUE
from headtohead.results.suite import SuiteResult

__all__ = ["latex_escape", "render_suite_latex"]

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
}
_PATTERN = re.compile("|".join(re.escape(c) for c in _SPECIAL))


def latex_escape(text: str) -> str:
    r"""``text`` as LaTeX shows it literally.

    Examples
    --------
    >>> latex_escape("C4.5+m & 50% of {x}_1")
    'C4.5+m \\& 50\\% of \\{x\\}\\_1'
    """
    return _PATTERN.sub(lambda m: _SPECIAL[m.group()], text)


def _share(metric: str) -> bool:
    return metric in CATALOGUE and CATALOGUE[metric].scale == "share"


def _score(value: float, metric: str) -> str:
    return f"{100 * value:.1f}" if _share(metric) else f"{value:.4g}"


def _difference(value: float, metric: str) -> str:
    text = f"{100 * value:+.1f}" if _share(metric) else f"{value:+.3g}"
    return text.replace("-", "$-$")


def _p(value: float) -> str:
    return "$<$0.001" if value < 0.001 else f"{value:.3f}"


def _table(
    caption: str,
    label: str,
    headers: Sequence[str],
    body: Sequence[Sequence[str]],
    foot: Sequence[Sequence[str]] = (),
) -> list[str]:
    spec = "l" + "r" * (len(headers) - 1)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{caption}}}",
        rf"\label{{{label}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(headers) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(row) + r" \\" for row in body]
    if foot:
        lines += [r"\midrule"] + [" & ".join(row) + r" \\" for row in foot]
    return lines + [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]


def _scores(result: SuiteResult, label: str) -> list[str]:
    models = result.models
    body = []
    for entry in result.finished:
        best = min(entry.ranks.values(), default=None)
        cells = []
        for m in models:
            text = _score(entry.scores[m], result.metric)
            rank = entry.ranks.get(m)
            text = rf"\textbf{{{text}}}" if rank is not None and rank == best else text
            cells.append(text + (f" ({rank:g})" if rank is not None else ""))
        body.append([latex_escape(entry.name), *cells])
    foot = []
    if result.average_ranks:
        top = min(result.average_ranks.values())
        foot.append(
            [
                "Average rank",
                *(
                    (
                        rf"\textbf{{{result.average_ranks[m]:.2f}}}"
                        if result.average_ranks[m] == top
                        else f"{result.average_ranks[m]:.2f}"
                    )
                    for m in models
                ),
            ]
        )
    unit = r" (\%)" if _share(result.metric) else ""
    direction = "higher" if result.higher_is_better else "lower"
    caption = (
        f"{latex_escape(result.metric)}{unit} of each model on {result.n_datasets} data sets ({direction} is better); "
        f"in brackets the model's rank on the data set (1 = best, ties share the mean), in bold the best."
    )
    return _table(caption, f"{label}-scores", ["Data set", *(latex_escape(m) for m in models)], body, foot)


def _pairs(result: SuiteResult, label: str) -> list[str]:
    unit = " (pp)" if _share(result.metric) else ""
    rope = f"{100 * result.rope:g} pp" if _share(result.metric) else f"{result.rope:g}"
    body = [
        [
            latex_escape(f"{p.model_a} vs {p.model_b}"),
            f"{p.wins_a}/{p.ties}/{p.wins_b}",
            _difference(p.mean_difference, result.metric),
            _p(p.wilcoxon_p),
            _p(p.holm_p) + (r"$^{*}$" if p.significant else ""),
            f"{p.p_a_better:.2f}",
            f"{p.p_equivalent:.2f}",
            f"{p.p_b_better:.2f}",
        ]
        for p in result.pairs
    ]
    caption = (
        f"Pairs of models across {result.n_datasets} data sets: wins/ties/losses of A, the mean difference A $-$ B"
        f"{unit}, the Wilcoxon signed-rank p and its Holm adjustment over {len(result.pairs)} pairs "
        f"($^{{*}}$: significant at $\\alpha = {result.alpha:g}$), and the Bayesian signed-rank posterior "
        f"probabilities with a region of practical equivalence of $\\pm${rope}."
    )
    headers = ["A vs B", "W/T/L", r"Mean $\Delta$", "p", "Holm p", "P(A$>$B)", "P(A$=$B)", "P(B$>$A)"]
    return _table(caption, f"{label}-pairs", headers, body)


def _control(result: SuiteResult, label: str) -> list[str]:
    unit = " (pp)" if _share(result.metric) else ""
    baseline = latex_escape(result.baseline or "")
    body = [
        [
            latex_escape(c.model),
            f"{c.wins}/{c.ties}/{c.losses}",
            _difference(c.mean_difference, result.metric),
            f"{c.rank_difference:+.2f}".replace("-", "$-$"),
            _p(c.rank_holm_p) + (r"$^{*}$" if c.rank_significant else ""),
            _p(c.holm_p) + (r"$^{*}$" if c.significant else ""),
        ]
        for c in result.control
    ]
    caption = (
        f"Each model against the baseline {baseline} over {result.n_datasets} data sets: wins/ties/losses, the mean "
        f"difference{unit}, the difference of average ranks with Dem\\v{{s}}ar's rank test, and the Wilcoxon "
        f"signed-rank test; both Holm-adjusted over {len(result.control)} comparisons ($^{{*}}$: significant at "
        f"$\\alpha = {result.alpha:g}$)."
    )
    headers = ["Model", "W/T/L", r"Mean $\Delta$", r"$\Delta$ rank", "Rank Holm p", "Wilcoxon Holm p"]
    return _table(caption, f"{label}-baseline", headers, body)


def render_suite_latex(result: SuiteResult) -> str:
    """``suite.tex``: the suite's tables as LaTeX (booktabs), labels ``tab:<name>-scores``, ``-pairs``, ``-baseline``."""
    label = "tab:" + re.sub(r"[^A-Za-z0-9]+", "-", result.name).strip("-").lower()
    lines = [
        f"% {latex_escape(' '.join(result.name.split()))}: written by headtohead (h2h suite); needs \\usepackage{{booktabs}}",
        "",
    ]
    if result.statistics_note is not None or not result.average_ranks:
        return "\n".join(
            lines + [f"% no comparison across data sets: {latex_escape(result.statistics_note or '')}", ""]
        )
    lines += _scores(result, label)
    if result.pairs:
        lines += _pairs(result, label)
    if result.control:
        lines += _control(result, label)
    return "\n".join(lines)
