"""The comparison over every run of repeated models (examples, then runs within examples), proven on known answers
and by simulation: its level and its coverage under large run noise, and what pooling the runs as examples does."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from headtohead.results.comparison import ModelStats
from headtohead.results.estimates import Estimate
from headtohead.stats.repeat_pool import repeat_model, run_spread, two_level_gap


def _paired_t(d: np.ndarray) -> tuple[float, float, float]:
    """An independent paired t-test on per-example gaps: p and the 95 % interval."""
    n, mean, se = len(d), float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))
    half = stats.t.ppf(0.975, n - 1) * se
    return float(stats.ttest_1samp(d, 0.0).pvalue), mean - half, mean + half


def test_without_whole_run_effects_it_is_the_paired_t_test_on_per_example_mean_correctness():
    # every run the same accuracy: no variance of whole runs, so only the examples' part is left
    a = np.array([[1, 1, 0, 1, 0, 1], [1, 0, 1, 1, 0, 1]], dtype=bool)  # both runs 4 of 6
    b = np.array([[1, 0, 0, 1, 0, 0]], dtype=bool)
    gap = two_level_gap(a, b)
    d = a.mean(axis=0) - b.mean(axis=0)
    p, low, high = _paired_t(d)
    assert gap.se_runs == 0.0 and gap.df == pytest.approx(5)
    assert (gap.estimate, gap.p_value, gap.low, gap.high) == pytest.approx((d.mean(), p, low, high))


def test_whole_runs_moving_together_widen_the_interval_by_their_variance():
    # model A: run 1 right on every example, run 2 on none — all of its noise is the run's, none the examples'
    n = 50
    a = np.vstack([np.ones(n, bool), np.zeros(n, bool), np.ones(n, bool), np.zeros(n, bool)])
    b = np.tile(np.arange(n) % 2 == 0, (4, 1))  # steady: the same half right in every run
    gap = two_level_gap(a, b)
    # the runs' accuracies 1, 0, 1, 0: s² = 1/3, over k = 4 runs
    assert gap.se_runs == pytest.approx(np.sqrt(1 / 3 / 4))
    assert gap.se_examples == pytest.approx(np.sqrt(np.var(a.mean(0) - b.mean(0), ddof=1) / n))
    v_e, v_r = gap.se_examples**2, gap.se_runs**2  # Satterthwaite: examples n − 1, runs k − 1
    assert gap.df == pytest.approx((v_e + v_r) ** 2 / (v_e**2 / 49 + v_r**2 / 3))
    assert 3 < gap.df < 4  # the runs' part dominates


def test_groups_cluster_the_examples_part():
    rng = np.random.default_rng(3)
    a, b = rng.random((3, 40)) < 0.7, rng.random((3, 40)) < 0.6
    groups = np.repeat(np.arange(10), 4)
    gap = two_level_gap(a, b, groups)
    d = a.mean(0) - b.mean(0)
    sums = np.bincount(groups, weights=d - d.mean())
    assert gap.se_examples == pytest.approx(np.sqrt(10 / 9 * (sums**2).sum() / 40**2))


def _simulate(n: int, k: int, run_sd: float, sims: int, seed: int, gap: float = 0.0) -> tuple[float, float, float]:
    """Two models of equal mean accuracy (gap 0) and opposite per-example strengths (0.75 ± 0.2), drawn afresh every
    run, each run shifted by N(0, run_sd): the two-level test's false 'better' rate and coverage, and the rate of a
    test that pools the k·n rows as independent examples."""
    rng = np.random.default_rng(seed)
    called = naive = covered = 0
    for _ in range(sims):
        s = rng.choice([-0.2, 0.2], n)
        pa = 0.75 + s + gap / 2 + rng.normal(0, run_sd, (k, 1))
        pb = 0.75 - s - gap / 2 + rng.normal(0, run_sd, (k, 1))
        a, b = rng.random((k, n)) < pa, rng.random((k, n)) < pb
        found = two_level_gap(a, b)
        called += found.p_value <= 0.05
        covered += found.low <= gap <= found.high
        naive += stats.ttest_1samp((a.astype(float) - b).ravel(), 0.0).pvalue <= 0.05
    return called / sims, covered / sims, naive / sims


@pytest.mark.parametrize("run_sd", [0.0, 0.05])
def test_by_simulation_its_level_is_5_percent_and_its_coverage_95_where_pooling_runs_is_not(run_sd):
    level, coverage, naive = _simulate(n=200, k=5, run_sd=run_sd, sims=600, seed=11)
    # 600 runs: a binomial 5 % lies within ±2.7 pp at 3 SE
    assert level <= 0.05 + 0.027 and coverage >= 0.94 - 0.027
    assert naive >= 0.15  # pooling the runs as if they were examples: about 21 % and more with run noise


def test_one_run_each_is_the_paired_t_on_correctness():
    rng = np.random.default_rng(5)
    a, b = rng.random((1, 300)) < 0.8, rng.random((1, 300)) < 0.75
    gap = two_level_gap(a, b)
    assert gap.p_value == pytest.approx(_paired_t((a.astype(float) - b)[0])[0])


def test_the_spread_of_a_metric_has_the_chi_square_interval_of_its_sd():
    values = [0.80, 0.82, 0.78, 0.81, 0.79]
    spread = run_spread("accuracy", values, 0.95)
    sd = float(np.std(values, ddof=1))
    assert spread.sd == pytest.approx(sd) and spread.mean == pytest.approx(0.8)
    assert spread.sd_low == pytest.approx(sd * np.sqrt(4 / stats.chi2.ppf(0.975, 4)))
    assert spread.sd_high == pytest.approx(sd * np.sqrt(4 / stats.chi2.ppf(0.025, 4)))
    assert (spread.low, spread.high) == (0.78, 0.82)


def test_steadiness_counts_on_a_hand_made_example():
    pred = np.array([[0, 1, 1, 0, 2], [0, 1, 0, 1, 2], [0, 1, 1, 1, 0], [0, 0, 1, 1, 2]])
    y = np.array([0, 1, 1, 1, 2])
    e = lambda v: Estimate(value=v, low=v, high=v, method="exact")  # noqa: E731
    runs = [
        ModelStats(name=f"m@r{r}", n_examples=5, accuracy=e(a), balanced_accuracy=e(a), f1_macro=e(a), f1_weighted=e(a))
        for r, a in enumerate((0.8, 0.6, 0.8, 0.8))
    ]
    m = repeat_model("m", pred, y, ("a", "b", "c"), runs, np.arange(10, 15))
    # example 0 steady and right; 1 right 3 of 4; 2 right 3 of 4; 3 right 3 of 4; 4 right 3 of 4
    assert (m.changed, m.changed_share, m.pass_all, m.pass_any) == (4, 0.8, 0.2, 1.0)
    assert m.agreement == pytest.approx((1 + 0.75 * 4) / 5)
    assert [c.index for c in m.most_changed] == [11, 12, 13, 14]
    assert m.most_changed[0].answers == {"b": 3, "a": 1} and m.most_changed[0].right == 3
    assert m.spreads[0].values == [0.8, 0.6, 0.8, 0.8]


def test_the_noise_floor_bounds_how_far_two_new_runs_differ_95_percent_of_the_time():
    from headtohead.stats.repeat_pool import _two_runs_differ

    runs = np.array([0.80, 0.82, 0.78, 0.81, 0.79])
    assert _two_runs_differ(runs) == pytest.approx(stats.t.ppf(0.975, 4) * np.sqrt(2) * np.std(runs, ddof=1))
    assert _two_runs_differ(runs[:1]) is None
    rng = np.random.default_rng(8)
    draws = rng.normal(0.8, 0.02, (20_000, 7))  # five runs at hand, two new ones
    bounds = np.array([_two_runs_differ(d[:5]) for d in draws])
    inside = np.abs(draws[:, 5] - draws[:, 6]) <= bounds
    assert inside.mean() == pytest.approx(0.95, abs=0.005)


def test_the_mean_floor_bounds_how_far_two_new_means_of_k_runs_differ_95_percent_of_the_time():
    """The floor a gap over runs is held against: t_{0.975, k−1}·√2·s/√k, the single-run bound over √k; two new
    means of 5 runs each fall within it 95 % of the time (the single-run bound would hold them 99.7 %)."""
    from headtohead.stats.repeat_pool import _means_differ, _two_runs_differ

    runs = np.array([0.80, 0.82, 0.78, 0.81, 0.79])
    assert _means_differ(runs) == pytest.approx(stats.t.ppf(0.975, 4) * np.sqrt(2 / 5) * np.std(runs, ddof=1))
    assert _means_differ(runs) == pytest.approx(_two_runs_differ(runs) / np.sqrt(5))
    assert _means_differ(runs[:1]) is None
    rng = np.random.default_rng(9)
    draws = rng.normal(0.8, 0.02, (20_000, 15))  # five runs at hand, two new sets of five
    bounds = np.array([_means_differ(d[:5]) for d in draws])
    inside = np.abs(draws[:, 5:10].mean(axis=1) - draws[:, 10:].mean(axis=1)) <= bounds
    assert inside.mean() == pytest.approx(0.95, abs=0.005)


def test_a_hand_built_pool_holds_its_gap_against_the_larger_mean_floor_each_over_its_own_runs():
    """llm: 8 runs right on 12, 14, 12, 14, … of 20 examples (0.6, 0.7, …; s = 0.0535); enc: 2 runs right on 12
    (s = 0); low: run once, right on 11. llm's mean floor t_{0.975, 7}·√2·s/√8 = 6.32 pp (its single-run floor
    17.88 pp), enc's 0: every pair's floor is llm's. llm − enc = 5 pp lies within it: withheld whatever p. llm −
    low = 10 pp lies outside it (though within the single-run floor the rule used before): decided at a small p."""
    from headtohead.results.predictions import Predictions
    from headtohead.stats.analyse import analyse
    from headtohead.stats.repeat_pool import _decided

    n = 20
    y = np.zeros(n, dtype=int)
    p = Predictions(np.arange(n), y, ("neg", "pos"))
    for name, hits in (("llm", (12, 14) * 4), ("enc", (12, 12))):
        for r, right in enumerate(hits):
            p.add_pass(name, f"r{r + 1}", "repeat", np.where(np.arange(n) < right, 0, 1), None)
    p.add("low", np.where(np.arange(n) < 11, 0, 1), None)
    summary = analyse(p, n_resamples=100)
    models = {m.name: m for m in summary.repeats.models}
    s = np.std([0.6, 0.7] * 4, ddof=1)
    single, mean = stats.t.ppf(0.975, 7) * np.sqrt(2) * s, stats.t.ppf(0.975, 7) * np.sqrt(2) * s / np.sqrt(8)
    assert models["llm"].two_runs_differ == pytest.approx(single) and single == pytest.approx(0.17875, abs=1e-5)
    assert models["llm"].means_differ == pytest.approx(mean) and mean == pytest.approx(0.06320, abs=1e-5)
    assert models["enc"].two_runs_differ == 0.0 and models["enc"].means_differ == 0.0
    pools = {(q.model_a, q.model_b): q for q in summary.repeats.pools}
    inside, outside = pools[("llm", "enc")], pools[("llm", "low")]
    assert (inside.noise_floor, inside.floor_of, outside.floor_of) == (pytest.approx(mean), "llm", "llm")
    assert inside.estimate == pytest.approx(0.05) and inside.within_floor
    assert outside.estimate == pytest.approx(0.10) and not outside.within_floor and outside.estimate < single
    assert not _decided(inside, 0.001, 0.05).significant and _decided(inside, 0.001, 0.05).winner is None
    assert _decided(outside, 0.001, 0.05).winner == "llm"


def test_the_plan_of_examples_and_runs_reaches_its_power_and_says_when_no_number_of_examples_can():
    from headtohead.stats.repeat_plan import plan_runs

    plan = plan_runs(0.90, 0.03, 0.10, repeats=5, run_sd=0.0)
    # steady models (every run the same answers): the test over runs is the paired t on correctness
    rng = np.random.default_rng(4)
    found = 0
    for _ in range(400):
        cell = rng.choice(4, plan.n, p=[0.065, 0.035, 0.45, 0.45])  # only A right, only B right, both, neither
        a = np.isin(cell, [0, 2])
        b = np.isin(cell, [1, 2])
        found += two_level_gap(np.tile(a, (5, 1)), np.tile(b, (5, 1))).p_value <= 0.05
    assert 0.74 <= found / 400 <= 0.88
    # the runs' variance does not shrink with examples, but it and the floor of the means shrink with runs: at a
    # 3 pp run-to-run SD a 3 pp gap is out of reach with 2 runs however many examples, within reach with 20
    few = plan_runs(0.90, 0.03, 0.10, repeats=2, run_sd=0.03)
    assert few.n is None and few.min_repeats == 20
    assert few.two_runs_differ == pytest.approx(stats.t.ppf(0.975, 1) * np.sqrt(2) * 0.03)
    assert few.floor == pytest.approx(few.two_runs_differ / np.sqrt(2))
    assert plan_runs(0.90, 0.03, 0.10, repeats=20, run_sd=0.03).n is not None


def _shifted_runs(base: np.ndarray, k: int, s: float, rng: np.random.Generator) -> np.ndarray:
    """k runs of a steady model whose whole run moves by N(0, s): that share of its answers flipped right or wrong."""
    runs = []
    for _ in range(k):
        c, shift = base.copy(), rng.normal(0.0, s)
        pool = np.flatnonzero(~c if shift > 0 else c)
        c[rng.choice(pool, min(int(round(abs(shift) * len(c))), len(pool)), replace=False)] = shift > 0
        runs.append(c)
    return np.array(runs)


def test_the_plan_counts_the_noise_floor_and_reaches_its_power_with_it():
    """h2h plan --repeats 10 --run-sd 0.5pp: 904 examples find a 3 pp gap AND see it outside the noise floor (the
    larger of the two models' mean floors t_{0.975, 9}·√2·ŝ/√10) in about 80 % of 200 simulated runs; 3 runs are
    the fewest."""
    from headtohead.stats.repeat_plan import plan_runs
    from headtohead.stats.repeat_pool import _means_differ

    plan = plan_runs(0.90, 0.03, 0.10, repeats=10, run_sd=0.005)
    assert (plan.n, plan.min_repeats) == (904, 3) and plan.floor == pytest.approx(
        stats.t.ppf(0.975, 9) * 2**0.5 * 0.005 / 10**0.5
    )
    rng = np.random.default_rng(3)
    found = 0
    for _ in range(200):
        cell = rng.choice(4, plan.n, p=[0.065, 0.035, 0.45, 0.45])
        a, b = (
            _shifted_runs(np.isin(cell, [0, 2]), 10, 0.005, rng),
            _shifted_runs(np.isin(cell, [1, 2]), 10, 0.005, rng),
        )
        gap = two_level_gap(a, b)
        floor = max(_means_differ(a.mean(axis=1)), _means_differ(b.mean(axis=1)))
        found += gap.p_value <= 0.05 and abs(gap.estimate) > floor
    assert 0.70 <= found / 200 <= 0.90


def test_h2h_plan_takes_repeats_and_run_noise(capsys):
    from headtohead.cli.main import main

    base = ["plan", "--accuracy", "0.9", "--delta", "3pp", "--discordance", "0.1"]
    main([*base, "--repeats", "10", "--run-sd", "0.5pp"])
    said = " ".join(capsys.readouterr().out.split())
    assert (
        "two runs differ by up to 1.6 pp, two means of 10 runs by up to 0.5 pp — the noise floor, no gap within it is "
        "called better" in said
    )
    assert "you need about 904 examples (10 runs × 904 answers per model); with fewer than 3 runs" in said
    main([*base, "--repeats", "2", "--run-sd", "3pp"])
    said = " ".join(capsys.readouterr().out.split())
    assert "no number of examples suffices at 2 runs, the runs' noise and the floor of their means hide the gap" in said
    assert "plan 20 runs of each model or more" in said
    main(
        ["plan", "--accuracy", "0.9", "--delta", "0.1pp", "--discordance", "0.1", "--repeats", "2", "--run-sd", "10pp"]
    )
    said = " ".join(capsys.readouterr().out.split())
    assert "not even 1,000 runs of each model suffice, with any number of examples" in said
    with pytest.raises(SystemExit) as info:
        main(["plan", "--accuracy", "0.9", "--delta", "3pp", "--repeats", "2"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "--repeats and --run-sd go together" in err and "Traceback" not in err


def test_the_comparisons_over_runs_and_the_ordinary_pairs_make_one_holm_family_and_one_ranking():
    from statsmodels.stats.multitest import multipletests

    from headtohead.results.predictions import Predictions
    from headtohead.stats.analyse import analyse

    rng = np.random.default_rng(0)
    n = 200
    y = rng.integers(0, 2, n)
    p = Predictions(np.arange(n), y, ("neg", "pos"))
    for r in range(5):
        p.add_pass("a", f"r{r + 1}", "repeat", np.where(rng.random(n) < 0.85, y, 1 - y), None)
    p.add("b", np.where(rng.random(n) < 0.7, y, 1 - y), None)
    p.add("c", np.where(rng.random(n) < 0.68, y, 1 - y), None)
    summary = analyse(p, n_resamples=100)
    (pair,) = summary.comparisons
    pools = summary.repeats.pools
    assert [(q.model_a, q.model_b) for q in pools] == [("a", "b"), ("a", "c")] and summary.repeats.family_size == 3
    raw = [pair.p_value] + [q.p_value for q in pools]
    holm = multipletests(raw, method="holm")[1]
    assert [pair.p_adjusted] + [q.p_adjusted for q in pools] == pytest.approx(list(holm))
    correct = p["a"].pred == y
    assert pools[0].p_value == pytest.approx(two_level_gap(correct, (p["b"].pred == y)[None, :]).p_value)
    assert summary.ranking[0].models == ["a"]  # counted once, by its mean over runs
    assert summary.model("a").accuracy.value == pytest.approx(correct.mean())


def test_each_slice_compares_a_repeated_model_over_its_runs_in_the_slices_one_holm_family():
    """Slices with a model run 4 times: per slice, the two-level test on the slice's examples (equal to
    two_level_gap on those columns) and the slice's own noise floors; Holm over the ordinary (slice, pair) tests
    and these together (the slice's floor: how far two means of 4 runs differ there, t_{0.975, 3}·√2·s/√4). The
    repeated model is strong on negatives, weak on positives; a fixed model the reverse."""
    from headtohead.results.predictions import Predictions
    from headtohead.stats.multiple import holm_adjust
    from headtohead.stats.repeat_pool import _means_differ
    from headtohead.stats.where import run_slices

    rng = np.random.default_rng(0)
    n = 400
    y = rng.integers(0, 2, n)
    p = Predictions(np.arange(n), y, ("neg", "pos"))
    runs = np.stack([np.where(rng.random(n) < np.where(y == 0, 0.95, 0.6), y, 1 - y) for _ in range(4)])
    for k, run in enumerate(runs):
        p.add_pass("llm", f"r{k + 1}", "repeat", run, None)
    p.add("enc", np.where(rng.random(n) < np.where(y == 0, 0.6, 0.95), y, 1 - y), None)
    p.add("rule", np.where(rng.random(n) < 0.8, y, 1 - y), None)
    summary = run_slices(p)
    assert [s.label for s in summary.slices] == ["neg", "pos"]
    ordinary = [q.p_value for s in summary.slices for q in s.pairs]
    over_runs = [q.p_value for s in summary.slices for q in s.repeat_pairs]
    assert [len(s.pairs) for s in summary.slices] == [1, 1] and [len(s.repeat_pairs) for s in summary.slices] == [2, 2]
    assert summary.n_tests == 6
    adjusted = holm_adjust(ordinary + over_runs)
    assert [q.p_adjusted for s in summary.slices for q in s.pairs + s.repeat_pairs] == pytest.approx(
        list(adjusted[:1]) + list(adjusted[2:4]) + list(adjusted[1:2]) + list(adjusted[4:])
    )
    neg, pos = summary.slices
    llm_enc = neg.repeat_pairs[0]
    assert (llm_enc.model_a, llm_enc.model_b, llm_enc.n_examples) == ("llm", "enc", int((y == 0).sum()))
    mask = y == 0
    gap = two_level_gap(runs[:, mask] == y[mask], (p["enc"].pred == y)[None, mask])
    assert llm_enc.estimate == pytest.approx(gap.estimate) and llm_enc.p_value == pytest.approx(gap.p_value)
    assert llm_enc.noise_floor == pytest.approx(_means_differ((runs[:, mask] == y[mask]).mean(axis=1)))
    assert llm_enc.winner == "llm" and pos.repeat_pairs[0].winner == "enc"  # opposite strengths, found per slice
    for q in (q for s in summary.slices for q in s.repeat_pairs):
        assert q.significant == (q.p_adjusted <= 0.05 and not q.within_floor)


def test_a_slice_of_one_example_decides_nothing_and_warns_nothing():
    """One example has no spread to test against: p = 1, the interval the whole range, no NumPy warning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gap = two_level_gap(np.array([[1], [0], [1]], bool), np.array([[0]], bool))
    assert (gap.estimate, gap.low, gap.high, gap.p_value) == pytest.approx((2 / 3, -1.0, 1.0, 1.0))
