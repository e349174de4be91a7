"""``stats.dominance``: each part of "A dominates B" on known data, the labels of the front, P(on the front)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from headtohead.stats.dominance import Measured, axis_interval, decide, front_probabilities, ratio_interval
from headtohead.stats.paired import PairedCorrectness
from headtohead.stats.speed import paired_speed_ratio, round_log_ratios


def _rounds(ms: float, jitter: list[float]) -> Measured:
    return Measured(rounds=tuple((ms * 1e6 * (1 + j),) * 3 for j in jitter), per_call=1e9)


def test_paired_rounds_read_the_speed_engines_ratio_and_a_price_scales_it():
    a, b = _rounds(1.0, [0.01, 0.02, 0.0, 0.03, 0.01]), _rounds(3.0, [0.02, 0.0, 0.01, 0.01, 0.02])
    found = ratio_interval(a, b, confidence=0.95)
    expected = paired_speed_ratio(round_log_ratios(a.rounds, b.rounds), confidence=0.95)
    assert (found.ratio, found.low, found.high) == pytest.approx((expected.ratio, expected.low, expected.high))
    assert found.a_lower and found.method == "t"
    priced = Measured(rounds=a.rounds, per_call=1e9, scale=2.0)  # twice the price per hour: twice the cost ratio
    assert ratio_interval(priced, b, confidence=0.95).ratio == pytest.approx(2 * found.ratio)
    anytime = ratio_interval(a, b, confidence=0.95, anytime=True)
    assert anytime.method == "anytime" and anytime.high - anytime.low > found.high - found.low


def test_unpaired_measurements_add_their_log_variances():
    rng = np.random.default_rng(0)
    a, b = Measured(sample=rng.gamma(4.0, 1.0, 400)), Measured(exact=8.0)
    found = ratio_interval(a, b, confidence=0.95)
    se = np.std(a.sample, ddof=1) / math.sqrt(400) / np.mean(a.sample)
    assert found.method == "welch" and found.ratio == pytest.approx(np.mean(a.sample) / 8.0)
    assert math.log(found.high / found.ratio) == pytest.approx(stats.t.ppf(0.975, 399) * se, rel=1e-5)
    # a few rounds against a sample: Satterthwaite's df, far below the sample's
    rounds = _rounds(1.0, [0.05, -0.04, 0.03, -0.05, 0.04])
    mixed = ratio_interval(rounds, Measured(sample=rng.gamma(400.0, 1.0 / 400.0 * 1e-3, 4000)), confidence=0.95)
    v_r, v_s = rounds.log_variance(), Measured(sample=np.ones(2)).log_variance()
    assert mixed.method == "welch" and v_s == 0.0 and v_r > 0
    assert found.a_lower  # mean 4 against 8
    assert ratio_interval(Measured(exact=2.0), Measured(exact=2.0), confidence=0.95).a_lower is False
    value, low, high = axis_interval(a, 0.95)
    assert low < value < high and axis_interval(b, 0.95) == (8.0, None, None)


def test_a_measurement_is_one_form():
    with pytest.raises(ValueError, match="exactly one"):
        Measured(exact=1.0, sample=np.ones(3))


def _three():
    u = np.random.default_rng(1).random(1000)
    correct = {"A": u < 0.90, "B": u < 0.85, "C": u < 0.93}
    lat = {"A": _rounds(1.0, [0.01] * 5), "B": _rounds(3.0, [0.02] * 5), "C": _rounds(6.0, [0.01] * 5)}
    return correct, lat


def test_the_issues_three_models_a_dominates_b_a_and_c_on_the_front():
    correct, lat = _three()
    found = decide(correct, {"latency": lat}, resamples=300)
    assert found.axes == ("quality", "latency")
    assert found.labels == {"A": "front", "B": "dominated", "C": "front"}
    assert found.dominated_by == {"A": (), "B": ("A",), "C": ()}
    assert all(0.0 <= p <= 1.0 for p in found.p_front.values())
    ab = next(p for p in found.pairs if (p.a, p.b) == ("A", "B"))
    b, c = PairedCorrectness.of(correct["A"], correct["B"]).b, PairedCorrectness.of(correct["A"], correct["B"]).c
    assert ab.quality_gap[0] == pytest.approx((int(b) - int(c)) / 1000)
    assert ab.holds == {"quality": True, "latency": True} and ab.dominates
    ac = next(p for p in found.pairs if (p.a, p.b) == ("A", "C"))
    assert ac.open_axes == ["quality"]  # C is more accurate beyond the margin
    assert found.estimates["A"]["latency"] == pytest.approx(1.01e-3)  # ms per prediction, as the rounds say


def test_a_model_within_the_margin_and_not_faster_leaves_the_front_undecided():
    u = np.random.default_rng(2).random(2000)
    correct = {"A": u < 0.900, "B": u < 0.902}  # 0.2 pp apart: within the 1 pp margin either way, not beyond it
    lat = {"A": _rounds(1.0, [0.05, -0.04, 0.03, -0.05, 0.04]), "B": _rounds(1.0, [-0.03, 0.05, -0.04, 0.02, -0.02])}
    found = decide(correct, {"latency": lat}, resamples=200)
    assert found.labels == {"A": "undecided", "B": "undecided"} and not any(p.dominates for p in found.pairs)


def test_quality_alone_when_nothing_else_was_measured():
    correct, _ = _three()
    found = decide(correct, {}, resamples=200)
    assert found.axes == ("quality",)
    assert found.labels == {"A": "dominated", "B": "dominated", "C": "front"}  # C more accurate beyond 1 pp
    assert found.p_front["C"] == 1.0


def test_p_front_resamples_rounds_jointly():
    correct = {"a": np.ones(50, bool), "b": np.ones(50, bool)}
    lat = {"a": _rounds(1.0, [0.3, -0.3, 0.3, -0.3]), "b": _rounds(1.0, [0.3, -0.3, 0.3, -0.3])}
    # identical rounds, paired: in every draw both are equal, so neither beats the other and both are on the front
    assert front_probabilities(correct, {"latency": lat}, resamples=100) == {"a": 1.0, "b": 1.0}


def test_p_front_draws_whole_groups():
    # two models differ only inside one group of 50 examples: drawn whole, that group is in or out together
    a = np.ones(100, bool)
    b = np.concatenate([np.zeros(50, bool), np.ones(50, bool)])
    groups = np.repeat([0, 1], 50)
    lat = {"a": Measured(exact=2.0), "b": Measured(exact=1.0)}  # b faster: a is on the front only when more accurate
    p = front_probabilities({"a": a, "b": b}, {"latency": lat}, resamples=400, groups=groups)
    assert 0.6 < p["a"] < 0.9 and p["b"] == 1.0  # P(group 0 drawn at least once in 2) = 0.75


def test_a_model_run_several_times_is_decided_on_its_mean_over_the_runs():
    """Its quality gap is the two-level one the verdict reads (examples, then runs), its value the mean over runs."""
    from headtohead.stats.dominance import TWO_LEVEL, quality_interval
    from headtohead.stats.repeat_pool import two_level_gap

    rng = np.random.default_rng(5)
    u = rng.random(1000)
    runs = np.stack([u + s < 0.90 for s in (-0.02, 0.0, 0.02)])  # three runs, each shifted as a whole
    correct = {"A": runs, "B": u < 0.85}
    lat = {"A": _rounds(1.0, [0.01] * 5), "B": _rounds(3.0, [0.02] * 5)}
    found = decide(correct, {"latency": lat}, resamples=300)
    ab = next(p for p in found.pairs if (p.a, p.b) == ("A", "B"))
    pooled = two_level_gap(runs, correct["B"][None, :], confidence=0.95)
    assert ab.quality_method == TWO_LEVEL and ab.quality_gap == pytest.approx(
        (pooled.estimate, pooled.low, pooled.high)
    )
    assert ab.dominates and found.labels == {"A": "front", "B": "dominated"}
    assert found.estimates["A"]["quality"] == pytest.approx(runs.mean())
    value, low, high = quality_interval(runs, 0.95)
    assert value == pytest.approx(runs.mean()) and low < value < high
    # with one pass the interval is Wilson's, and a measured-once model's gap Tango's, as before
    assert quality_interval(runs[:1], 0.95) == pytest.approx(quality_interval(runs[0], 0.95))


def test_p_front_draws_a_repeated_models_runs():
    """A is beaten in the draws where B's drawn runs beat it: with B's two runs far apart, the draw of runs decides."""
    a = np.arange(400) < 288  # 72 %, always; slower
    b = np.stack([np.arange(400) < 280, np.arange(400) < 320])  # 70 % and 80 %: its mean, 75 %, above A's
    lat = {"a": Measured(exact=2.0), "b": Measured(exact=1.0)}
    p = front_probabilities({"a": a, "b": b}, {"latency": lat}, resamples=4000)
    assert p["b"] == 1.0  # faster, so never beaten
    # a is on the front only where both of b's drawn runs are its 70 % one: 1/4 of the draws (with b's mean over
    # its two runs and no draw of runs, about 0: 75 % beats 72 % on almost every draw of examples)
    assert 0.20 < p["a"] < 0.30
    once = front_probabilities({"a": a, "b": b[0]}, {"latency": lat}, resamples=2000)
    assert once["a"] > 0.99  # measured once at 70 %, b ties a's 72 % only where none of the 8 between is drawn
