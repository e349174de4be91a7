"""A suite in words and tables: the verdict across data sets, the rank table, the verdict grid, pairs and seeds.

Everything here reads a :class:`~headtohead.results.suite.SuiteResult` and nothing else; the
files (``suite.html``, ``suite.md``, ``suite.csv``) are written by :mod:`headtohead.report.suite_files`.
"""

from __future__ import annotations

from typing import Any

from headtohead.metrics import CATALOGUE
from headtohead.report.words.numbers import format_pp
from headtohead.results.suite import ControlComparison, PairAcrossDatasets, SeedPair, SuiteDataset, SuiteResult

__all__ = [
    "suite_verdict",
    "suite_warnings",
    "pair_sentence",
    "bayes_sentences",
    "control_sentences",
    "control_rows",
    "seed_sentences",
    "aso_meaning",
    "format_score",
    "format_p",
    "rank_rows",
    "grid_rows",
    "pair_rows",
    "pair_headers",
    "pair_cells",
    "seed_rows",
    "terminal_tables",
    "direction",
    "rope_text",
]


#: Metrics that are shares (shown in % and differences in percentage points).
def _is_share(metric: str) -> bool:
    """A share of the catalogue (shown in %, differences in pp); a --scores column's own name is a plain number."""
    return metric in CATALOGUE and CATALOGUE[metric].scale == "share"


_MINUS = "\u2212"
#: A Bayesian region named in words when its posterior probability reaches this (Benavoli et al. 2017 use 0.95).
BAYES_SURE = 0.95
#: ε_min below this is the authors' stricter threshold for "almost stochastically better".
ASO_CONFIDENT = 0.2


def format_score(value: float, metric: str) -> str:
    """``78.1 %`` for a share, ``0.1234`` otherwise (four significant digits).

    Examples
    --------
    >>> format_score(0.7812, "accuracy"), format_score(0.1234567, "brier")
    ('78.1 %', '0.1235')
    """
    return f"{100 * value:.1f} %" if _is_share(metric) else f"{value:.4g}"


def format_p(p: float) -> str:
    """A p-value for reading, two significant digits: ``= 0.047``, ``= 0.42``, ``< 0.001``.

    Examples
    --------
    >>> format_p(0.046875), format_p(0.4213), format_p(0.0004), format_p(1.0)
    ('= 0.047', '= 0.42', '< 0.001', '= 1')
    """
    return "< 0.001" if p < 0.001 else f"= {p:.2g}"


def _difference(value: float, metric: str) -> str:
    if _is_share(metric):
        return f"{format_pp(value)} pp"
    text = f"{abs(value):.3g}"
    return text if float(text) == 0 else ("+" if value > 0 else _MINUS) + text


def _signed(value: float) -> str:
    """``+0.38`` / ``−0.25`` (a typographic minus, as every other figure)."""
    return f"{value:+.2f}".replace("-", _MINUS)


def rope_text(result: SuiteResult) -> str:
    """The ROPE in the metric's units: ``±1.0 pp`` or ``±0.01``."""
    return f"±{format_pp(result.rope, signed=False)} pp" if _is_share(result.metric) else f"±{result.rope:g}"


def direction(result: SuiteResult) -> str:
    """``higher is better`` or ``lower is better``."""
    return "higher is better" if result.higher_is_better else "lower is better"


def _ranks_phrase(result: SuiteResult) -> str:
    order = sorted(result.average_ranks, key=lambda m: result.average_ranks[m])
    return ", ".join(f"{m} {result.average_ranks[m]:.2f}" for m in order)


def _wilcoxon(pair: PairAcrossDatasets, holm: bool) -> str:
    method = {"exact": "exact", "normal": "normal approximation", "none": "every difference zero"}[pair.wilcoxon_method]
    text = f"Wilcoxon signed-rank p {format_p(pair.wilcoxon_p)} ({method})"
    return text + (f", Holm p {format_p(pair.holm_p)}" if holm else "")


