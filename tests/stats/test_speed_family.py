"""A run's speed comparisons as one family: Holm over "faster", the gate's scenarios, and when noise is a warning.

The simulated benchmarks are :func:`sim.latency.simulate_model_rounds` (``benchmarks/sim/latency.py``) (log-normal
calls with spikes, machine drift shared by the models, Williams orders); the records are made by
:func:`sim.latency.speed_summary_from_rounds` (``benchmarks/sim/latency.py``) with the engine's own functions.
"""

from __future__ import annotations

import math
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from sim.latency import simulate_model_rounds, speed_summary_from_rounds

from headtohead.report.words.server import server_sentence
from headtohead.report.words.speed import speed_sentence
from headtohead.report.words.warnings import instability_warnings, speed_warnings
from headtohead.results.server import LoadGenSummary, ServerComparison
from headtohead.results.speed import SpeedComparison
from headtohead.stats.gate import gate_decisions, slowdown_noninferiority
from headtohead.stats.multiple import holm_rows
from headtohead.stats.speed import log_ratio_t_test
from headtohead.stats.speed_family import adjust_speed_family, noise_checks

STEADY = {"round_drift": 0.0, "round_sigma": 0.02}
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _p_values(scenarios: list[np.ndarray]) -> np.ndarray:
    """Every comparison's t-test p-value (benchmarks × pairs·scenarios), as the engine computes them."""
    out = []
    for medians in scenarios:
        logs = np.log(medians)
        out += [log_ratio_t_test(logs[:, i] - logs[:, j])[2] for i, j in combinations(range(logs.shape[1]), 2)]
    return np.column_stack(out)


def test_holm_rows_equal_statsmodels_and_leave_untested_entries_out():
    from statsmodels.stats.multitest import multipletests

    p = np.random.default_rng(0).random((12, 8)) ** 3  # multipletests costs ~0.1 s a call here
    p[p > 0.85] = np.nan
    adjusted = holm_rows(p)
    for raw, adj in zip(p, adjusted):
        tested = np.isfinite(raw)
        assert np.all(np.isnan(adj[~tested]))
        if tested.any():
            np.testing.assert_allclose(adj[tested], multipletests(raw[tested], method="holm")[1], rtol=1e-12)


def test_holm_keeps_the_family_wise_false_faster_rate_at_alpha_with_five_models_and_two_scenarios():
    """Five identical models, two scenarios: 20 comparisons per run. Unadjusted, about half of all
    runs call some model faster; after Holm over all 20, at most α (within Monte-Carlo error)."""
    n = 2000
    scenarios = [simulate_model_rounds(5, 10, n_sims=n, seed=seed, **STEADY).medians for seed in (1, 2)]
    p = _p_values(scenarios)
    assert p.shape == (n, 20)
    unadjusted = (p <= 0.05).any(axis=1).mean()
    holm = (holm_rows(p) <= 0.05).any(axis=1).mean()
    se = math.sqrt(0.05 * 0.95 / n)
    assert holm <= 0.05 + 2.5 * se, holm
    assert unadjusted > 0.3, unadjusted  # the test can fail: without the adjustment the rate is far above α


def test_the_records_decide_faster_as_the_simulation_does():
    """The engine's path (speed_ratio per pair, adjust_speed_family over the run) equals the vectorised judge."""
    sims = [simulate_model_rounds(4, 6, n_sims=40, factors=[1.0, 1.03, 1.06, 1.0], seed=s, **STEADY) for s in (3, 4)]
    adjusted = holm_rows(_p_values([s.medians for s in sims]))
    for b in range(40):
        summary = speed_summary_from_rounds(
            {"offline": sims[0].medians[b], "single_stream": sims[1].medians[b]}, sims[0].orders
        )
        comparisons = [c for run in summary.scenarios for c in run.comparisons]
        assert [c.n_speed_tests for c in comparisons] == [12] * 12
        np.testing.assert_allclose([c.p_adjusted for c in comparisons], adjusted[b], rtol=1e-9)
        assert [c.faster is not None for c in comparisons] == list(adjusted[b] <= 0.05)


def _pair(p: float, ratio: float = 1.05, low: float = 1.01, high: float = 1.09) -> SpeedComparison:
    return SpeedComparison(
        scenario="offline",
        model_a="a",
        model_b="b",
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        confidence=0.95,
        n_rounds=10,
        faster="b" if low > 1 else None,
        p_value=p,
    )


