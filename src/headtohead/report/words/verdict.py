"""The verdict at the top of a report: who wins on what, in words, with the interval and the p-value.

Nothing is re-derived here: each line is worded from what the statistics and speed records
already hold (winner, effect, the score interval of the accuracy difference, McNemar's p,
Holm's p; the speed ratio, its interval and the faster model). A pair of an ``--until-decided``
run is headlined by its anytime-valid decision and confidence sequence, whether it stopped
early or used every example: fixed-sample p-values after interim looks are not valid, so they
are not shown there. The full sentences
those records carry (``Comparison.verdict``, ``SpeedComparison.verdict``) are kept as the
details under the headline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from headtohead.report.words.missing import missing_sentence
from headtohead.report.words.numbers import (
    format_interval,
    format_level,
    format_p,
    format_pp,
    format_ratios,
    format_share,
    holm_clause,
    speed_tests_phrase,
)
from headtohead.report.words.quality import TEST_NAMES, fragility_clause
from headtohead.report.words.sequential import sequential_headline
from headtohead.report.words.slices import SEQUENTIAL_NOMINAL, slices_line
from headtohead.report.words.warnings import speed_warnings
from headtohead.results.comparison import Comparison, SeedComparison, StatsSummary
from headtohead.results.records import RunResult
from headtohead.results.sequential import SequentialRecord
from headtohead.results.speed import SpeedComparison, SpeedSummary
from headtohead.results.training import TrainingSummary

__all__ = ["VerdictLine", "Verdict", "build_verdict", "quality_line", "speed_line", "seed_line", "slice_lines"]

_SCENARIOS = {"offline": "offline", "single_stream": "single stream"}
# Beyond this many pairs the headline summarises (ranking, fastest model) instead of listing every pair.
_MAX_PAIRS_LISTED = 3
_MAX_SPEED_PAIRS_LISTED = 1


@dataclass(frozen=True)
class VerdictLine:
    """One headline sentence.

    Attributes
    ----------
    subject : str or None
        The model the sentence is about (the winner, the faster one); ``None`` when no model wins.
    text : str
        The sentence after the subject (``"+1.2 pp accuracy over bert (…)"``), or the whole
        sentence when there is no subject.
    kind : {"quality", "speed", "info"}
    """

    subject: str | None
    text: str
    kind: Literal["quality", "speed", "info"]

    def plain(self) -> str:
        """The sentence as plain text: ``"roberta: +1.2 pp accuracy over bert (…)"``."""
        return f"{self.subject}: {self.text}" if self.subject else self.text


@dataclass(frozen=True)
class Verdict:
    """The headline lines, then the full sentences of every comparison."""

    headline: list[VerdictLine]
    details: list[str] = field(default_factory=list)


def _level(confidence: float) -> str:
    return format_level(confidence)


def quality_line(comparison: Comparison, *, holm: bool, groups: int | None = None) -> VerdictLine:
    """The headline of one pair's accuracy comparison.

    Parameters
    ----------
    comparison : Comparison
    holm : bool
        Quote the Holm-adjusted p-value too (more than one pair was tested).
    groups : int, optional
        Groups of related examples the test accounts for.

    Examples
    --------
    A significant pair reads ``roberta: +1.2 pp accuracy over bert (95 % CI +0.4…+2.0,
    McNemar p = 0.003; holds unless 9 of the 140 examples where their answers differ are mislabelled)``
    (the clause where its fragility is known: :mod:`headtohead.stats.fragility`).
    """
    diff = comparison.difference("accuracy") if any(d.metric == "accuracy" for d in comparison.differences) else None
    low, high = (diff.ci_low, diff.ci_high) if diff else (None, None)
    confidence = diff.confidence if diff else 1.0 - comparison.alpha
    tested = f"{TEST_NAMES.get(comparison.test, comparison.test)} p {format_p(comparison.p_value)}"
    tested += f" over {groups} groups" if groups else ""
    if holm:
        tested += f", Holm p {format_p(comparison.p_adjusted)}"
    a, b, effect = comparison.model_a, comparison.model_b, comparison.effect
    if comparison.significant and comparison.winner is not None:
        flip = comparison.winner == b
        loser = a if flip else b
        gap = -effect if flip else effect
        interval = ""
        if low is not None and high is not None:
            lo, hi = (-high, -low) if flip else (low, high)
            interval = f"{_level(confidence)} CI {format_pp(lo)}…{format_pp(hi)}, "
        holds = fragility_clause(comparison.fragility, comparison.answers_differ)
        tested += f"; {holds}" if holds else ""
        return VerdictLine(
            comparison.winner, f"{format_pp(gap)} pp accuracy over {loser} ({interval}{tested})", "quality"
        )
    interval = (
        f", {_level(confidence)} CI {format_pp(low)}…{format_pp(high)}" if low is not None and high is not None else ""
    )
    return VerdictLine(
        None,
        f"{a} vs {b}: no significant accuracy difference ({a} − {b} = {format_pp(effect)} pp{interval}, {tested})",
        "quality",
    )


def _pair_line(comparison: Comparison, stats: StatsSummary, *, holm: bool) -> VerdictLine:
    """A pair's headline: the sequential decision in a run with looks (``--until-decided``), else the fixed-sample
    test."""
    record = _sequential_record(stats, comparison)
    if record is not None:
        subject, text = sequential_headline(
            record, family_alpha=stats.settings.alpha, n_pairs=len(stats.sequential or [])
        )
        return VerdictLine(subject, text, "quality")
    return quality_line(comparison, holm=holm, groups=stats.settings.n_groups)


def _sequential_record(stats: StatsSummary, comparison: Comparison) -> SequentialRecord | None:
    for record in stats.sequential or []:
        if {record.model_a, record.model_b} == {comparison.model_a, comparison.model_b}:
            return record
    return None


def _faster(comparison: SpeedComparison) -> tuple[str, str, float, float, float] | None:
    """``(faster, slower, factor, low, high)`` with the factor above 1, or ``None`` when neither is faster."""
    c = comparison
    if c.faster == c.model_b:
        return c.model_b, c.model_a, c.ratio, c.ci_low, c.ci_high
    if c.faster == c.model_a:
        return c.model_a, c.model_b, 1 / c.ratio, 1 / c.ci_high, 1 / c.ci_low
    return None


def speed_line(comparison: SpeedComparison, batch_size: int) -> VerdictLine:
    """The headline of one pair's speed ratio in one scenario.

    ``ratio`` is time(a)/time(b); the sentence is turned round so the faster model is the
    subject and the factor is above 1. A model is faster only when the record names it (Holm
    over every speed comparison of the run).

    Examples
    --------
    ``bert: 1.31× faster than roberta (offline, batch 32; 95 % CI 1.27–1.35, p < 0.001)``;
    ``a vs b: no significant speed difference after Holm over 4 speed comparisons (offline, batch 32;
    time ratio a/b 1.04, 95 % CI 1.01–1.07, p = 0.02, Holm p = 0.09)``.
    """
    c = comparison
    where = f"{_SCENARIOS.get(c.scenario, c.scenario)}, batch {batch_size}"
    level = _level(c.confidence)
    tested = holm_clause(c.p_value, c.p_adjusted, c.n_speed_tests)
    tested = f", {tested}" if tested else ""
    faster = _faster(c)
    if faster is not None:
        fast, slow, *numbers = faster
        factor, low, high = format_ratios(*numbers)
        return VerdictLine(fast, f"{factor}× faster than {slow} ({where}; {level} CI {low}–{high}{tested})", "speed")
    a, b = c.model_a, c.model_b
    after = (
        f" after {speed_tests_phrase(c.n_speed_tests)}"
        if c.n_speed_tests and c.n_speed_tests > 1 and (c.ci_low > 1.0 or c.ci_high < 1.0)
        else ""
    )
    ratio, low, high = format_ratios(c.ratio, c.ci_low, c.ci_high)
    return VerdictLine(
        None,
        f"{a} vs {b}: no significant speed difference{after} ({where}; time ratio {a}/{b} "
        f"{ratio}, {level} CI {low}–{high}{tested})",
        "speed",
    )


def _quality_headline(result: RunResult, stats: StatsSummary | None) -> list[VerdictLine]:
    left_out = result.missing.models if result.missing is not None and not result.missing.allowed else {}
    models = [m for m in result.models if m.quality is not None and m.name not in left_out]
    if not models:
        if result.models:  # a speed-only run (h2h bench): nothing to say about quality
            return []
        return [VerdictLine(None, "No model finished evaluating in this run.", "info")]
    if stats is None or not stats.models:
        accuracy = {m.name: m.quality.accuracy for m in models if m.quality is not None}
        ranked = sorted(accuracy, key=lambda name: -accuracy[name])
        listing = ", ".join(f"{name} {format_share(accuracy[name])}" for name in ranked)
        note = "" if len(models) == 1 else " — no significance test in this result, so no winner is declared"
        return [VerdictLine(None, f"Accuracy: {listing}{note}.", "info")]
    if len(stats.models) == 1:
        est = stats.models[0].accuracy
        interval = (
            f" ({_level(est.confidence)} CI {format_interval(est.low, est.high, 'percent')})"
            if est.low is not None and est.high is not None
            else " (no interval)"
        )
        return [
            VerdictLine(
                stats.models[0].name,
                f"accuracy {format_share(est.value)}{interval}",
                "quality",
            )
        ]
    holm = len(stats.comparisons) > 1 or any(c.p_adjusted != c.p_value for c in stats.comparisons)
    if len(stats.comparisons) <= _MAX_PAIRS_LISTED:
        return [_pair_line(c, stats, holm=holm) for c in stats.comparisons]
    groups = " · ".join(f"{g.rank}. {', '.join(g.models)}" for g in stats.ranking)
    how = "the anytime-valid sequential tests" if stats.sequential else "Holm-adjusted McNemar"
    how += ", a prompted model by its accuracy averaged over its prompts, pooled over prompts" if stats.prompts else ""
    how += ", a repeated model by its accuracy averaged over its runs, over every run" if stats.repeats else ""
    lines = [
        VerdictLine(
            None,
            f"Ranking by accuracy: {groups} (models in one group are not significantly "
            f"different, {how}, α = {stats.settings.alpha:g}).",
            "quality",
        )
    ]
    if stats.ranking and len(stats.ranking[0].models) == 1:
        best = stats.ranking[0].models[0]
        lines.extend(
            _pair_line(c, stats, holm=True)
            for c in stats.comparisons
            if c.winner == best and best in (c.model_a, c.model_b)
        )
    return lines


def _prompt_headline(stats: StatsSummary | None) -> list[VerdictLine]:
    """With a model asked with several prompts: the pooled verdicts first, then each model's score over its prompts.

    Its passes are never compared as models (:func:`headtohead.stats.analyse` leaves their pairs out): a
    headline on the best prompt would report a prompt chosen after seeing the examples as the model's score.
    """
    if stats is None or stats.prompts is None:
        return []
    pools = stats.prompts.sentences[len(stats.prompts.families) :]
    families = stats.prompts.sentences[: len(stats.prompts.families)]
    return [VerdictLine(None, sentence, "quality") for sentence in pools + families]


def _repeat_headline(stats: StatsSummary | None) -> list[VerdictLine]:
    """With a model run several times: the verdicts over every run, then each model's runs (spread, steadiness)."""
    if stats is None or stats.repeats is None:
        return []
    return [VerdictLine(None, sentence, "quality") for sentence in stats.repeats.sentences]