def _bayes(pair: PairAcrossDatasets, result: SuiteResult) -> str:
    return (
        f"Bayesian signed-rank (ROPE {rope_text(result)}): P({pair.model_a} better) = {pair.p_a_better:.2f}, "
        f"P(equivalent) = {pair.p_equivalent:.2f}, P({pair.model_b} better) = {pair.p_b_better:.2f}"
    )


def pair_sentence(pair: PairAcrossDatasets, result: SuiteResult) -> str:
    """One pair across data sets: who won where, the tests, the Bayesian probabilities.

    Examples
    --------
    ``lr vs nb: lr better on 5 of 6 data sets, nb on 1 (mean +2.1 pp); Wilcoxon signed-rank p = 0.031 (exact),
    Holm p = 0.094: not significant at α = 0.05; sign test p = 0.22; Bayesian signed-rank (ROPE ±1.0 pp): …``
    """
    holm = len(result.pairs) > 1
    counts = f"{pair.model_a} better on {pair.wins_a} of {pair.n_datasets} data sets, {pair.model_b} on {pair.wins_b}"
    if pair.ties:
        counts += f", {pair.ties} tie{'s' if pair.ties > 1 else ''}"
    outcome = (
        f"{pair.winner} is better at α = {result.alpha:g}"
        if pair.significant
        else f"not significant at α = {result.alpha:g}"
    )
    return (
        f"{pair.model_a} vs {pair.model_b}: {counts} (mean {_difference(pair.mean_difference, result.metric)}, "
        f"median {_difference(pair.median_difference, result.metric)}); {_wilcoxon(pair, holm)}: {outcome}; "
        f"sign test p {format_p(pair.sign_test_p)}; rank-biserial r = {_signed(pair.rank_biserial)}. "
        f"{_bayes(pair, result)}."
    )


def _omnibus(result: SuiteResult) -> list[str]:
    if result.friedman is None or result.iman_davenport is None:
        return []
    f = result.iman_davenport
    f_text = (
        f"F = {f.statistic:.2f}, p {format_p(f.p_value)}"
        if f.statistic is not None and f.p_value is not None
        else "F infinite (every data set ranks them alike, so Friedman's p decides)"
    )
    said = "the models differ" if result.omnibus_significant else "no evidence that the models differ"
    lines = [
        (
            f"Friedman's test: {said} (χ²_F = {result.friedman.statistic:.2f}, p {format_p(result.friedman.p_value)}; "
            f"Iman–Davenport {f_text}; Kendall's W = {result.friedman.kendall_w:.2f})."
        )
    ]
    apart = [p for p in result.pairs if p.nemenyi_significant]
    if result.nemenyi_cd is not None:
        if apart:
            named = "; ".join(f"{_better_by_rank(p)} (ranks {abs(p.rank_difference):.2f} apart)" for p in apart)
            lines.append(
                f"Nemenyi's critical difference is {result.nemenyi_cd:.2f} ranks at α = {result.alpha:g}: {named}."
            )
        else:
            lines.append(
                f"Nemenyi's critical difference is {result.nemenyi_cd:.2f} ranks at α = {result.alpha:g}: no "
                f"two models' average ranks are that far apart."
            )
    return lines


def _better_by_rank(pair: PairAcrossDatasets) -> str:
    better, worse = (pair.model_a, pair.model_b) if pair.rank_difference < 0 else (pair.model_b, pair.model_a)
    return f"{better} ranks better than {worse}"


