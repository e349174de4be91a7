"""Sequential comparison: the e-values are martingales, the error rates hold under peeking, the API is sound."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import betainc, betaln

from headtohead.errors import ConfigError
from headtohead.results.sequential import SequentialRecord
from headtohead.stats.sequential import (
    DECISIONS,
    SequentialTest,
    confidence_bounds,
    first_decisions,
    log_e_values,
    path_e_values,
    replay,
    to_record,
)

ALPHA = 0.05


def _paths(seed: int, runs: int, n: int, p_only_a: float, p_only_b: float, chunk: int):
    """Cumulative (b, c, n) at every ``chunk``-th example (and at n) of ``runs`` simulated runs."""
    u = np.random.default_rng(seed).random((runs, n))
    at = np.unique(np.r_[np.arange(chunk, n + 1, chunk), n]) - 1
    b = np.cumsum(u < p_only_a, axis=1)[:, at]
    c = np.cumsum((u >= p_only_a) & (u < p_only_a + p_only_b), axis=1)[:, at]
    return b, c, np.broadcast_to(at + 1, b.shape)


def test_at_zero_gap_it_is_the_beta_binomial_mixture_sprt() -> None:
    """Up-bet wealth at Δ = 0 = ∫ 2^(b+c) θ^b (1−θ)^c · 2 dθ over θ ∈ (½, 1) (uniform prior), to the grid's precision."""
    for b, c in [(0, 0), (5, 1), (30, 8), (8, 30), (100, 80), (400, 300), (3, 0)]:
        closed = (b + c + 1) * math.log(2) + betaln(b + 1, c + 1) + math.log1p(-betainc(b + 1, c + 1, 0.5))
        up, down = log_e_values(b, c, b + c + 50)  # ties do not move the bets at Δ = 0
        assert float(up) == pytest.approx(closed, abs=1e-3), (b, c)
        assert float(down) == pytest.approx(float(log_e_values(c, b, b + c)[0]), abs=1e-12)


@pytest.mark.parametrize("gap", [0.0, 0.1, -0.25])
def test_e_values_have_expectation_one_under_their_null(gap: float) -> None:
    """Exact expectation over every table of n = 40 i.i.d. examples with mean D = gap: both wealths average 1."""
    discordance = 0.4
    p_a, p_b = (discordance + gap) / 2, (discordance - gap) / 2
    n = 40
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = b + c <= n
    b, c = b[keep], c[keep]
    pmf = stats.multinomial.pmf(np.stack([b, c, n - b - c], axis=1), n, [p_a, p_b, 1 - p_a - p_b])
    up, down = log_e_values(b, c, n, gap)
    assert np.sum(pmf * np.exp(up)) == pytest.approx(1.0, abs=1e-9)
    assert np.sum(pmf * np.exp(down)) == pytest.approx(1.0, abs=1e-9)
    # off the null the bet on the true side wins on average: the expectation is > 1
    up_wrong, _ = log_e_values(b, c, n, gap - 0.1)
    assert np.sum(pmf * np.exp(up_wrong)) > 1.05


@pytest.mark.parametrize("discordance", [0.1, 0.4])
def test_false_better_rate_under_the_null_with_peeking_is_at_most_alpha(discordance: float) -> None:
    runs = 3000
    b, c, n = _paths(1, runs, 872, discordance / 2, discordance / 2, chunk=25)
    code, _ = first_decisions(path_e_values(b, c, n), alpha=ALPHA)
    rate = np.mean(code != 0)
    assert rate <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / runs)
    # the same runs tested naively with McNemar's exact test at every look: peeking inflates that one
    naive = np.any(2 * stats.binom.cdf(np.minimum(b, c), b + c, 0.5) <= ALPHA, axis=1).mean()
    assert naive > 2 * ALPHA


