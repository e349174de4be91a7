"""The verdict in words: one sentence per pair, and the verdict block under the table.

Sign convention, stated in every sentence: a difference is written ``X − Y = …`` with the
model names, so no reader has to guess which way round it is. A pair is called better
only when McNemar's test is significant after Holm's adjustment; otherwise the sentence
says "no significant difference" and how large a gap this many examples could have shown.
"""

from __future__ import annotations

from headtohead.results.comparison import StatsSummary

__all__ = ["format_pp", "format_p", "pair_verdict", "verdict_lines"]

_MINUS = "\u2212"
_TEST_NAMES = {"mcnemar-exact": "McNemar exact", "mcnemar-chi2": "McNemar χ²", "mcnemar-midp": "McNemar mid-p"}


def format_pp(fraction: float, *, signed: bool = True) -> str:
    """A fraction as percentage points with one decimal (two below 0.1 pp): ``+1.2``, ``−0.3``.

    Examples
    --------
    >>> format_pp(0.012), format_pp(-0.003), format_pp(0.0), format_pp(0.024, signed=False)
    ('+1.2', '−0.3', '0.0', '2.4')
    """
    pp = 100.0 * fraction
    digits = 2 if 0 < abs(pp) < 0.1 else 1
    text = f"{abs(pp):.{digits}f}"
    if not signed or float(text) == 0.0:
        return text
    return ("+" if pp > 0 else _MINUS) + text


def format_p(p: float) -> str:
    """A p-value for reading: ``< 0.001``, three decimals below 0.01, two otherwise.

    Examples
    --------
    >>> format_p(0.0004), format_p(0.0031), format_p(0.512)
    ('< 0.001', '= 0.003', '= 0.51')
    """
    if p < 0.001:
        return "< 0.001"
    return f"= {p:.3f}" if p < 0.01 else f"= {p:.2f}"


def _interval(low: float, high: float) -> str:
    return f"{format_pp(low)}…{format_pp(high)}"


def pair_verdict(*, model_a: str, model_b: str, n_examples: int, effect: float, ci_low: float, ci_high: float,
                 confidence: float, test: str, p_value: float, p_adjusted: float | None, significant: bool,
                 discordant: int, minimum_detectable_effect: float | None, power: float = 0.8) -> str:
    """One pair's verdict sentence.

    Parameters
    ----------
    model_a, model_b : str
    n_examples : int
    effect : float
        accuracy(a) − accuracy(b), as a fraction.
    ci_low, ci_high : float
        Paired bootstrap interval of ``effect``.
    confidence : float
        Level of that interval (0.95).
    test : str
        ``mcnemar-exact`` | ``mcnemar-chi2`` | ``mcnemar-midp``.
    p_value : float
    p_adjusted : float or None
        Holm-adjusted p; ``None`` (not shown) when only one pair was tested.
    significant : bool
        Decided on the adjusted p-value.
    discordant : int
        Examples exactly one model got right.
    minimum_detectable_effect : float or None
        Smallest gap detectable with ``power`` at this ``n``.
    power : float

    Returns
    -------
    str

    Examples
    --------
    >>> pair_verdict(model_a="a", model_b="b", n_examples=872, effect=-0.003, ci_low=-0.011, ci_high=0.005,
    ...              confidence=0.95, test="mcnemar-chi2", p_value=0.51, p_adjusted=None, significant=False,
    ...              discordant=70, minimum_detectable_effect=0.024)  # doctest: +NORMALIZE_WHITESPACE
    'a vs b: no significant difference (accuracy a − b = −0.3 pp, 95 % CI −1.1…+0.5, McNemar χ² p = 0.51);
     872 examples cannot show a gap below 2.4 pp at 80 % power.'
    """
    level = f"{100 * confidence:.0f} %"
    tested = f"{_TEST_NAMES.get(test, test)} p {format_p(p_value)}"
    if p_adjusted is not None:
        tested += f", Holm p {format_p(p_adjusted)}"
    if significant:
        # orient the sentence winner − loser so the gap reads positive
        flip = effect < 0
        winner, loser = (model_b, model_a) if flip else (model_a, model_b)
        gap, low, high = (-effect, -ci_high, -ci_low) if flip else (effect, ci_low, ci_high)
        text = (f"{model_a} vs {model_b}: {winner} is better (accuracy {winner} − {loser} = {format_pp(gap)} pp, "
                f"{level} CI {_interval(low, high)}, {tested}).")
        if low <= 0.0:
            text += " The bootstrap interval still reaches 0: a borderline result."
        return text
    text = (f"{model_a} vs {model_b}: no significant difference (accuracy {model_a} − {model_b} = "
            f"{format_pp(effect)} pp, {level} CI {_interval(ci_low, ci_high)}, {tested})")
    if discordant == 0:
        text += "; the two models are right and wrong on exactly the same examples"
    if minimum_detectable_effect is None:
        return text + f"; {n_examples} examples are too few to show any gap at {100 * power:.0f} % power."
    return (text + f"; {n_examples} examples cannot show a gap below "
            f"{format_pp(minimum_detectable_effect, signed=False)} pp at {100 * power:.0f} % power.")


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
    lines = [comparison.verdict for comparison in summary.comparisons]
    if len(summary.models) > 2 and summary.ranking:
        groups = " · ".join(f"{g.rank}. {', '.join(g.models)}" for g in summary.ranking)
        lines.append(f"Ranking by accuracy ({groups}); models in one group are not significantly different "
                     f"(Holm-adjusted McNemar, α = {summary.settings.alpha:g}).")
    return lines
