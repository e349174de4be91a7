"""Non-inferiority decisions for the CI gate: is the candidate worse than the baseline beyond a margin?

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from headtohead.errors import ConfigError
from headtohead.metrics import CATALOGUE
from headtohead.results import Predictions, RunResult
from headtohead.stats.bootstrap import paired_bootstrap
from headtohead.stats.paired import PairedCorrectness
from headtohead.stats.repeat_pool import two_level_gap
from headtohead.stats.server import compare_searches
from headtohead.stats.speed import round_log_ratios, speed_ratio

__all__ = [
    "repeats_noninferiority",
    "Decision",
    "Outcome",
    "decide",
    "accuracy_noninferiority",
    "metric_noninferiority",
    "slowdown_noninferiority",
    "capacity_noninferiority",
    "skipped_check",
    "gate_exit_code",
    "gate_decisions",
    "EXIT_CODES",
    "POWER",
]

Outcome = Literal["pass", "fail", "inconclusive", "skipped"]

#: Exit code of the gate per overall outcome ("skipped" checks do not change it).
EXIT_CODES: dict[str, int] = {"pass": 0, "fail": 1, "inconclusive": 3}
#: Power assumed when saying how many examples an inconclusive check needs.
POWER = 0.8


@dataclass(frozen=True)
class Decision:
    """The outcome of one gate check.

    Attributes
    ----------
    check : str
        ``"accuracy"`` or ``"speed (offline)"`` …
    outcome : {"pass", "fail", "inconclusive", "skipped"}
    estimate, low, high : float
        Accuracy: candidate − baseline as a fraction. Speed: time ratio candidate / baseline.
        NaN for a skipped check.
    bound : float
        Where the margin lies on the same scale: ``−margin`` for accuracy,
        ``1 + margin`` for speed.
    confidence : float
    n : int
        Paired examples (accuracy) or interleaved rounds (speed) the interval rests on.
    needed : int or None
        For an inconclusive check: about how many examples (rounds) would decide it.
    margin : float
        The allowed drop (accuracy, a fraction) or slowdown (speed, a fraction); NaN when skipped.
    names : (str, str)
        Baseline and candidate.
    reason : str or None
        Why a skipped check could not run: ``"no_speed"`` (the results hold no speed
        measurement of both models).
    method : str
        How the interval was made: ``tango-score`` (accuracy; ``+clusters`` with groups; ``+exact`` where one
        discordant count is 0 and Tango's interval is joined with the exact one),
        ``t`` (speed).
    groups : int or None
        Groups of related examples the accuracy interval accounts for (``None``: none given).

    The words for a decision are :func:`headtohead.report.words.gate.decision_explanation`.
    """

    check: str
    outcome: Outcome
    estimate: float
    low: float
    high: float
    bound: float
    confidence: float
    n: int
    needed: int | None
    margin: float = float("nan")
    names: tuple[str, str] = ("baseline", "candidate")
    reason: str | None = None
    method: str = ""
    groups: int | None = None


def decide(low: float, high: float, bound: float, *, higher_is_better: bool) -> Outcome:
    """Place the interval ``[low, high]`` against the margin ``bound``.

    Examples
    --------
    >>> decide(-0.03, -0.01, -0.005, higher_is_better=True)   # worse than −0.5 pp, surely
    'fail'
    >>> decide(-0.004, 0.01, -0.005, higher_is_better=True)
    'pass'
    >>> decide(-0.02, 0.01, -0.005, higher_is_better=True)
    'inconclusive'
    >>> decide(1.08, 1.12, 1.05, higher_is_better=False)      # slower than +5 %, surely
    'fail'
    """
    if higher_is_better:
        return "fail" if high < bound else "pass" if low >= bound else "inconclusive"
    return "fail" if low > bound else "pass" if high <= bound else "inconclusive"


def _check_common(margin: float, confidence: float, what: str) -> None:
    if not (math.isfinite(margin) and 0.0 <= margin < 1.0):
        raise ConfigError(f"{what}={margin} must be a fraction in [0, 1), e.g. 0.005 (0.5 pp) or 0.05 (5 %)")
    if not (0.5 < confidence < 1.0):
        raise ConfigError(f"confidence={confidence} must lie between 0.5 and 1, e.g. 0.95")


def accuracy_noninferiority(
    y_true: np.ndarray,
    pred_baseline: np.ndarray,
    pred_candidate: np.ndarray,
    *,
    margin: float,
    confidence: float = 0.95,
    names: tuple[str, str] = ("baseline", "candidate"),
    groups: np.ndarray | None = None,
) -> Decision:
    """Is the candidate's accuracy lower than the baseline's by more than ``margin``?

    Parameters
    ----------
    y_true, pred_baseline, pred_candidate : ndarray of shape (n,)
        True labels and the two models' predictions on the same examples, same order
        (``-1``: no prediction, a wrong answer).
    margin : float
        Allowed accuracy drop as a share (0.005 = 0.5 percentage points).
    confidence : float
        Level of the two-sided score interval; each side is a test at ``(1 − confidence)/2``.
    names : (str, str)
        Baseline and candidate names.
    groups : ndarray of shape (n,), optional
        Group of each example (examples of one user, document …): the interval accounts for
        their correlation.

    Returns
    -------
    Decision
        ``estimate``/``low``/``high`` are candidate − baseline accuracy (fractions).

    Examples
    --------
    >>> y = np.zeros(2000, dtype=int)
    >>> base = np.where(np.arange(2000) % 10 == 0, 1, 0)        # 90 % right
    >>> cand = np.where(np.arange(2000) % 5 == 0, 1, 0)         # 80 % right
    >>> accuracy_noninferiority(y, base, cand, margin=0.005).outcome
    'fail'
    >>> same = np.zeros(60, dtype=int)                          # identical predictions, 60 examples
    >>> d = accuracy_noninferiority(same, same, same, margin=0.001)
    >>> d.outcome, d.needed
    ('inconclusive', 3838)
    """
    _check_common(margin, confidence, "margin")
    y_true = np.asarray(y_true, np.int64)
    base, cand = np.asarray(pred_baseline, np.int64) == y_true, np.asarray(pred_candidate, np.int64) == y_true
    n = len(y_true)
    if n == 0:
        raise ValueError("no examples to compare")
    paired = PairedCorrectness.of(cand, base, groups)
    low, high = (float(x) for x in paired.interval(confidence))
    bound, estimate = -margin, float(paired.estimate)
    outcome = decide(low, high, bound, higher_is_better=True)
    needed = (
        paired.examples_to_decide(margin, confidence=confidence, power=POWER) if outcome == "inconclusive" else None
    )
    return Decision(
        "accuracy",
        outcome,
        estimate,
        low,
        high,
        bound,
        confidence,
        n,
        needed,
        margin,
        names,
        method=paired.method,
        groups=paired.n_groups,
    )


def repeats_noninferiority(
    y_true: np.ndarray,
    pred_baseline: np.ndarray,
    pred_candidate: np.ndarray,
    *,
    metric: str = "accuracy",
    margin: float,
    confidence: float = 0.95,
    names: tuple[str, str] = ("baseline", "candidate"),
    groups: np.ndarray | None = None,
) -> Decision:
    """Is the candidate's accuracy, averaged over its runs, lower than the baseline's by more than ``margin``?

    Either model (or both) was run several times (``repeats:``; ``pred`` of shape ``(runs, n)``): the
    interval is the two-level one over every run (:func:`headtohead.stats.repeat_pool.two_level_gap`:
    examples, then runs within examples), placed against the margin as any accuracy check's is.

    Raises
    ------
    ConfigError
        ``metric`` is not accuracy (no test over runs of another metric yet), in one line.
    """
    _check_common(margin, confidence, "margin")
    if metric != "accuracy":
        raise ConfigError(
            f"--metric {metric}: {names[0]} or {names[1]} was run several times (repeats:), and the gate over "
            f"runs tests accuracy only; drop --metric, or gate a run of each model made once"
        )
    y_true = np.asarray(y_true, np.int64)
    base = np.atleast_2d(np.asarray(pred_baseline, np.int64)) == y_true[None, :]
    cand = np.atleast_2d(np.asarray(pred_candidate, np.int64)) == y_true[None, :]
    gap = two_level_gap(cand, base, groups, confidence)
    outcome = decide(gap.low, gap.high, -margin, higher_is_better=True)
    return Decision(
        "accuracy",
        outcome,
        gap.estimate,
        gap.low,
        gap.high,
        -margin,
        confidence,
        len(y_true),
        None,
        margin,
        names,
        method=f"two-level t over {cand.shape[0]} × {base.shape[0]} runs",
        groups=int(len(np.unique(groups))) if groups is not None else None,
    )


def metric_noninferiority(
    y_true: np.ndarray,
    baseline: tuple[np.ndarray, np.ndarray | None],
    candidate: tuple[np.ndarray, np.ndarray | None],
    *,
    metric: str,
    margin: float,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    names: tuple[str, str] = ("baseline", "candidate"),
    groups: np.ndarray | None = None,
) -> Decision:
    """Is the candidate worse than the baseline on a catalogue metric (:mod:`headtohead.metrics`) beyond ``margin``?

    The decision reads the paired bootstrap interval of ``metric(candidate) − metric(baseline)``
    (BCa; the cluster bootstrap with ``groups``) against the margin, as for accuracy: each bound
    of the two-sided interval is a one-sided test at ``(1 − confidence)/2``. A failed answer is a
    wrong one for a label metric; a metric of probabilities is over the rows both answered.

    Parameters
    ----------
    y_true : ndarray of shape (n,)
    baseline, candidate : (pred, proba)
        Each model's predictions (``-1``: no prediction) and probabilities (``None``: none stored).
    metric : str
        A catalogue name (``mcc``, ``roc_auc``, ``f1_macro`` …).
    margin : float
        Allowed worsening in the metric's units (a fraction for a share: 0.005 = 0.5 pp).
    confidence, n_resamples, seed, names, groups
        As for :func:`accuracy_noninferiority`; ``n_resamples``/``seed``: the bootstrap's.

    Returns
    -------
    Decision
        ``estimate``/``low``/``high``: candidate − baseline; ``bound``: ``−margin`` (``+margin`` for a
        metric where lower is better); inconclusive when the bootstrap gives no interval.

    Raises
    ------
    ConfigError
        A metric of probabilities for a model without them.
    """
    _check_common(margin, confidence, "margin")
    entry = CATALOGUE[metric]
    y = np.asarray(y_true, np.int64)
    (pred_b, proba_b), (pred_c, proba_c) = baseline, candidate
    rows = np.ones(len(y), dtype=bool)
    if entry.needs_proba:
        if proba_b is None or proba_c is None:
            raise ConfigError(
                f"--metric {metric}: needs class probabilities, and '{names[0] if proba_b is None else names[1]}' "
                f"has none (predictions stored without them); choose a label metric such as mcc or f1_macro"
            )
        rows = (np.asarray(pred_b) >= 0) & (np.asarray(pred_c) >= 0)  # probabilities only where answered
    interval = paired_bootstrap(
        y[rows],
        np.asarray(pred_c, np.int64)[rows],
        np.asarray(pred_b, np.int64)[rows],
        None if proba_c is None or not entry.needs_proba else np.asarray(proba_c)[rows],
        None if proba_b is None or not entry.needs_proba else np.asarray(proba_b)[rows],
        metrics=[metric],
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        groups=None if groups is None else np.asarray(groups)[rows],
    )[metric]
    bound = -margin if entry.higher_is_better else margin
    low, high = (
        (interval.low, interval.high) if interval.low is not None and interval.high is not None else (None, None)
    )
    outcome: Outcome = (
        "inconclusive"
        if low is None or high is None
        else decide(low, high, bound, higher_is_better=entry.higher_is_better)
    )
    return Decision(
        metric,
        outcome,
        interval.estimate,
        float("nan") if low is None else low,
        float("nan") if high is None else high,
        bound,
        confidence,
        int(rows.sum()),
        None,
        margin,
        names,
        method=interval.method,
        groups=None if groups is None else int(len(np.unique(np.asarray(groups)[rows]))),
    )


def slowdown_noninferiority(
    time_baseline: Sequence[float] | np.ndarray,
    time_candidate: Sequence[float] | np.ndarray,
    *,
    margin: float,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    scenario: str = "offline",
    names: tuple[str, str] = ("baseline", "candidate"),
    checks: int = 1,
    interval: Literal["t", "anytime"] = "t",
) -> Decision:
    """Is the candidate slower than the baseline by more than ``margin``?

    The gate fails when *any* of its speed checks fails, so with one check per scenario the
    chance of failing a candidate that is within the margin everywhere grows with the
    scenarios (two checks at the margin, each failing 2.5 % of the time: 4.9 %). Each check
    is therefore read off a Bonferroni interval at ``1 − (1 − confidence) / checks``: the
    intervals of all ``checks`` scenarios hold together with probability ``confidence``, so a
    false fail over all of them stays ≤ ``(1 − confidence) / 2``. A false pass needs no such
    correction (the gate passes only when every check passes, so a candidate slower than
    allowed in one scenario passes only if that one check errs), and with the wider interval
    it errs less than ``(1 − confidence) / 2``; the price is more inconclusive checks near the
    margin (``docs/statistics.md`` §3 has the simulated rates).

    Parameters
    ----------
    time_baseline, time_candidate : array-like of shape (n_rounds,)
        One latency per interleaved round for each model, paired by round (e.g. round medians).
    margin : float
        Allowed slowdown as a share (0.05 = candidate may take 5 % longer).
    confidence : float
        Level of the gate's speed intervals taken together (each one is at
        ``1 − (1 − confidence) / checks``; ``Decision.confidence`` says which).
    n_resamples, seed
        Unused by the t interval; kept for callers.
    scenario : str
        The scenario the rounds come from (``offline``, ``single_stream``).
    names : (str, str)
        Baseline and candidate names.
    checks : int
        How many speed checks (scenarios) the gate makes in all.
    interval : {"t", "anytime"}
        ``t`` for rounds whose number was fixed in advance; ``anytime`` (the confidence sequence
        of :mod:`headtohead.stats.speed_sequence`) for rounds the engine stopped when the ratio
        was known (``speed.precision``): a t interval read at a stop chosen by the data passes a
        candidate slowed by exactly the margin up to 3.5 % of the time instead of 2.5 %
        (``docs/audit.md``, "Speed measured until it is decided").

    Returns
    -------
    Decision
        ``estimate``/``low``/``high`` are the time ratio candidate / baseline; ``method`` is
        ``t`` (one check) or ``t, Bonferroni over k scenarios``.

    Examples
    --------
    >>> slowdown_noninferiority([1.0, 1.01, 0.99, 1.0, 1.0], [2.0, 2.1, 1.9, 2.0, 2.05], margin=0.05).outcome
    'fail'
    >>> slowdown_noninferiority([1.0, 1.01, 0.99, 1.0, 1.0], [2.0, 2.1, 1.9, 2.0, 2.05], margin=0.05,
    ...                         checks=2).confidence
    0.975
    """
    _check_common(margin, confidence, "margin")
    if checks < 1:
        raise ValueError(f"checks must be at least 1, not {checks}")
    level = 1.0 - (1.0 - confidence) / checks
    ratio = speed_ratio(
        time_candidate, time_baseline, confidence=level, n_resamples=n_resamples, seed=seed, method=interval
    )
    bound = 1.0 + margin
    outcome = decide(ratio.low, ratio.high, bound, higher_is_better=False)
    needed = None
    if outcome == "inconclusive":
        side = ratio.high if ratio.ratio <= bound else ratio.low  # the bound that must move past the margin
        spread, distance = abs(math.log(side / ratio.ratio)), abs(math.log(bound / ratio.ratio))
        if distance > 1e-12:
            needed = max(ratio.n_rounds + 1, math.ceil(ratio.n_rounds * (spread / distance) ** 2))
    name = "t" if interval == "t" else "anytime-valid"
    method = name if checks == 1 else f"{name}, Bonferroni over {checks} scenarios"
    return Decision(
        f"speed ({scenario})",
        outcome,
        ratio.ratio,
        ratio.low,
        ratio.high,
        bound,
        level,
        ratio.n_rounds,
        needed,
        margin,
        names,
        method=method,
    )


def capacity_noninferiority(
    baseline: Sequence[Any],
    candidate: Sequence[Any],
    *,
    margin: float,
    confidence: float = 0.95,
    scenario: str = "capacity",
    names: tuple[str, str] = ("baseline", "candidate"),
) -> Decision:
    """Does the candidate sustain less load than the baseline by more than ``margin``?

    ``baseline`` and ``candidate`` are the two models' seeded searches (``ServerSearch`` records, paired
    by search: the same seeds); the ratio candidate / baseline and its interval are the run's own
    capacity ratio (:func:`~headtohead.stats.server.compare_searches`: a t interval over the searches on
    the log scale, at least as wide as the brackets' resolution). The check fails when the whole interval
    lies below ``1 − margin``, passes when its lower bound is at or above it.

    Examples
    --------
    >>> from headtohead.results.server import ServerSearch
    >>> base = [ServerSearch(search=k, held_qps=48.0 + k, failed_qps=52.0 + k, estimate_qps=50.0 + k) for k in range(3)]
    >>> half = [ServerSearch(search=k, held_qps=24.0, failed_qps=26.0, estimate_qps=25.0 + k / 3) for k in range(3)]
    >>> capacity_noninferiority(base, half, margin=0.05).outcome
    'fail'
    """
    _check_common(margin, confidence, "margin")
    ratios = compare_searches([(names[0], baseline), (names[1], candidate)], confidence)
    check = "capacity" if scenario == "capacity" else f"capacity ({scenario})"
    if not ratios or ratios[0].ci_low is None or ratios[0].ci_high is None:
        return skipped_check(check, "no_capacity_interval")
    ratio = ratios[0]
    assert ratio.ci_low is not None and ratio.ci_high is not None
    bound = 1.0 - margin
    return Decision(
        check,
        decide(ratio.ci_low, ratio.ci_high, bound, higher_is_better=True),
        ratio.ratio,
        ratio.ci_low,
        ratio.ci_high,
        bound,
        confidence,
        ratio.n_searches,
        None,
        margin,
        names,
        method="t over seeded searches",
    )


def skipped_check(check: str, reason: str) -> Decision:
    """A check that could not run (e.g. no speed results); it does not change the exit code."""
    nan = float("nan")
    return Decision(check, "skipped", nan, nan, nan, nan, nan, 0, None, reason=reason)


def gate_exit_code(decisions: Sequence[Decision]) -> int:
    """1 if any check failed, else 3 if any was inconclusive, else 0.

    Examples
    --------
    >>> gate_exit_code([skipped_check("speed", "no speed results")])
    0
    """
    outcomes = {d.outcome for d in decisions}
    for outcome in ("fail", "inconclusive"):
        if outcome in outcomes:
            return EXIT_CODES[outcome]
    return EXIT_CODES["pass"]


def gate_decisions(
    result: RunResult | None,
    predictions: Predictions | None,
    *,
    baseline: str,
    candidate: str,
    accuracy_margin: float | None,
    slowdown_margin: float | None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    groups: np.ndarray | None = None,
    metric: str = "accuracy",
    capacity_margin: float | None = None,
) -> list[Decision]:
    """Every check the margins ask for, in order: accuracy, speed per timed scenario, then capacity.

    Parameters
    ----------
    result : RunResult or None
        The saved run (``None``: predictions alone, no speed check).
    predictions : Predictions or None
        Its per-example predictions (needed when ``accuracy_margin`` is given).
    baseline, candidate : str
        Model names.
    accuracy_margin, slowdown_margin : float or None
        The allowed accuracy drop and slowdown, as shares; ``None`` skips that check.
    confidence, n_resamples, seed
        Of the intervals (``n_resamples``/``seed``: the speed check's).
    groups : ndarray of shape (n,), optional
        Group of each prediction row (in the predictions' row order), when examples belong together.
    metric : str
        The quality check's metric: ``accuracy`` (Tango's score interval) or another catalogue name
        (:func:`metric_noninferiority`; ``max_accuracy_drop`` is then its allowed drop).
    capacity_margin : float or None
        The allowed capacity drop, as a share: the endpoints' goodput at their SLOs (scenario
        ``capacity``), else the Server scenario's ``max_qps`` (:func:`capacity_noninferiority`).

    Returns
    -------
    list of Decision
    """
    names = (baseline, candidate)
    decisions: list[Decision] = []
    if accuracy_margin is not None:
        if predictions is None:
            raise ValueError("an accuracy check needs the run's predictions")
        y_true = predictions.y_true
        if predictions[baseline].passes or predictions[candidate].passes:  # a model run several times
            decisions.append(
                repeats_noninferiority(
                    y_true,
                    predictions[baseline].pred,
                    predictions[candidate].pred,
                    metric=metric,
                    margin=accuracy_margin,
                    confidence=confidence,
                    names=names,
                    groups=groups,
                )
            )
        elif metric != "accuracy":
            base, cand = predictions[baseline], predictions[candidate]
            decisions.append(
                metric_noninferiority(
                    y_true,
                    (base.pred, base.proba),
                    (cand.pred, cand.proba),
                    metric=metric,
                    margin=accuracy_margin,
                    confidence=confidence,
                    n_resamples=n_resamples,
                    seed=seed,
                    names=names,
                    groups=groups,
                )
            )
        else:
            decisions.append(
                accuracy_noninferiority(
                    y_true,
                    predictions[baseline].pred,
                    predictions[candidate].pred,
                    margin=accuracy_margin,
                    confidence=confidence,
                    names=names,
                    groups=groups,
                )
            )
    if slowdown_margin is not None:
        speed = result.speed if result is not None else None
        timed = []
        if speed is not None:
            for scenario in ("offline", "single_stream"):
                base, cand = (_timing(speed, name, scenario) for name in names)
                # rounds the engine stopped when the ratio was known (speed.precision): read anytime-valid
                stopped = any(r.scenario == scenario and r.precision is not None for r in speed.scenarios)
                if base is not None and cand is not None:
                    timed.append((scenario, base, cand, stopped))
        if not timed:
            decisions.append(skipped_check("speed", "no_speed"))
        for scenario, base, cand, stopped in timed:
            # Each round's candidate / baseline ratio, paired by input as the run's own ratio is:
            # as times, the baseline at 1 and the candidate at that ratio.
            logs = round_log_ratios(cand.rounds_ns, base.rounds_ns, base.inputs)
            decisions.append(
                slowdown_noninferiority(
                    np.ones_like(logs),
                    np.exp(logs),
                    margin=slowdown_margin,
                    confidence=confidence,
                    n_resamples=n_resamples,
                    seed=seed,
                    scenario=scenario,
                    names=names,
                    checks=len(timed),
                    interval="anytime" if stopped else "t",
                )
            )
    if capacity_margin is not None:
        decisions.append(_capacity_check(result, names, capacity_margin, confidence))
    return decisions


def _capacity_check(result: RunResult | None, names: tuple[str, str], margin: float, confidence: float) -> Decision:
    """The capacity check on the endpoints' capacity records, else on the Server scenario's."""
    speed = result.speed if result is not None else None
    for scenario, part in (("capacity", "capacity"), ("server", "loadgen")):
        record = getattr(speed, part, None) if speed is not None else None
        found = [m for name in names for m in (record.models if record is not None else []) if m.name == name]
        if len(found) == 2:
            return capacity_noninferiority(
                found[0].searches,
                found[1].searches,
                margin=margin,
                confidence=confidence,
                scenario=scenario,
                names=names,
            )
    return skipped_check("capacity", "no_capacity")


def _timing(speed: Any, name: str, scenario: str) -> Any:
    try:
        return speed.model(name).timing(scenario)
    except KeyError:
        return None
