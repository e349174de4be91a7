"""The speed engine on simulated models (fake clock, fake GPU): exact, deterministic checks."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sim.simulated import SimulatedAdapter

from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset
from headtohead.engines.speed import measure_speed
from headtohead.engines.speed_inputs import draw_batches, fix_sequence_length
from headtohead.errors import ConfigError
from headtohead.report.words.speed import speed_sentence, speed_verdict_lines, with_speed_sentences
from headtohead.results.speed import HostLoad, SpeedSummary
from headtohead.runtime.devices import use_backend
from headtohead.testing.fake_device import FakeClock, FakeCudaBackend

# Fast settings: no real waiting, no memory pass unless a test asks for it; a fixed number of rounds
# unless a test asks for the stopping rule (speed.precision).
FAST = dict(
    precision=None,
    warmup_iterations=2,
    warmup_seconds=0.0,
    min_iterations=8,
    min_seconds=0.0,
    rounds=8,
    pipeline_iterations=4,
    memory=False,
    num_batches=2,
)


@pytest.fixture(autouse=True)
def quiet_host(monkeypatch):
    """The real host-load probe sleeps 0.2 s twice per measurement; simulated runs do not need it."""
    quiet = HostLoad(cpu_count=2, load_average=[0.0, 0.0, 0.0], other_cpu_percent=0.0)
    monkeypatch.setattr("headtohead.engines.speed.host_load", lambda: quiet)


def features(n=64, dim=4):
    return Dataset(
        "synthetic",
        "features",
        np.arange(n * dim, dtype=np.float32).reshape(n, dim),
        np.zeros(n, dtype=np.int64),
        ("negative", "positive"),
    )


def run(adapters, clock, batch_size=8, dataset=None, **settings):
    config = SpeedConfig(**{**FAST, **settings})
    return measure_speed(adapters, dataset or features(), config, batch_size=batch_size, seed=1, clock=clock)


def test_a_model_twice_as_slow_comes_out_twice_as_slow():
    clock = FakeClock()
    slow = SimulatedAdapter("slow", cost_ns=2_000, clock=clock, jitter=0.02, seed=1)
    fast = SimulatedAdapter("fast", cost_ns=1_000, clock=clock, jitter=0.02, seed=2)
    summary = run([slow, fast], clock)
    (comparison,) = summary.scenario("offline").comparisons
    assert comparison.faster == "fast"
    assert 1.9 < comparison.ci_low < comparison.ratio < comparison.ci_high < 2.1
    assert speed_sentence(comparison).startswith("fast is 2.0")
    single = summary.scenario("single_stream").comparisons[0]
    assert single.faster == "fast" and single.ratio == pytest.approx(2.0, rel=0.05)
    assert summary.model("slow").offline.per_sample.p50_s == pytest.approx(2e-6, rel=0.05)
    assert summary.model("fast").offline.throughput_per_s == pytest.approx(1e6, rel=0.05)


def test_a_a_run_under_drift_and_order_effects_contains_one():
    # The machine slows down 50 % per simulated millisecond and whoever runs right after the
    # other model pays a penalty. Without interleaving and rotation B would look slower.
    clock = FakeClock(start_ns=0)
    drift = lambda now: 1.0 + now / 2e6  # noqa: E731
    a, b = (
        SimulatedAdapter(n, cost_ns=1_000, clock=clock, jitter=0.03, drift=drift, switch_penalty_ns=3_000, seed=s)
        for n, s in (("a", 1), ("b", 2))
    )
    summary = run([a, b], clock, rounds=12)
    for scenario in summary.scenarios:
        (comparison,) = scenario.comparisons
        assert comparison.ci_low <= 1.0 <= comparison.ci_high, comparison
        assert comparison.faster is None and speed_sentence(comparison).startswith("no significant difference")
        firsts = [order[0] for order in scenario.round_orders]
        assert firsts.count("a") == firsts.count("b") == len(firsts) // 2  # balanced, alternating
        assert all(x != y for x, y in zip(firsts, firsts[1:]))


def test_three_models_run_in_balanced_orders():
    # Rotation (a b c, b c a, c a b) puts a before b in 2 rounds of 3; a Williams design in half of them.
    clock = FakeClock()
    models = [SimulatedAdapter(n, cost_ns=1_000, clock=clock) for n in "abc"]
    orders = run(models, clock, rounds=12, scenarios=["offline"]).scenario("offline").round_orders
    for x in "abc":
        assert [o.index(x) for o in orders].count(0) == 4  # each position equally often
        for y in set("abc") - {x}:
            assert sum(o.index(x) < o.index(y) for o in orders) == 6, (x, y, orders)


def test_minimums_blocks_and_warmup():
    clock = FakeClock()
    model = SimulatedAdapter("m", cost_ns=1_000, clock=clock)
    summary = run(
        [model],
        clock,
        min_iterations=20,
        min_seconds=0.001,
        rounds=5,
        num_batches=3,
        warmup_iterations=4,
        warmup_seconds=0.0001,
    )
    timing = summary.model("m").offline
    assert len(timing.rounds_ns) == 5 and all(len(r) % 3 == 0 for r in timing.rounds_ns)  # whole passes
    assert len(timing.samples_ns) >= 20 and sum(timing.samples_ns) >= 1e6
    assert timing.warmup_iterations >= 4 and timing.warmup_s >= 0.0001
    assert summary.scenario("offline").stop_reason == "minimums_met"
    assert summary.scenario("offline").comparisons == []  # one model: nothing to compare


def test_adaptive_stop_reaches_the_target():
    clock = FakeClock()
    a = SimulatedAdapter("a", cost_ns=1_000, clock=clock, jitter=0.01, seed=3)
    b = SimulatedAdapter("b", cost_ns=1_500, clock=clock, jitter=0.01, seed=4)
    summary = run([a, b], clock, target_ci_halfwidth=0.02, scenarios=["offline"])
    run_ = summary.scenario("offline")
    assert run_.stop_reason == "target_ci_reached"
    c = run_.comparisons[0]
    assert max(c.ci_high / c.ratio - 1, 1 - c.ci_low / c.ratio) <= 0.02


def test_adaptive_stop_gives_up_at_the_budget_and_says_so():
    clock = FakeClock()
    a = SimulatedAdapter("a", cost_ns=1_000, clock=clock, jitter=0.5, seed=5)
    b = SimulatedAdapter("b", cost_ns=1_000, clock=clock, jitter=0.5, seed=6)
    summary = run([a, b], clock, target_ci_halfwidth=0.001, max_seconds=0.001, scenarios=["offline"])
    run_ = summary.scenario("offline")
    assert run_.stop_reason == "time_budget" and run_.rounds > 8 and run_.budget_s == 0.001
    lines = speed_verdict_lines(with_speed_sentences(summary))
    assert any("budget of 1 ms spent" in line for line in lines)  # no quality pass timed: max_seconds
    assert any(line.startswith("warning: offline: the speed budget of 1 ms was spent") for line in lines)


def test_random_order_is_seeded_and_varies():
    clock = FakeClock()
    models = [SimulatedAdapter(n, cost_ns=1_000, clock=clock) for n in "abc"]
    orders = run(models, clock, order="random", rounds=10, scenarios=["offline"]).scenario("offline").round_orders
    assert {tuple(o) for o in orders} != {tuple(orders[0])} and all(sorted(o) == ["a", "b", "c"] for o in orders)
    clock2 = FakeClock()
    models2 = [SimulatedAdapter(n, cost_ns=1_000, clock=clock2) for n in "abc"]
    assert (
        run(models2, clock2, order="random", rounds=10, scenarios=["offline"]).scenario("offline").round_orders
        == orders
    )


def test_pipeline_cold_costs_and_time_window():
    clock = FakeClock()
    model = SimulatedAdapter("m", cost_ns=1_000, preprocess_ns=500, clock=clock)
    summary = run([model], clock, batch_size=4, scenarios=["offline", "time_window"], time_window_seconds=0.001)
    record = summary.model("m")
    assert record.pipeline.preprocess.p50_s == pytest.approx(4 * 500e-9)
    assert record.pipeline.forward.p50_s == pytest.approx(4 * 1_000e-9)
    assert record.pipeline.end_to_end.p50_s == pytest.approx(4 * 1_500e-9)
    assert record.first_preprocess_s == pytest.approx(2e-6) and record.first_call_s == pytest.approx(4e-6)
    window = record.time_window
    assert window.samples == 4 * window.batches and window.elapsed_s >= 0.001
    assert window.samples_per_s == pytest.approx(1 / 1.5e-6, rel=0.01)
    assert record.single_stream is None and [s.scenario for s in summary.scenarios] == ["offline"]


def test_fixed_batch_size_and_small_datasets():
    clock = FakeClock()
    model = SimulatedAdapter("m", cost_ns=1_000, clock=clock)
    summary = run([model], clock, batch_size=8, dataset=features(n=5), fixed_shape={"batch_size": 16})
    assert summary.batch_size == 16 and summary.model("m").offline.batch_size == 16
    assert summary.model("m").offline.per_batch.p50_s == pytest.approx(16e-6)  # examples repeated to fill it
    assert summary.model("m").single_stream.batch_size == 1
    assert summary.model("m").single_stream.per_batch.p50_s == pytest.approx(1e-6)


def test_draw_batches_gives_full_batches_of_distinct_examples_across_the_data():
    ds = features(n=10)
    batches = draw_batches(ds, 4, 5)  # 20 wanted, 10 there: every example once, two full batches
    assert [len(b) for b in batches] == [4, 4] and len(set(np.concatenate(batches).tolist())) == 8
    one = np.concatenate(draw_batches(features(n=100), 1, 10)).tolist()
    assert sorted(i // 10 for i in one) == list(range(10))  # one example from each tenth of the data
    assert (
        draw_batches(features(n=100), 1, 10, seed=3)[0].tolist()
        == draw_batches(features(n=100), 1, 10, seed=3)[0].tolist()
    )


class _Tokens(dict):
    """Stands in for transformers' BatchEncoding: a mapping type adapters may rely on."""


