"""A run's speed comparisons as one family: Holm over every "faster" claim, and the checks behind a speed warning.

See ``docs/statistics.md`` §3 ("Faster" over a run).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from headtohead.results.server import LoadGenSummary, ServerComparison
from headtohead.results.speed import ScenarioRun, SpeedComparison, SpeedSummary
from headtohead.stats.multiple import holm_rows
from headtohead.stats.speed import round_log_ratios, round_medians, trend_test

__all__ = [
    "adjust_speed_family",
    "family_size",
    "noise_checks",
    "NoiseChecks",
    "RatioCheck",
    "LevelCheck",
    "drift_flags",
    "rounds_for_halfwidth",
    "UNDECIDED_HALFWIDTH",
    "RATIO_DRIFT",
    "LEVEL_DRIFT",
]

#: An undecided ratio whose interval is wider than ±this (unless ``speed.target_ci_halfwidth`` says
#: otherwise) cannot say whether the models are within 10 % of each other: a warning.
UNDECIDED_HALFWIDTH = 0.10
#: A significant trend of the per-round ratio that moved it by at least this much over the rounds: a warning.
RATIO_DRIFT = 0.05
#: A significant trend of the machine's level (all models together) of at least this much: a warning.
LEVEL_DRIFT = 0.10


def family_size(n_models: int, scenarios: Sequence[str]) -> int:
    """The most comparisons :func:`adjust_speed_family` can adjust over in a run: pairs × (timed scenarios + Server).

    The stopping rule splits α over this many (``stats.speed_sequence.settlement``) before the
    rounds are timed; where a Server pair ends with no p-value the family Holm adjusts over is
    smaller, and the split only the safer.

    Examples
    --------
    >>> family_size(2, ["offline", "single_stream"]), family_size(3, ["offline", "time_window", "server"])
    (2, 6)
    """
    pairs = n_models * (n_models - 1) // 2
    timed = sum(s in ("offline", "single_stream") for s in scenarios) + ("server" in scenarios)
    return max(1, pairs * timed)


def adjust_speed_family(
    scenarios: Sequence[ScenarioRun], loadgen: LoadGenSummary | None = None
) -> tuple[list[ScenarioRun], LoadGenSummary | None]:
    """Holm over every speed comparison of a run: ``p_adjusted``, ``n_speed_tests`` and the decision.

    Parameters
    ----------
    scenarios : sequence of ScenarioRun
        The timed scenarios, their comparisons carrying ``p_value``.
    loadgen : LoadGenSummary, optional
        The Server scenario: its capacity comparisons with a ``p_value`` (two searches or more)
        join the family.

    Returns
    -------
    scenarios, loadgen
        Copies with ``p_adjusted``/``n_speed_tests`` set and ``faster`` (``more``) naming a model
        only when ``p_adjusted ≤ 1 − confidence``. Comparisons without a p-value are left as they are.

    Examples
    --------
    >>> from headtohead.results.speed import SpeedComparison
    >>> def pair(p): return SpeedComparison(scenario="offline", model_a="a", model_b="b", ratio=1.05, ci_low=1.01,
    ...                                     ci_high=1.09, confidence=0.95, n_rounds=10, faster="b", p_value=p)
    >>> run = ScenarioRun(scenario="offline", batch_size=8, rounds=10, iterations_per_block=2,
    ...                   stop_reason="minimums_met", elapsed_s=1.0, round_orders=[],
    ...                   comparisons=[pair(0.03), pair(0.001), pair(0.04)])
    >>> [(c.faster, round(c.p_adjusted, 3), c.n_speed_tests) for c in adjust_speed_family([run])[0][0].comparisons]
    [(None, 0.06, 3), ('b', 0.003, 3), (None, 0.06, 3)]
    """
    speed = [c for run in scenarios for c in run.comparisons if c.p_value is not None]
    server = [c for c in loadgen.comparisons if c.p_value is not None] if loadgen is not None else []
    p_values = [c.p_value for c in speed] + [c.p_value for c in server]
    tested: list[SpeedComparison | ServerComparison] = [*speed, *server]
    adjusted = dict(zip(map(id, tested), holm_rows(np.array([p_values]))[0].tolist(), strict=True)) if p_values else {}
    n = len(p_values)

    def decided(c: SpeedComparison | ServerComparison, p_adj: float) -> str | None:
        # ratio > 1: b is faster (time a / time b) or holds more (max_qps b / max_qps a)
        return (c.model_b if c.ratio > 1.0 else c.model_a) if p_adj <= 1.0 - c.confidence and c.ratio != 1.0 else None

    def updated(c: SpeedComparison | ServerComparison, field: str) -> SpeedComparison | ServerComparison:
        if id(c) not in adjusted:
            return c
        return c.model_copy(
            update={"p_adjusted": adjusted[id(c)], "n_speed_tests": n, field: decided(c, adjusted[id(c)])}
        )

    runs = [
        run.model_copy(update={"comparisons": [updated(c, "faster") for c in run.comparisons]}) for run in scenarios
    ]
    if loadgen is not None and server:
        loadgen = loadgen.model_copy(update={"comparisons": [updated(c, "more") for c in loadgen.comparisons]})
    return runs, loadgen


@dataclass(frozen=True)
class RatioCheck:
    """What the noise did to one pair's speed ratio in one scenario.

    Attributes
    ----------
    scenario, model_a, model_b : str
    ratio, low, high : float
        ``time(a) / time(b)`` and its interval, as the comparison holds them.
    confidence : float
    n_rounds : int
    halfwidth : float
        The interval's relative half-width (``0.08``: ±8 %).
    decided : bool
        A model was named faster (after Holm where the record was adjusted), or the stopping rule
        decided the ratio against ``speed.margin`` (``SpeedComparison.settled``): within the
        margin, the two are known to differ by less than it, not "undecided".
    too_wide : bool
        Rule 1: undecided and ``halfwidth > limit``.
    rounds_needed : int or None
        About how many rounds would bring the half-width to ``limit`` when ``too_wide``.
    drift : float
        The fitted change of the ratio from the first round to the last (``0.07``: +7 %).
    drift_p, drift_p_adjusted : float
        The trend test's p-value, and Holm's over the run's drift tests (NaN: too few rounds).
    drifted : bool
        Rule 2: ``drift_p_adjusted ≤ α`` and ``|drift| ≥ RATIO_DRIFT``.
    """

    scenario: str
    model_a: str
    model_b: str
    ratio: float
    low: float
    high: float
    confidence: float
    n_rounds: int
    halfwidth: float
    decided: bool
    too_wide: bool
    rounds_needed: int | None
    drift: float
    drift_p: float
    drift_p_adjusted: float
    drifted: bool


@dataclass(frozen=True)
class LevelCheck:
    """Rule 3 for one scenario: did the machine's level (all models' round medians together) drift?"""

    scenario: str
    models: tuple[str, ...]
    n_rounds: int
    change: float
    p_value: float
    p_adjusted: float
    drifted: bool


@dataclass(frozen=True)
class NoiseChecks:
    """Every check of a speed measurement's noise, and the settings they were judged by."""

    alpha: float
    limit: float
    ratios: list[RatioCheck]
    levels: list[LevelCheck]
    n_drift_tests: int

    @property
    def threatened(self) -> bool:
        """Whether any rule fired."""
        return any(r.too_wide or r.drifted for r in self.ratios) or any(lv.drifted for lv in self.levels)