def test_the_family_spans_scenarios_and_server_capacities_and_is_worded():
    from headtohead.results.speed import ScenarioRun

    run = ScenarioRun(
        scenario="offline",
        batch_size=8,
        rounds=10,
        iterations_per_block=2,
        stop_reason="minimums_met",
        elapsed_s=1.0,
        round_orders=[],
        comparisons=[_pair(0.001), _pair(0.03)],
    )
    capacity = ServerComparison(
        model_a="a",
        model_b="b",
        ratio=1.2,
        ci_low=1.05,
        ci_high=1.37,
        confidence=0.95,
        n_searches=3,
        more="b",
        p_value=0.02,
    )
    one_search = capacity.model_copy(
        update={"ci_low": None, "ci_high": None, "n_searches": 1, "more": None, "p_value": None}
    )
    loadgen = LoadGenSummary(
        loadgen_version="5",
        latency_bound_ms=50.0,
        settings={},
        log_dir=None,
        seed=0,
        comparisons=[capacity, one_search],
    )
    runs, adjusted = adjust_speed_family([run], loadgen)
    first, second = runs[0].comparisons
    server, untested = adjusted.comparisons
    assert (first.n_speed_tests, second.n_speed_tests, server.n_speed_tests) == (3, 3, 3)
    assert first.faster == "b" and first.p_adjusted == pytest.approx(0.003)
    # raw p = 0.03 with an interval that excludes 1, but Holm over 3 comparisons gives 0.04 ≤ 0.05 for the
    # capacity (second smallest) and 0.04 for this one too: the step-down keeps both
    assert second.p_adjusted == pytest.approx(0.04) and second.faster == "b"
    assert server.p_adjusted == pytest.approx(0.04) and server.more == "b"
    assert untested == one_search  # no p-value (one search): left out of the family, as it was
    tight = adjust_speed_family([run.model_copy(update={"comparisons": [_pair(0.001), _pair(0.03), _pair(0.04)]})])
    not_after = tight[0][0].comparisons[2]
    assert not_after.faster is None and not_after.ci_low > 1  # the interval alone excludes 1 …
    sentence = speed_sentence(not_after)
    assert sentence.startswith("no significant difference between a and b after Holm over 3 speed comparisons")
    assert "faster" not in sentence and "Holm p = 0.06" in sentence
    assert "Holm p = 0.040 over 3 speed comparisons" in server_sentence(server, 50.0)


def test_results_without_p_values_read_and_read_as_before():
    old = _pair(0.001).model_copy(update={"p_value": None})
    assert SpeedComparison.model_validate(old.model_dump(exclude={"p_value", "p_adjusted", "n_speed_tests"})) == old
    assert speed_sentence(old) == "b is 1.05× faster than a (95 % CI 1.01–1.09)"
    runs, _ = adjust_speed_family([])
    assert runs == []


def _warnings_over(n: int, **simulation) -> list[list[str]]:
    scenarios = simulation.pop("scenarios", 1)
    sims = [simulate_model_rounds(n_sims=n, seed=10 + s, **simulation) for s in range(scenarios)]
    names = ("offline", "single_stream")[:scenarios]
    return [
        instability_warnings(
            speed_summary_from_rounds({name: sim.medians[b] for name, sim in zip(names, sims)}, sims[0].orders)
        )
        for b in range(n)
    ]


def test_the_warning_is_silent_on_a_steady_benchmark():
    """Three identical models, two scenarios, 10 rounds on a steady machine; each call's repeat noise is
    about 14 % (the old warning fired on every such run), yet the ratios are settled."""
    n = 150
    fired = np.array([bool(w) for w in _warnings_over(n, n_models=3, n_rounds=10, scenarios=2, **STEADY)])
    assert fired.mean() <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / n), fired.mean()
    sim = simulate_model_rounds(3, 10, seed=5, **STEADY)
    assert sim.repeat_noise.min() > 0.10
    assert speed_warnings(speed_summary_from_rounds({"offline": sim.medians[0]}, sim.orders)) == []


def test_the_warning_fires_when_the_ratio_drifts():
    found = _warnings_over(40, n_models=2, n_rounds=20, model_trends=[0.02, 0.0], **STEADY)
    drifted = [any("the time ratio m0/m1 drifted +" in w for w in ws) for ws in found]
    assert np.mean(drifted) >= 0.9