class _Tokenizer:
    pad_token_id = 7


class TextAdapter(SimulatedAdapter):
    """Tokenises text into variable-length ids; forward's cost grows with the sequence length."""

    def __init__(self, name, clock, *, tokenizer=True, max_length=None):
        super().__init__(name, cost_ns=10, clock=clock)
        self.tokenizer = _Tokenizer() if tokenizer else None
        if max_length is not None:
            self.max_length = max_length
        self.shapes = set()

    def preprocess(self, examples):
        longest = max(len(t.split()) for t in examples)
        ids = np.array([[i + 1 for i in range(len(t.split()))] + [0] * (longest - len(t.split())) for t in examples])
        return _Tokens(input_ids=ids, attention_mask=(ids > 0).astype(np.int64), extra="kept")

    def forward(self, inputs):
        self.shapes.add(inputs["input_ids"].shape)
        self.clock.advance(10 * inputs["input_ids"].size)
        return np.zeros((len(inputs["input_ids"]), 2))


def texts(n=12):
    return Dataset(
        "texts",
        "text",
        [" ".join(["w"] * (1 + i % 5)) for i in range(n)],
        np.zeros(n, dtype=np.int64),
        ("negative", "positive"),
    )


def test_fixed_sequence_length_pads_every_batch():
    clock = FakeClock()
    model = TextAdapter("t", clock)
    summary = run([model], clock, dataset=texts(), fixed_shape={"batch_size": 4, "sequence_length": 9})
    assert model.shapes == {(4, 9), (1, 9)}
    assert summary.model("t").offline.sequence_length == 9 and summary.model("t").warnings == []