def suite_verdict(result: SuiteResult) -> list[str]:
    """The suite's headline, in sentences (stored in ``suite.json`` as ``verdict``)."""
    if result.statistics_note is not None or not result.average_ranks:
        return [f"No comparison across data sets: {result.statistics_note or 'no statistics'}."]
    k = len(result.models)
    lines = [
        (
            f"{result.n_datasets} data sets, {k} models, {result.metric} ({direction(result)}): average rank "
            f"{_ranks_phrase(result)} (1 = best)."
        )
    ]
    lines += _omnibus(result)
    significant = [p for p in result.pairs if p.significant]
    if k == 2:
        lines.append(pair_sentence(result.pairs[0], result))
    elif significant:
        for pair in significant:
            loser = pair.model_b if pair.winner == pair.model_a else pair.model_a
            wins = pair.wins_a if pair.winner == pair.model_a else pair.wins_b
            lines.append(
                f"{pair.winner} is better than {loser} across data sets (better on {wins} of "
                f"{pair.n_datasets}; {_wilcoxon(pair, True)})."
            )
    else:
        lines.append(
            f"No pair differs significantly after Holm's adjustment over {len(result.pairs)} pairs "
            f"(Wilcoxon signed-rank, α = {result.alpha:g})."
        )
    lines += bayes_sentences(result)
    lines += control_sentences(result)
    return lines


def bayes_sentences(result: SuiteResult) -> list[str]:
    """The pairs the Bayesian signed-rank test settles (P ≥ :data:`BAYES_SURE`): practically better, practically equivalent.

    Examples
    --------
    ``Practically better (Bayesian signed-rank, ROPE ±1.0 pp, P ≥ 0.95): large than small (0.99); large than base (0.97).``
    """
    better = []
    for p in result.pairs:
        if p.p_a_better >= BAYES_SURE:
            better.append(f"{p.model_a} than {p.model_b} ({p.p_a_better:.2f})")
        elif p.p_b_better >= BAYES_SURE:
            better.append(f"{p.model_b} than {p.model_a} ({p.p_b_better:.2f})")
    equivalent = [
        f"{p.model_a} and {p.model_b} ({p.p_equivalent:.2f})" for p in result.pairs if p.p_equivalent >= BAYES_SURE
    ]
    how = f"(Bayesian signed-rank, ROPE {rope_text(result)}, P ≥ {BAYES_SURE:g})"
    lines = []
    if better:
        lines.append(f"Practically better {how}: " + "; ".join(better) + ".")
    if equivalent:
        lines.append(f"Practically equivalent {how}: " + "; ".join(equivalent) + ".")
    return lines


def _against(c: ControlComparison, result: SuiteResult) -> str:
    if not c.significant:
        return f"{c.model} is not shown to differ (Holm p {format_p(c.holm_p)})"
    worse = c.winner == c.baseline
    return (
        f"{c.model} is {'worse' if worse else 'better'} (better on {c.losses if worse else c.wins} of "
        f"{c.wins + c.losses + c.ties} data sets{' for the baseline' if worse else ''}, mean "
        f"{_difference(c.mean_difference, result.metric)}; Holm p {format_p(c.holm_p)})"
    )


def _disagrees(c: ControlComparison) -> bool:
    """The rank test says otherwise than the Wilcoxon test: one significant and not the other, or opposite sides."""
    if c.rank_significant != c.significant:
        return True
    rank_better = c.model if c.rank_difference < 0 else c.baseline
    return c.significant and c.winner is not None and rank_better != c.winner