def slice_lines(stats: StatsSummary | None) -> list[VerdictLine]:
    """Per pair, the slices where one model is significantly better after Holm's adjustment, and only those.

    One line per pair that has any (up to the pairs a headline lists), e.g. ``minilm vs tfidf
    by slice: minilm is better on class negative (+7.2 pp, Holm p = 0.041).`` None for an
    ``--until-decided`` run, stopped early or not: fixed-sample slice tests after interim looks
    are not valid (the details keep them, labelled nominal: :data:`~headtohead.report.words.slices.SEQUENTIAL_NOMINAL`).
    """
    if stats is None or stats.slices is None or len(stats.comparisons) > _MAX_PAIRS_LISTED or stats.sequential:
        return []
    found = (slices_line(stats.slices, c.model_a, c.model_b) for c in stats.comparisons)
    return [VerdictLine(None, line, "quality") for line in found if line]


def _speed_headline(speed: SpeedSummary) -> list[VerdictLine]:
    """Two models: each scenario's pair. More: per scenario, the model faster than every other, if any."""
    lines: list[VerdictLine] = []
    for run in speed.scenarios:
        if len(run.comparisons) <= _MAX_SPEED_PAIRS_LISTED:
            lines.extend(speed_line(c, run.batch_size) for c in run.comparisons)
            continue
        where = f"{_SCENARIOS.get(run.scenario, run.scenario)}, batch {run.batch_size}"
        names = list(dict.fromkeys(n for c in run.comparisons for n in (c.model_a, c.model_b)))
        for name in names:
            own = [f for c in run.comparisons if name in (c.model_a, c.model_b) for f in [_faster(c)]]
            wins = [f for f in own if f is not None and f[0] == name]
            if own and len(wins) == len(own):
                _, runner_up, *numbers = min(wins, key=lambda f: f[2])
                factor, low, high = format_ratios(*numbers)
                tests = run.comparisons[0].n_speed_tests
                holm = f", each significant after {speed_tests_phrase(tests)}" if tests and tests > 1 else ""
                lines.append(
                    VerdictLine(
                        name,
                        f"fastest ({where}): {factor}× faster than the runner-up, "
                        f"{runner_up} ({_level(run.comparisons[0].confidence)} CI "
                        f"{low}–{high}{holm})",
                        "speed",
                    )
                )
                break
        else:
            tests = run.comparisons[0].n_speed_tests
            holm = f" after {speed_tests_phrase(tests)}" if tests and tests > 1 else ""
            lines.append(
                VerdictLine(None, f"No model is significantly faster than all the others{holm} ({where}).", "speed")
            )
    return lines


