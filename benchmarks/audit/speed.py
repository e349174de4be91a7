"""The statistical audit's speed section: speed-ratio intervals, "faster" over a run's family, the gate, warnings.

Every benchmark is simulated as the engine runs it (:func:`sim.latency.simulate_model_rounds` (``benchmarks/sim/latency.py``):
log-normal calls with spikes, a random walk of the machine's level shared by every model that goes
on within a round, a per-block offset; the models in Williams orders) and judged with the
statistics a run uses, vectorised over the simulated benchmarks (``tests/stats/test_speed_family.py``
checks that these judges equal the records' own code on simulated runs). Machines:

* ``steady``: the level varies 2 % from round to round around a steady level (a quiet machine);
* ``drifting``: it wanders as a random walk, 5 % per round, and every call gets 2 % slower each
  round (throttling), within rounds too.

Rows (α = 0.05, 95 % intervals; "before" is the rule of ``main`` before issue 23, from the same
simulated benchmarks):

* coverage of the speed ratio's t interval (true ratio 1.1 between the first two models; the
  interval is unchanged by the issue, so "before" is empty);
* the family-wise rate of a false "faster" when every model is identical: Holm over pairs ×
  scenarios now, each interval on its own before;
* the gate's speed checks at the margin (a candidate 5 % slower with a 5 % margin): a false fail
  when it is at the margin in every scenario, a false pass when it is at the margin in one
  (nominal α/2 each): Bonferroni intervals over the scenarios now, 95 % intervals before;
* a drift warning (a tested trend of a ratio or of the machine's level, Holm over the run's drift
  tests) on a steady benchmark with identical models; before: the repeat-noise warning
  (IQR/median of repeated calls above 10 % for any model and scenario).

``speed_rows(quick=True)`` runs a reduced grid in a few seconds.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
from sim.latency import SimulatedRounds, simulate_model_rounds

from audit.common import grid_seed
from headtohead.stats.multiple import holm_rows as holm
from headtohead.stats.speed import log_ratio_t_test, trend_test
from headtohead.stats.speed_family import LEVEL_DRIFT, RATIO_DRIFT, UNDECIDED_HALFWIDTH

__all__ = [
    "speed_rows",
    "MACHINES",
    "simulate",
    "faster_p_values",
    "warning_rules",
    "gate_outcomes",
    "OLD_NOISE_THRESHOLD",
]

ALPHA = 0.05
CALLS = 20
#: The repeat-noise threshold of the warning before issue 23 (IQR / median of repeated calls).
OLD_NOISE_THRESHOLD = 0.10
#: Machine → the simulator's drift settings.
MACHINES: dict[str, dict[str, float]] = {
    "steady": {"round_drift": 0.0, "round_sigma": 0.02},
    "drifting": {"round_drift": 0.05, "trend": 0.02},
}
MARGIN = 0.05


def simulate(
    n_models: int,
    n_rounds: int,
    n_scenarios: int,
    n_sims: int,
    machine: str | dict,
    seed: int,
    calls: int = CALLS,
    **extra: object,
) -> list[SimulatedRounds]:
    """One :class:`SimulatedRounds` per scenario (independent, as a run's scenarios run one after the other)."""
    settings = MACHINES[machine] if isinstance(machine, str) else machine
    return [
        simulate_model_rounds(
            n_models,
            n_rounds,
            n_sims=n_sims,
            calls_per_block=calls,
            seed=np.random.SeedSequence([seed, s]).generate_state(1)[0],
            **{**settings, **extra},
        )  # type: ignore[arg-type]
        for s in range(n_scenarios)
    ]


def _pairs(k: int) -> list[tuple[int, int]]:
    return list(combinations(range(k), 2))


def faster_p_values(
    scenarios: list[SimulatedRounds], confidence: float = 1 - ALPHA
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every comparison of each benchmark (pairs × scenarios): mean log ratio, t half-width, p-value.

    Arrays of shape ``(n_sims, n_pairs · n_scenarios)``, pairs in the engine's order (``i < j``)
    within each scenario.
    """
    centres, halves, ps = [], [], []
    for sim in scenarios:
        logs = np.log(sim.medians)
        for i, j in _pairs(logs.shape[1]):
            centre, half, p = log_ratio_t_test(logs[:, i] - logs[:, j], confidence)
            centres.append(centre)
            halves.append(half)
            ps.append(p)
    return np.stack(centres, 1), np.stack(halves, 1), np.stack(ps, 1)


def warning_rules(
    scenarios: list[SimulatedRounds], *, alpha: float = ALPHA, limit: float = UNDECIDED_HALFWIDTH
) -> dict[str, np.ndarray]:
    """The three warning rules of :mod:`headtohead.stats.speed_family` for every simulated benchmark.

    Returns
    -------
    dict of str to ndarray of shape (n_sims,)
        ``too_wide`` (rule 1, any comparison), ``ratio_drift`` (rule 2), ``level_drift`` (rule 3),
        ``any`` (a warning at all), ``old`` (the repeat-noise warning before issue 23).
    """
    centre, half, p = faster_p_values(scenarios, 1 - alpha)
    decided = holm(p) <= alpha
    too_wide = ~decided & (np.expm1(half) > limit)
    ratio_p, ratio_change, level_p, level_change = [], [], [], []
    for sim in scenarios:
        logs = np.log(sim.medians)
        n = logs.shape[2]
        for i, j in _pairs(logs.shape[1]):
            order = np.array([1.0 if o.index(i) < o.index(j) else -1.0 for o in sim.orders[:n]])
            t = trend_test(logs[:, i] - logs[:, j], order)
            ratio_p.append(t.p_value)
            ratio_change.append(t.change)
        t = trend_test(logs.mean(axis=1))
        level_p.append(t.p_value)
        level_change.append(t.change)
    adjusted = holm(np.column_stack(ratio_p + level_p))
    k = len(ratio_p)
    ratio_drift = ((adjusted[:, :k] <= alpha) & (np.abs(np.column_stack(ratio_change)) >= RATIO_DRIFT)).any(axis=1)
    level_drift = ((adjusted[:, k:] <= alpha) & (np.abs(np.column_stack(level_change)) >= LEVEL_DRIFT)).any(axis=1)
    too_wide = too_wide.any(axis=1)
    old = np.column_stack([sim.repeat_noise.max(axis=1) for sim in scenarios]).max(axis=1) > OLD_NOISE_THRESHOLD
    return {
        "too_wide": too_wide,
        "ratio_drift": ratio_drift,
        "level_drift": level_drift,
        "any": too_wide | ratio_drift | level_drift,
        "old": old,
    }


def gate_outcomes(
    scenarios: list[SimulatedRounds], margin: float = MARGIN, confidence: float = 1 - ALPHA
) -> dict[str, np.ndarray]:
    """The gate's speed decision of every benchmark (model 0 baseline, model 1 candidate), before and after.

    ``fail``: any scenario's interval lies wholly above ``1 + margin``; ``pass``: every scenario's
    interval lies at or below it. Before: each at ``confidence``; after: each at
    ``1 − (1 − confidence) / n_scenarios`` (:func:`headtohead.stats.gate.slowdown_noninferiority`).
    """
    bound = math.log1p(margin)
    out = {}
    for when, level in (("before", confidence), ("after", 1 - (1 - confidence) / len(scenarios))):
        lows, highs = [], []
        for sim in scenarios:
            logs = np.log(sim.medians)
            centre, half, _ = log_ratio_t_test(logs[:, 1] - logs[:, 0], level)  # time candidate / baseline
            lows.append(centre - half)
            highs.append(centre + half)
        out[f"fail_{when}"] = (np.column_stack(lows) > bound).any(axis=1)
        out[f"pass_{when}"] = (np.column_stack(highs) <= bound).all(axis=1)
    return out


def _row(
    quantity: str, setting: str, kind: str, nominal: float, hits: np.ndarray, before: np.ndarray | None = None
) -> dict:
    rate = float(np.mean(hits))
    runs = int(hits.size)
    return {
        "section": "speed",
        "quantity": quantity,
        "setting": setting,
        "kind": kind,
        "nominal": nominal,
        "before": None if before is None else float(np.mean(before)),
        "after": rate,
        "mc_se": math.sqrt(max(rate * (1 - rate), 1e-12) / runs),
        "runs": runs,
    }


def _setting(rounds: int, k: int | None, s: int | None, machine: str) -> str:
    parts = [f"{rounds} rounds", f"{CALLS} calls per block"]
    if k is not None:
        parts.append(f"{k} models")
    if s is not None:
        parts.append(f"{s} scenario{'s' if s != 1 else ''}")
    return ", ".join(parts) + f", {machine} machine"


def speed_rows(quick: bool = False, seed: int = 0) -> list[dict]:
    """Every row of the speed section (see the module docstring), seeded.

    Parameters
    ----------
    quick : bool
        The reduced grid (5 and 20 rounds; 2 and 5 models; 2 scenarios; fewer benchmarks): a few seconds.
    seed : int

    Returns
    -------
    list of dict
        Keys ``section, quantity, setting, kind, nominal, before, after, mc_se, runs``.
    """
    rounds_grid = (5, 20) if quick else (5, 10, 20)
    models_grid = (2, 5) if quick else (2, 3, 5)
    scenario_grid = (2,) if quick else (1, 2)
    n_sims = 1200 if quick else 10_000
    rows: list[dict] = []
    for m_index, machine in enumerate(MACHINES):
        for rounds in rounds_grid:
            for k in models_grid:
                # coverage: a known ratio of 1.1 between consecutive models, the first pair's interval
                sims = simulate(
                    k,
                    rounds,
                    1,
                    n_sims,
                    machine,
                    seed=grid_seed(seed, m_index, rounds, k, 0),
                    factors=1.1 ** np.arange(k),
                )
                centre, half, _ = faster_p_values(sims)
                truth = -math.log(1.1)  # log(time 0 / time 1)
                covered = np.abs(centre[:, 0] - truth) <= half[:, 0]
                rows.append(
                    _row(
                        "speed ratio 95 % t interval",
                        _setting(rounds, k, None, machine),
                        "coverage",
                        1 - ALPHA,
                        covered,
                    )
                )
                for s in scenario_grid:
                    sims = simulate(k, rounds, s, n_sims, machine, seed=grid_seed(seed, m_index, rounds, k, s))
                    _, _, p = faster_p_values(sims)
                    rows.append(
                        _row(
                            "'faster' family-wise, Holm over pairs × scenarios",
                            _setting(rounds, k, s, machine),
                            "error",
                            ALPHA,
                            (holm(p) <= ALPHA).any(axis=1),
                            before=(p <= ALPHA).any(axis=1),
                        )
                    )
                    if machine == "steady":
                        rules = warning_rules(sims)
                        rows.append(
                            _row(
                                "drift warning on a steady benchmark (Holm over the run's drift tests)",
                                _setting(rounds, k, s, machine),
                                "error",
                                ALPHA,
                                rules["ratio_drift"] | rules["level_drift"],
                                before=rules["old"],
                            )
                        )
            for s in scenario_grid if quick else (1, 2):
                base = grid_seed(seed, m_index, rounds, 99, s)
                at_margin = gate_outcomes(
                    simulate(2, rounds, s, n_sims, machine, seed=base, factors=[1.0, 1.0 + MARGIN])
                )
                rows.append(
                    _row(
                        "gate slowdown false fail at the margin",
                        _setting(rounds, None, s, machine),
                        "error",
                        ALPHA / 2,
                        at_margin["fail_after"],
                        before=at_margin["fail_before"],
                    )
                )
                one_slow = simulate(2, rounds, 1, n_sims, machine, seed=base + 1, factors=[1.0, 1.0 + MARGIN])
                fine = simulate(2, rounds, s - 1, n_sims, machine, seed=base + 2, factors=[1.0, 1.0]) if s > 1 else []
                passed = gate_outcomes(one_slow + fine)
                rows.append(
                    _row(
                        "gate slowdown false pass at the margin",
                        _setting(rounds, None, s, machine),
                        "error",
                        ALPHA / 2,
                        passed["pass_after"],
                        before=passed["pass_before"],
                    )
                )
    return rows