def control_sentences(result: SuiteResult) -> list[str]:
    """Each model against the baseline (``--baseline``): the Wilcoxon test, which decides, then Demšar's rank test.

    The Wilcoxon signed-rank test reads the two models' scores only, so it decides (Benavoli,
    Corani & Mangili 2016; ``docs/statistics.md`` §13); Demšar's rank test with a control reads
    average ranks, which move with the other models in the suite, and is worded as a view that
    does not decide. Where the two disagree for a model, one clause says so and which one stands.

    Examples
    --------
    ``Against the baseline C4.5, decided by the Wilcoxon signed-rank test (Holm over 3 comparisons, α = 0.05):
    C4.5+m is better (…); C4.5+cf is not shown to differ (Holm p = 0.87); ….``
    ``Demšar's rank test with a control (average ranks, Holm over 3), a view that does not decide: the average
    ranks of C4.5+m, C4.5+m+cf differ from C4.5's (Holm p 0.047, 0.047).``
    """
    if result.baseline is None or not result.control:
        return []
    n = len(result.control)
    lines = [
        f"Against the baseline {result.baseline}, decided by the Wilcoxon signed-rank test (Holm over {n} comparison"
        f"{'s' if n > 1 else ''}, α = {result.alpha:g}): "
        + "; ".join(_against(c, result) for c in result.control)
        + "."
    ]
    apart = [c for c in result.control if c.rank_significant]
    view = f"Demšar's rank test with a control (average ranks, Holm over {n}), a view that does not decide: " + (
        f"the average rank{'s' if len(apart) > 1 else ''} of "
        + ", ".join(c.model for c in apart)
        + f" {'differ' if len(apart) > 1 else 'differs'} from {result.baseline}'s (Holm p "
        + ", ".join(format_p(c.rank_holm_p).removeprefix("= ") for c in apart)
        + ")"
        if apart
        else f"no model's average rank differs from {result.baseline}'s"
    )
    differ = [c for c in result.control if _disagrees(c)]
    if differ:
        named = ", ".join(c.model for c in differ)
        view += (
            f"; for {named} the two tests disagree, and the Wilcoxon verdict above stands (average ranks move "
            f"with the other models in the suite; the Wilcoxon test reads the two models' scores only)"
        )
    return lines + [view + "."]


def control_rows(result: SuiteResult) -> list[dict[str, str]]:
    """The table against the baseline: wins, the mean difference, the Wilcoxon test (which decides), then Demšar's
    rank test (a view that does not decide), each Holm over k − 1."""
    return [
        {
            "model": c.model,
            "wins / ties / losses": f"{c.wins} / {c.ties} / {c.losses}",
            "mean diff.": _difference(c.mean_difference, result.metric),
            "Wilcoxon p": f"{c.wilcoxon_p:.4g}",
            "Wilcoxon Holm p (decides)": f"{c.holm_p:.4g}" + (" ✓" if c.significant else ""),
            "Δ rank": _signed(c.rank_difference),
            "rank z": _signed(c.rank_z),
            "rank Holm p (does not decide)": f"{c.rank_holm_p:.4g}" + (" ✓" if c.rank_significant else ""),
        }
        for c in result.control
    ]


def suite_warnings(result: SuiteResult) -> list[str]:
    """What to read with care: failed data sets, too few data sets for the test, few seeds."""
    warnings = []
    if result.failed:
        warnings.append(
            f"{len(result.failed)} data set{'s' if len(result.failed) > 1 else ''} failed and "
            f"{'are' if len(result.failed) > 1 else 'is'} left out: "
            + "; ".join(f"{d.name} ({d.error})" for d in result.failed)
        )
    if result.min_wilcoxon_p is not None and result.min_wilcoxon_p * len(result.pairs) > result.alpha:
        holm = (
            f" and Holm over {len(result.pairs)} pairs multiplies the smallest by {len(result.pairs)} "
            f"({min(1.0, result.min_wilcoxon_p * len(result.pairs)):.3g})"
            if len(result.pairs) > 1
            else ""
        )
        warnings.append(
            f"With {result.n_datasets} data sets the smallest two-sided p the Wilcoxon signed-rank test "
            f"can reach is 2/2^{result.n_datasets} = {result.min_wilcoxon_p:.3g}{holm}: no pair can be "
            f"declared better at α = {result.alpha:g}, whatever the scores. Add data sets, and read the "
            f"Bayesian probabilities."
        )
    twins = _identical_scores(result)
    if twins:
        warnings.append(
            "Identical scores for every model on "
            + "; ".join(f"{a} and {b}" for a, b in twins)
            + ": if they are one data set given twice, it counts twice, and N (which every test across data "
            "sets reads) is too large; give each data set once."
        )
    few = sorted({d.name for d in result.datasets if d.seeds is not None and len(d.seeds.seeds) < 5})
    if few:
        warnings.append(
            f"Fewer than five seeds on {', '.join(few)}: Almost Stochastic Order and the paired t over "
            f"so few seeds are rough; train with more seeds to sharpen them."
        )
    return warnings