def _speed_unsteady(speed: SpeedSummary) -> bool:
    # every speed warning is worded from a measured threat (a busy host, an undecided ratio too wide, a drift);
    # repeat noise alone is a number in the tables, not a reason to doubt the verdict
    return bool(speed_warnings(speed))


def seed_line(comparison: SeedComparison) -> VerdictLine:
    """The headline of two models compared over training seeds (paired by seed).

    Examples
    --------
    ``roberta: +1.1 pp mean accuracy over bert across 5 seeds (paired t p = 0.004)``.
    """
    c = comparison
    tested = f"paired t p {format_p(c.p_value)}" if c.p_value is not None else "too few seeds for a test"
    if c.p_adjusted is not None and c.p_adjusted != c.p_value:
        tested += f", Holm p {format_p(c.p_adjusted)}"
    if c.significant and c.mean_difference != 0:
        winner, loser = (c.model_a, c.model_b) if c.mean_difference > 0 else (c.model_b, c.model_a)
        return VerdictLine(
            winner,
            f"{format_pp(abs(c.mean_difference))} pp mean {c.metric} over {loser} across {c.n_seeds} seeds ({tested})",
            "quality",
        )
    return VerdictLine(
        None,
        f"{c.model_a} vs {c.model_b} across {c.n_seeds} seeds: no significant {c.metric} "
        f"difference ({c.model_a} − {c.model_b} = {format_pp(c.mean_difference)} pp, {tested})",
        "quality",
    )