def rounds_for_halfwidth(n_rounds: int, halfwidth: float, limit: float) -> int:
    """About how many rounds bring a relative half-width down to ``limit`` (it shrinks as 1/√rounds).

    Examples
    --------
    >>> rounds_for_halfwidth(10, 0.2, 0.1)
    37
    """
    spread, target = math.log1p(halfwidth), math.log1p(limit)
    return max(n_rounds + 1, math.ceil(n_rounds * (spread / target) ** 2))


def drift_flags(
    ratio_changes: np.ndarray, ratio_p: np.ndarray, level_changes: np.ndarray, level_p: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rules 2 and 3 for one run: Holm over all its drift tests, then the size each rule asks for.

    Parameters
    ----------
    ratio_changes, ratio_p : ndarray of shape (n_ratios,)
        Each comparison's fitted ratio change and trend p-value.
    level_changes, level_p : ndarray of shape (n_levels,)
        Each scenario's fitted level change and trend p-value.
    alpha : float

    Returns
    -------
    ratio_adjusted, ratio_drifted, level_adjusted, level_drifted : ndarray
        Holm-adjusted p-values (NaN where the test could not run) and the rules' verdicts.
    """
    p = np.concatenate([np.asarray(ratio_p, float), np.asarray(level_p, float)])
    adjusted = holm_rows(p[None, :])[0] if p.size else p
    k = len(ratio_p)
    ratio_adjusted, level_adjusted = adjusted[:k], adjusted[k:]
    with np.errstate(invalid="ignore"):
        ratio_drifted = (ratio_adjusted <= alpha) & (np.abs(ratio_changes) >= RATIO_DRIFT)
        level_drifted = (level_adjusted <= alpha) & (np.abs(level_changes) >= LEVEL_DRIFT)
    return ratio_adjusted, ratio_drifted, level_adjusted, level_drifted


def _order_covariate(orders: Sequence[Sequence[str]], a: str, b: str, n_rounds: int) -> np.ndarray | None:
    """``+1`` in rounds where ``a`` ran before ``b``, ``−1`` where after (``None`` when the orders are not known)."""
    if len(orders) != n_rounds or any(a not in o or b not in o for o in orders):
        return None
    return np.array([1.0 if list(o).index(a) < list(o).index(b) else -1.0 for o in orders])


def noise_checks(summary: SpeedSummary) -> NoiseChecks:
    """The three rules of the module docstring, judged on a speed record's raw rounds.

    Computed from the record each time it is read (the per-round medians of every model, the
    comparisons, the round orders), so results of earlier versions are judged by the same rules.

    Parameters
    ----------
    summary : SpeedSummary

    Returns
    -------
    NoiseChecks
    """
    settings = summary.settings or {}
    confidence = float(settings.get("confidence") or 0.95)
    alpha = 1.0 - confidence
    limit = float(settings.get("target_ci_halfwidth") or settings.get("precision") or UNDECIDED_HALFWIDTH)
    pending_ratios, ratio_trends, level_rows, level_trends = [], [], [], []
    for run in summary.scenarios:
        logs, timings = {}, {}
        for model in summary.models:
            timing = model.timing(run.scenario)
            if timing is not None and timing.rounds_ns and all(timing.rounds_ns):
                logs[model.name] = np.log(round_medians(timing.rounds_ns))
                timings[model.name] = timing
        lengths = {len(v) for v in logs.values()}
        if len(lengths) != 1 or lengths.pop() < 3:
            continue
        for c in run.comparisons:
            if c.model_a not in logs or c.model_b not in logs:
                continue
            a, b = timings[c.model_a], timings[c.model_b]
            series = round_log_ratios(a.rounds_ns, b.rounds_ns, a.inputs)  # the rounds the ratio was built from
            pending_ratios.append(c)
            ratio_trends.append(
                trend_test(series, _order_covariate(run.round_orders, c.model_a, c.model_b, len(series)))
            )
        level_rows.append((run.scenario, tuple(logs), len(next(iter(logs.values())))))
        level_trends.append(trend_test(np.mean(np.array(list(logs.values())), axis=0)))
    ratio_adj, ratio_drifted, level_adj, level_drifted = drift_flags(
        np.array([t.change for t in ratio_trends]),
        np.array([t.p_value for t in ratio_trends]),
        np.array([t.change for t in level_trends]),
        np.array([t.p_value for t in level_trends]),
        alpha,
    )
    ratios = []
    for c, trend, p_adj, drifted in zip(pending_ratios, ratio_trends, ratio_adj, ratio_drifted, strict=True):
        halfwidth = max(c.ci_high / c.ratio - 1.0, 1.0 - c.ci_low / c.ratio)
        decided = c.faster is not None or c.settled in ("beyond_margin", "within_margin")
        too_wide = not decided and halfwidth > limit
        ratios.append(
            RatioCheck(
                c.scenario,
                c.model_a,
                c.model_b,
                c.ratio,
                c.ci_low,
                c.ci_high,
                c.confidence,
                c.n_rounds,
                halfwidth,
                decided,
                too_wide,
                rounds_for_halfwidth(c.n_rounds, halfwidth, limit) if too_wide else None,
                float(trend.change),
                float(trend.p_value),
                float(p_adj),
                bool(drifted),
            )
        )
    levels = [
        LevelCheck(scenario, models, n, float(t.change), float(t.p_value), float(p_adj), bool(drifted))
        for (scenario, models, n), t, p_adj, drifted in zip(
            level_rows, level_trends, level_adj, level_drifted, strict=True
        )
    ]
    n_tests = int(np.isfinite(np.array([float(t.p_value) for t in ratio_trends + level_trends])).sum())
    return NoiseChecks(alpha, limit, ratios, levels, n_tests)