def _identical_scores(result: SuiteResult) -> list[tuple[str, str]]:
    """Pairs of finished data sets whose scores agree for every model (a copy, perhaps, of a table's row)."""
    first: dict[tuple[float, ...], str] = {}
    twins = []
    for entry in result.finished:
        key = tuple(entry.scores.get(m, float("nan")) for m in result.models)
        if key in first:
            twins.append((first[key], entry.name))
        else:
            first[key] = entry.name
    return twins


def aso_meaning(epsilon: float | None, better: str, worse: str) -> str:
    """What an ε_min of "``better`` is better than ``worse``" says, in words (Dror et al. 2019; τ = 0.2 the stricter
    threshold deep-significance recommends).

    Examples
    --------
    >>> aso_meaning(0.0, "a", "b")
    'a stochastically dominates b'
    >>> aso_meaning(0.35, "a", "b")
    'a is almost stochastically better than b, not confidently (ε_min < 0.5 but ≥ 0.2)'
    """
    if epsilon is None:
        return "no ASO"
    if epsilon == 0.0:
        return f"{better} stochastically dominates {worse}"
    if epsilon < ASO_CONFIDENT:
        return f"{better} is almost stochastically better than {worse} (ε_min < {ASO_CONFIDENT})"
    if epsilon < 0.5:
        return f"{better} is almost stochastically better than {worse}, not confidently (ε_min < 0.5 but ≥ {ASO_CONFIDENT})"
    return "neither is shown to be almost stochastically better (ε_min ≥ 0.5 both ways)"


def _share(share: float | None) -> str:
    if share is None:
        return "unknown (no test-set interval)"
    return f"seeds {100 * share:.0f} %, the test set's sampling {100 * (1 - share):.0f} %"


def _seed_pair_sentence(name: str, pair: SeedPair, metric: str) -> str:
    t = (
        f"paired t p {format_p(pair.t_p_value)}"
        if pair.t_p_value is not None
        else f"paired t: {pair.note or 'not defined'}"
    )
    a_wins = pair.aso_a_over_b is not None and (pair.aso_b_over_a is None or pair.aso_a_over_b <= pair.aso_b_over_a)
    aso = (
        aso_meaning(pair.aso_a_over_b, pair.model_a, pair.model_b)
        if a_wins
        else aso_meaning(pair.aso_b_over_a, pair.model_b, pair.model_a)
    )
    return (
        f"{name}, {pair.model_a} vs {pair.model_b} over {pair.n_seeds} seeds: mean "
        f"{_difference(pair.mean_difference, metric)}, {t}; Almost Stochastic Order: {aso} (ε_min that "
        f"{pair.model_a} is better {_eps(pair.aso_a_over_b)}, that {pair.model_b} is "
        f"{_eps(pair.aso_b_over_a)}; one-sided {100 * pair.aso_confidence:.1f} % bounds). Spread of the difference: "
        f"{_share(pair.seed_share)}."
    )