def test_sequence_length_on_non_token_inputs_is_reported_and_too_long_is_refused():
    clock = FakeClock()
    summary = run(
        [SimulatedAdapter("f", cost_ns=1, clock=clock)], clock, fixed_shape={"batch_size": 2, "sequence_length": 9}
    )
    assert "sequence_length is ignored" in summary.model("f").warnings[0]
    assert summary.model("f").offline.sequence_length is None
    with pytest.raises(ConfigError, match="at most 8 tokens"):
        run(
            [TextAdapter("t", clock, max_length=8)],
            clock,
            dataset=texts(),
            fixed_shape={"batch_size": 4, "sequence_length": 9},
        )


def test_fix_sequence_length_pads_truncates_and_keeps_the_type():
    import torch

    inputs = _Tokens(input_ids=np.array([[5, 6, 7]]), attention_mask=np.ones((1, 3), dtype=int), pixel=np.ones((1, 2)))
    padded, applied = fix_sequence_length(inputs, 5, pad_id=1)
    assert applied and type(padded) is _Tokens
    assert padded["input_ids"].tolist() == [[5, 6, 7, 1, 1]] and padded["attention_mask"].tolist() == [[1, 1, 1, 0, 0]]
    assert padded["pixel"].shape == (1, 2)  # not a token column: untouched
    cut, _ = fix_sequence_length({"input_ids": torch.tensor([[1, 2, 3, 4]])}, 2)
    assert cut["input_ids"].tolist() == [[1, 2]] and cut["input_ids"].is_contiguous()
    grown, _ = fix_sequence_length(
        {"input_ids": torch.tensor([[1]]), "attention_mask": torch.tensor([[1]])}, 3, pad_id=9
    )
    assert grown["input_ids"].tolist() == [[1, 9, 9]] and grown["attention_mask"].tolist() == [[1, 0, 0]]
    assert fix_sequence_length(np.ones((2, 3)), 5) == (pytest.approx(np.ones((2, 3))), False)


