"""Which examples the speed engine times: drawn across the data, stratified by length, seeded, recorded."""

from __future__ import annotations

import numpy as np
import pytest
from sim.simulated import SimulatedAdapter

from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset
from headtohead.engines.speed import measure_speed
from headtohead.engines.speed_inputs import stratified_sample, timed_inputs
from headtohead.results.speed import HostLoad
from headtohead.stats.speed import paired_speed_ratio, round_log_ratios, round_medians
from headtohead.testing.fake_device import FakeClock


@pytest.fixture(autouse=True)
def quiet_host(monkeypatch):
    quiet = HostLoad(cpu_count=2, load_average=[0.0, 0.0, 0.0], other_cpu_percent=0.0)
    monkeypatch.setattr("headtohead.engines.speed.host_load", lambda: quiet)


def texts(n=400, seed=0):
    """Sentences of 1 to 80 words in a random order: dataset order says nothing about length."""
    lengths = np.random.default_rng(seed).integers(1, 81, size=n)
    return Dataset(
        "texts",
        "text",
        [" ".join(["w"] * int(k)) for k in lengths],
        np.zeros(n, dtype=np.int64),
        ("negative", "positive"),
    )


def test_batch_one_inputs_cover_every_length_stratum():
    ds = texts()
    drawn = timed_inputs(ds, 1, 32, seed=7)
    picks = np.concatenate(drawn.indices)
    lengths = np.array([len(t.split()) for t in ds.examples])
    assert len(picks) == len(set(picks.tolist())) == 32 and drawn.unit == "words"
    # One pick in each of 32 equal-count strata of the examples ordered by length.
    order = np.lexsort((np.arange(len(ds)), lengths))
    strata = np.array_split(order, 32)
    assert [np.isin(picks, stratum).sum() for stratum in strata] == [1] * 32
    sizes = np.concatenate(drawn.sizes)
    assert sizes.tolist() == lengths[picks].tolist()
    assert sizes.min() <= np.quantile(lengths, 1 / 32) and sizes.max() >= np.quantile(lengths, 31 / 32)
    assert np.ptp(picks) >= 0.8 * len(ds)  # and spread over the dataset's positions
    assert [b.tolist() for b in timed_inputs(ds, 1, 32, seed=7).indices] == [b.tolist() for b in drawn.indices]
    assert timed_inputs(ds, 1, 32, seed=8).indices != drawn.indices


def test_offline_batches_mix_lengths_and_features_are_spread_by_position():
    ds = texts()
    drawn = timed_inputs(ds, 8, 4, seed=0)
    assert [len(b) for b in drawn.indices] == [8] * 4
    assert all(np.ptp(s) > 10 for s in drawn.sizes)  # shuffled strata: each batch mixes short and long
    features = Dataset("f", "features", np.zeros((100, 2)), np.zeros(100, dtype=np.int64), ("a", "b"))
    spread = timed_inputs(features, 1, 10)
    assert spread.sizes is None and spread.unit is None
    assert sorted(int(b[0]) // 10 for b in spread.indices) == list(range(10))


def test_stratified_sample_refuses_more_than_there_is():
    with pytest.raises(ValueError, match="cannot draw 5 of 4"):
        stratified_sample(4, 5, np.random.default_rng(0))


class LengthAdapter(SimulatedAdapter):
    """Forward time grows with the words of the longest example: 1 µs per word, plus jitter."""

    def preprocess(self, examples):
        return np.array([len(t.split()) for t in examples])

    def forward(self, inputs):
        self.clock.advance(1_000 * int(inputs.max()) * float(self._rng.lognormal(0.0, self.jitter)))
        return np.zeros((len(inputs), 2))


def test_results_name_the_timed_examples_and_judge_noise_per_input():
    clock = FakeClock()
    ds = texts()
    model = LengthAdapter("m", cost_ns=0, clock=clock, jitter=0.01, seed=1)
    config = SpeedConfig(
        warmup_iterations=1,
        warmup_seconds=0.0,
        min_iterations=1,
        min_seconds=0.0,
        rounds=5,
        precision=None,  # a fixed number of rounds
        pipeline_iterations=0,
        memory=False,
        telemetry=False,
        single_stream_inputs=32,
        num_batches=2,
    )
    summary = measure_speed([model], ds, config, batch_size=8, seed=3, clock=clock)
    indices = summary.timed_indices["single_stream"]
    assert len(indices) == 32 and all(len(b) == 1 for b in indices) and len(summary.timed_indices["offline"]) == 2
    assert summary.timed_sizes["single_stream"] == [[len(ds.examples[b[0]].split())] for b in indices]
    single = summary.model("m").single_stream
    assert single.inputs == 32 and all(len(r) % 32 == 0 for r in single.rounds_ns)
    # Each input's latency follows its own length: per input, 1 µs per word.
    medians = [np.median(x) for x in single.input_latencies_ns()]
    assert medians == pytest.approx([1_000 * s[0] for s in summary.timed_sizes["single_stream"]], rel=0.05)
    # Lengths from 1 to 80 words spread the calls far beyond 10 % — yet the machine was quiet.
    assert single.iqr_over_median > 0.5 and single.repeat_noise < 0.05


class ScaledLengthAdapter(LengthAdapter):
    """``per_word_ns`` per word of the longest example, plus jitter."""

    def __init__(self, *args, per_word_ns, **kwargs):
        super().__init__(*args, **kwargs)
        self.per_word_ns = per_word_ns

    def forward(self, inputs):
        self.clock.advance(self.per_word_ns * int(inputs.max()) * float(self._rng.lognormal(0.0, self.jitter)))
        return np.zeros((len(inputs), 2))


def test_a_rounds_ratio_is_paired_by_input_so_inputs_of_every_length_do_not_blur_it():
    """B takes twice A's time on every input; calls jitter 10 %; 16 batch-1 inputs of 1 to 80 words."""
    clock = FakeClock()
    a = ScaledLengthAdapter("a", cost_ns=0, clock=clock, jitter=0.1, seed=1, per_word_ns=1_000)
    b = ScaledLengthAdapter("b", cost_ns=0, clock=clock, jitter=0.1, seed=2, per_word_ns=2_000)
    config = SpeedConfig(
        scenarios=["single_stream"],
        warmup_iterations=1,
        warmup_seconds=0.0,
        min_seconds=0.0,
        rounds=12,
        precision=None,  # twelve rounds, to compare the two readings of the same rounds
        pipeline_iterations=0,
        memory=False,
        telemetry=False,
    )
    summary = measure_speed([a, b], texts(), config, batch_size=8, seed=3, clock=clock)
    (c,) = summary.scenario("single_stream").comparisons
    ta, tb = summary.model("a").single_stream, summary.model("b").single_stream
    assert ta.inputs == 16
    paired = round_log_ratios(ta.rounds_ns, tb.rounds_ns, ta.inputs)
    unpaired = np.log(round_medians(ta.rounds_ns)) - np.log(round_medians(tb.rounds_ns))
    # The round's median call is now a short input, now a long one: the unpaired ratio scatters
    # more than twice as much as the paired one, which sees 10 % jitter over 16 inputs.
    assert np.std(paired, ddof=1) * 2 < np.std(unpaired, ddof=1)
    assert c.ci_low <= 0.5 <= c.ci_high and c.ratio == pytest.approx(0.5, rel=0.03)
    assert (c.ci_low, c.ci_high) == pytest.approx(
        (paired_speed_ratio(paired).low, paired_speed_ratio(paired).high)
    )  # the verdict is built from the paired rounds