def test_looking_after_every_discordant_pair_nearly_spends_alpha_but_never_more() -> None:
    """Continuous monitoring of 1,000 fair discordant pairs: Ville's bound α is nearly attained.

    At Δ = 0 ties leave the bets unchanged, so looking after every example is looking after
    every discordant pair; "A better" is ``b ≥ boundary[c]`` (the e-value rises in b, falls in c).
    The lower check pins the threshold: a rule twice as strict would spend about α/2.
    """
    steps, runs = 1000, 4000
    c = np.arange(steps + 1)
    lo, hi = np.full(c.shape, -1), np.full(c.shape, steps + 1)
    while np.any(hi - lo > 1):
        mid = (lo + hi) // 2
        decided = log_e_values(mid, c, mid + c)[0] >= math.log(2 / ALPHA)
        hi, lo = np.where(decided, mid, hi), np.where(decided, lo, mid)
    boundary = np.r_[hi, np.iinfo(np.int64).max]
    b = np.cumsum(np.random.default_rng(8).random((runs, steps)) < 0.5, axis=1)
    c = np.arange(1, steps + 1) - b
    rate = np.mean(((b >= boundary[c]) | (c >= boundary[b])).any(axis=1))
    se = math.sqrt(ALPHA * (1 - ALPHA) / runs)
    assert ALPHA / 2 < rate <= ALPHA + 3 * se


def test_a_clear_gap_is_found_before_the_data_runs_out() -> None:
    b, c, n = _paths(2, 500, 872, 0.15, 0.05, chunk=25)  # Δ = 10 points, discordance 0.2
    code, look = first_decisions(path_e_values(b, c, n), alpha=ALPHA)
    assert np.mean(code == DECISIONS.index("a_better")) > 0.95
    assert np.median(n[0, np.minimum(look, n.shape[1] - 1)]) < 600


def test_one_look_is_never_more_liberal_than_the_exact_mcnemar_test() -> None:
    """At any fixed discordant count, "better" at a single look implies exact two-sided p ≤ α."""
    b, c = np.meshgrid(np.arange(301), np.arange(301), indexing="ij")
    keep = (b + c > 0) & (b + c <= 300)
    b, c = b[keep], c[keep]
    up, down = log_e_values(b, c, b + c)
    decided = np.maximum(up, down) >= math.log(2 / ALPHA)
    exact_p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(b, c), b + c, 0.5))
    assert decided.sum() > 10_000  # the test does reject
    assert np.all(exact_p[decided] <= ALPHA)
    # and it pays for peeking: some tables the fixed-n test rejects are not decided yet
    assert np.any(~decided & (exact_p <= ALPHA))


def test_false_equivalence_rate_on_the_margin_is_at_most_alpha() -> None:
    runs, margin, discordance = 2000, 0.05, 0.2
    b, c, n = _paths(3, runs, 872, (discordance + margin) / 2, (discordance - margin) / 2, chunk=25)
    code, _ = first_decisions(path_e_values(b, c, n, margin), alpha=ALPHA)
    assert np.mean(code == DECISIONS.index("equivalent")) <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / runs)
    # with no gap and models that disagree on 10 % of examples, equivalence within 5 points is
    # usually shown on SST-2-sized data
    b, c, n = _paths(4, 500, 872, 0.05, 0.05, chunk=25)
    code, _ = first_decisions(path_e_values(b, c, n, margin), alpha=ALPHA)
    assert np.mean(code == DECISIONS.index("equivalent")) > 0.5


def test_confidence_bounds_invert_the_e_values() -> None:
    b, c, n = np.array([30, 8, 50, 0, 120]), np.array([8, 30, 50, 0, 100]), np.array([100, 100, 300, 10, 872])
    low, high = confidence_bounds(b, c, n, ALPHA)
    threshold = math.log(2 / ALPHA)
    assert np.all(low <= (b - c) / n) and np.all((b - c) / n <= high)
    inside_low, _ = log_e_values(b, c, n, np.minimum(low + 1e-9, high))
    _, inside_high = log_e_values(b, c, n, np.maximum(high - 1e-9, low))
    assert np.all(inside_low < threshold) and np.all(inside_high < threshold)
    beyond = low > -1 + 1e-6
    assert np.all(log_e_values(b[beyond], c[beyond], n[beyond], low[beyond] - 1e-9)[0] >= threshold)
    # the "better" decision is the interval leaving 0
    up, down = log_e_values(b, c, n)
    assert np.array_equal(low > 0, up >= threshold) and np.array_equal(high < 0, down >= threshold)