def test_cuda_path_uses_events_and_counts_each_models_calls_apart():
    clock, backend = FakeClock(), FakeCudaBackend()
    with use_backend(backend):
        a = SimulatedAdapter(
            "a",
            cost_ns=3_000,
            clock=clock,
            backend=backend,
            device="cuda:0",
            memory_bytes=2**20,
            weight_bytes=64 * 2**20,
            jitter=0.01,
            seed=1,
        )
        b = SimulatedAdapter(
            "b",
            cost_ns=1_000,
            clock=clock,
            backend=backend,
            device="cuda:0",
            memory_bytes=2**18,
            weight_bytes=16 * 2**20,
            jitter=0.01,
            seed=2,
        )
        summary = run([a, b], clock, memory=True, memory_iterations=2)
    ra, rb = summary.model("a"), summary.model("b")
    assert ra.offline.timer == "cuda_event" and ra.single_stream.timer == "cuda_event"
    assert ra.offline.per_batch.p50_s == pytest.approx(8 * 3e-6, rel=0.05)  # GPU time, not the 1 µs launch
    assert summary.scenario("offline").comparisons[0].ratio == pytest.approx(3.0, rel=0.05)
    # Without a recipe the models stay in this process: the calls' growth is each model's own ...
    assert ra.memory.cuda_inference_peak_mb == pytest.approx(8.0) and ra.memory.weights_mb == 64
    assert rb.memory.cuda_inference_peak_mb == pytest.approx(2.0)  # not a's 8 MiB
    # ... while the process figure holds both models' weights, and says so by its name.
    assert rb.memory.process_cuda_max_allocated_mb == pytest.approx(64 + 16 + 2.0)
    assert not rb.memory.isolated and rb.memory.model_peak_mb is None and rb.memory.cuda_model_peak_mb is None
    assert rb.cold_start is None and len(backend.sync_calls) > 10
    for timing in (ra.offline, ra.single_stream):  # telemetry per scenario; no NVML here: all null
        assert timing.telemetry is not None and not timing.telemetry.available and timing.telemetry.power_w is None


