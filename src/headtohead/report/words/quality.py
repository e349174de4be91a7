"""The sentence of each pair's quality comparison, stored as ``Comparison.verdict``, and the verdict block.

Sign convention, stated in every sentence: a difference is written ``X − Y = …`` with the
model names. A pair is called better only when McNemar's test is significant after Holm's
adjustment; its interval (Tango's score interval, the same statistic) then excludes 0.
Otherwise the sentence says "no significant difference", says so when the interval alone
excludes 0 but Holm's adjustment over several pairs does not, and gives the gap this many
examples would detect with 80 % probability. Failures are counted as wrong answers, and the
sentence says how many there were. The headline of a report is :mod:`headtohead.report.words.verdict`.
"""

from __future__ import annotations

from headtohead.report.words.numbers import format_level, format_number, format_p, format_pp, format_share, interval_pp
from headtohead.report.words.slices import SEQUENTIAL_NOMINAL, slice_sentence, slices_line
from headtohead.results.comparison import Comparison, StatsSummary

__all__ = [
    "TEST_NAMES",
    "fragility_clause",
    "pair_verdict",
    "quality_sentence",
    "failures_sentence",
    "excluded_sentence",
    "detectable_sentence",
    "with_quality_sentences",
    "verdict_lines",
    "calibration_bound_note",
]

#: How each McNemar variant is named in a sentence.
TEST_NAMES = {
    "mcnemar-score": "McNemar",
    "mcnemar-clustered": "clustered McNemar",
    "mcnemar-exact": "McNemar exact",
    "mcnemar-chi2": "McNemar χ²",
    "mcnemar-midp": "McNemar mid-p",
}


def detectable_sentence(n_examples: int, gap: float | None, power: float, groups: int | None = None) -> str:
    """What this many examples can show: the gap found with probability ``power`` (smaller ones less often).

    Examples
    --------
    >>> detectable_sentence(2000, 0.015, 0.8)
    '2000 examples find a gap of 1.5 pp with 80 % probability (smaller gaps less often).'
    """
    where = f"{n_examples} examples" + (f" in {groups} groups" if groups else "")
    if gap is None:
        return f"{where} are too few to find any gap with {format_share(power, 0)} probability."
    return (
        f"{where} find a gap of {format_pp(gap, signed=False)} pp with {format_share(power, 0)} probability "
        f"(smaller gaps less often)."
    )


def fragility_clause(fragility: int | None, answers_differ: int | None) -> str:
    """How many wrong gold labels would overturn a decided pair (``docs/statistics.md``); ``""`` when not known.

    Examples
    --------
    >>> fragility_clause(4, 42)
    'holds unless 4 of the 42 examples where their answers differ are mislabelled'
    >>> fragility_clause(1, 1250)
    'holds unless 1 of the 1,250 examples where their answers differ is mislabelled'
    """
    if fragility is None or answers_differ is None:
        return ""
    verb = "is" if fragility == 1 else "are"
    return (
        f"holds unless {format_number(fragility, 'integer')} of the {format_number(answers_differ, 'integer')} "
        f"examples where their answers differ {verb} mislabelled"
    )


