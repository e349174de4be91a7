"""A suite in words: the verdict across data sets, each pair, the baseline, the seeds, what to read with care.

Everything here reads a :class:`~headtohead.results.suite.SuiteResult` and nothing else; its tables
are :mod:`headtohead.report.rows.suite`, its document :mod:`headtohead.report.sections.suite`.
"""

from __future__ import annotations

from headtohead.metrics import CATALOGUE
from headtohead.report.words.numbers import (
    format_number,
    format_p,
    format_pp,
    format_probability,
    format_share,
    format_signed,
    p_text,
)
from headtohead.results.suite import ControlComparison, PairAcrossDatasets, SeedPair, SuiteResult
from headtohead.stats.bayes_signed_rank import min_datasets_for_verdict, unanimous_posterior

__all__ = [
    "suite_verdict",
    "suite_warnings",
    "pair_sentence",
    "bayes_sentences",
    "bayes_can_decide",
    "no_bayes_verdict",
    "control_sentences",
    "seed_sentences",
    "aso_meaning",
    "format_score",
    "difference_text",
    "is_share",
    "direction",
    "rope_text",
    "signed_text",
    "scale_note",
]


def is_share(metric: str) -> bool:
    """A share of the catalogue (shown in %, differences in pp); a --scores column's own name is a plain number."""
    return metric in CATALOGUE and CATALOGUE[metric].scale == "share"


#: A Bayesian region named in words when its posterior probability reaches this (Benavoli et al. 2017 use 0.95).
BAYES_SURE = 0.95
#: ε_min below this is the authors' stricter threshold for "almost stochastically better".
ASO_CONFIDENT = 0.2


def format_score(value: float, metric: str) -> str:
    """``78.1 %`` for a share, four significant digits otherwise (in sentences; tables write a column alike).

    Examples
    --------
    >>> format_score(0.7812, "accuracy"), format_score(0.1234567, "brier")
    ('78.1 %', '0.1235')
    """
    return format_share(value) if is_share(metric) else format_number(value, "number")


def difference_text(value: float, metric: str) -> str:
    """A difference of the suite's metric: ``+2.1 pp`` for a share, four significant digits otherwise; ``0`` unsigned.

    Examples
    --------
    >>> difference_text(-2.78e-17, "accuracy"), difference_text(0.0213, "accuracy"), difference_text(-0.01234, "brier")
    ('0.0 pp', '+2.1 pp', '−0.01234')
    """
    if is_share(metric):
        return f"{format_pp(value)} pp"
    return format_number(value, "signed_number")


def signed_text(value: float) -> str:
    """``+0.38`` / ``−0.25`` (a typographic minus, as every other figure)."""
    return format_signed(value, 2)


def rope_text(result: SuiteResult) -> str:
    """The ROPE in the metric's units: ``±1.0 pp`` or ``±0.01``."""
    return f"±{format_pp(result.rope, signed=False)} pp" if is_share(result.metric) else f"±{result.rope:g}"


def scale_note(result: SuiteResult) -> str:
    """How a table of scores was read, said once: ``""`` when as written.

    Examples
    --------
    ``The table's accuracy values are percent (0–100), read as shares (divided by 100): every figure here is a
    share, and the ROPE is ±1.0 pp.``
    """
    if result.scale != "percent":
        return ""
    return (
        f"The table's {result.metric} values are percent (0–100), read as shares (divided by 100): every figure "
        f"here is a share, and the ROPE is {rope_text(result)}."
    )


def direction(result: SuiteResult) -> str:
    """``higher is better`` or ``lower is better``."""
    return "higher is better" if result.higher_is_better else "lower is better"


def _ranks_phrase(result: SuiteResult) -> str:
    order = sorted(result.average_ranks, key=lambda m: result.average_ranks[m])
    return ", ".join(f"{m} {format_number(result.average_ranks[m], 'rank')}" for m in order)


def _wilcoxon(pair: PairAcrossDatasets, holm: bool) -> str:
    method = {"exact": "exact", "normal": "normal approximation", "none": "every difference zero"}[pair.wilcoxon_method]
    text = f"Wilcoxon signed-rank p {format_p(pair.wilcoxon_p)} ({method})"
    return text + (f", Holm p {format_p(pair.holm_p)}" if holm else "")


def _bayes(pair: PairAcrossDatasets, result: SuiteResult) -> str:
    below = "" if bayes_can_decide(result) else f", no verdict with {result.n_datasets} data sets"
    return (
        f"Bayesian signed-rank (ROPE {rope_text(result)}): P({pair.model_a} better) = "
        f"{format_probability(pair.p_a_better)}, P(equivalent) = {format_probability(pair.p_equivalent)}, "
        f"P({pair.model_b} better) = {format_probability(pair.p_b_better)}{below}"
    )


def bayes_can_decide(result: SuiteResult) -> bool:
    """Whether the suite has data sets enough for a Bayesian verdict at :data:`BAYES_SURE`
    (:func:`~headtohead.stats.bayes_signed_rank.min_datasets_for_verdict`)."""
    return result.n_datasets >= min_datasets_for_verdict(BAYES_SURE)