def test_memory_pass_on_cpu_and_loading_costs():
    clock = FakeClock()
    model = SimulatedAdapter("m", cost_ns=1_000, clock=clock, weight_bytes=32 * 2**20)
    config = SpeedConfig(**{**FAST, "memory": True, "memory_iterations": 2, "telemetry": False})
    summary = measure_speed(
        [model], features(), config, batch_size=8, clock=clock, load_times={"m": 1.25}, device_warmup_s=0.5
    )
    record = summary.model("m")
    assert record.load_time_s == 1.25 and summary.device_warmup_s == 0.5
    assert record.memory.weights_mb == 32 and record.memory.inference_rss_mb < 8  # the calls allocate nothing
    assert record.memory.process_cuda_max_allocated_mb is None and record.offline.telemetry is None


def test_summary_round_trips_through_json_and_recomputes_statistics():
    clock = FakeClock()
    summary = run(
        [
            SimulatedAdapter("a", cost_ns=1_000, clock=clock, jitter=0.05),
            SimulatedAdapter("b", cost_ns=2_000, clock=clock, jitter=0.05, seed=3),
        ],
        clock,
    )
    text = summary.model_dump_json()
    assert SpeedSummary.model_validate_json(text).model_dump_json() == text
    raw = json.loads(text)
    raw["models"][0]["offline"]["per_batch"]["p50_s"] = 123.0  # a tampered statistic is not believed
    again = SpeedSummary.model_validate(raw)
    assert again.models[0].offline.per_batch.p50_s == summary.models[0].offline.per_batch.p50_s
    assert raw["settings"]["rounds"] == 8 and summary.torch_threads >= 1


def test_verdict_lines_show_repeat_noise_as_a_number_and_no_warning_when_the_ratio_is_decided():
    clock = FakeClock()
    a = SimulatedAdapter("a", cost_ns=1_000, clock=clock, jitter=0.4, seed=1)
    b = SimulatedAdapter("b", cost_ns=3_000, clock=clock, seed=2)
    summary = run([a, b], clock, scenarios=["offline"])
    lines = speed_verdict_lines(with_speed_sentences(summary))
    assert lines[0].startswith("offline (batch 8, 8 rounds")
    assert any(line.strip().startswith("a is 3.0") or line.strip().startswith("a is 2.9") for line in lines)
    assert summary.model("a").offline.repeat_noise > 0.2  # a noisy series ...
    assert any(line.startswith("  a: median ") and "repeat noise" in line for line in lines)  # ... shown as a number
    assert not [line for line in lines if line.startswith("warning:")]  # ... that left the 3x verdict standing


def test_noise_that_leaves_the_ratio_undecided_or_drifts_is_warned_about():
    clock = FakeClock()
    noisy = [SimulatedAdapter(name, cost_ns=1_000, clock=clock, jitter=0.6, seed=i) for i, name in enumerate("ab")]
    lines = speed_verdict_lines(with_speed_sentences(run(noisy, clock, scenarios=["offline"], rounds=5)))
    assert any(line.startswith("warning: offline: a vs b is undecided") for line in lines), lines
    clock = FakeClock()
    began = clock._now
    warming = SimulatedAdapter(
        "a", cost_ns=1_000, clock=clock, jitter=0.01, seed=1, drift=lambda now: 1.0 + (now - began) / 400_000
    )  # a slows down as the run goes on
    steady = SimulatedAdapter("b", cost_ns=1_000, clock=clock, jitter=0.01, seed=2)
    lines = speed_verdict_lines(with_speed_sentences(run([warming, steady], clock, scenarios=["offline"], rounds=10)))
    assert any(line.startswith("warning: offline: the time ratio a/b drifted +") for line in lines), lines


def test_progress_and_bad_arguments():
    clock = FakeClock()
    seen = []
    config = SpeedConfig(**{**FAST, "scenarios": ["offline"]})
    measure_speed(
        [SimulatedAdapter("m", cost_ns=1, clock=clock)],
        features(),
        config,
        batch_size=2,
        clock=clock,
        progress=lambda *args: seen.append(args),
    )
    assert seen[0] == ("speed offline", 1, 8) and seen[-1] == ("speed offline", 8, 8)
    with pytest.raises(ValueError, match="unique names"):
        measure_speed([SimulatedAdapter("m", cost_ns=1, clock=clock)] * 2, features(), config, batch_size=2)