def build_verdict(result: RunResult, training: TrainingSummary | None = None) -> Verdict:
    """The verdict of one run: quality first, then speed, then the full sentences.

    Parameters
    ----------
    result : RunResult
        Sections that are absent (``stats``, ``speed``) are left out of the verdict.
    training : TrainingSummary, optional
        How the models were trained: with several seeds, the comparisons across seeds join the verdict.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> verdict = build_verdict(result)                     # doctest: +SKIP
    >>> [line.plain() for line in verdict.headline]         # doctest: +SKIP
    ['roberta: +1.2 pp accuracy over bert (95 % CI +0.4…+2.0, McNemar p = 0.003)',
     'bert: 1.31× faster than roberta (offline, batch 32; 95 % CI 1.27–1.35)']
    """
    missing = missing_sentence(result)  # first: the verdicts below leave those models out, or used fewer rows
    headline = [VerdictLine(None, missing, "info")] if missing else []
    prompted, stats = _prompt_headline(result.stats) + _repeat_headline(result.stats), result.stats
    # with prompts or repeats: the pooled verdicts, then the pairs of models measured once (a pass is never one)
    ordinary = _quality_headline(result, stats) if not prompted or (stats is not None and stats.comparisons) else []
    headline += prompted + ordinary + slice_lines(result.stats)
    details: list[str] = []
    if result.stats is not None:
        details.extend(c.verdict for c in result.stats.comparisons)
        if result.stats.slices is not None:  # one line per pair (every slice's sentence is in the records)
            nominal = SEQUENTIAL_NOMINAL if result.stats.sequential else ""
            found = (slices_line(result.stats.slices, c.model_a, c.model_b) for c in result.stats.comparisons)
            details.extend(nominal + line for line in found if line)
    seeds = training.multi_seed if training is not None else None
    if (
        training is not None
        and seeds is not None
        and len(training.seeds) > 1
        and len(seeds.comparisons) <= _MAX_PAIRS_LISTED
    ):
        headline.extend(seed_line(c) for c in seeds.comparisons)
    if result.speed is not None:
        headline.extend(_speed_headline(result.speed))
        if _speed_unsteady(result.speed):
            headline.append(
                VerdictLine(
                    None,
                    "Speed was measured on a busy or unsteady machine: read the speed "
                    "lines with care (see the warnings under speed and memory).",
                    "info",
                )
            )
        details.extend(c.verdict for run in result.speed.scenarios for c in run.comparisons)
    return Verdict(headline=headline, details=details)