def test_the_warning_fires_when_the_machine_drifts():
    found = _warnings_over(40, n_models=2, n_rounds=20, round_drift=0.0, round_sigma=0.02, trend=0.02)
    rose = [any("the latency drifted — the models' mean latency rose" in w for w in ws) for ws in found]
    assert np.mean(rose) >= 0.9
    # a drift the models share cancels in their ratio: the ratio-drift rule stays at its false-alarm rate
    assert np.mean([any("the time ratio" in w for w in ws) for ws in found]) <= 0.15


def test_the_warning_fires_when_the_interval_is_too_wide_to_decide():
    found = _warnings_over(40, n_models=2, n_rounds=6, call_sigma=0.3, calls_per_block=8, **STEADY)
    undecided = [w for ws in found for w in ws if "is undecided" in w]
    assert len(undecided) >= 34
    assert "wider than ±10 %" in undecided[0] and "rounds would narrow it to ±10 %" in undecided[0]


def test_a_target_halfwidth_is_the_limit_of_the_undecided_rule():
    sim = simulate_model_rounds(2, 10, seed=8, **STEADY)
    summary = speed_summary_from_rounds({"offline": sim.medians[0]}, sim.orders, target_ci_halfwidth=0.005)
    (check,) = noise_checks(summary).ratios
    assert check.too_wide and check.halfwidth > 0.005 and check.rounds_needed > 10
    assert any("wider than ±0.5 %" in w for w in instability_warnings(summary))


def test_the_audit_judges_the_warnings_as_the_records_do():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from audit.speed import simulate, warning_rules
    finally:
        sys.path.remove(str(BENCHMARKS))
    sims = simulate(3, 8, 2, 30, {"round_drift": 0.03, "trend": 0.01}, seed=4, model_trends=[0.01, 0.0, 0.0])
    rules = warning_rules(sims)
    for b in range(30):
        checks = noise_checks(
            speed_summary_from_rounds(
                {"offline": sims[0].medians[b], "single_stream": sims[1].medians[b]}, sims[0].orders
            )
        )
        assert rules["too_wide"][b] == any(r.too_wide for r in checks.ratios)
        assert rules["ratio_drift"][b] == any(r.drifted for r in checks.ratios)
        assert rules["level_drift"][b] == any(lv.drifted for lv in checks.levels)
    assert 0 < rules["any"].sum() < 30  # both outcomes exercised


def test_the_gate_reads_its_speed_checks_off_bonferroni_intervals_and_holds_its_false_fail_rate():
    """A candidate exactly 5 % slower, margin 5 %, two scenarios: each 95 % check fails 2.5 % of the time, so
    the gate (which fails if either does) would fail ~5 %; on Bonferroni intervals it stays ≤ 2.5 %."""
    n = 1500
    sims = [
        simulate_model_rounds(2, 10, n_sims=n, factors=[1.0, 1.05], seed=20 + s, **STEADY).medians for s in range(2)
    ]

    def fails(checks: int) -> np.ndarray:
        return np.array(
            [
                any(
                    slowdown_noninferiority(sim[b, 0], sim[b, 1], margin=0.05, checks=checks).outcome == "fail"
                    for sim in sims
                )
                for b in range(n)
            ]
        )

    before, after = fails(1).mean(), fails(2).mean()
    assert after <= 0.025 + 2.5 * math.sqrt(0.025 * 0.975 / n), after
    assert before > after


def test_gate_decisions_count_the_scenarios():
    from types import SimpleNamespace

    sim = simulate_model_rounds(2, 10, seed=9, **STEADY)
    speed = speed_summary_from_rounds(
        {"offline": sim.medians[0], "single_stream": sim.medians[0]}, sim.orders, names=["a", "b"]
    )
    result = SimpleNamespace(speed=speed)  # all the speed checks read
    decisions = gate_decisions(
        result,
        None,
        baseline="a",
        candidate="b",  # type: ignore[arg-type]
        accuracy_margin=None,
        slowdown_margin=0.5,
    )
    assert [d.check for d in decisions] == ["speed (offline)", "speed (single_stream)"]
    assert all(d.confidence == pytest.approx(0.975) and d.method == "t, Bonferroni over 2 scenarios" for d in decisions)
    from headtohead.report.words.gate import decision_explanation

    assert "97.5 % CI" in decision_explanation(decisions[0]) and "Bonferroni over 2 scenarios" in decision_explanation(
        decisions[0]
    )