def pair_verdict(
    *,
    model_a: str,
    model_b: str,
    n_examples: int,
    effect: float,
    ci_low: float | None,
    ci_high: float | None,
    confidence: float,
    test: str,
    p_value: float,
    p_adjusted: float | None,
    significant: bool,
    discordant: int,
    minimum_detectable_effect: float | None,
    power: float = 0.8,
    groups: int | None = None,
    fragility: int | None = None,
    answers_differ: int | None = None,
) -> str:
    """One pair's verdict sentence.

    Parameters
    ----------
    model_a, model_b : str
    n_examples : int
    effect : float
        accuracy(a) − accuracy(b), as a fraction.
    ci_low, ci_high : float
        Score interval of ``effect`` (it excludes 0 exactly when the unadjusted test is significant).
    confidence : float
        Level of that interval (0.95).
    test : str
        ``mcnemar-score`` | ``mcnemar-clustered`` (older results: ``mcnemar-exact`` | ``mcnemar-chi2``).
    p_value : float
    p_adjusted : float or None
        Holm-adjusted p; ``None`` (not shown) when only one pair was tested.
    significant : bool
        Decided on the adjusted p-value.
    discordant : int
        Examples exactly one model got right.
    minimum_detectable_effect : float or None
        The gap detected with probability ``power`` at this ``n``.
    power : float
    groups : int, optional
        Groups of related examples the test accounts for.
    fragility, answers_differ : int, optional
        A decided pair's fewest mislabelled examples that would overturn it, among the examples where
        the two models' answers differ (:mod:`headtohead.stats.fragility`).

    Returns
    -------
    str

    Examples
    --------
    >>> pair_verdict(model_a="a", model_b="b", n_examples=872, effect=-0.003, ci_low=-0.011, ci_high=0.005,
    ...              confidence=0.95, test="mcnemar-score", p_value=0.51, p_adjusted=None, significant=False,
    ...              discordant=70, minimum_detectable_effect=0.024)  # doctest: +NORMALIZE_WHITESPACE
    'a vs b: no significant difference (accuracy a − b = −0.3 pp, 95 % CI −1.1…+0.5, McNemar p = 0.51);
     872 examples find a gap of 2.4 pp with 80 % probability (smaller gaps less often).'
    """
    level = format_level(confidence)
    tested = f"{TEST_NAMES.get(test, test)} p {format_p(p_value)}" + (f" over {groups} groups" if groups else "")
    if p_adjusted is not None:
        tested += f", Holm p {format_p(p_adjusted)}"
    if significant:
        # orient the sentence winner − loser so the gap reads positive
        flip = effect < 0
        winner, loser = (model_b, model_a) if flip else (model_a, model_b)
        low, high = (
            (None if ci_high is None else -ci_high, None if ci_low is None else -ci_low) if flip else (ci_low, ci_high)
        )
        gap = -effect if flip else effect
        holds = fragility_clause(fragility, answers_differ)
        return (
            f"{model_a} vs {model_b}: {winner} is better (accuracy {winner} − {loser} = {format_pp(gap)} pp, "
            f"{level} CI {interval_pp(low, high)}, {tested})" + (f"; the verdict {holds}." if holds else ".")
        )
    text = (
        f"{model_a} vs {model_b}: no significant difference (accuracy {model_a} − {model_b} = "
        f"{format_pp(effect)} pp, {level} CI {interval_pp(ci_low, ci_high)}, {tested})"
    )
    if p_adjusted is not None and ci_low is not None and ci_high is not None and (ci_low > 0 or ci_high < 0):
        text += (
            f"; the {level} interval alone excludes 0, but Holm's adjustment over the pairs tested leaves "
            f"p {format_p(p_adjusted)}"
        )
    if discordant == 0:
        text += "; the two models are right and wrong on exactly the same examples"
    return text + "; " + detectable_sentence(n_examples, minimum_detectable_effect, power, groups)


def quality_sentence(
    comparison: Comparison,
    *,
    holm: bool,
    failed: dict[str, tuple[int, float | None]] | None = None,
    groups: int | None = None,
) -> str:
    """The full sentence of one pair's accuracy comparison, from its record.

    Parameters
    ----------
    comparison : Comparison
    holm : bool
        Quote the Holm-adjusted p-value too (more than one pair was tested).
    failed : dict of str to (int, float or None), optional
        Per model, examples without a prediction and the accuracy on the answered ones.
    groups : int, optional
        Groups of related examples the statistics account for.
    """
    c = comparison
    accuracy = c.difference("accuracy")
    sentence = pair_verdict(
        model_a=c.model_a,
        model_b=c.model_b,
        n_examples=c.n_examples,
        effect=accuracy.difference,
        ci_low=accuracy.ci_low,
        ci_high=accuracy.ci_high,
        confidence=accuracy.confidence,
        test=c.test,
        p_value=c.p_value,
        p_adjusted=c.p_adjusted if holm else None,
        significant=c.significant,
        discordant=c.table.discordant,
        minimum_detectable_effect=c.minimum_detectable_effect,
        power=c.mde_power,
        groups=groups,
        fragility=c.fragility,
        answers_differ=c.answers_differ,
    )
    failures = {m: failed[m] for m in (c.model_a, c.model_b) if failed and failed.get(m, (0, None))[0]}
    return sentence + excluded_sentence(c.n_excluded, c.n_examples) + failures_sentence(failures, c.n_examples)