def _eps(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else "–"


def seed_sentences(result: SuiteResult) -> list[str]:
    """One sentence per data set and pair trained with several seeds."""
    return [
        _seed_pair_sentence(d.name, p, d.seeds.metric)
        for d in result.datasets
        if d.seeds is not None
        for p in d.seeds.pairs
    ]


def rank_rows(result: SuiteResult) -> list[dict[str, str]]:
    """The rank table: models by average rank, with their mean score and how often they came first."""
    rows = []
    finished = result.finished
    for model in sorted(result.average_ranks, key=lambda m: result.average_ranks[m]):
        values = [d.scores[model] for d in finished if model in d.scores]
        firsts = sum(1 for d in finished if d.ranks.get(model) == min(d.ranks.values(), default=None))
        wins = sum(1 for d in finished for v in d.verdicts if v.significant and v.winner == model)
        losses = sum(
            1
            for d in finished
            for v in d.verdicts
            if v.significant and v.winner is not None and v.winner != model and model in (v.model_a, v.model_b)
        )
        row = {
            "model": model,
            "average rank": f"{result.average_ranks[model]:.2f}",
            f"mean {result.metric}": format_score(sum(values) / len(values), result.metric) if values else "–",
            "first on (ties too)": f"{firsts} of {len(finished)}",
        }
        if any(d.verdicts for d in finished):
            row["own tests won / lost"] = f"{wins} / {losses}"
        rows.append(row)
    return rows


def _marks(entry: SuiteDataset, model: str, two: bool) -> str:
    beats = [
        v.model_b if v.model_a == model else v.model_a for v in entry.verdicts if v.significant and v.winner == model
    ]
    beaten = [
        v.winner
        for v in entry.verdicts
        if v.significant and v.winner not in (None, model) and model in (v.model_a, v.model_b)
    ]
    if two:
        return " ▲" if beats else (" ▼" if beaten else "")
    return (f" ▲{','.join(beats)}" if beats else "") + (f" ▼{','.join(str(b) for b in beaten)}" if beaten else "")


def _own_tests(entry: SuiteDataset) -> str:
    if entry.status != "finished":
        return f"failed: {entry.error}"
    if not entry.verdicts:
        return "no test (scores only)" if entry.results is None else "no paired test in its run"
    significant = [v for v in entry.verdicts if v.significant and v.winner is not None]
    if not significant:
        return "no significant difference"
    parts = []
    for v in significant:
        loser = v.model_b if v.winner == v.model_a else v.model_a
        parts.append(f"{v.winner} > {loser}" + (f" (p {format_p(v.p_adjusted)})" if v.p_adjusted is not None else ""))
    return "; ".join(parts)


def grid_rows(result: SuiteResult) -> list[dict[str, Any]]:
    """One row per data set: each model's score, its rank in brackets, ▲/▼ where the data set's own test is significant.

    ``cells`` hold each model's whole cell as one line; ``scores`` and ``marks`` its two parts, for a
    page that shows the marks on a line of their own.
    """
    two = len(result.models) == 2
    rows = []
    for entry in result.datasets:
        cells, scores, marks = {}, {}, {}
        for model in result.models:
            if entry.status != "finished" or model not in entry.scores:
                cells[model] = scores[model] = "–"
                marks[model] = ""
                continue
            rank = entry.ranks.get(model)
            scores[model] = format_score(entry.scores[model], result.metric) + (
                f" ({rank:g})" if rank is not None else ""
            )
            marks[model] = _marks(entry, model, two)
            cells[model] = scores[model] + marks[model]
            marks[model] = marks[model].strip().replace(",", ", ")  # a page may break the line after each comma
        best = [m for m in result.models if entry.ranks and entry.ranks.get(m) == min(entry.ranks.values())]
        rows.append(
            {
                "dataset": entry.name,
                "report": entry.report,
                "examples": f"{entry.n_examples:,}" if entry.n_examples is not None else "–",
                "cells": cells,
                "scores": scores,
                "marks": marks,
                "best": best,
                "own": _own_tests(entry),
                "reused": entry.reused,
            }
        )
    return rows


def terminal_tables(result: SuiteResult) -> list[tuple[str, list[str], list[list[str]], set[str]]]:
    """The tables ``h2h suite`` prints: ``(title, headers, rows, headers of left-aligned columns)`` each."""
    tables: list[tuple[str, list[str], list[list[str]], set[str]]] = []
    for title, rows in (
        ("Ranks across data sets (1 = best)", rank_rows(result)),
        (f"Against the baseline {result.baseline} (Holm over {len(result.control)})", control_rows(result)),
    ):
        if rows:
            tables.append((title, list(rows[0]), [list(r.values()) for r in rows], set()))
    own = "its own test"
    tables.append(
        (
            f"{result.metric} per data set (rank; ▲/▼: its own test significant)",
            ["data set", *result.models, own],
            [[g["dataset"], *g["cells"].values(), g["own"]] for g in grid_rows(result)],
            {own},
        )
    )
    return tables


def pair_rows(result: SuiteResult) -> list[dict[str, str]]:
    """The pairs table: wins, differences, the tests, the effect size, the Bayesian probabilities."""
    rows = []
    for p in result.pairs:
        rows.append(
            {
                "pair": f"{p.model_a} vs {p.model_b}",
                "A wins / ties / B wins": f"{p.wins_a} / {p.ties} / {p.wins_b}",
                "mean diff.": _difference(p.mean_difference, result.metric),
                "median diff.": _difference(p.median_difference, result.metric),
                "W+ / W−": f"{p.w_plus:g} / {p.w_minus:g}",
                "Wilcoxon p": f"{p.wilcoxon_p:.4g}"
                + ("" if len({q.wilcoxon_method for q in result.pairs}) == 1 else f" ({p.wilcoxon_method})"),
                "Holm p": f"{p.holm_p:.4g}" + (" ✓" if p.significant else ""),
                "sign test p": f"{p.sign_test_p:.4g}",
                "rank-biserial": _signed(p.rank_biserial),
                "Δ rank": _signed(p.rank_difference) + (" ✓" if p.nemenyi_significant else ""),
                f"P({p.model_a} better)": f"{p.p_a_better:.3f}",
                "P(equivalent)": f"{p.p_equivalent:.3f}",
                f"P({p.model_b} better)": f"{p.p_b_better:.3f}",
            }
        )
    return rows


def pair_headers(result: SuiteResult) -> list[str]:
    """The pairs table's headers (A and B: each row's first and second model)."""
    methods = {p.wilcoxon_method for p in result.pairs}
    wilcoxon = f"Wilcoxon p ({methods.pop()})" if len(methods) == 1 else "Wilcoxon p"
    return [
        "pair",
        "A wins / ties / B wins",
        "mean diff.",
        "median diff.",
        "W+ / W−",
        wilcoxon,
        "Holm p",
        "sign test p",
        "rank-biserial",
        "Δ rank",
        "P(A better)",
        "P(equiv.)",
        "P(B better)",
    ]


def pair_cells(result: SuiteResult) -> list[list[str]]:
    """The pairs table's cells, in :func:`pair_headers`' order."""
    out = []
    for row, p in zip(pair_rows(result), result.pairs, strict=True):
        values = list(row.values())
        out.append(values[:10] + [row[f"P({p.model_a} better)"], row["P(equivalent)"], row[f"P({p.model_b} better)"]])
    return out


def seed_rows(result: SuiteResult) -> list[dict[str, str]]:
    """Per data set and model trained with several seeds: the spread over seeds against the test set's."""
    rows = []
    for d in result.datasets:
        if d.seeds is None:
            continue
        for s in d.seeds.models:
            rows.append(
                {
                    "data set": d.name,
                    "model": s.model,
                    "seeds": str(s.n_seeds),
                    "mean": format_score(s.mean, d.seeds.metric),
                    "sd over seeds": _spread(s.seed_sd, d.seeds.metric),
                    "test-set se": _spread(s.test_set_se, d.seeds.metric),
                    "from seeds": f"{100 * s.seed_share:.0f} %" if s.seed_share is not None else "–",
                }
            )
    return rows


def _spread(value: float | None, metric: str) -> str:
    if value is None:
        return "–"
    return f"{format_pp(value, signed=False)} pp" if _is_share(metric) else f"{value:.3g}"