def test_chunking_and_order_do_not_change_the_statistic() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.random(400) < 0.8, rng.random(400) < 0.7
    one = SequentialTest().update(a, b)
    test = SequentialTest()
    for part in np.array_split(np.arange(400), 7):
        many = test.update(a[part], b[part])
    order = rng.permutation(400)
    shuffled = SequentialTest().update(a[order], b[order])
    for state in (many, shuffled):
        assert (state.n, state.only_a_correct, state.only_b_correct) == (one.n, one.only_a_correct, one.only_b_correct)
        assert state.log_e_a_better == pytest.approx(one.log_e_a_better, abs=1e-12)
    assert many.low >= one.low - 1e-12 and many.high <= one.high + 1e-12  # running intersection only narrows


def test_replay_agrees_with_the_vectorised_decisions() -> None:
    for seed, (p_a, p_b, margin) in enumerate(
        [(0.1, 0.1, 0.05), (0.12, 0.08, None), (0.05, 0.15, 0.03), (0.1, 0.1, None), (0.2, 0.05, 0.1)]
    ):
        rng = np.random.default_rng(10 + seed)
        for _ in range(2):
            u = rng.random(600)
            a = (u < p_a) | (u >= p_a + p_b) & (u < 0.7)
            b = (u >= p_a) & (u < 0.7)
            path = replay(a, b, 40, alpha=ALPHA)
            at = np.unique(np.r_[np.arange(40, 601, 40), 600]) - 1
            log_e = path_e_values(np.cumsum(a & ~b)[at][None], np.cumsum(~a & b)[at][None], (at + 1)[None], margin)
            code, look = first_decisions(log_e, alpha=ALPHA)
            expected = DECISIONS[int(code[0])]
            assert path[-1].decision == expected
            if expected != "continue":
                assert path[-1].n == at[look[0]] + 1 == path[-1].decided_at


def test_swapping_the_models_mirrors_everything() -> None:
    rng = np.random.default_rng(6)
    a, b = rng.random(872) < 0.9, rng.random(872) < 0.75
    ab, ba = replay(a, b, 100, stop=False)[-1], replay(b, a, 100, stop=False)[-1]
    assert (ab.decision, ba.decision) == ("a_better", "b_better")
    assert ab.log_e_a_better == pytest.approx(ba.log_e_b_better, abs=1e-12)
    assert (ab.low, ab.high) == pytest.approx((-ba.high, -ba.low), abs=1e-12)


def test_record_round_trips_and_resumes() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.random(872) < 0.80, rng.random(872) < 0.78
    whole = replay(a, b, 100, margin=0.05, stop=False)
    test = SequentialTest(margin=0.05)
    for start in range(0, 400, 100):
        test.update(a[start : start + 100], b[start : start + 100])
    saved = SequentialRecord.model_validate_json(
        to_record(
            test, model_a="a", model_b="b", chunk_size=100, examples_available=872, order_seed=3
        ).model_dump_json()
    )
    assert saved.decision == "continue" and saved.examples_used == 400 and saved.order_seed == 3
    resumed = SequentialTest.from_record(saved)
    for start in range(400, 872, 100):
        resumed.update(a[start : start + 100], b[start : start + 100])
    assert resumed.path == whole
    final = to_record(resumed, model_a="a", model_b="b", chunk_size=100, examples_available=872)
    assert final.examples_used == 872 and final.final is not None and final.final.n == 872
    assert final.decision == ("undecided" if whole[-1].decision == "continue" else whole[-1].decision)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ConfigError, match="alpha"):
        SequentialTest(alpha=0.5)
    with pytest.raises(ConfigError, match="margin"):
        SequentialTest(margin=0.0)
    with pytest.raises(ConfigError, match="chunk_size"):
        replay(np.ones(5, bool), np.ones(5, bool), 0)
    test = SequentialTest()
    with pytest.raises(ValueError, match="equal length"):
        test.update(np.ones(5, bool), np.ones(4, bool))
    with pytest.raises(ValueError, match="boolean"):
        test.update(np.ones(5, int), np.ones(5, int))
    with pytest.raises(ValueError, match="gap"):
        log_e_values(1, 1, 5, 1.0)