def failures_sentence(failed: dict[str, tuple[int, float | None]], n_examples: int) -> str:
    """Examples a model gave no prediction for, counted as wrong answers; ``""`` when none.

    Examples
    --------
    >>> failures_sentence({"llm": (87, 0.912)}, 872)
    ' llm gave no prediction for 87 of 872 examples (no answer, an unparseable one, or NaN scores): each counts as a wrong answer (its accuracy on the 785 answered: 91.2 %).'
    """
    parts = []
    for name, (count, answered) in failed.items():
        own = (
            f" (its accuracy on the {n_examples - count} answered: {format_share(answered)})"
            if answered is not None
            else ""
        )
        parts.append(
            f" {name} gave no prediction for {count} of {n_examples} examples (no answer, an unparseable "
            f"one, or NaN scores): each counts as a wrong answer{own}."
        )
    return "".join(parts)


def excluded_sentence(n_excluded: int, n_examples: int) -> str:
    """What a version-3 pair's statistics left out (examples one model scored NaN or infinite), or ``""``.

    Examples
    --------
    >>> excluded_sentence(3, 869)  # doctest: +ELLIPSIS
    ' Compared on the 869 examples both models scored: 3 were left out, where one of them returned NaN ...'
    """
    if not n_excluded:
        return ""
    return (
        f" Compared on the {n_examples} examples both models scored: {n_excluded} were left out, where one of "
        f"them returned NaN or infinite scores."
    )


def with_quality_sentences(summary: StatsSummary) -> StatsSummary:
    """``summary`` with every comparison's ``verdict`` sentence written, and every significant slice's."""
    # Holm with one pair too when it shares the family with comparisons pooled over prompts
    holm = len(summary.comparisons) > 1 or any(c.p_adjusted != c.p_value for c in summary.comparisons)
    failed = {m.name: (m.n_failed, m.accuracy_answered.value if m.accuracy_answered else None) for m in summary.models}
    comparisons = [
        c.model_copy(
            update={"verdict": quality_sentence(c, holm=holm, failed=failed, groups=summary.settings.n_groups)}
        )
        for c in summary.comparisons
    ]
    update: dict[str, object] = {"comparisons": comparisons}
    if summary.slices is not None:
        slices = [
            r.model_copy(
                update={
                    "pairs": [
                        p.model_copy(update={"verdict": slice_sentence(r, p, summary.slices)}) if p.significant else p
                        for p in r.pairs
                    ]
                }
            )
            for r in summary.slices.slices
        ]
        update["slices"] = summary.slices.model_copy(update={"slices": slices})
    return summary.model_copy(update=update)


def verdict_lines(summary: StatsSummary) -> list[str]:
    """The plain-text verdict block: one line per pair, then the ranking when there are 3+ models.

    Parameters
    ----------
    summary : StatsSummary

    Returns
    -------
    list of str
        Empty for a single-model run.
    """
    lines = list(summary.prompts.sentences) if summary.prompts is not None else []  # pooled over prompts first
    lines += list(summary.repeats.sentences) if summary.repeats is not None else []  # then over repeated runs
    lines += [comparison.verdict for comparison in summary.comparisons]
    if summary.slices is not None:
        nominal = SEQUENTIAL_NOMINAL if summary.sequential else ""
        found = (slices_line(summary.slices, c.model_a, c.model_b) for c in summary.comparisons)
        lines.extend(nominal + line for line in found if line)
    if sum(len(g.models) for g in summary.ranking) > 2:  # the models ranked: a prompted one once
        groups = " · ".join(f"{g.rank}. {', '.join(g.models)}" for g in summary.ranking)
        how = "the anytime-valid sequential tests" if summary.sequential else "Holm-adjusted McNemar"
        how += (
            ", a prompted model by its accuracy averaged over its prompts, pooled over prompts"
            if summary.prompts
            else ""
        )
        how += ", a repeated model by its accuracy averaged over its runs, over every run" if summary.repeats else ""
        lines.append(
            f"Ranking by accuracy ({groups}); models in one group are not significantly different "
            f"({how}, α = {summary.settings.alpha:g})."
        )
    return lines


def calibration_bound_note(confidence: float) -> str:
    """The note under a summary whose calibration error reads ``≤ x`` for some model (an estimate clipped at 0).

    Examples
    --------
    >>> calibration_bound_note(0.95)[:61]
    'Calibration error "≤ x": the debiased estimate is at or below'
    """
    return (
        'Calibration error "≤ x": the debiased estimate is at or below 0, so these examples cannot tell the '
        f"calibration error from 0 (nor show it is 0): x is its {format_level(confidence)} upper bound. A clipped "
        "estimate is not ranked: no model is marked best on that row."
    )