@pytest.mark.slow
def test_the_speed_audit_quick_grid_meets_its_targets_and_shows_what_was_wrong():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from audit.common import as_rows
        from audit.speed import speed_rows
    finally:
        sys.path.remove(str(BENCHMARKS))
    raw = speed_rows(quick=True, seed=0)
    assert all(
        set(r) == {"section", "quantity", "setting", "kind", "nominal", "before", "after", "mc_se", "runs"} for r in raw
    )
    rows = as_rows(raw)
    missed = [f"{r.quantity} [{r.setting}] {r.after:.3f}" for r in rows if not r.met]
    assert not missed, missed
    holm = [r for r in rows if r.quantity.startswith("'faster'") and "5 models, 2 scenarios" in r.setting]
    assert holm and all(r.before > 0.3 and r.after <= 0.06 for r in holm)
    gate = [r for r in rows if r.quantity == "gate slowdown false fail at the margin"]
    assert gate and all(r.before > r.after for r in gate)
    assert {r.kind for r in rows} == {"coverage", "error"}


def test_the_gate_reads_rounds_stopped_by_the_rule_with_the_anytime_interval():
    from types import SimpleNamespace

    from headtohead.stats.speed import round_log_ratios, speed_ratio

    sim = simulate_model_rounds(2, 10, seed=9, **STEADY)
    speed = speed_summary_from_rounds({"offline": sim.medians[0]}, sim.orders, names=["a", "b"])
    stopped = speed.model_copy(
        update={"scenarios": [r.model_copy(update={"precision": 0.05}) for r in speed.scenarios]}
    )  # the engine stopped these rounds when the ratio was known to ±5 %
    (fixed,) = gate_decisions(
        SimpleNamespace(speed=speed), None, baseline="a", candidate="b", accuracy_margin=None, slowdown_margin=0.5
    )
    (anytime,) = gate_decisions(
        SimpleNamespace(speed=stopped), None, baseline="a", candidate="b", accuracy_margin=None, slowdown_margin=0.5
    )
    assert fixed.method == "t" and anytime.method == "anytime-valid"
    a, b = speed.model("a").offline, speed.model("b").offline
    logs = round_log_ratios(b.rounds_ns, a.rounds_ns, a.inputs)
    expected = speed_ratio(np.exp(logs), np.ones_like(logs), method="anytime")
    assert (anytime.low, anytime.high) == pytest.approx((expected.low, expected.high))
    assert anytime.high - anytime.low > fixed.high - fixed.low  # wider: it holds at any stopping round


def test_every_ratio_the_stop_decides_beyond_the_margin_is_named_faster_by_holm():
    """The stop reads the margin at 1 − α/m, so Holm over the m comparisons names every such ratio; at 1 − α it
    would not (the demo's contradiction, counted here on 4,000 families of noisy stopped-looking rounds)."""
    from headtohead.stats.speed_sequence import BEYOND_MARGIN, confidence_sequence, settlement

    rng = np.random.default_rng(3)
    for m in (2, 3, 6):
        logs = rng.normal(rng.uniform(-1.5, 1.5, (4000, m, 1)), 0.7, (4000, m, 8))  # 8 rounds, σ = 0.7
        p = confidence_sequence(logs, 0.95)[2]
        named = holm_rows(p) <= 0.05
        now = settlement(logs, 0.95, 0.05, 0.10, tests=m) == BEYOND_MARGIN
        before = settlement(logs, 0.95, 0.05, 0.10, tests=1) == BEYOND_MARGIN
        assert now.sum() > 1000 and not (now & ~named).any()
        assert (before & ~named).sum() > 10  # reading the margin at each ratio's own 95 % parts from the verdict


def test_the_family_the_stop_splits_alpha_over_is_the_one_holm_adjusts_over():
    from headtohead.stats.speed_family import family_size

    assert family_size(2, ["offline"]) == 1 and family_size(2, ["offline", "single_stream", "time_window"]) == 2
    assert family_size(5, ["offline", "single_stream"]) == 20 and family_size(3, ["single_stream", "server"]) == 6
    assert family_size(1, ["offline"]) == 1  # one model: nothing compared, nothing split