def no_bayes_verdict(result: SuiteResult) -> str:
    """Why a suite of too few data sets gets no Bayesian verdict, in one sentence.

    Examples
    --------
    ``No Bayesian verdict with 2 data sets: below 4, the Bayesian signed-rank test reaches P ≥ 0.95 only when every
    gap lies beyond twice the ROPE (2.0 pp) on one side, and it then gives 0.964 whatever the gaps — it counts the
    data sets, it does not weigh them.``
    """
    twice = f"{format_pp(2 * result.rope, signed=False)} pp" if is_share(result.metric) else f"{2 * result.rope:g}"
    return (
        f"No Bayesian verdict with {result.n_datasets} data sets: below {min_datasets_for_verdict(BAYES_SURE)}, the "
        f"Bayesian signed-rank test reaches P ≥ {BAYES_SURE:g} only when every gap lies beyond twice the ROPE "
        f"({twice}) on one side, and it then gives {format_probability(unanimous_posterior(result.n_datasets))} "
        f"whatever the gaps — it counts the data sets, it does not weigh them."
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
        f"{pair.model_a} vs {pair.model_b}: {counts} (mean {difference_text(pair.mean_difference, result.metric)}, "
        f"median {difference_text(pair.median_difference, result.metric)}); {_wilcoxon(pair, holm)}: {outcome}; "
        f"sign test p {format_p(pair.sign_test_p)}; rank-biserial r = {signed_text(pair.rank_biserial)}. "
        f"{_bayes(pair, result)}."
    )


def _omnibus(result: SuiteResult) -> list[str]:
    if result.friedman is None or result.iman_davenport is None:
        return []
    f = result.iman_davenport
    f_text = (
        f"F = {format_number(f.statistic, 'statistic')}, p {format_p(f.p_value)}"
        if f.statistic is not None and f.p_value is not None
        else "F infinite (every data set ranks them alike, so Friedman's p decides)"
    )
    said = "the models differ" if result.omnibus_significant else "no evidence that the models differ"
    lines = [
        (
            f"Friedman's test: {said} (χ²_F = {format_number(result.friedman.statistic, 'statistic')}, p {format_p(result.friedman.p_value)}; "
            f"Iman–Davenport {f_text}; Kendall's W = {format_number(result.friedman.kendall_w, 'statistic')})."
        )
    ]
    apart = [p for p in result.pairs if p.nemenyi_significant]
    if result.nemenyi_cd is not None:
        if apart:
            named = "; ".join(
                f"{_better_by_rank(p)} (ranks {format_number(abs(p.rank_difference), 'rank')} apart)" for p in apart
            )
            lines.append(
                f"Nemenyi's critical difference is {format_number(result.nemenyi_cd, 'rank')} ranks at α = {result.alpha:g}: {named}."
            )
        else:
            lines.append(
                f"Nemenyi's critical difference is {format_number(result.nemenyi_cd, 'rank')} ranks at α = {result.alpha:g}: no "
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

    Below :func:`~headtohead.stats.bayes_signed_rank.min_datasets_for_verdict` data sets, no verdict:
    :func:`no_bayes_verdict` says why.
    """
    if not result.pairs:
        return []
    if not bayes_can_decide(result):
        return [no_bayes_verdict(result)]
    better = []
    for p in result.pairs:
        if p.p_a_better >= BAYES_SURE:
            better.append(f"{p.model_a} than {p.model_b} ({format_probability(p.p_a_better)})")
        elif p.p_b_better >= BAYES_SURE:
            better.append(f"{p.model_b} than {p.model_a} ({format_probability(p.p_b_better)})")
    equivalent = [
        f"{p.model_a} and {p.model_b} ({format_probability(p.p_equivalent)})"
        for p in result.pairs
        if p.p_equivalent >= BAYES_SURE
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
        f"{difference_text(c.mean_difference, result.metric)}; Holm p {format_p(c.holm_p)})"
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
            f"({p_text(min(1.0, result.min_wilcoxon_p * len(result.pairs)))})"
            if len(result.pairs) > 1
            else ""
        )
        bayes = (
            "Add data sets, and read the Bayesian probabilities."
            if bayes_can_decide(result)
            else f"Add data sets: below {min_datasets_for_verdict(BAYES_SURE)} the Bayesian signed-rank test gives "
            f"no verdict either."
        )
        warnings.append(
            f"With {result.n_datasets} data sets the smallest two-sided p the Wilcoxon signed-rank test "
            f"can reach is 2/2^{result.n_datasets} = {p_text(result.min_wilcoxon_p)}{holm}: no pair can be "
            f"declared better at α = {result.alpha:g}, whatever the scores. {bayes}"
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
    return f"seeds {format_share(share, 0)}, the test set's sampling {format_share(1 - share, 0)}"


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
        f"{difference_text(pair.mean_difference, metric)}, {t}; Almost Stochastic Order: {aso} (ε_min that "
        f"{pair.model_a} is better {_eps(pair.aso_a_over_b)}, that {pair.model_b} is "
        f"{_eps(pair.aso_b_over_a)}; one-sided {format_share(pair.aso_confidence)} bounds). Spread of the difference: "
        f"{_share(pair.seed_share)}."
    )


def _eps(value: float | None) -> str:
    return format_number(value, "statistic") if value is not None else "–"


def seed_sentences(result: SuiteResult) -> list[str]:
    """One sentence per data set and pair trained with several seeds."""
    return [
        _seed_pair_sentence(d.name, p, d.seeds.metric)
        for d in result.datasets
        if d.seeds is not None
        for p in d.seeds.pairs
    ]
